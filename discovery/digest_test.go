package discovery

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

	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/internal/sentinel"
)

func TestVerifySHA256(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	const helloSum = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	// Larger than several hashing chunks, and not a multiple of one.
	bigData := bytes.Repeat([]byte("adapterkit-"), 3*(256<<10)/11+5)
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
	wrong := strings.Repeat("0", 64)

	tests := []struct {
		name, path, want string
		err              error
	}{
		{"match", small, helloSum, nil},
		{"match upper case", small, strings.ToUpper(helloSum), nil},
		{"match big", big, hex.EncodeToString(bigSum[:]), nil},
		{"match empty", empty, hex.EncodeToString(emptySum[:]), nil},
		{"mismatch", small, wrong, ErrDigestMismatch},
		{"short", small, helloSum[:63], ErrInvalidDigest},
		{"long", small, helloSum + "0", ErrInvalidDigest},
		{"not hex", small, strings.Repeat("zz", 32), ErrInvalidDigest},
		{"empty digest", small, "", ErrInvalidDigest},
		{"bad digest before missing file", filepath.Join(dir, "missing"), "x", ErrInvalidDigest},
		{"missing file", filepath.Join(dir, "missing"), helloSum, fs.ErrNotExist},
		{"directory", dir, helloSum, sentinel.NotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifySHA256(context.Background(), tt.path, tt.want)
			if tt.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestDigestErrorDetails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("AB", 32)
	err := VerifySHA256(context.Background(), p, want)
	var dm *digest.MismatchError
	if !errors.As(err, &dm) {
		t.Fatalf("err = %v", err)
	}
	got, err2 := SHA256(p)
	if err2 != nil {
		t.Fatal(err2)
	}
	if dm.Path != p || dm.Want != strings.ToLower(want) || dm.Got != got {
		t.Errorf("mismatch %+v, file digest %s", dm, got)
	}
	if !strings.Contains(err.Error(), got) || errors.Is(err, ErrInvalidDigest) {
		t.Errorf("message %q", err)
	}
	var inv *digest.InvalidError
	if err := VerifySHA256(context.Background(), p, "nope"); !errors.As(err, &inv) || inv.Digest != "nope" || errors.Is(err, ErrDigestMismatch) {
		t.Errorf("invalid digest: %v", err)
	}
}

func TestSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := SHA256(p)
	if err != nil || got != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := SHA256(filepath.Dir(p)); !errors.Is(err, sentinel.NotRegular) {
		t.Fatalf("directory: %v", err)
	}
}

func TestVerifySHA256Cancelled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, _ := SHA256(p)
	if err := VerifySHA256(ctx, p, sum); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
