package platform

import (
	"context"
	"errors"
	"os"
	"testing"
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
