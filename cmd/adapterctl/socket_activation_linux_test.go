package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// boundSocket returns a socket of the given domain and type bound to an address of
// its own, listening or not, as the file a service manager would pass.
func boundSocket(t *testing.T, dir string, domain, typ int, listen bool) *os.File {
	t.Helper()
	fd, err := syscall.Socket(domain, typ|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "passed")
	t.Cleanup(func() { _ = f.Close() })
	var sa syscall.Sockaddr = &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if domain == syscall.AF_UNIX {
		sa = &syscall.SockaddrUnix{Name: filepath.Join(dir, "passed.sock")}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		t.Fatal(err)
	}
	if listen {
		if err := syscall.Listen(fd, 8); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestServeSystemdRefusesNonListening: a passed descriptor that is not a listening
// stream socket (what ListenDatagram=, ListenSequentialPacket= or a socket that was
// never listened on gives) stops serve before it serves: exit 3, no ready line, and a
// message saying what the descriptor is, instead of accepting on it forever.
func TestServeSystemdRefusesNonListening(t *testing.T) {
	dir := shortDir(t)
	bin := adapterctlBin(t, dir)
	for _, tc := range []struct {
		name        string
		domain, typ int
		listen      bool
		want        string
	}{
		{"unix datagram", syscall.AF_UNIX, syscall.SOCK_DGRAM, false, "it is a Unix datagram socket (ListenDatagram=)"},
		{"udp", syscall.AF_INET, syscall.SOCK_DGRAM, false, "it is a UDP socket (ListenDatagram=)"},
		{"unix stream not listening", syscall.AF_UNIX, syscall.SOCK_STREAM, false, "it is a Unix stream socket that is not listening"},
		{"tcp not listening", syscall.AF_INET, syscall.SOCK_STREAM, false, "it is a TCP socket that is not listening"},
		{"unix seqpacket", syscall.AF_UNIX, syscall.SOCK_SEQPACKET, true, "sequential-packet socket (ListenSequentialPacket=)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sdir := shortDir(t)
			f := boundSocket(t, sdir, tc.domain, tc.typ, tc.listen)
			a := startActivated(t, sdir, bin, []*os.File{f}, "control", goodDir)
			select {
			case <-a.exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("serve still runs with a passed %s socket:\n%s", tc.name, a.stderrText())
			}
			var ee *exec.ExitError
			if !errors.As(a.err, &ee) || ee.ExitCode() != ExitBroken {
				t.Errorf("exit: %v, want status %d", a.err, ExitBroken)
			}
			msg := a.stderrText()
			for _, want := range []string{"socket activation", "passed descriptor 3 (FileDescriptorName=control) is not a listening stream socket", tc.want} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "file+net") || strings.Contains(a.out, "serving") {
				t.Errorf("garbled message or served:\nstdout:\n%s\nstderr:\n%s", a.out, msg)
			}
		})
	}
}
