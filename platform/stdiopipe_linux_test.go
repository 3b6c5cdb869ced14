package platform

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nonblocking reports whether f's descriptor has O_NONBLOCK.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return flags&unix.O_NONBLOCK != 0
}

// The host's end of a standard stream's pipe is in the poller (deadlines work, a
// close ends a pending read); the child's end is blocking and outside it, as the
// adapter receives it, so the start neither unregisters it nor resets its flags.
func TestStdioPipeEnds(t *testing.T) {
	for _, hostReads := range []bool{true, false} {
		r, w, err := stdioPipe(hostReads)
		if err != nil {
			t.Fatal(err)
		}
		host, child := w, r
		if hostReads {
			host, child = r, w
		}
		if !nonblocking(t, host) {
			t.Errorf("hostReads %v: the host's end is blocking", hostReads)
		}
		if err := host.SetDeadline(time.Now().Add(time.Hour)); err != nil {
			t.Errorf("hostReads %v: the host's end is not in the poller: %v", hostReads, err)
		}
		if nonblocking(t, child) {
			t.Errorf("hostReads %v: the child's end is non-blocking", hostReads)
		}
		if err := child.SetDeadline(time.Now().Add(time.Hour)); !errors.Is(err, os.ErrNoDeadline) {
			t.Errorf("hostReads %v: the child's end is in the poller (SetDeadline: %v)", hostReads, err)
		}
		for _, f := range []*os.File{r, w} {
			if flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("hostReads %v: %s is not close-on-exec (%v)", hostReads, f.Name(), err)
			}
		}
		r.Close()
		w.Close()
	}
}

// A start's three standard pipes, made, the child's ends passed to a fork as
// os.StartProcess passes them (Fd) and closed, and the host's ends closed.
func BenchmarkStdioPipes(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var files [6]*os.File
		for i, hostReads := range []bool{false, true, true} {
			r, w, err := stdioPipe(hostReads)
			if err != nil {
				b.Fatal(err)
			}
			if hostReads {
				files[2*i], files[2*i+1] = w, r
			} else {
				files[2*i], files[2*i+1] = r, w
			}
		}
		for i := 0; i < 6; i += 2 {
			files[i].Fd()
		}
		for _, f := range files {
			f.Close()
		}
	}
}
