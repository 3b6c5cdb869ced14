package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// stdioPipe creates a pipe for one of an adapter's standard streams, both ends
// close-on-exec; the child's end reaches the adapter only as one of its three standard
// descriptors. hostReads says which end is the host's.
//
// The host's end is non-blocking and registered with Go's poller, as os.Pipe makes it.
// The child's end is made as the adapter receives it, blocking and outside the
// poller: os.Pipe would register it, and the fork would then set it blocking again and
// its close unregister it, six system calls on every start for an end the host never
// reads or writes.
func stdioPipe(hostReads bool) (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	host := p[1]
	if hostReads {
		host = p[0]
	}
	// A new pipe has no file status flags: O_NONBLOCK is the one to set.
	if _, err := unix.FcntlInt(uintptr(host), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		_ = unix.Close(p[0])
		_ = unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
