package controlplane

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// serveSupported: the daemon can learn its clients' users here.
const serveSupported = true

// peerUID returns the user of the process at the other end of a Unix socket
// (SO_PEERCRED: the credentials at connect time).
func peerUID(nc net.Conn) (int, error) {
	return sockoptUID(nc, func(fd int) (int, error) {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			return -1, err
		}
		return int(cred.Uid), nil
	})
}

func sockoptUID(nc net.Conn, get func(fd int) (int, error)) (int, error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("controlplane: %T is not a Unix socket", nc)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, gerr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, gerr = get(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, gerr
}
