package discovery

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

func TestSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := SHA256(p)
	if err != nil || got != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := SHA256(filepath.Dir(p)); !errors.Is(err, sentinel.ErrNotRegular) {
		t.Fatalf("directory: %v", err)
	}
}
