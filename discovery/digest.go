package discovery

import (
	"context"
	"os"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/platform"
)

// Errors of the digest functions. They are package platform's, which checks a pin at
// every start ([platform.Config.Digest]); they are re-exported here so that
// errors.Is and errors.As work the same on a digest checked here or at a start.
var (
	// ErrDigestMismatch: the file's SHA-256 is not the expected one.
	ErrDigestMismatch = platform.ErrDigestMismatch
	// ErrInvalidDigest: the expected digest is not 64 hexadecimal digits.
	ErrInvalidDigest = platform.ErrInvalidDigest
	// ErrDigestNotRegular: the path is not a regular file (platform.ErrNotRegular).
	ErrDigestNotRegular = platform.ErrNotRegular
)

// errNilContext is the module's one nil-context error (runtime.ErrNilContext).
var errNilContext = proto.ErrNilContext

// DigestMismatchError reports a file whose SHA-256 differs from the pinned one.
type DigestMismatchError = platform.DigestMismatchError

// InvalidDigestError reports an expected digest that is not a SHA-256 in hex.
type InvalidDigestError = platform.InvalidDigestError

// SHA256 returns the lower-case hex SHA-256 of the regular file at path.
func SHA256(path string) (string, error) {
	return platform.HashFileAt(path)
}

// VerifySHA256 checks that the regular file at path has the SHA-256 wantHex
// (64 hex digits, either case). It returns a *DigestMismatchError
// (errors.Is ErrDigestMismatch) when it differs, an *InvalidDigestError
// (errors.Is ErrInvalidDigest) for a malformed wantHex, before touching the
// file, and ctx.Err() when ctx ends while hashing.
//
// Checking here and executing later are two steps: the file can be replaced in
// between. To bind a pin to what runs, set it on the start instead
// ([platform.Config.Digest], lifecycle.Config.Digest, registry.Config.Pins): the
// file is then hashed and executed through one descriptor where the system allows.
func VerifySHA256(ctx context.Context, path string, wantHex string) error {
	if ctx == nil {
		return errNilContext
	}
	want, err := platform.ParseDigest(wantHex)
	if err != nil {
		return err
	}
	got, err := sha256File(ctx, path)
	if err != nil {
		return err
	}
	if got != want {
		return &DigestMismatchError{Path: path, Want: want, Got: got}
	}
	return nil
}

// sha256File hashes path. It refuses anything but a regular file before
// opening it (opening a FIFO would block); HashFile checks again on the open file.
func sha256File(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: path, Err: ErrDigestNotRegular}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return platform.HashFile(ctx, f)
}
