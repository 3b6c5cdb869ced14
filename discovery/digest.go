package discovery

import (
	"context"
	"os"

	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Errors of a pinned digest, the same whether it is checked here or at every start of
// a pinned adapter (platform.Config.Digest, lifecycle.Config.Digest,
// registry.Config.Pins), so that errors.Is works alike on both.
var (
	// ErrDigestMismatch: the file's SHA-256 is not the expected one; the error says
	// both digests.
	ErrDigestMismatch = digest.ErrMismatch
	// ErrInvalidDigest: the expected digest is not 64 hexadecimal digits.
	ErrInvalidDigest = digest.ErrInvalid
)

// errNilContext refuses a nil context: runtime.ErrNilContext matches it.
var errNilContext = sentinel.NilContext

// SHA256 returns the lower-case hex SHA-256 of the regular file at path.
func SHA256(path string) (string, error) {
	return digest.FileAt(path)
}

// VerifySHA256 checks that the regular file at path has the SHA-256 wantHex
// (64 hex digits, either case). It returns an error matching
// ErrDigestMismatch when it differs, one matching ErrInvalidDigest for a malformed wantHex, before touching the
// file, and ctx.Err() when ctx ends while hashing.
//
// Checking here and executing later are two steps: the file can be replaced in
// between. To bind a pin to what runs, set it on the start instead
// (platform.Config.Digest, lifecycle.Config.Digest, registry.Config.Pins): the
// file is then hashed and executed through one descriptor where the system allows.
func VerifySHA256(ctx context.Context, path string, wantHex string) error {
	if ctx == nil {
		return errNilContext
	}
	want, err := digest.Parse(wantHex)
	if err != nil {
		return err
	}
	got, err := sha256File(ctx, path)
	if err != nil {
		return err
	}
	if got != want {
		return &digest.MismatchError{Path: path, Want: want, Got: got}
	}
	return nil
}

// sha256File hashes path. It refuses anything but a regular file before
// opening it (opening a FIFO would block); digest.File checks again on the open file.
func sha256File(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: path, Err: sentinel.NotRegular}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return digest.File(ctx, f)
}
