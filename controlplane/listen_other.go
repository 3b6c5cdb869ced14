//go:build !unix

package controlplane

import "net"

// listen refuses: on Windows AF_UNIX sockets exist (Windows 10 and later), but the
// daemon could not learn a client's user, so it could not refuse other users.
func listen(string) (net.Listener, error) { return nil, errNoDaemon }
