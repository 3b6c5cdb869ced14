package testkit

import (
	"os"
	"testing"
)

// WineGap reports whether this Windows binary runs under Wine, where the behaviour an
// assertion checks is known to differ from Windows itself (gap names how). It then logs
// one "WINE GAP: assertion: gap" line, which `make test-windows` collects, and the
// caller skips that assertion alone. It is false on Windows itself and on every other
// system, so nothing is ever skipped there. docs/supervision.md keeps the table of gaps.
func WineGap(t testing.TB, assertion, gap string) bool {
	t.Helper()
	if !Wine() {
		return false
	}
	t.Logf("WINE GAP: %s: %s", assertion, gap)
	return true
}

// TempDir is t.TempDir, except under Wine 8, where os.RemoveAll fails with "Invalid
// function" (Go removes a directory's entries relative to an open handle, through a file
// information class Wine does not implement) and t.TempDir's cleanup would fail the
// test: there it removes the directory entry by entry with os.Remove, which Wine has.
func TempDir(t testing.TB) string {
	t.Helper()
	if !Wine() {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "adapterkit-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := removeTree(dir); err != nil {
			t.Errorf("removing the temporary directory %s: %v", dir, err)
		}
	})
	return dir
}

// removeTree removes dir and everything under it with os.Remove alone.
func removeTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := dir + string(os.PathSeparator) + e.Name()
		if e.IsDir() {
			if err := removeTree(p); err != nil {
				return err
			}
			continue
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}

// removeAll is os.RemoveAll, or removeTree under Wine (see TempDir).
func removeAll(dir string) error {
	if Wine() {
		return removeTree(dir)
	}
	return os.RemoveAll(dir)
}
