//go:build unix

package systemd

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// receiver is a datagram socket standing in for systemd's notification socket.
func receiver(t *testing.T, addr string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func recv(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 4096)
	n, err := c.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}

// sd_notify: each state is one datagram on the socket NOTIFY_SOCKET names, a path or
// (Linux) an abstract @name; the variable is gone from the environment afterwards.
func TestNotify(t *testing.T) {
	addrs := []string{filepath.Join(t.TempDir(), "notify")}
	if goruntime.GOOS == "linux" {
		addrs = append(addrs, fmt.Sprintf("@adapterkit-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	}
	for _, addr := range addrs {
		t.Run(addr[:1], func(t *testing.T) {
			rc := receiver(t, addr)
			t.Setenv(EnvNotifySocket, addr)
			n, err := NewNotifier()
			if err != nil || n == nil {
				t.Fatalf("NewNotifier: %v %v", n, err)
			}
			defer n.Close()
			if _, set := os.LookupEnv(EnvNotifySocket); set {
				t.Error("NOTIFY_SOCKET still in the environment")
			}
			for _, s := range []string{"READY=1\nSTATUS=serving 2 adapters", "STOPPING=1"} {
				if err := n.Notify(s); err != nil {
					t.Fatal(err)
				}
				if got := recv(t, rc); got != s {
					t.Fatalf("received %q, want %q", got, s)
				}
			}
		})
	}
}

func TestNotifyUnset(t *testing.T) {
	t.Setenv(EnvNotifySocket, "")
	if n, err := NewNotifier(); n != nil || err != nil {
		t.Fatalf("%v %v", n, err)
	}
	if _, err := dialNotify("relative/path"); err == nil {
		t.Fatal("relative NOTIFY_SOCKET accepted")
	}
	if _, err := dialNotify("vsock:2:1234"); err == nil {
		t.Fatal("vsock accepted")
	}
}

// The helper process plays the activated service: systemd sets LISTEN_PID to the
// service's pid between fork and exec, which only the child can do here.
const helperEnv = "SYSTEMD_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Setenv(EnvListenPID, strconv.Itoa(os.Getpid()))
		os.Exit(helper())
	}
	os.Exit(m.Run())
}

// helper reports each listener passed (kind and name), whether the descriptors are
// close-on-exec and whether the variables are gone.
func helper() int {
	// Descriptors this process inherited from the test's own environment, other
	// than the passed ones, are not the package's business.
	before := map[int]bool{}
	for _, fd := range inheritable() {
		before[fd] = fd >= ListenFDsStart+2
	}
	ls, err := Listeners()
	if err != nil {
		fmt.Println("error:", err)
		var open []int
		for _, fd := range []int{ListenFDsStart, ListenFDsStart + 1} {
			if _, ferr := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); ferr == nil {
				open = append(open, fd)
			}
		}
		fmt.Printf("passed descriptors still open: %v\n", open)
		return 1
	}
	for _, l := range ls {
		fmt.Printf("listener %s unix=%v\n", l.Name, l.Unix)
		defer l.Close()
	}
	// Whatever descriptor a child process could inherit (the passed ones, or their
	// duplicates, which may reuse their numbers).
	var inherited []int
	for _, fd := range inheritable() {
		if !before[fd] {
			inherited = append(inherited, fd)
		}
	}
	fmt.Printf("inheritable descriptors: %v\n", inherited)
	for _, k := range []string{EnvListenPID, EnvListenFDs, EnvListenFDNames} {
		if _, set := os.LookupEnv(k); set {
			fmt.Println("still set:", k)
		}
	}
	return 0
}

// inheritable returns the open descriptors from 3 on without close-on-exec.
func inheritable() []int {
	var fds []int
	for fd := ListenFDsStart; fd < 1024; fd++ {
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			fds = append(fds, fd)
		}
	}
	return fds
}

func listenerFile(t *testing.T, network, addr string) *os.File {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// sd_listen_fds: a Unix and a TCP listening socket passed as descriptors 3 and 4 are
// found with their names and kinds; no descriptor is left that a child process would
// inherit, and the variables are removed.
func TestListeners(t *testing.T) {
	files := []*os.File{
		listenerFile(t, "unix", filepath.Join(t.TempDir(), "s")),
		listenerFile(t, "tcp", "127.0.0.1:0"),
	}
	out := runHelper(t, files, "LISTEN_FDS=2", "LISTEN_FDNAMES=control:remote")
	want := "listener control unix=true\nlistener remote unix=false\ninheritable descriptors: []\n"
	if out != want {
		t.Fatalf("helper said:\n%s\nwant:\n%s", out, want)
	}
}

// rawSocket returns a socket of the given domain and type bound to an address of
// its own (a path in a temporary directory, or an ephemeral loopback port), listening
// when listen is set, as a file to pass.
func rawSocket(t *testing.T, domain, typ int, listen bool) *os.File {
	t.Helper()
	fd, err := unix.Socket(domain, typ, 0)
	if err != nil {
		t.Skipf("socket(%d, %d): %v", domain, typ, err)
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "test socket")
	t.Cleanup(func() { _ = f.Close() })
	var sa unix.Sockaddr = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if domain == unix.AF_UNIX {
		sa = &unix.SockaddrUnix{Name: filepath.Join(t.TempDir(), "s")}
	}
	if err := unix.Bind(fd, sa); err != nil {
		t.Fatal(err)
	}
	if listen {
		if err := unix.Listen(fd, 8); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// A passed descriptor that is not a listening Unix stream or TCP socket is refused
// before anything accepts on it, saying what it is instead, and the descriptors
// passed with it are closed too (nothing is left to inherit).
func TestListenersRefuseNonListening(t *testing.T) {
	regular, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = regular.Close() })
	for _, tc := range []struct {
		name string
		file func(t *testing.T) *os.File
		want string
	}{
		{"unix datagram", func(t *testing.T) *os.File { return rawSocket(t, unix.AF_UNIX, unix.SOCK_DGRAM, false) },
			"is not a listening stream socket: it is a Unix datagram socket (ListenDatagram=)"},
		{"udp", func(t *testing.T) *os.File { return rawSocket(t, unix.AF_INET, unix.SOCK_DGRAM, false) },
			"is not a listening stream socket: it is a UDP socket (ListenDatagram=)"},
		{"unix stream bound, not listening", func(t *testing.T) *os.File { return rawSocket(t, unix.AF_UNIX, unix.SOCK_STREAM, false) },
			"it is a Unix stream socket that is not listening"},
		{"tcp bound, not listening", func(t *testing.T) *os.File { return rawSocket(t, unix.AF_INET, unix.SOCK_STREAM, false) },
			"it is a TCP socket that is not listening"},
		{"unix seqpacket listening", func(t *testing.T) *os.File { return rawSocket(t, unix.AF_UNIX, unix.SOCK_SEQPACKET, true) },
			"it is a Unix sequential-packet socket (ListenSequentialPacket=)"},
		{"regular file", func(*testing.T) *os.File { return regular }, "it is not a socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := listenerFile(t, "tcp", "127.0.0.1:0")
			out := runHelper(t, []*os.File{good, tc.file(t)}, "LISTEN_FDS=2", "LISTEN_FDNAMES=good:bad")
			want := "error: systemd: passed descriptor 4 (FileDescriptorName=bad) is not a listening stream socket: "
			if !strings.HasPrefix(out, want) || !strings.Contains(out, tc.want) {
				t.Fatalf("helper said:\n%s\nwant %q ... %q", out, want, tc.want)
			}
			if !strings.Contains(out, "passed descriptors still open: []") {
				t.Errorf("descriptors left open: %s", out)
			}
		})
	}
}

func runHelper(t *testing.T, files []*os.File, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.ExtraFiles = files
	cmd.Env = append(os.Environ(), append(env, helperEnv+"=1")...)
	out, err := cmd.Output()
	if err != nil && !strings.HasPrefix(string(out), "error:") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return string(out)
}
