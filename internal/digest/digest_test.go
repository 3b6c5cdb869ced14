package digest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

func TestFileAt(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	const helloSum = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	// Larger than several hashing chunks, and not a multiple of one.
	bigData := bytes.Repeat([]byte("adapterkit-"), 3*digestChunk/11+5)
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bigData, 0o600); err != nil {
		t.Fatal(err)
	}
	bigSum := sha256.Sum256(bigData)
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	emptySum := sha256.Sum256(nil)

	tests := []struct {
		name, path, want string
		err              error
	}{
		{"small", small, helloSum, nil},
		{"big", big, hex.EncodeToString(bigSum[:]), nil},
		{"empty", empty, hex.EncodeToString(emptySum[:]), nil},
		{"missing file", filepath.Join(dir, "missing"), "", fs.ErrNotExist},
		{"directory", dir, "", sentinel.ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FileAt(tt.path)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	const sum = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if got, err := Parse(strings.ToUpper(sum)); err != nil || got != sum {
		t.Fatalf("upper case: %q, %v", got, err)
	}
	for _, bad := range []string{sum[:63], sum + "0", strings.Repeat("zz", 32), "", "nope"} {
		_, err := Parse(bad)
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Digest != bad || !errors.Is(err, ErrInvalid) || errors.Is(err, ErrMismatch) {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
}

func TestMismatchError(t *testing.T) {
	err := error(&MismatchError{Path: "/a", Want: strings.Repeat("ab", 32), Got: strings.Repeat("cd", 32)})
	if !errors.Is(err, ErrMismatch) || errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, strings.Repeat("ab", 32)) || !strings.Contains(msg, strings.Repeat("cd", 32)) {
		t.Errorf("message %q does not say both digests", msg)
	}
}

func TestFileCancelled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := File(ctx, f); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
