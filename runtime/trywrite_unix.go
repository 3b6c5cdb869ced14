//go:build unix

package runtime

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// nonblockingWriter returns one non-blocking write attempt on w when w is a file in
// non-blocking mode (a pipe from os.Pipe, as lifecycle gives the adapter's input): it
// writes what the pipe takes at once and never waits; nil for any other writer. The
// attempt reports how much was written and false on any error, which the write loop
// then meets and handles itself.
func nonblockingWriter(w io.Writer) func(p []byte) (int, bool) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if err := rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = err == nil && fl&unix.O_NONBLOCK != 0
	}); err != nil || !nonblock {
		return nil
	}
	return func(p []byte) (int, bool) {
		var n int
		var werr error
		// Returning true from the callback makes it one attempt: the runtime poller
		// is never asked to wait for the pipe.
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Write(int(fd), p)
			return true
		}); err != nil || werr != nil {
			return max(n, 0), false
		}
		return n, true
	}
}
