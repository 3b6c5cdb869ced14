//go:build linux || darwin

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// scrape fetches and parses http://addr/metrics.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestServeMetrics: after a known mix of calls through the daemon (successes, every
// adapter error code, methods the adapter does not have), /metrics on its own
// listener counts exactly those calls by method and code, each method's histogram
// counts its calls, and the daemon's own figures are there.
func TestServeMetrics(t *testing.T) {
	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, "--socket", sock, "--json", "--metrics", "127.0.0.1:0", goodDir)
	var ready serveEvent
	decodeStrict(t, d.ready, &ready)
	if ready.Metrics == "" || ready.Metrics == ready.Socket {
		t.Fatalf("ready event without its own metrics address: %s", d.ready)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := controlplane.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[[2]string]float64{}
	send := func(method, params, code string) {
		t.Helper()
		_, err := c.Send(ctx, controlplane.SendParams{Adapter: "echo", Method: method, Params: json.RawMessage(params), TimeoutMS: 30000})
		var cpe *controlplane.Error
		switch {
		case code == "ok" && err != nil:
			t.Fatalf("%s: %v", method, err)
		case code != "ok" && !errors.As(err, &cpe):
			t.Fatalf("%s %s: %v", method, code, err)
		}
	}
	for range 6 {
		send("example.echo.echo", `{"n":1}`, "ok")
		want[[2]string{"example.echo.echo", "ok"}]++
	}
	for range 2 {
		send("example.echo.sleep", `{"ms":1}`, "ok")
		want[[2]string{"example.echo.sleep", "ok"}]++
	}
	for i, code := range proto.Codes {
		for range i%3 + 1 {
			send("example.echo.fail", `{"code":"`+string(code)+`","message":"m"}`, string(code))
			want[[2]string{"example.echo.fail", string(code)}]++
		}
	}
	// Method names a client invents are never labels of their own.
	for _, m := range []string{"made.up.one", "made.up.two", "made.up.three"} {
		_, err := c.Send(ctx, controlplane.SendParams{Adapter: "echo", Method: m, TimeoutMS: 30000})
		var cpe *controlplane.Error
		if !errors.As(err, &cpe) || cpe.Code != controlplane.CodeNotImplemented {
			t.Fatalf("%s: %v", m, err)
		}
		var d controlplane.CallDetails
		if err := json.Unmarshal(cpe.Details, &d); err != nil || d.AdapterCode == "" {
			t.Fatalf("%s: details %s: %v", m, cpe.Details, err)
		}
		want[[2]string{"(other)", d.AdapterCode}]++
	}

	fams := scrape(t, ready.Metrics)
	got := map[[2]string]float64{}
	perMethod := map[string]float64{}
	for _, m := range fams["adapterkit_calls_total"].GetMetric() {
		if a := labelOf(m, "adapter"); a != "echo" {
			t.Errorf("calls of adapter %q", a)
		}
		if v := m.GetCounter().GetValue(); v != 0 {
			got[[2]string{labelOf(m, "method"), labelOf(m, "code")}] = v
			perMethod[labelOf(m, "method")] += v
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("adapterkit_calls_total:\ngot  %v\nwant %v", got, want)
	}
	hists := fams["adapterkit_call_duration_seconds"].GetMetric()
	if len(hists) != len(perMethod) {
		t.Errorf("%d histograms for %d methods called", len(hists), len(perMethod))
	}
	for _, m := range hists {
		h := m.GetHistogram()
		method := labelOf(m, "method")
		if float64(h.GetSampleCount()) != perMethod[method] {
			t.Errorf("%s: histogram count %d, want %v", method, h.GetSampleCount(), perMethod[method])
		}
		if b := h.GetBucket(); b[len(b)-1].GetCumulativeCount() != h.GetSampleCount() {
			t.Errorf("%s: a call took longer than the largest bucket: %v", method, b[len(b)-1])
		}
		if method == "example.echo.sleep" && h.GetSampleSum() < 2*0.001 {
			t.Errorf("sleep: sum %v s for two calls of 1 ms", h.GetSampleSum())
		}
	}
	gauge := func(name string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Fatalf("%s: %v", name, f)
		}
		m := f.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	if v := gauge("adapterkit_adapter_up"); v != 1 || labelOf(fams["adapterkit_adapter_up"].GetMetric()[0], "version") != "1.2.0" {
		t.Errorf("adapter_up %v %v", v, fams["adapterkit_adapter_up"])
	}
	if v := gauge("adapterkit_daemon_clients"); v != 1 {
		t.Errorf("clients %v, want 1", v)
	}
	if v := gauge("adapterkit_daemon_unverified_cleanups"); v != 0 {
		t.Errorf("unverified cleanups %v", v)
	}
	if v := gauge("adapterkit_build_info"); v != 1 {
		t.Errorf("build info %v", v)
	}
	if goruntime.GOOS == "linux" && fams["adapterkit_adapter_memory_bytes"] == nil {
		t.Error("no adapter memory on Linux")
	}
	// The control socket does not speak HTTP: the metrics are only on their own port.
	if ready.Metrics == sock {
		t.Fatal("metrics on the control socket")
	}
	c.Close()
	r := d.stop(t)
	if r.code != ExitOK {
		t.Errorf("serve exit %d\n%s", r.code, r.stderr)
	}
	// A clean stop is no error: nothing at error level is logged.
	if strings.Contains(r.stderr, `"@level":"error"`) || strings.Contains(r.stderr, "[ERROR]") {
		t.Errorf("error logged on a clean stop:\n%s", r.stderr)
	}
	if _, err := http.Get("http://" + ready.Metrics + "/metrics"); err == nil {
		t.Error("metrics endpoint still answers after serve returned")
	}
}

// TestServeMetricsAddressInUse: a --metrics address that cannot be listened on means
// the daemon cannot start (exit 3), before anything is served.
func TestServeMetricsAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sock := filepath.Join(shortDir(t), "ctl.sock")
	r := runCmd(t, "", "serve", "--socket", sock, "--metrics", ln.Addr().String(), goodDir)
	r.want(t, ExitBroken, nil, []string{"--metrics " + ln.Addr().String()})
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket created: %v", err)
	}
}

// TestServeNotifySocketUnusable: a $NOTIFY_SOCKET that cannot be used (here, a socket
// that does not exist) is logged, and the daemon serves all the same; the variable is
// gone from its environment either way.
func TestServeNotifySocketUnusable(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "missing"))
	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, "--socket", sock, "--log", "warn", goodDir)
	if !strings.HasPrefix(d.ready, "adapterctl serve: serving 2 adapters") {
		t.Fatalf("ready line %q", d.ready)
	}
	if _, set := os.LookupEnv("NOTIFY_SOCKET"); set {
		t.Error("NOTIFY_SOCKET left in the environment")
	}
	r := d.stop(t)
	if r.code != ExitOK || !strings.Contains(r.stderr, "not notifying the service manager") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
