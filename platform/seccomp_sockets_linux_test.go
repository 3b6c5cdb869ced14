package platform

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// socketThen creates a socket and runs f on it (nil f: just create it).
func socketThen(domain, typ, proto int, f func(fd int) error) error {
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if f == nil {
		return nil
	}
	return f(fd)
}

func pairOf(typ int) func(*scEnv) error {
	return func(*scEnv) error {
		fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}
}

func listenUnbound(domain int) func(*scEnv) error {
	return func(*scEnv) error {
		return socketThen(domain, unix.SOCK_STREAM, 0, func(fd int) error { return unix.Listen(fd, 1) })
	}
}

func listenUnix(e *scEnv) error {
	return socketThen(unix.AF_UNIX, unix.SOCK_STREAM, 0, func(fd int) error {
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: e.path("l.sock")}); err != nil {
			return err
		}
		return unix.Listen(fd, 1)
	})
}

// scSocketCases are the socket rules under each network grant.
var scSocketCases = []scCase{
	{"socketpair AF_UNIX stream", "none", 0, "ok", pairOf(unix.SOCK_STREAM)},
	{"socketpair AF_UNIX dgram", "none", unix.EPERM, "ok", pairOf(unix.SOCK_DGRAM)},
	{"socketpair AF_UNIX seqpacket", "none", unix.EPERM, "ok", pairOf(unix.SOCK_SEQPACKET)},
	{"socketpair AF_UNIX dgram", "unix", 0, "ok", pairOf(unix.SOCK_DGRAM)},
	{"socketpair AF_UNIX dgram", "tcp", unix.EPERM, "ok", pairOf(unix.SOCK_DGRAM)},
	{"socketpair AF_TIPC", "unix", unix.EPERM, "any", func(*scEnv) error {
		fds, err := unix.Socketpair(unix.AF_TIPC, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}},
	{"socket AF_UNIX", "none", unix.EPERM, "ok", func(*scEnv) error { return socketThen(unix.AF_UNIX, unix.SOCK_STREAM, 0, nil) }},
	{"socket AF_INET stream", "tcp", 0, "ok", func(*scEnv) error { return socketThen(unix.AF_INET, unix.SOCK_STREAM, 0, nil) }},
	{"socket AF_INET6 stream tcp", "tcp", 0, "ok", func(*scEnv) error {
		return socketThen(unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP, nil)
	}},
	{"socket AF_INET dgram", "tcp", unix.EPERM, "ok", func(*scEnv) error { return socketThen(unix.AF_INET, unix.SOCK_DGRAM, 0, nil) }},
	{"socket AF_INET6 dgram", "tcp", unix.EPERM, "ok", func(*scEnv) error { return socketThen(unix.AF_INET6, unix.SOCK_DGRAM, 0, nil) }},
	{"socket AF_INET raw", "tcp", unix.EPERM, "any", func(*scEnv) error {
		return socketThen(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, nil)
	}},
	{"socket AF_INET ping", "tcp", unix.EPERM, "any", func(*scEnv) error {
		return socketThen(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP, nil)
	}},
	{"socket AF_INET stream sctp", "tcp", unix.EPERM, "any", func(*scEnv) error {
		return socketThen(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, nil)
	}},
	{"socket AF_INET stream mptcp", "tcp", unix.EPERM, "any", func(*scEnv) error {
		return socketThen(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, nil)
	}},
	{"socket AF_INET dgram", "net", 0, "ok", func(*scEnv) error { return socketThen(unix.AF_INET, unix.SOCK_DGRAM, 0, nil) }},
	{"listen unbound AF_INET", "tcp", unix.EPERM, "ok", listenUnbound(unix.AF_INET)},
	{"listen unbound AF_INET6", "tcp", unix.EPERM, "ok", listenUnbound(unix.AF_INET6)},
	{"listen unbound AF_INET", "both", unix.EPERM, "ok", listenUnbound(unix.AF_INET)},
	{"listen AF_UNIX", "both", unix.EPERM, "ok", listenUnix},
	{"listen AF_UNIX", "unix", 0, "ok", listenUnix},
	{"listen unbound AF_INET", "net", 0, "ok", listenUnbound(unix.AF_INET)},
	{"memfd_create", "none", unix.EPERM, "ok", func(*scEnv) error {
		fd, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}},
	{"memfd_create MFD_NOEXEC_SEAL", "none", 0, "ok", func(*scEnv) error {
		fd, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}},
}

// BenchmarkSeccompSyscall measures what the filter adds to a system call it lets
// through (getppid, which the filter compares with every refused number and every
// argument-checked one before allowing it): "none" without a filter, "filter" on a thread
// under the default sandbox's filter. The filtered thread is never handed back to the
// runtime: its goroutine ends locked, so the thread ends too.
func BenchmarkSeccompSyscall(b *testing.B) {
	if auditArch == 0 {
		b.Skip("no seccomp filter is defined for this architecture")
	}
	for _, filtered := range []bool{false, true} {
		name := "none"
		if filtered {
			name = "filter"
		}
		b.Run(name, func(b *testing.B) {
			done := make(chan error, 1)
			go func() {
				runtime.LockOSThread() // never unlocked when filtered: the thread ends with the goroutine
				if !filtered {
					defer runtime.UnlockOSThread()
				}
				if filtered {
					prog, _, err := seccompFilter(&Sandbox{})
					if err == nil {
						err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
					}
					if err == nil {
						err = installSeccomp(prog)
					}
					if err != nil {
						done <- err
						return
					}
				}
				b.ResetTimer()
				for range b.N {
					unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
				}
				done <- nil
			}()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
