package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The snapshot keeps what a caller can use and nothing else: exported names, values of
// constants and re-exports, exported fields and methods; not docs, bodies, unexported
// names, receiver names or test files.
func TestSnapshot(t *testing.T) {
	dir := t.TempDir()
	src := `// Package p is documented.
package p

import "errors"

// X is documented.
const X = 3
const hidden = 4

// ErrA is one.
var ErrA = errors.New("a")
var ErrB = ErrA

// T is a type.
type T struct {
	// Name is documented.
	Name string
	secret int
}

func (t *T) Method() int { return t.secret }
func (t *T) private()  {}
func helper()          {}
func New() *T          { return &T{} }

type u struct{}

func (u) Exported() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc TestHidden() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok, err := snapshot(dir, "example.com/m")
	if err != nil || !ok {
		t.Fatalf("snapshot: %v, %v", ok, err)
	}
	want := []string{"const X = 3", "var ErrA\n", "var ErrB = ErrA", "type T struct {\n    Name string\n}", "func (*T) Method() int", "func New() *T"}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("snapshot lacks %q:\n%s", w, got)
		}
	}
	for _, bad := range []string{"hidden", "secret", "private", "helper", "documented", "Exported", "TestHidden", "errors.New", "(t *T)"} {
		if strings.Contains(got, bad) {
			t.Errorf("snapshot shows %q:\n%s", bad, got)
		}
	}
	if d := lineDiff(got, strings.Replace(got, "func New() *T", "func New(n int) *T", 1)); !strings.Contains(d, "- func New() *T") || !strings.Contains(d, "+ func New(n int) *T") {
		t.Errorf("diff of a changed signature:\n%s", d)
	}
	if lineDiff(got, got) != "" {
		t.Error("diff of equal snapshots is not empty")
	}
}
