package platform

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// A nil or closed *os.File as Config.Stderr is refused on every OS: the adapter would
// start with descriptor 2 closed and its first open() would become its standard error
// (on Windows the handle value would be the current-process pseudo-handle). nil (the
// interface) still means the null device.
func TestStderrInvalidFile(t *testing.T) {
	closed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for _, f := range []*os.File{nil, closed} {
		tree, err := Start(context.Background(), Config{Path: mustExecutable(), Args: []string{helperArg, "block"}, Stderr: f})
		if err == nil {
			_ = tree.Close()
			t.Fatalf("Start with Stderr %v succeeded", f)
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Start with Stderr %v: %v, want ErrInvalidConfig", f, err)
		}
	}
}

// R49: nothing but the adapter holds its standard handles, so the host reads EOF on
// the adapter's stdout as soon as the adapter closes it, while everything still runs:
// not another adapter the host started before or meanwhile (the host's pipe ends are
// never inheritable, the handles it lends a child are inherited by that child alone),
// nor a grandchild the adapter starts without them.
func TestStdioHeldByTheAdapterAlone(t *testing.T) {
	if testkit.WineGap(t, "EOF on the adapter's stdout once it closes it, while it runs",
		"the conhost.exe Wine 8 starts for a process created with CREATE_NO_WINDOW holds that process's standard handles until it exits (with DETACHED_PROCESS the assertion holds under Wine)") {
		return
	}
	t.Run("other adapters", func(t *testing.T) {
		other := startHelper(t, Config{}, "block") // started first
		tree := startHelper(t, Config{}, "quiet", "-")
		third := startHelper(t, Config{}, "block") // started while the adapter runs
		eofAfterReady(t, tree)
		stillRunning(t, other, tree, third)
	})
	t.Run("grandchild", func(t *testing.T) {
		pidfile := filepath.Join(testkit.TempDir(t), "pids")
		tree := startHelper(t, Config{}, "quiet", pidfile)
		eofAfterReady(t, tree)
		roles, err := readPidFile(pidfile)
		if err != nil {
			t.Fatal(err)
		}
		if !testkit.Running(roles["sleeper"]) {
			t.Fatalf("the grandchild (pid %d) ended before the EOF was checked: the test proves nothing", roles["sleeper"])
		}
		stillRunning(t, tree)
		shutdown(t, tree)
		if treeProves(tree.Supervision()) {
			testkit.Gone(t, roles["sleeper"])
		}
	})
}

// eofAfterReady reads the adapter's stdout to EOF, which must come (bounded) once it
// said "ready" and closed its stdout or exited.
func eofAfterReady(t *testing.T, tree *Tree) {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(tree.Stdout())
		got <- string(b)
	}()
	select {
	case s := <-got:
		if s != "ready\n" {
			t.Fatalf("adapter said %q", s)
		}
	case <-ctxBound(t).Done():
		t.Fatal("no EOF on the adapter's stdout after it closed it or exited: another process holds the pipe")
	}
}

// stillRunning fails t if one of the trees' adapters has ended.
func stillRunning(t *testing.T, trees ...*Tree) {
	t.Helper()
	for _, o := range trees {
		select {
		case <-o.Exited():
			t.Fatalf("adapter %d ended: it was to run throughout", o.Pid())
		default:
		}
	}
}

// R61: arguments reach the adapter verbatim, whatever they hold: on Windows the command
// line is quoted for CommandLineToArgvW's rules and parsed back by the adapter's runtime,
// never by a shell.
func TestArgsReachTheAdapterVerbatim(t *testing.T) {
	args := []string{"", "plain", "two words", `quote"inside`, `trailing\`, `trailing space\ `,
		`\\server\share\`, `a\\"b`, "tab\there", `"`, `\"`, "é😀", "%PATH%", "^&|<>", "$HOME", "'single'", "*", "new\nline"}
	tree := startHelper(t, Config{}, "args", args...)
	var got []string
	if err := json.NewDecoder(tree.Stdout()).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, args) {
		t.Errorf("the adapter received %q, want %q", got, args)
	}
}
