package controlplane

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// serveSupported: the daemon can learn its clients' users here.
const serveSupported = true

// peerUID returns the user of the process at the other end of a Unix socket
// (LOCAL_PEERCRED: the credentials at connect time).
func peerUID(nc net.Conn) (int, error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("controlplane: %T is not a Unix socket", nc)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, gerr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			gerr = err
			return
		}
		uid = int(cred.Uid)
	}); err != nil {
		return -1, err
	}
	return uid, gerr
}
