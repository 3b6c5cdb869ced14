package platform

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The control-file helpers behave as the os package's calls they replace: a missing
// file is fs.ErrNotExist in an *os.PathError naming it and is never created, a write
// replaces nothing but what it writes, and a read returns the whole file however large.
func TestControlFiles(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "cgroup.kill")
	err := writeExisting(missing, "1")
	var pe *os.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != missing {
		t.Fatalf("writing a missing file: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("writeExisting created %s (%v)", missing, err)
	}
	if _, err := readControl(missing); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != missing {
		t.Fatalf("reading a missing file: %v", err)
	}

	path := filepath.Join(dir, "memory.max")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeExisting(path, "max\n"); err != nil {
		t.Fatal(err)
	}
	if b, err := readControl(path); err != nil || string(b) != "max\n" {
		t.Fatalf("read back %q, %v", b, err)
	}

	big := bytes.Repeat([]byte("populated 0\nfrozen 0\n"), 200) // several reads' worth
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := readControl(path); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("read %d bytes of %d, %v", len(b), len(big), err)
	}
}
