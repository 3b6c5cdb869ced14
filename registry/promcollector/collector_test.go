package promcollector_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/prommetrics"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/registry/promcollector"
	"github.com/adapterkit/adapterkit/runtime"
)

var built string

func TestMain(m *testing.M) {
	testkit.Main(m, &built, func(r testkit.Runner) { goleak.VerifyTestMain(r) }, testkit.Echo)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Mix makes a known mix of calls on h: oks successes, n+1 failures of the n-th code
// of wire.Codes, and unknown calls of invented method names; it returns the expected
// calls by method label and code.
func mix(t *testing.T, h *registry.Handle, oks, unknown int) map[[2]string]uint64 {
	t.Helper()
	ctx := ctxT(t)
	want := map[[2]string]uint64{}
	for range oks {
		if _, err := h.Call(ctx, "example.echo.echo", json.RawMessage(`{"a":1}`)); err != nil {
			t.Fatal(err)
		}
		want[[2]string{"example.echo.echo", "ok"}]++
	}
	for i, c := range proto.Codes {
		for range i + 1 {
			_, err := h.Call(ctx, "example.echo.fail", json.RawMessage(`{"code":"`+string(c)+`","message":"m"}`))
			var ce *runtime.CallError
			if !errors.As(err, &ce) || ce.Code != c {
				t.Fatalf("fail %s: %v", c, err)
			}
			want[[2]string{"example.echo.fail", string(c)}]++
		}
	}
	for i := range unknown {
		// Names a remote caller might invent: never a label of their own.
		_, err := h.Call(ctx, "invented."+string(rune('a'+i)), nil)
		var ce *runtime.CallError
		if !errors.Is(err, runtime.ErrUnknownMethod) || !errors.As(err, &ce) {
			t.Fatalf("unknown method: %v", err)
		}
		want[[2]string{prommetrics.OtherMethod, string(ce.Code)}]++
	}
	return want
}

// label returns a metric's label value.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// gather returns the families by name from a registry holding only c.
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// A registry host's collector reports exactly the calls made, by method and code,
// with histogram counts equal to the calls of each method; invented method names are
// counted under "(other)" only, and the adapter is up with its version.
func TestForRegistryExactCounts(t *testing.T) {
	reg := registry.New(&registry.Config{Dirs: []string{built}})
	t.Cleanup(func() { _ = reg.Close(context.Background()) })
	h, e := reg.Open(ctxT(t), "echo", nil)
	if e != nil {
		t.Fatal(e)
	}
	want := mix(t, h, 5, 3)
	fams := gather(t, promcollector.ForRegistry(reg))
	got := map[[2]string]uint64{}
	perMethod := map[string]uint64{}
	for _, m := range fams["adapterkit_calls_total"].GetMetric() {
		if label(m, "adapter") != "echo" {
			t.Fatalf("adapter label %q", label(m, "adapter"))
		}
		n := uint64(m.GetCounter().GetValue())
		if n > 0 {
			got[[2]string{label(m, "method"), label(m, "code")}] = n
		}
		perMethod[label(m, "method")] += n
	}
	if len(got) != len(want) {
		t.Errorf("series with calls: got %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("calls %v = %d, want %d", k, got[k], n)
		}
	}
	hists := fams["adapterkit_call_duration_seconds"].GetMetric()
	if len(hists) != len(perMethod) {
		t.Fatalf("%d histograms for %d methods", len(hists), len(perMethod))
	}
	for _, m := range hists {
		hg := m.GetHistogram()
		method := label(m, "method")
		if hg.GetSampleCount() != perMethod[method] {
			t.Errorf("%s: histogram count %d, want %d", method, hg.GetSampleCount(), perMethod[method])
		}
		if hg.GetSampleSum() <= 0 {
			t.Errorf("%s: histogram sum %v", method, hg.GetSampleSum())
		}
		bs := hg.GetBucket()
		if len(bs) != len(prommetrics.Buckets) {
			t.Fatalf("%d buckets", len(bs))
		}
		for i := 1; i < len(bs); i++ {
			if bs[i].GetCumulativeCount() < bs[i-1].GetCumulativeCount() {
				t.Errorf("%s: buckets not cumulative: %v", method, bs)
			}
		}
	}
	up := fams["adapterkit_adapter_up"].GetMetric()
	if len(up) != 1 || label(up[0], "version") != "1.2.0" || up[0].GetGauge().GetValue() != 1 {
		t.Errorf("up: %v", up)
	}
	if r := fams["adapterkit_adapter_restarts_total"].GetMetric(); len(r) != 1 || r[0].GetCounter().GetValue() != 0 {
		t.Errorf("restarts: %v", r)
	}
	if _, ok := fams["adapterkit_build_info"]; ok {
		t.Error("a registry host reports daemon metrics")
	}
}

// A snapshot the collector cannot tell apart from another (two versions of one
// adapter) is reported once, added up: the registry never sees a duplicate series.
func TestSameNameAddedUp(t *testing.T) {
	reg := registry.New(&registry.Config{Dirs: []string{built}})
	t.Cleanup(func() { _ = reg.Close(context.Background()) })
	h, e := reg.Open(ctxT(t), "echo", nil)
	if e != nil {
		t.Fatal(e)
	}
	mix(t, h, 2, 0)
	st := h.Stats()
	fig, methods := promcollector.FiguresOf(&st), prommetrics.CatalogMethods(h.Catalog())
	c := prommetrics.New(func() prommetrics.Snapshot {
		return prommetrics.Snapshot{Adapters: []prommetrics.Adapter{
			{Name: "echo", Version: "1.2.0", Up: true, Methods: methods, Figures: fig},
			{Name: "echo", Version: "1.3.0", Methods: methods, Figures: fig},
		}}
	})
	fams := gather(t, c)
	for _, m := range fams["adapterkit_calls_total"].GetMetric() {
		if label(m, "method") == "example.echo.echo" && label(m, "code") == "ok" && m.GetCounter().GetValue() != 4 {
			t.Errorf("ok calls %v, want 4", m.GetCounter().GetValue())
		}
	}
	if up := fams["adapterkit_adapter_up"].GetMetric(); len(up) != 2 {
		t.Errorf("up: %v", up)
	}
}

// The cost of one scrape of 20 adapters with the echo adapter's figures (4 methods
// called): it is paid by the scraper, never by a call.
func BenchmarkCollect(b *testing.B) {
	reg := registry.New(&registry.Config{Dirs: []string{built}})
	defer reg.Close(context.Background())
	ctx := context.Background()
	h, err := reg.Open(ctx, "echo", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []string{"example.echo.echo", "example.echo.big", "example.echo.fail", "example.echo.sleep"} {
		_, _ = h.Call(ctx, m, json.RawMessage(`{}`))
	}
	st := h.Stats()
	fig, methods := promcollector.FiguresOf(&st), prommetrics.CatalogMethods(h.Catalog())
	snap := prommetrics.Snapshot{Daemon: &prommetrics.Daemon{}}
	for i := range 20 {
		snap.Adapters = append(snap.Adapters, prommetrics.Adapter{Name: "echo" + string(rune('a'+i)), Up: true, Methods: methods, Figures: fig})
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(prommetrics.New(func() prommetrics.Snapshot { return snap }))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := metrics.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
