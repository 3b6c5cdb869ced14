package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"

	"go.uber.org/goleak"
)

// binDir holds the helper programs built for this test binary; it is removed at exit.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "adapterkit-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

type built struct {
	once sync.Once
	path string
	err  error
}

var (
	buildMu sync.Mutex
	builds  = map[string]*built{}
)

// buildBin builds a helper program once per test binary and returns its absolute path.
// A name without a slash is the program e2e/cmd/<name>; a name with one is a package
// path relative to the module root (e.g. "examples/echo"). A failed build panics with
// the compiler's output, which fails the test that asked for it.
func buildBin(name string) string {
	buildMu.Lock()
	b := builds[name]
	if b == nil {
		b = &built{}
		builds[name] = b
	}
	buildMu.Unlock()
	b.once.Do(func() {
		if p := prebuilt(name); p != "" {
			b.path = p
			return
		}
		pkg := "./cmd/" + name
		if strings.Contains(name, "/") {
			pkg = "../" + name
		}
		out := strings.ReplaceAll(name, "/", "_")
		paths, err := testkit.BuildInto(binDir, testkit.Build{Pkg: pkg, Name: out})
		if err != nil {
			b.err = err
			return
		}
		b.path = paths[out]
	})
	if b.err != nil {
		panic(b.err)
	}
	return b.path
}

// buildBinT is buildBin for a test: a failed build fails t instead of panicking.
func buildBinT(t testing.TB, name string) string {
	t.Helper()
	var path string
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%v", r)
			}
		}()
		path = buildBin(name)
	}()
	return path
}
