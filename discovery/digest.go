package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Errors of the digest functions.
var (
	// ErrDigestMismatch: the file's SHA-256 is not the expected one.
	ErrDigestMismatch = errors.New("SHA-256 digest mismatch")
	// ErrInvalidDigest: the expected digest is not 64 hexadecimal digits.
	ErrInvalidDigest = errors.New("invalid SHA-256 digest")
	// ErrDigestNotRegular: the path is not a regular file.
	ErrDigestNotRegular = errors.New("not a regular file")
)

// DigestMismatchError reports a file whose SHA-256 differs from the pinned one.
type DigestMismatchError struct {
	Path string
	Want string // lower-case hex
	Got  string // lower-case hex
}

// Error implements error.
func (e *DigestMismatchError) Error() string {
	return "discovery: " + e.Path + ": SHA-256 is " + e.Got + ", want " + e.Want
}

// Is reports whether target is ErrDigestMismatch.
func (e *DigestMismatchError) Is(target error) bool { return target == ErrDigestMismatch }

// InvalidDigestError reports an expected digest that is not a SHA-256 in hex.
type InvalidDigestError struct {
	Digest string // as given
	Detail string
}

// Error implements error.
func (e *InvalidDigestError) Error() string {
	return "discovery: expected digest " + strconv.Quote(e.Digest) + ": " + e.Detail
}

// Is reports whether target is ErrInvalidDigest.
func (e *InvalidDigestError) Is(target error) bool { return target == ErrInvalidDigest }

// digestChunk is how much is hashed between two looks at the context.
const digestChunk = 256 << 10

// SHA256 returns the lower-case hex SHA-256 of the regular file at path.
func SHA256(path string) (string, error) {
	return sha256File(context.Background(), path)
}

// VerifySHA256 checks that the regular file at path has the SHA-256 wantHex
// (64 hex digits, either case). It returns a *DigestMismatchError
// (errors.Is ErrDigestMismatch) when it differs, an *InvalidDigestError
// (errors.Is ErrInvalidDigest) for a malformed wantHex, before touching the
// file, and ctx.Err() when ctx ends while hashing.
//
// Checking and executing are two steps: the file can be replaced in between.
// A pin protects only when nobody untrusted can write the file or its
// directory; see the package documentation.
func VerifySHA256(ctx context.Context, path string, wantHex string) error {
	want, err := parseDigest(wantHex)
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

func parseDigest(s string) (string, error) {
	if len(s) != 2*sha256.Size {
		return "", &InvalidDigestError{Digest: s, Detail: fmt.Sprintf("%d characters, want %d hex digits", len(s), 2*sha256.Size)}
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return "", &InvalidDigestError{Digest: s, Detail: err.Error()}
	}
	return hex.EncodeToString(b), nil
}

// sha256File hashes path. It refuses anything but a regular file before
// opening it (opening a FIFO would block) and checks again on the open file.
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
	if fi, err = f.Stat(); err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: path, Err: ErrDigestNotRegular}
	}
	h := sha256.New()
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		_, err := io.CopyN(h, f, digestChunk)
		if err == io.EOF { // CopyN reports EOF when the file ended within the chunk
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
