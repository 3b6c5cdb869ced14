// Package systemd speaks the two protocols a service uses with systemd, without
// linking libsystemd: socket activation (sd_listen_fds(3): the sockets systemd opened
// are passed as descriptors 3, 4, ... with LISTEN_PID, LISTEN_FDS and
// LISTEN_FDNAMES) and readiness notification (sd_notify(3): datagrams such as
// "READY=1" sent to the Unix socket named by NOTIFY_SOCKET).
//
// It is adapterctl's own (cmd/adapterctl/internal, in the CLI's layer) and imports no
// package of the module.
//
// Both read their variables once and remove them from the process environment, as
// sd_listen_fds(1) and sd_notify(1, ...) do, so that no child process (an adapter)
// inherits them; the passed descriptors are marked close-on-exec at once for the
// same reason.
package systemd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ListenFDsStart is the first descriptor systemd passes (SD_LISTEN_FDS_START).
const ListenFDsStart = 3

// Environment variables of the two protocols.
const (
	EnvListenPID     = "LISTEN_PID"
	EnvListenFDs     = "LISTEN_FDS"
	EnvListenFDNames = "LISTEN_FDNAMES"
	EnvNotifySocket  = "NOTIFY_SOCKET"
)

// ErrListenEnv: LISTEN_PID, LISTEN_FDS or LISTEN_FDNAMES is malformed.
var ErrListenEnv = errors.New("systemd: malformed socket activation environment")

// NotListenerError: a descriptor systemd passed is not a listening stream socket
// of a kind served (a Unix stream or a TCP socket on which listen(2) was called).
type NotListenerError struct {
	FD   int    // the descriptor number
	Name string // its FileDescriptorName=, "" when none was given
	Err  error  // what it is instead
}

// Error implements error.
func (e *NotListenerError) Error() string {
	s := "systemd: passed descriptor " + strconv.Itoa(e.FD)
	if e.Name != "" {
		s += " (FileDescriptorName=" + e.Name + ")"
	}
	return s + " is not a listening stream socket: " + e.Err.Error()
}

// Unwrap returns what the descriptor is instead.
func (e *NotListenerError) Unwrap() error { return e.Err }

// maxListenFDs bounds LISTEN_FDS: far more than any unit passes, and few enough that
// a corrupt value cannot make the process walk its descriptor table.
const maxListenFDs = 1024

// parseListen returns the number of descriptors passed to process pid and their
// names, from the variables getenv returns: 0 when none were passed or they are
// meant for another process (LISTEN_PID differs, e.g. a parent's variables
// inherited). Names are "" where LISTEN_FDNAMES gives none.
func parseListen(getenv func(string) string, pid int) (int, []string, error) {
	ps, fs := getenv(EnvListenPID), getenv(EnvListenFDs)
	if ps == "" || fs == "" {
		return 0, nil, nil
	}
	p, err := strconv.Atoi(ps)
	if err != nil || p <= 0 {
		return 0, nil, fmt.Errorf("%w: %s=%q", ErrListenEnv, EnvListenPID, ps)
	}
	if p != pid {
		return 0, nil, nil
	}
	n, err := strconv.Atoi(fs)
	if err != nil || n < 0 || n > maxListenFDs {
		return 0, nil, fmt.Errorf("%w: %s=%q", ErrListenEnv, EnvListenFDs, fs)
	}
	names := make([]string, n)
	if v := getenv(EnvListenFDNames); v != "" {
		parts := strings.Split(v, ":")
		if len(parts) != n {
			return 0, nil, fmt.Errorf("%w: %s has %d names for %d descriptors", ErrListenEnv, EnvListenFDNames, len(parts), n)
		}
		copy(names, parts)
	}
	return n, names, nil
}

// Without returns env without the variables of both protocols (for a child process's
// environment built from an inherited one); env itself is not modified.
func Without(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case EnvListenPID, EnvListenFDs, EnvListenFDNames, EnvNotifySocket:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Reloading is the state a service sends when it begins a reload (for
// Type=notify-reload): RELOADING=1 with the CLOCK_MONOTONIC time in microseconds,
// which systemd requires with it. READY=1 follows when the reload is done.
func Reloading() string {
	return "RELOADING=1\nMONOTONIC_USEC=" + strconv.FormatUint(monotonicUsec(), 10)
}
