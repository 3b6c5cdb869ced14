package platform

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

// Errors of a pinned start ([Config.Digest]); package discovery re-exports them for its
// digest functions.
var (
	// ErrDigestMismatch: the file's SHA-256 is not the pinned one. Matched by every
	// [*DigestMismatchError].
	ErrDigestMismatch = errors.New("SHA-256 digest mismatch")
	// ErrInvalidDigest: the pinned digest is not 64 hexadecimal digits. Matched by every
	// [*InvalidDigestError].
	ErrInvalidDigest = errors.New("invalid SHA-256 digest")
)

// DigestMismatchError reports a file whose SHA-256 differs from the pinned one: it was
// not started.
type DigestMismatchError struct {
	Path string
	Want string // lower-case hex
	Got  string // lower-case hex
}

// Error implements error.
func (e *DigestMismatchError) Error() string {
	return e.Path + ": SHA-256 is " + e.Got + ", pinned " + e.Want
}

// Is reports whether target is ErrDigestMismatch.
func (e *DigestMismatchError) Is(target error) bool { return target == ErrDigestMismatch }

// InvalidDigestError reports a pinned digest that is not a SHA-256 in hex.
type InvalidDigestError struct {
	Digest string // as given
	Detail string
}

// Error implements error.
func (e *InvalidDigestError) Error() string {
	return "pinned digest " + strconv.Quote(e.Digest) + ": " + e.Detail
}

// Is reports whether target is ErrInvalidDigest.
func (e *InvalidDigestError) Is(target error) bool { return target == ErrInvalidDigest }

// ParseDigest checks a hex SHA-256 (64 hex digits, either case) and returns it in lower
// case, or an *InvalidDigestError.
func ParseDigest(s string) (string, error) {
	if len(s) != 2*sha256.Size {
		return "", &InvalidDigestError{Digest: s, Detail: fmt.Sprintf("%d characters, want %d hex digits", len(s), 2*sha256.Size)}
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return "", &InvalidDigestError{Digest: s, Detail: err.Error()}
	}
	return hex.EncodeToString(b), nil
}

// HashFileAt returns the lower-case hex SHA-256 of the regular file at path, as a pin
// ([Config.Digest]) of it.
func HashFileAt(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: path, Err: ErrNotRegular}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return HashFile(context.Background(), f)
}

// digestChunk is how much is hashed between two looks at the context.
const digestChunk = 256 << 10

// HashFile returns the lower-case hex SHA-256 of the open file f from its start, reading
// it in chunks and returning ctx.Err() when ctx ends first. f must be a regular file
// (opening a FIFO to hash it would block: check the path first).
func HashFile(ctx context.Context, f *os.File) (string, error) {
	if ctx == nil {
		return "", errNilContext
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "sha256", Path: f.Name(), Err: ErrNotRegular}
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
