//go:build !unix

package systemd

import (
	"net"
	"time"
)

// Listener is one listening socket systemd passed (never on this system).
type Listener struct {
	net.Listener
	Name string
	Unix bool
}

// Listeners returns nothing: there is no systemd on this system.
func Listeners() ([]Listener, error) { return nil, nil }

// Notifier sends nothing on this system.
type Notifier struct{}

// NewNotifier returns nil: there is no systemd on this system.
func NewNotifier() (*Notifier, error) { return nil, nil }

// Notify does nothing.
func (n *Notifier) Notify(string) error { return nil }

// Close does nothing.
func (n *Notifier) Close() error { return nil }

var start = time.Now()

func monotonicUsec() uint64 { return uint64(time.Since(start).Microseconds()) }
