package platform

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// R64 on Windows: a host ended by TerminateProcess (what os.Process.Kill does there,
// the equivalent of SIGKILL) leaves nothing: its adapter's job has kill-on-close and the
// host held its only handle, so the adapter, a grandchild sharing its stdout and a
// detached grandchild end with the host. (`make test-windows` also SIGKILLs a Windows
// host's Wine process from Linux.)
func TestHostTerminated(t *testing.T) {
	pidfile := filepath.Join(testkit.TempDir(t), "pids")
	host := helperCmd("host", pidfile, "0")
	host.Env = []string{"GORACE=atexit_sleep_ms=0", "SystemRoot=" + os.Getenv("SystemRoot")}
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready job" {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("host said %q, %v", line, err)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	var tree []int
	for _, role := range []string{"adapter", "sleeper", "daemon"} {
		if !running(pids[role]) {
			t.Fatalf("%s (pid %d) does not run before the host is killed", role, pids[role])
		}
		tree = append(tree, pids[role])
	}
	if err := host.Process.Kill(); err != nil { // TerminateProcess
		t.Fatal(err)
	}
	_ = host.Wait()
	// Kill-on-close acts when the system closes the dead host's handles: soon, not at
	// once, so this waits (bounded) rather than asserting at the instant.
	testkit.WaitGone(t, bound, tree...)
}

// R62: a batch file, a command script and a shortcut are refused before anything runs,
// whatever they hold: CreateProcess would hand the first two to cmd.exe.
func TestScriptsAndShortcutsRefused(t *testing.T) {
	dir := testkit.TempDir(t)
	script := "@echo off\r\necho started\r\n"
	for _, name := range []string{"adapter.bat", "adapter.cmd", "adapter.lnk", "adapter.BAT", "adapter.exe.cmd"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		tree, err := Start(ctxBound(t), Config{Path: path})
		if err == nil {
			shutdown(t, tree)
			t.Errorf("Start(%s) succeeded", name)
			continue
		}
		if !errors.Is(err, ErrNotExecutable) {
			t.Errorf("Start(%s) = %v, want ErrNotExecutable", name, err)
		}
	}
	// A batch file named .exe is no image: CreateProcess refuses to load it rather than
	// running it through cmd.exe.
	fake := filepath.Join(dir, "adapter.exe")
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if tree, err := Start(ctxBound(t), Config{Path: fake}); err == nil {
		shutdown(t, tree)
		t.Error("a batch file named .exe was started")
	} else if !errors.Is(err, ErrStart) {
		t.Errorf("a batch file named .exe: %v, want ErrStart", err)
	}
}

// R49 on Windows: a detached grandchild the adapter starts without its standard handles
// does not hold them (Go passes a handle list), so the host reads EOF on the adapter's
// stdout when the adapter exits, while the grandchild still runs in the job (which
// outlives the adapter until Kill or Close). Unlike TestStdioHeldByTheAdapterAlone this
// runs under Wine too: the conhost.exe Wine starts for the adapter ends with it, since
// the detached grandchild does not share its console.
func TestGrandchildHoldsNoStdio(t *testing.T) {
	pidfile := filepath.Join(testkit.TempDir(t), "pids")
	tree := startHelper(t, Config{}, "quiet", pidfile, "exit")
	eofAfterReady(t, tree)
	roles, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	if !running(roles["sleeper"]) {
		t.Fatalf("the grandchild (pid %d) ended with the adapter: the test proves nothing", roles["sleeper"])
	}
	shutdown(t, tree)
	testkit.Gone(t, roles["sleeper"])
}
