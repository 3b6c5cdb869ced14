// Package cpconst names the control plane's own version and bounds once, for package
// controlplane (which enforces them) and adapterctl (which shows them and uses them
// as flag defaults). A host using package controlplane reads them in the documentation
// of the fields and methods they apply to; they are not part of its API.
//
// It is in the module's shared layer (internal/) and imports no package of the module,
// so that two layers, controlplane and adapterctl, read the same values.
package cpconst

import "time"

const (
	// ProtocolVersion is the version of the control-plane wire protocol spoken
	// (docs/control-plane.md).
	ProtocolVersion = 1

	// MaxDiscoverTimeout is the longest Discover stream a daemon accepts.
	MaxDiscoverTimeout = 10 * time.Minute

	// HandshakeTimeout is the default bound of a remote client's TLS handshake.
	HandshakeTimeout = 5 * time.Second

	// IdleTimeout is the default idle time after which a remote client is closed.
	IdleTimeout = 5 * time.Minute
)
