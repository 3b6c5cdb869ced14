package main

import (
	"encoding/json"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/platform"
)

func TestSandboxFlags(t *testing.T) {
	runCmd(t, "", "inspect", "--allow-read", "/etc", good("echo_v1.2.0")).want(t, ExitUsage, nil, []string{"give --sandbox too"})
	runCmd(t, "", "inspect", "--allow-inotify", good("echo_v1.2.0")).want(t, ExitUsage, nil, []string{"give --sandbox too"})
	runCmd(t, "", "call", "--sandbox", "--allow-net", "http", good("echo_v1.2.0"), "example.echo.echo", "{}").
		want(t, ExitUsage, nil, []string{"--allow-net", "not none, all or a list of TCP ports"})
	for _, cmd := range []string{"call", "inspect", "check", "serve"} {
		r := runCmd(t, "", cmd, "--help")
		for _, want := range []string{"--sandbox", "--allow-read", "--allow-write", "--allow-exec", "--allow-net", "--allow-inotify", "--sandbox-best-effort", "Landlock"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s --help lacks %q", cmd, want)
			}
		}
	}
	if runtime.GOOS != "linux" {
		runCmd(t, "", "inspect", "--sandbox", good("echo_v1.2.0")).want(t, ExitBroken, nil, []string{"not implemented on " + runtime.GOOS})
		return
	}
	r := runCmd(t, "", "inspect", "--json", "--sandbox", "--allow-net", "443", good("echo_v1.2.0"))
	r.want(t, ExitOK, nil, nil)
	var out inspectOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Supervision, "landlock|seccomp") || !strings.Contains(out.Sandbox, "landlock v") ||
		!strings.Contains(out.Sandbox, "net tcp connect 443") || !out.CleanupVerified {
		t.Errorf("inspect --sandbox: %+v", out)
	}
	// Sandboxed adapters share their user's quotas: inotify only with --allow-inotify,
	// and a default process limit.
	if !strings.Contains(out.Sandbox, "inotify refused") || !strings.Contains(out.Sandbox, "tasks 512 (default)") {
		t.Errorf("inspect --sandbox: sandbox %q, want inotify refused and the default process limit", out.Sandbox)
	}
	r = runCmd(t, "", "inspect", "--json", "--sandbox", "--allow-inotify", good("echo_v1.2.0"))
	r.want(t, ExitOK, nil, nil)
	out = inspectOutput{}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Sandbox, "inotify allowed") || !slices.Contains(out.Grants, sandboxGrant{"inotify", "may create inotify instances (the user's quota, shared with the host)", "--allow-inotify"}) {
		t.Errorf("inspect --sandbox --allow-inotify: %+v", out)
	}
	runCmd(t, "", "inspect", good("echo_v1.2.0")).want(t, ExitOK, []string{"supervision"}, nil)
	if r := runCmd(t, "", "inspect", good("echo_v1.2.0")); strings.Contains(r.stdout, "sandbox") || strings.Contains(r.stdout, "landlock") {
		t.Errorf("inspect without --sandbox reports one:\n%s", r.stdout)
	}
}

func TestParsePolicy(t *testing.T) {
	pol, err := parsePolicy(strings.NewReader(`
# comment
adapter *
allow-read /srv/shared

adapter weather
allow-net 80,443
allow-write /var/cache/weather
allow-exec /usr/bin/curl
allow-unix
allow-inotify
best-effort
adapter legacy
unsandboxed
`))
	if err != nil {
		t.Fatal(err)
	}
	if !pol.hasDef || !reflect.DeepEqual(pol.dflt, &platform.Sandbox{Read: []string{"/srv/shared"}}) {
		t.Errorf("default: %+v", pol.dflt)
	}
	want := &platform.Sandbox{ConnectPorts: []uint16{80, 443}, Write: []string{"/var/cache/weather"},
		Exec: []string{"/usr/bin/curl"}, UnixSockets: true, Inotify: true, BestEffort: true}
	if !reflect.DeepEqual(pol.byName["weather"], want) {
		t.Errorf("weather: %+v", pol.byName["weather"])
	}
	if sb, ok := pol.byName["legacy"]; !ok || sb != nil {
		t.Errorf("legacy: %v %v", sb, ok)
	}
	for _, bad := range []struct{ text, want string }{
		{"allow-read /x", "line 1: \"allow-read\" before the first"},
		{"adapter a\nallow-read rel", "line 2: allow-read \"rel\": the path must be absolute"},
		{"adapter a\nallow-net", "line 2: allow-net wants a value"},
		{"adapter a\nallow-net 0", "line 2: \"0\" is not none"},
		{"adapter a\nadapter a", "line 2: a second section for a"},
		{"adapter a\nunsandboxed\nallow-unix", "line 3: a is unsandboxed"},
		{"adapter a\nallow-unix\nunsandboxed", "line 3: unsandboxed after grants"},
		{"adapter a\nallow-everything", "line 2: unknown line"},
		{"adapter a b", "line 1: adapter wants one NAME"},
		{"adapter a\nallow-inotify yes", "line 2: allow-inotify takes no value"},
	} {
		if _, err := parsePolicy(strings.NewReader(bad.text)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.text, err, bad.want)
		}
	}
}

// FuzzParsePolicy: any file either parses into sandboxes whose paths are absolute and
// ports non-zero, or is refused with an error naming its line.
func FuzzParsePolicy(f *testing.F) {
	f.Add("adapter *\nallow-read /srv\nadapter w\nallow-net 80,443\nallow-unix\nbest-effort\nadapter l\nunsandboxed\n")
	f.Add("adapter a\nallow-net all\nallow-exec /bin/true\n# c\n\nallow-write /tmp/x\n")
	f.Add("allow-read /x")
	f.Fuzz(func(t *testing.T, text string) {
		pol, err := parsePolicy(strings.NewReader(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		all := []*platform.Sandbox{pol.dflt}
		for _, sb := range pol.byName {
			all = append(all, sb)
		}
		for _, sb := range all {
			if sb == nil {
				continue
			}
			for _, p := range append(append(append([]string(nil), sb.Read...), sb.Write...), sb.Exec...) {
				if !strings.HasPrefix(p, "/") {
					t.Fatalf("relative path %q accepted", p)
				}
			}
			for _, port := range sb.ConnectPorts {
				if port == 0 {
					t.Fatal("port 0 accepted")
				}
			}
		}
	})
}
