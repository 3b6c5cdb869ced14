//go:build linux || darwin

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

// makeTestCerts runs `adapterctl certs` into a new directory, with clients alice,
// bob and carol.
func makeTestCerts(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pki")
	runCmd(t, "", "certs", "--dir", dir, "--client", "alice", "--client", "bob", "--client", "carol").
		want(t, ExitOK, []string{"ca.pem", "server.pem", "client-alice.pem", "spki:sha256/"}, nil)
	return dir
}

// clientFlags are the remote flags of client NAME of the certificates in dir.
func clientFlags(addr, dir, name string) []string {
	return []string{"--remote", addr, "--tls-ca", filepath.Join(dir, "ca.pem"),
		"--tls-cert", filepath.Join(dir, "client-"+name+".pem"), "--tls-key", filepath.Join(dir, "client-"+name+".key")}
}

func serveFlags(dir string) []string {
	return []string{"--listen", "127.0.0.1:0", "--tls-cert", filepath.Join(dir, "server.pem"),
		"--tls-key", filepath.Join(dir, "server.key"), "--client-ca", filepath.Join(dir, "ca.pem"),
		"--allow", "alice=call", "--allow", "bob=read"}
}

// listenAddr returns the TCP address in a ready line.
func listenAddr(t *testing.T, ready string) string {
	t.Helper()
	_, after, ok := strings.Cut(ready, " tls://")
	addr, _, ok2 := strings.Cut(after, " ")
	if !ok || !ok2 {
		t.Fatalf("ready line %q names no tls:// address", ready)
	}
	return addr
}

// TestRemoteCommands: serve --listen with certificates from `adapterctl certs`;
// every client command over --remote (flags or environment), roles, refusals and
// usage errors.
func TestRemoteCommands(t *testing.T) {
	pki := makeTestCerts(t)
	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, append(serveFlags(pki), "--socket", sock, goodDir)...)
	if !strings.Contains(d.ready, " on "+sock+" and tls://127.0.0.1:") {
		t.Fatalf("ready line %q", d.ready)
	}
	addr := listenAddr(t, d.ready)
	alice, bob, carol := clientFlags(addr, pki, "alice"), clientFlags(addr, pki, "bob"), clientFlags(addr, pki, "carol")
	with := func(flags []string, args ...string) []string {
		return append(append([]string{args[0]}, flags...), args[1:]...)
	}

	runCmd(t, "", with(alice, "call", "echo", "example.echo.echo", `{"via":"tls"}`)...).want(t, ExitOK, []string{`{"via":"tls"}`}, nil)
	runCmd(t, "", with(alice, "ping")...).want(t, ExitOK, []string{"tls://" + addr}, nil)
	for _, cmd := range [][]string{{"version"}, {"capabilities"}, {"status"}, {"discover", "--timeout", "10ms"}, {"ping", "--json"}} {
		runCmd(t, "", with(bob, cmd...)...).want(t, ExitOK, nil, nil)
	}
	runCmd(t, "", with(bob, "call", "echo", "example.echo.echo")...).want(t, ExitBroken, nil, []string{"permission_denied", "role read"})
	r := runCmd(t, "", with(bob, "call", "--json", "echo", "example.echo.echo")...)
	r.want(t, ExitBroken, nil, []string{`"code":"permission_denied"`})
	// A refused client is told where the reason is: the daemon's stderr, where serve's
	// default --log warn shows it (checked when the daemon stops, below).
	runCmd(t, "", with(carol, "ping")...).want(t, ExitBroken, nil, []string{"tls://" + addr, "refused this client's certificate",
		"why is in the daemon's log, on the stderr of its 'adapterctl serve'"})

	// The daemon counts the refusal once its alert is sent: the client may be done first.
	var st controlplane.StatusResult
	testkit.Within(30*time.Second, func() bool {
		r = runCmd(t, "", "status", "--json", "--socket", sock)
		r.want(t, ExitOK, nil, nil)
		st = controlplane.StatusResult{}
		decodeStrict(t, r.stdout, &st)
		return st.RefusedClients > 0
	})
	if st.Remote == nil || st.Remote.Listen != addr || st.Remote.RefusedClients != 1 || st.RefusedClients != 1 {
		t.Errorf("status remote %+v, refused %d: want carol's refusal counted", st.Remote, st.RefusedClients)
	}
	runCmd(t, "", "status", "--socket", sock).want(t, ExitOK, []string{"remote      tls://" + addr + " (refused 1"}, nil)

	// The environment stands for the flags; a flag wins over its variable.
	t.Setenv(remoteEnv, addr)
	t.Setenv(tlsCAEnv, filepath.Join(pki, "ca.pem"))
	t.Setenv(tlsCertEnv, filepath.Join(pki, "client-alice.pem"))
	t.Setenv(tlsKeyEnv, filepath.Join(pki, "client-alice.key"))
	runCmd(t, "", "call", "echo", "example.echo.echo", `{"env":1}`).want(t, ExitOK, []string{`{"env":1}`}, nil)
	runCmd(t, "", "call", "--tls-cert", filepath.Join(pki, "client-bob.pem"), "--tls-key", filepath.Join(pki, "client-bob.key"),
		"echo", "example.echo.echo").want(t, ExitBroken, nil, []string{"permission_denied"})
	runCmd(t, "", "ping", "--socket", sock).want(t, ExitOK, []string{sock}, nil) // --socket: $ADAPTERKIT_REMOTE ignored
	t.Setenv(tlsKeyEnv, "")
	runCmd(t, "", "status").want(t, ExitUsage, nil, []string{"--remote needs --tls-key ($ADAPTERKIT_TLS_KEY)"})

	if r := d.stop(t); !strings.Contains(r.stderr, "remote client refused") || !strings.Contains(r.stderr, `CN=\"carol\"`) {
		t.Errorf("serve at its default log level did not show carol's refusal on stderr:\n%s", r.stderr)
	}
}

func TestRemoteUsage(t *testing.T) {
	pki := makeTestCerts(t)
	ca, cert, key := filepath.Join(pki, "ca.pem"), filepath.Join(pki, "server.pem"), filepath.Join(pki, "server.key")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"socket and remote", []string{"ping", "--socket", "/s", "--remote", "127.0.0.1:1", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key}, "cannot both"},
		{"remote without files", []string{"version", "--remote", "127.0.0.1:1"}, "--remote needs --tls-ca"},
		{"remote not host:port", []string{"version", "--remote", "127.0.0.1", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key}, "not HOST:PORT"},
		{"tls flag without remote", []string{"status", "--socket", "/s", "--tls-ca", ca}, "--tls-ca is for --remote"},
		{"call --dir with --remote", []string{"call", "--remote", "127.0.0.1:1", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key, "--dir", goodDir, "echo", "a.b"}, "--dir cannot be used with --remote"},
		{"unreadable client key", []string{"ping", "--remote", "127.0.0.1:1", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", ca}, "cannot load certificates"},
		{"serve tls flag without listen", []string{"serve", "--socket", "/s", "--tls-cert", cert, goodDir}, "--tls-cert is for --listen"},
		{"serve listen without certificates", []string{"serve", "--listen", "127.0.0.1:0", "--allow", "a=read", goodDir}, "no plain TCP"},
		{"serve listen without allow", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--client-ca", ca, goodDir}, "at least one --allow"},
		{"serve bad allow", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--client-ca", ca, "--allow", "a=admin", goodDir}, "ROLE read, logs or call"},
		{"serve allow bare pin", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--client-ca", ca, "--allow", "sha256/" + strings.Repeat("A", 43) + "==read", goodDir}, "a pin needs the spki:sha256/ prefix"},
		{"serve allow two spellings", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--client-ca", ca, "--allow", "a=read", "--allow", "CN:a=call", goodDir}, "twice"},
		{"serve allow twice", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--client-ca", ca, "--allow", "a=read", "--allow", "a=call", goodDir}, "twice"},
		{"serve missing key file", []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", filepath.Join(pki, "none"), "--client-ca", ca, "--allow", "a=read", goodDir}, "cannot load certificates"},
		{"certs without dir", []string{"certs"}, "--dir DIR is required"},
		{"certs bad client name", []string{"certs", "--dir", pki, "--client", "../x"}, "usable in a file name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runCmd(t, "", tc.args...).want(t, ExitUsage, nil, []string{tc.want})
		})
	}
	// Run again, certs keeps what exists (the same command twice works).
	before, err := os.ReadFile(filepath.Join(pki, "client-alice.pem"))
	if err != nil {
		t.Fatal(err)
	}
	runCmd(t, "", "certs", "--dir", pki, "--client", "alice", "--client", "dave").
		want(t, ExitOK, []string{"(reused)", "server.pem (exists, kept)", "client-alice.pem (exists, kept)", "client-dave.pem  spki:sha256/"}, nil)
	if after, _ := os.ReadFile(filepath.Join(pki, "client-alice.pem")); !bytes.Equal(before, after) {
		t.Error("an existing certificate was overwritten")
	}
}

// TestServeSIGHUP: the real program re-reads its certificate files on SIGHUP: a
// client connected before keeps working, a new client sees the new certificate.
func TestServeSIGHUP(t *testing.T) {
	pki := makeTestCerts(t)
	bin := filepath.Join(shortDir(t), "adapterctl")
	//lint:ignore SA1019 this test binary runs on the machine that built it
	goTool := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append(append([]string{"serve"}, serveFlags(pki)...), "--log", "info", goodDir)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	br := bufio.NewReader(stdout)
	ready, _ := br.ReadString('\n')
	go func() {
		_, _ = io.Copy(io.Discard, br)
		exited <- cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	addr := listenAddr(t, ready)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	clientCfg := func() *tls.Config {
		cfg, err := controlplane.ClientTLSConfig(filepath.Join(pki, "ca.pem"), filepath.Join(pki, "client-alice.pem"), filepath.Join(pki, "client-alice.key"))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	held, err := controlplane.DialTLS(ctx, addr, clientCfg())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	serverCert := func() *x509.Certificate {
		cfg := clientCfg()
		cfg.ServerName = "127.0.0.1"
		tc, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		return tc.ConnectionState().PeerCertificates[0]
	}
	old := serverCert()

	// New daemon certificate from the same CA, put in place of the old files.
	for _, f := range []string{"server.pem", "server.key"} {
		if err := os.Remove(filepath.Join(pki, f)); err != nil {
			t.Fatal(err)
		}
	}
	runCmd(t, "", "certs", "--dir", pki).want(t, ExitOK, []string{"(reused)", "server.pem"}, nil)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for serverCert().Equal(old) {
		select {
		case <-ctx.Done():
			t.Fatalf("the new certificate was never served\nstderr:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := held.Ping(ctx); err != nil {
		t.Fatalf("client connected before SIGHUP: %v", err)
	}
	if !strings.Contains(stderr.String(), "certificates reloaded") {
		t.Errorf("no reload logged:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// lockedBuffer is safe for a writer and a reader at once.
type lockedBuffer = testkit.Buffer
