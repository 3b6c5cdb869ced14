//go:build linux || darwin

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probe GETs http://addr/path and returns the status code and body.
func probe(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// copyFile copies the adapter src to dst, executable.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestServeProbes: on a serving daemon's metrics listener /healthz and /readyz answer
// 200, readiness having pinged the control socket and found the adapter; once no
// adapter is discoverable in its directory readiness is 503 saying so, liveness stays
// 200; a daemon serving on TCP only (no socket to ping) is ready on its discovery.
func TestServeProbes(t *testing.T) {
	dir := filepath.Join(shortDir(t), "adapters")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	echo := filepath.Join(dir, exe("echo_v1.2.0"))
	copyFile(t, filepath.Join(goodDir, exe("echo_v1.2.0")), echo)
	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, "--socket", sock, "--json", "--metrics", "127.0.0.1:0", dir)
	var ready serveEvent
	decodeStrict(t, d.ready, &ready)

	for _, c := range []struct{ path, want string }{
		{"/healthz", "ok: serving"},
		{"/readyz", "ready: 1 adapter discoverable; control plane answered a ping on " + sock},
	} {
		code, body := probe(t, ready.Metrics, c.path)
		if code != http.StatusOK || !strings.HasPrefix(body, c.want) {
			t.Errorf("%s: %d %q, want 200 %q...", c.path, code, body, c.want)
		}
	}
	if err := os.Remove(echo); err != nil {
		t.Fatal(err)
	}
	if code, body := probe(t, ready.Metrics, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no adapter discoverable in "+dir) {
		t.Errorf("/readyz without adapters: %d %q, want 503 naming %s", code, body, dir)
	}
	if code, _ := probe(t, ready.Metrics, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz without adapters: %d, want 200", code)
	}
	if r := d.stop(t); r.code != ExitOK {
		t.Errorf("serve exit %d\n%s", r.code, r.stderr)
	}
}

// TestReadinessStates: readiness is refused before the daemon serves and after it
// stopped serving (its Monitor detached), whatever the directories hold.
func TestReadinessStates(t *testing.T) {
	for _, c := range []struct {
		name    string
		serving bool
		want    string
	}{
		{"before serving", false, "does not serve yet"},
		{"stopping", true, "stopping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s service
			s.dirs = []string{goodDir}
			s.serving.Store(c.serving)
			msg, ok := s.readiness(context.Background())
			if ok || !strings.Contains(msg, c.want) {
				t.Errorf("readiness = %q, %v; want not ready, %q", msg, ok, c.want)
			}
		})
	}
}

// TestServeProbesRemoteOnly: without a control socket, /readyz is 200 once an adapter
// is discoverable and says that nothing was pinged.
func TestServeProbesRemoteOnly(t *testing.T) {
	certs := shortDir(t)
	if r := runCmd(t, "", "certs", "--dir", certs, "--client", "ops"); r.code != ExitOK {
		t.Fatalf("certs: %d %s", r.code, r.stderr)
	}
	d := startDaemon(t, "", "--json", "--metrics", "127.0.0.1:0", "--listen", "127.0.0.1:0",
		"--tls-cert", filepath.Join(certs, "server.pem"), "--tls-key", filepath.Join(certs, "server.key"),
		"--client-ca", filepath.Join(certs, "ca.pem"), "--allow", "ops=read", goodDir)
	var ready map[string]any
	if err := json.Unmarshal([]byte(d.ready), &ready); err != nil {
		t.Fatalf("%v: %s", err, d.ready)
	}
	addr, _ := ready["metrics"].(string)
	code, body := probe(t, addr, "/readyz")
	if code != http.StatusOK || !strings.Contains(body, "discoverable; control plane serving (no control socket to ping)") {
		t.Errorf("/readyz: %d %q", code, body)
	}
}
