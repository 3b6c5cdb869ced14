// Package sentinel defines the few error values that packages on both sides of a
// layering line share, so that each is defined once, below every package that returns
// it, and errors.Is matches it whichever package returned it. Each is exported by the
// public package named in its comment; that name is the one users write.
//
// It is in the module's shared layer (internal/) and imports no package of the module.
package sentinel

//lint:file-ignore ST1012 the values are exported as Err... by the public packages (named in each comment); here the package name says what they are

import "errors"

var (
	// ErrClosed is the one "closed by the host" error: a use of a connection, process
	// tree, supervisor, registry or handle after the host closed it (runtime.ErrClosed).
	ErrClosed = errors.New("closed by the host")
	// ErrNilContext refuses a nil context.Context instead of panicking in the caller's
	// goroutine (runtime.ErrNilContext).
	ErrNilContext = errors.New("nil context")
	// ErrNotAbsolute refuses a relative path where an absolute one is required: an
	// adapter's path, a directory to scan (platform.ErrNotAbsolute,
	// discovery.ErrNotAbsolute).
	ErrNotAbsolute = errors.New("path is not absolute")
	// ErrNotFound: no adapter exists at a path or under a name (platform.ErrNotFound,
	// discovery.ErrNotFound).
	ErrNotFound = errors.New("adapter not found")
	// ErrNotRegular: a path names a directory, device, pipe or other non-regular file
	// where an executable file is required (platform.ErrNotRegular).
	ErrNotRegular = errors.New("adapter path is not a regular file")
)
