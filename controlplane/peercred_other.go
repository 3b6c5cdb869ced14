//go:build !linux && !darwin

package controlplane

import "net"

// peerUID cannot learn a client's user here, so every client is refused (and on
// Windows Serve does not start at all).
func peerUID(net.Conn) (int, error) { return -1, ErrUnsupported }
