//go:build unix

package framewriter

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// nonblockingWriter returns one non-blocking write attempt on w when w is a file in
// non-blocking mode (a pipe from os.Pipe, as lifecycle gives the adapter's input): it
// writes what the pipe takes at once and never waits; nil for any other writer. The
// attempt reports how much was written and false on any error, which the writing turn
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
	nb := &nonblocking{rc: rc}
	nb.attempt = nb.write // bound once: an attempt allocates nothing
	return nb.try
}

// nonblocking is the state of one write attempt at a time (the writing turn makes them one at a time).
type nonblocking struct {
	rc      syscall.RawConn
	attempt func(fd uintptr) bool
	p       []byte
	n       int
	err     error
}

// write is the attempt: returning true makes it one, the runtime poller is never asked
// to wait for the pipe.
func (nb *nonblocking) write(fd uintptr) bool {
	nb.n, nb.err = unix.Write(int(fd), nb.p)
	return true
}

func (nb *nonblocking) try(p []byte) (int, bool) {
	nb.p = p
	err := nb.rc.Write(nb.attempt)
	n, werr := max(nb.n, 0), nb.err
	nb.p, nb.n, nb.err = nil, 0, nil
	return n, err == nil && werr == nil
}
