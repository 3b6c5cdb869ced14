// Package digest computes and checks the SHA-256 pins of adapter executables (the
// lower-case hex SHA-256 of the file, as sha256sum prints it), for package platform,
// which checks a pin at every start; discovery exports its errors
// (discovery.ErrDigestMismatch, discovery.ErrInvalidDigest).
//
// It is in the module's shared layer (internal/) and imports only internal/sentinel;
// platform, discovery, registry and controlplane use it.
package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Errors of a pin.
var (
	// ErrMismatch: the file's SHA-256 is not the pinned one. Matched by every
	// [*MismatchError].
	ErrMismatch = errors.New("SHA-256 digest mismatch")
	// ErrInvalid: the pinned digest is not 64 hexadecimal digits. Matched by every
	// [*InvalidError].
	ErrInvalid = errors.New("invalid SHA-256 digest")
)

// MismatchError reports a file whose SHA-256 differs from the pinned one: it was
// not started.
type MismatchError struct {
	Path string
	Want string // lower-case hex
	Got  string // lower-case hex
}

// Error implements error.
func (e *MismatchError) Error() string {
	return e.Path + ": SHA-256 is " + e.Got + ", pinned " + e.Want
}

// Is reports whether target is ErrMismatch.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// InvalidError reports a pinned digest that is not a SHA-256 in hex.
type InvalidError struct {
	Digest string // as given
	Detail string
}

// Error implements error.
func (e *InvalidError) Error() string {
	return "pinned digest " + strconv.Quote(e.Digest) + ": " + e.Detail
}

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Parse checks a hex SHA-256 (64 hex digits, either case) and returns it in lower
// case, or an *InvalidError.
func Parse(s string) (string, error) {
	if len(s) != 2*sha256.Size {
		return "", &InvalidError{Digest: s, Detail: fmt.Sprintf("%d characters, want %d hex digits", len(s), 2*sha256.Size)}
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return "", &InvalidError{Digest: s, Detail: err.Error()}
	}
	return hex.EncodeToString(b), nil
}

// FileAt returns the lower-case hex SHA-256 of the regular file at path, as a pin
// (platform.Config.Digest) of it.
func FileAt(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: path, Err: sentinel.ErrNotRegular}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return File(context.Background(), f)
}

// digestChunk is how much is hashed between two looks at the context.
const digestChunk = 256 << 10

// File returns the lower-case hex SHA-256 of the open file f from its start, reading
// it in chunks and returning ctx.Err() when ctx ends first. f must be a regular file
// (opening a FIFO to hash it would block: check the path first).
func File(ctx context.Context, f *os.File) (string, error) {
	if ctx == nil {
		return "", sentinel.ErrNilContext
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: f.Name(), Err: sentinel.ErrNotRegular}
	}
	h := sha256.New()
	// To the end of the file, whatever its size was at Stat; ReadAt leaves the file's
	// offset alone.
	r := io.NewSectionReader(f, 0, 1<<62)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		_, err := io.CopyN(h, r, digestChunk)
		if err == io.EOF { // CopyN reports EOF when the file ended within the chunk
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
