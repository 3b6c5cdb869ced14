//go:build !unix

package framewriter

import "io"

// nonblockingWriter returns nil: outside Unix every write goes through a writing turn that may block
// (Windows pipes have no non-blocking writes the runtime poller offers).
func nonblockingWriter(io.Writer) func(p []byte) (int, bool) { return nil }
