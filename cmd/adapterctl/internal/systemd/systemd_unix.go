//go:build unix

package systemd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Listener is one listening socket systemd passed.
type Listener struct {
	net.Listener
	// Name is its FileDescriptorName= (from LISTEN_FDNAMES), "" when none was given.
	Name string
	// Unix: a Unix domain stream socket; otherwise a TCP one.
	Unix bool
}

// Listeners returns the listening sockets systemd passed to this process (none when
// it was not socket-activated), in descriptor order, and removes the LISTEN_*
// variables from the environment. Every passed descriptor is made close-on-exec
// before anything else is done with it, and replaced by the returned listener's own.
// A passed descriptor that is not a listening Unix stream or TCP socket (a datagram,
// sequential-packet or non-listening socket, or no socket) is a *NotListenerError,
// and every passed descriptor is closed then.
func Listeners() ([]Listener, error) {
	n, names, err := parseListen(os.Getenv, os.Getpid())
	for _, k := range []string{EnvListenPID, EnvListenFDs, EnvListenFDNames} {
		_ = os.Unsetenv(k)
	}
	if err != nil || n == 0 {
		return nil, err
	}
	for i := range n {
		unix.CloseOnExec(ListenFDsStart + i)
	}
	var out []Listener
	fail := func(err error) ([]Listener, error) {
		for _, l := range out {
			_ = l.Close()
		}
		return nil, err
	}
	for i := range n {
		fd := ListenFDsStart + i
		isUnix, err := checkListening(fd)
		if err == nil {
			f := os.NewFile(uintptr(fd), "systemd:"+names[i])
			var ln net.Listener
			ln, err = net.FileListener(f) // a duplicate, close-on-exec
			_ = f.Close()
			if err == nil {
				out = append(out, Listener{Listener: ln, Name: names[i], Unix: isUnix})
				continue
			}
		} else {
			_ = unix.Close(fd)
		}
		for j := i + 1; j < n; j++ {
			_ = unix.Close(ListenFDsStart + j)
		}
		return fail(&NotListenerError{FD: fd, Name: names[i], Err: err})
	}
	return out, nil
}

// checkListening says whether fd is a listening stream socket of a kind served
// (Unix, IPv4 or IPv6), asking the kernel (SO_TYPE, SO_ACCEPTCONN, getsockname)
// rather than trying to accept on it: net.FileListener takes a datagram socket or
// one that does not listen, and every accept then fails.
func checkListening(fd int) (isUnix bool, err error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		if errors.Is(err, unix.ENOTSOCK) {
			return false, errors.New("it is not a socket")
		}
		return false, fmt.Errorf("its socket type cannot be read: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return false, fmt.Errorf("its address cannot be read: %w", err)
	}
	var family string
	switch sa.(type) {
	case *unix.SockaddrUnix:
		family, isUnix = "Unix", true
	case *unix.SockaddrInet4:
		family = "IPv4"
	case *unix.SockaddrInet6:
		family = "IPv6"
	default:
		return false, fmt.Errorf("it is a socket of an address family serve does not use (%T)", sa)
	}
	switch typ {
	case unix.SOCK_STREAM:
	case unix.SOCK_DGRAM:
		kind := "a Unix datagram socket (ListenDatagram=)"
		if !isUnix {
			kind = "a UDP socket (ListenDatagram=)"
		}
		return false, errors.New("it is " + kind)
	case unix.SOCK_SEQPACKET:
		// A stream protocol over a socket that keeps message boundaries would cut
		// frames at the reader's buffer size: refused rather than half supported.
		return false, errors.New("it is a " + family + " sequential-packet socket (ListenSequentialPacket=); only stream sockets (ListenStream=) are served")
	default:
		return false, fmt.Errorf("it is a %s socket of type %d", family, typ)
	}
	listening, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil {
		return false, fmt.Errorf("whether it listens cannot be read: %w", err)
	}
	if listening == 0 {
		proto := "TCP"
		if isUnix {
			proto = "Unix stream"
		}
		return false, errors.New("it is a " + proto + " socket that is not listening (bound or connected, but listen(2) was not called)")
	}
	return isUnix, nil
}

// Notifier sends state changes to the service manager (sd_notify(3)). A nil
// *Notifier, which NewNotifier returns when NOTIFY_SOCKET is not set, sends nothing.
type Notifier struct {
	mu   sync.Mutex
	conn *net.UnixConn
}

// NewNotifier returns a Notifier for $NOTIFY_SOCKET (a path, or "@name" for a Linux
// abstract socket) and removes the variable from the environment; nil when it is not
// set.
func NewNotifier() (*Notifier, error) {
	addr := os.Getenv(EnvNotifySocket)
	_ = os.Unsetenv(EnvNotifySocket)
	return dialNotify(addr)
}

func dialNotify(addr string) (*Notifier, error) {
	switch {
	case addr == "":
		return nil, nil
	case strings.HasPrefix(addr, "@"):
		// An abstract socket: Go spells its leading NUL as "@" too.
	case strings.HasPrefix(addr, "/"):
	default:
		return nil, fmt.Errorf("systemd: %s=%q: neither an absolute path nor an abstract @name (vsock is not supported)", EnvNotifySocket, addr)
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("systemd: %s: %w", EnvNotifySocket, err)
	}
	return &Notifier{conn: c}, nil
}

// Notify sends one state datagram, e.g. "READY=1\nSTATUS=serving 3 adapters".
func (n *Notifier) Notify(state string) error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return errors.New("systemd: notifier closed")
	}
	_, err := n.conn.Write([]byte(state))
	return err
}

// Close closes the notification socket.
func (n *Notifier) Close() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return nil
	}
	err := n.conn.Close()
	n.conn = nil
	return err
}

func monotonicUsec() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Sec)*1_000_000 + uint64(ts.Nsec)/1000
}
