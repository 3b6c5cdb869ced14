//go:build !unix

package runtime

import "io"

// nonblockingWriter returns nil: outside Unix every write goes through the write loop
// (Windows pipes have no non-blocking writes the runtime poller offers).
func nonblockingWriter(io.Writer) func(p []byte) (int, bool) { return nil }
