package runtime

import "golang.org/x/sys/unix"

// unread returns how many bytes the adapter wrote that the host has not read yet
// (TIOCINQ is FIONREAD, which a pipe answers from either end).
func (a *pipeAdapter) unread() int {
	a.t.Helper()
	rc, err := a.out.SyscallConn()
	if err != nil {
		a.t.Fatal(err)
	}
	n := -1
	if err := rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || n < 0 {
		a.t.Fatalf("FIONREAD: %v", err)
	}
	return n
}
