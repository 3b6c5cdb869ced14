//go:build linux || darwin

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
)

// requirePromtoolEnv makes TestAlertRules fail instead of skipping when promtool is
// missing (CI installs it).
const requirePromtoolEnv = "ADAPTERKIT_REQUIRE_PROMTOOL"

// alertRules returns the suggested rules of docs/operations.md: the YAML block of its
// Alerts section.
func alertRules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, alerts, ok := strings.Cut(string(b), "\n## Alerts\n")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(alerts)
	if !ok || m == nil || !strings.Contains(m[1], "alert: AdapterkitCallErrors") {
		t.Fatal("docs/operations.md has no Alerts section with a yaml block holding AdapterkitCallErrors")
	}
	return m[1]
}

// counterSeries returns the promtool input series of the call counters /metrics
// reports: each grows from 0 by its scraped value every minute, so that every rate is
// proportional to what the daemon counted.
func counterSeries(t *testing.T, addr string) []map[string]string {
	t.Helper()
	fams := scrape(t, addr)
	var out []map[string]string
	for _, name := range []string{"adapterkit_calls_total", "adapterkit_calls_caller_errors_total"} {
		f := fams[name]
		if f == nil {
			t.Fatalf("/metrics has no %s", name)
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			out = append(out, map[string]string{
				"series": name + "{" + strings.Join(labels, ",") + "}",
				"values": fmt.Sprintf("0+%gx40", m.GetCounter().GetValue()),
			})
		}
	}
	return out
}

// TestAlertRules: the suggested alerting rules of docs/operations.md pass `promtool
// check rules`, and AdapterkitCallErrors counts only the adapter's errors. A real
// daemon is called with successes and callers' mistakes (methods the adapter does not
// have, deadlines shorter than the calls); fed the counters it reports, the rule stays
// silent. After adapter failures (the adapter answering failed) it fires for that
// adapter. (promtool test rules evaluates the rules on the series given.)
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv(requirePromtoolEnv) != "" {
			t.Fatalf("promtool not found and $%s is set: %v", requirePromtoolEnv, err)
		}
		t.Skip("promtool not installed: the alerting rules of docs/operations.md NOT checked (apt-get install prometheus)")
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(alertRules(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}

	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, "--socket", sock, "--json", "--metrics", "127.0.0.1:0", goodDir)
	var ready serveEvent
	decodeStrict(t, d.ready, &ready)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := controlplane.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send := func(method, params string, timeoutMS int64, wantCode string) {
		t.Helper()
		_, err := c.Send(ctx, controlplane.SendParams{Adapter: "echo", Method: method, Params: json.RawMessage(params), TimeoutMS: timeoutMS})
		var cpe *controlplane.Error
		switch {
		case wantCode == "" && err != nil:
			t.Fatalf("%s: %v", method, err)
		case wantCode != "" && !errors.As(err, &cpe):
			t.Fatalf("%s: %v, want an error", method, err)
		case wantCode != "":
			var det controlplane.CallDetails
			if jerr := json.Unmarshal(cpe.Details, &det); jerr != nil || det.AdapterCode != wantCode {
				t.Fatalf("%s: %v (details %s), want adapter code %s", method, err, cpe.Details, wantCode)
			}
		}
	}
	for range 10 {
		send("example.echo.echo", `{"n":1}`, 0, "")
	}
	// Callers' mistakes, half of all calls: names the adapter does not have, and
	// deadlines the caller chose shorter than the call.
	for i := range 6 {
		send(fmt.Sprintf("made.up.%d", i), `{}`, 0, "unavailable")
	}
	for range 4 {
		send("example.echo.sleep", `{"ms":400}`, 20, "deadline")
	}
	quiet := counterSeries(t, ready.Metrics)
	// The adapter's own failures: 4 of 24 calls.
	for range 4 {
		send("example.echo.fail", `{"code":"failed","message":"broken"}`, 0, "failed")
	}
	failing := counterSeries(t, ready.Metrics)

	type alert struct {
		Labels map[string]string `json:"exp_labels"`
	}
	type alertTest struct {
		EvalTime  string  `json:"eval_time"`
		AlertName string  `json:"alertname"`
		Exp       []alert `json:"exp_alerts"`
	}
	type test struct {
		Interval string              `json:"interval"`
		Series   []map[string]string `json:"input_series"`
		Alerts   []alertTest         `json:"alert_rule_test"`
	}
	spec := map[string]any{
		"rule_files":          []string{rules},
		"evaluation_interval": "1m",
		"tests": []test{
			{Interval: "1m", Series: quiet, Alerts: []alertTest{{EvalTime: "30m", AlertName: "AdapterkitCallErrors", Exp: []alert{}}}},
			{Interval: "1m", Series: failing, Alerts: []alertTest{{EvalTime: "30m", AlertName: "AdapterkitCallErrors",
				Exp: []alert{{Labels: map[string]string{"adapter": "echo", "severity": "warning"}}}}}},
		},
	}
	b, err := json.MarshalIndent(spec, "", "  ") // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	tests := filepath.Join(dir, "tests.yml")
	if err := os.WriteFile(tests, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", tests).CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s\nseries of the quiet run:\n%v", err, out, quiet)
	}
	c.Close()
	if r := d.stop(t); r.code != ExitOK {
		t.Errorf("serve exit %d\n%s", r.code, r.stderr)
	}
}
