package proto

import "errors"

// ErrNilContext is the one nil-context error of the whole module: every exported
// function or method that takes a context refuses a nil one with an error that
// errors.Is(err, ErrNilContext) matches, instead of panicking in the caller's goroutine.
// It lives here, the lowest package the host side and the adapter SDK share; package
// runtime re-exports it (runtime.ErrNilContext), which is the name to use.
var ErrNilContext = errors.New("nil context")
