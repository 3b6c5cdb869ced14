package platform

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	osHelpers["ttyhost"] = ttyHost
	osHelpers["ttyprobe"] = ttyProbe
}

// scContainCases are the filter's cases for terminal ioctls, children in namespaces of
// their own or of the host, and IPC objects of the host's IPC namespace (allSCCases
// includes them).
var scContainCases = []scCase{
	// A control would type into a terminal only where the kernel still allows it
	// (dev.tty.legacy_tiocsti), so it is not run; TestSandboxTerminal shows the attack.
	{"ioctl TIOCSTI", "none", unix.EPERM, "any", func(e *scEnv) error {
		return withPty(func(pts int) error {
			c := byte('#')
			return sys(unix.SYS_IOCTL, uintptr(pts), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		})
	}},
	{"ioctl TIOCLINUX", "none", unix.EPERM, "any", func(e *scEnv) error {
		return withPty(func(pts int) error {
			c := byte(2) // TIOCL_SETSEL's subcode byte; a pty is no console anyway
			return sys(unix.SYS_IOCTL, uintptr(pts), unix.TIOCLINUX, uintptr(unsafe.Pointer(&c)))
		})
	}},
	{"clone CLONE_NEWUSER", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return forkExecTrue(unix.CLONE_NEWUSER)
	}},
	{"clone CLONE_NEWNET|CLONE_NEWNS", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return forkExecTrue(unix.CLONE_NEWNET | unix.CLONE_NEWNS)
	}},
	// The child's parent would be this test; it is not waited for (not run unfiltered).
	{"clone CLONE_PARENT", "none", unix.EPERM, "any", func(e *scEnv) error {
		return forkExecTrue(unix.CLONE_PARENT)
	}},
	{"shmget", "none", unix.EPERM, "ok", func(e *scEnv) error {
		id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		if err == nil {
			_, err = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		}
		return err
	}},
	{"shmat", "none", unix.EPERM, "any", func(e *scEnv) error { return sys(unix.SYS_SHMAT, 0, 0, 0) }},
	{"msgget", "none", unix.EPERM, "ok", func(e *scEnv) error {
		id, _, errno := unix.Syscall(unix.SYS_MSGGET, 0 /* IPC_PRIVATE */, unix.IPC_CREAT|0o600, 0)
		if errno != 0 {
			return errno
		}
		return sys(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0)
	}},
	{"semget", "none", unix.EPERM, "any", func(e *scEnv) error { return sys(unix.SYS_SEMGET, 0, 1, unix.IPC_CREAT|0o600) }},
	{"mq_open", "none", unix.EPERM, "any", func(e *scEnv) error { return sys(unix.SYS_MQ_OPEN, cstr("adapterkit-none"), unix.O_RDONLY, 0, 0) }},
	// The mount table, without /proc: the ids of the mounts under the root (LSMT_ROOT).
	{"listmount", "none", unix.EPERM, "ok", func(e *scEnv) error {
		req := struct {
			size, spare           uint32
			mntID, param, mntNSID uint64
		}{size: 24, mntID: ^uint64(0)}
		var ids [16]uint64
		return sys(unix.SYS_LISTMOUNT, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&ids[0])), uintptr(len(ids)), 0)
	}},
	{"statmount", "none", unix.EPERM, "any", func(e *scEnv) error { return sys(unix.SYS_STATMOUNT, 0, 0, 0, 0) }},
	{"fcntl F_SETLEASE", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error {
			if err := sys(unix.SYS_FCNTL, fd, unix.F_SETLEASE, unix.F_RDLCK); err != nil {
				return err
			}
			return sys(unix.SYS_FCNTL, fd, unix.F_SETLEASE, unix.F_UNLCK)
		})
	}},
	{"fcntl F_GETFL (other fcntls pass)", "none", 0, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error { return sys(unix.SYS_FCNTL, fd, unix.F_GETFL) })
	}},
	// Invalid arguments (size 0): without the filter EINVAL, never a process.
	{"clone3", "none", unix.ENOSYS, "any", func(e *scEnv) error { return sys(unix.SYS_CLONE3, 0, 0) }},
	{"clone without namespaces (fork and exec)", "none", 0, "ok", func(e *scEnv) error { return forkExecTrue(0) }},
}

// withPty runs f on the terminal side of a new pseudo-terminal.
func withPty(f func(pts int) error) error {
	master, pts, err := openPty()
	if err != nil {
		return err
	}
	defer master.Close()
	defer pts.Close()
	return f(int(pts.Fd()))
}

// openPty opens a new pseudo-terminal: its master and its terminal side.
func openPty() (master, pts *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(fd), "ptmx")
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	}
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("opening the terminal side: %w", err)
	}
	return master, pts, nil
}

// forkExecTrue runs /bin/true in a child cloned with flags, and waits for it.
func forkExecTrue(flags uintptr) error {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Cloneflags: flags}})
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	_, err = syscall.Wait4(pid, &ws, 0, nil)
	return err
}

// ttyProbe (an adapter) asks the kernel, of its standard error, a terminal: whether it
// is its controlling terminal (TIOCGSID answers only then), and pushes a '#' into its
// input (TIOCSTI) — what the shell behind it would read and run. One line on stdout:
// "ctty ok|ERR sti ok|ERR".
func ttyProbe([]string) int {
	_, err := unix.IoctlGetInt(2, unix.TIOCGSID)
	c := byte('#')
	sti := sys(unix.SYS_IOCTL, 2, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	word := func(err error) string {
		if err == nil {
			return "ok"
		}
		return strings.ReplaceAll(err.Error(), " ", "_")
	}
	fmt.Printf("ctty %s sti %s\n", word(err), word(sti))
	return 0
}

// ttyHost (args: "sandbox" or "none", the isolation) is a host whose controlling
// terminal is its standard input: it starts ttyProbe with that terminal as the adapter's
// standard error (an *os.File, handed over as it is) and prints the probe's line.
func ttyHost(args []string) int {
	iso, _ := strconv.Atoi(args[1])
	cfg := Config{Path: mustExecutable(), Args: []string{helperArg, "ttyprobe"}, Env: []string{"GORACE=atexit_sleep_ms=0"},
		Stderr: os.Stdin, Isolation: Isolation(iso)}
	if args[0] == "sandbox" {
		cfg.Sandbox = &Sandbox{}
	}
	ctx := context.Background()
	tree, err := Start(ctx, cfg)
	if err != nil {
		fmt.Println("start", err)
		return 3
	}
	line := make([]byte, 256)
	n, _ := tree.Stdout().Read(line)
	_ = tree.Kill(ctx)
	_ = tree.Verify(ctx)
	_ = tree.Close()
	fmt.Print(string(line[:n]))
	return 0
}

// A sandboxed adapter handed its host's terminal (Config.Stderr = the terminal) can
// neither type into it (TIOCSTI: the characters would run in the user's shell once the
// host ends) nor use it as its controlling terminal (job control: taking the terminal's
// foreground would stop the host at its next read): the launcher makes it the leader of
// a session of its own, and the filter refuses TIOCSTI. As root and as nobody, in every
// isolation; the control (no sandbox) has the terminal as its controlling one, and types
// into it where the kernel allows that (dev.tty.legacy_tiocsti).
func TestSandboxTerminal(t *testing.T) {
	exe := mustExecutable()
	users := []string{fmt.Sprint(os.Geteuid())}
	if os.Geteuid() == 0 {
		_, exe = othersCopy(t)
		users = append(users, "nobody")
	}
	legacy, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	run := func(t *testing.T, user, sandbox string, iso Isolation) (ctty, sti string) {
		t.Helper()
		master, pts, err := openPty()
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		defer pts.Close()
		cmd := exec.CommandContext(ctxBound(t), exe, helperArg, "ttyhost", sandbox, strconv.Itoa(int(iso)))
		cmd.Env = []string{"GORACE=atexit_sleep_ms=0", "TMPDIR=" + os.TempDir()}
		cmd.Stdin = pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if user == "nobody" {
			if err := pts.Chown(nobodyUID, nobodyUID); err != nil {
				t.Fatal(err)
			}
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}
			cmd.Dir = "/"
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		f := strings.Fields(string(out))
		if err != nil || len(f) != 4 {
			t.Fatalf("tty host (%s, %s): %v: %q %s", user, sandbox, err, out, stderr.String())
		}
		return f[1], f[3]
	}
	for _, user := range users {
		t.Run(user, func(t *testing.T) {
			ctty, sti := run(t, user, "none", IsolationProcessGroup)
			if ctty != "ok" {
				t.Fatalf("control: the terminal is not the adapter's controlling one (%s); the probe shows nothing", ctty)
			}
			if strings.TrimSpace(string(legacy)) == "1" && sti != "ok" {
				t.Fatalf("control: TIOCSTI refused (%s) although the kernel allows it", sti)
			}
			for _, is := range append(isolations[:len(isolations):len(isolations)], struct {
				name string
				iso  Isolation
			}{"no-userns", IsolationNoUserNamespace}) {
				t.Run(is.name, func(t *testing.T) {
					ctty, sti := run(t, user, "sandbox", is.iso)
					if ctty == "ok" {
						t.Errorf("the host's terminal is the sandboxed adapter's controlling terminal")
					}
					if sti == "ok" {
						t.Errorf("the sandboxed adapter typed into the host's terminal (TIOCSTI)")
					}
				})
			}
		})
	}
}
