// Package sentinel defines the few error values that packages on both sides of a
// layering line share, so that each is defined once, below every package that returns
// it, and errors.Is matches it whichever package returned it. Each is exported by the
// public package named in its comment; that name is the one users write.
package sentinel

import "errors"

var (
	// Closed is the one "closed by the host" error: a use of a connection, process
	// tree, supervisor, registry or handle after the host closed it (wire.CodeClosed).
	Closed = errors.New("closed by the host")
	// NilContext refuses a nil context.Context instead of panicking in the caller's
	// goroutine (runtime.ErrNilContext).
	NilContext = errors.New("nil context")
	// NotAbsolute refuses a relative path where an absolute one is required: an
	// adapter's path, a directory to scan (platform.ErrNotAbsolute,
	// discovery.ErrNotAbsolute).
	NotAbsolute = errors.New("path is not absolute")
	// NotFound: no adapter exists at a path or under a name (platform.ErrNotFound,
	// discovery.ErrNotFound).
	NotFound = errors.New("adapter not found")
	// NotRegular: a path names a directory, device, pipe or other non-regular file
	// where an executable file is required (platform.ErrNotRegular).
	NotRegular = errors.New("adapter path is not a regular file")
)
