//go:build !linux && !darwin

package controlplane

import "net"

// serveSupported is false: without a client's user the daemon could not refuse
// other users, so Serve returns an error matching errors.ErrUnsupported (Windows, and Unix systems other
// than Linux and macOS).
const serveSupported = false

// peerUID cannot learn a client's user here, so every client is refused (and on
// Windows Serve does not start at all).
func peerUID(net.Conn) (int, error) { return -1, errNoDaemon }
