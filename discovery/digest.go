package discovery

import (
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Errors of a pinned digest, checked at every start of a pinned adapter
// (platform.Config.Digest, lifecycle.Config.Digest, registry.Config.Pins).
var (
	// ErrDigestMismatch: the file's SHA-256 is not the expected one; the error says
	// both digests.
	ErrDigestMismatch = digest.ErrMismatch
	// ErrInvalidDigest: the expected digest is not 64 hexadecimal digits.
	ErrInvalidDigest = digest.ErrInvalid
)

// errNilContext refuses a nil context: runtime.ErrNilContext matches it.
var errNilContext = sentinel.ErrNilContext
