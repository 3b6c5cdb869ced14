package platform

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// helperArg in argv[1] turns the test binary into a helper process: argv[2] is the mode.
// Modes are argv-driven (not environment-driven) so that tests can check that the
// adapter's environment is exactly Config.Env, even empty.
const helperArg = "adapterkit-platform-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	goleak.VerifyTestMain(m)
}

// selfPid is the pid of the calling process as the host sees it: /proc is not
// remounted inside the PID namespace, so /proc/self names the host-side pid.
func selfPid() int {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return os.Getpid() // no /proc (not Linux)
	}
	n, _ := strconv.Atoi(s)
	return n
}

// record appends "role pid" to the pid file shared by a helper tree.
func record(pidfile, role string) {
	f, err := os.OpenFile(pidfile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "%s %d\n", role, selfPid())
	f.Close()
}

func helperCmd(mode string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exec.Command(exe, append([]string{helperArg, mode}, args...)...)
}

// waitRoles polls the pid file until every role is recorded (helpers only).
func waitRoles(pidfile string, roles ...string) {
	if !testkit.Within(10*time.Second, func() bool {
		m, _ := readPidFile(pidfile)
		for _, r := range roles {
			if m[r] == 0 {
				return false
			}
		}
		return len(m) > 0
	}) {
		panic("roles never recorded: " + strings.Join(roles, ","))
	}
}

func readPidFile(pidfile string) (map[string]int, error) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return nil, err
	}
	m := make(map[string]int)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			m[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	return m, nil
}

func runHelper(mode string, args []string) int {
	switch mode {
	case "probe": // try each operation named in args, report what the kernel allowed
		return sandboxProbe(args)
	case "echo": // copy stdin to stdout until EOF
		_, _ = io.Copy(os.Stdout, os.Stdin)
	case "block": // wait for stdin EOF
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "stderr": // write args[0] bytes to stderr, then "done" to stdout, then wait for EOF
		n, _ := strconv.Atoi(args[0])
		chunk := []byte(strings.Repeat("e", 4096))
		for w := 0; w < n; w += len(chunk) {
			if _, err := os.Stderr.Write(chunk[:min(len(chunk), n-w)]); err != nil {
				return 3
			}
		}
		fmt.Println("done")
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "args": // the arguments after the mode, as JSON
		_ = json.NewEncoder(os.Stdout).Encode(args)
	case "env":
		fmt.Print(strings.Join(os.Environ(), "\n"))
	case "fds": // "fd target" lines for every open descriptor
		d, err := os.Open("/proc/self/fd")
		if err != nil {
			return 3
		}
		names, _ := d.Readdirnames(-1)
		for _, n := range names {
			target, err := os.Readlink(filepath.Join("/proc/self/fd", n))
			if errors.Is(err, os.ErrNotExist) {
				continue // closed since the listing (the runtime's cgroup reads): not a leak
			}
			if n == strconv.Itoa(int(d.Fd())) {
				target = "listing"
			}
			fmt.Printf("%s %s\n", n, target)
		}
		d.Close()
	case "cwd":
		wd, _ := os.Getwd()
		fmt.Print(wd)
	case "ignoreterm":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		testkit.BlockForever() // even stdin EOF does not end it
	case "sleeper": // a grandchild that stays in the group
		record(args[0], "sleeper")
		testkit.BlockForever()
	case "middle": // the first fork of a double fork: start a setsid daemon and exit
		c := helperCmd("daemon", args[0])
		c.SysProcAttr = setsidAttr()
		if err := c.Start(); err != nil {
			return 4
		}
		record(args[0], "middle")
		waitRoles(args[0], "daemon")
	case "quiet": // start a grandchild (unless args[0] is "-") with none of our standard
		// handles, then exit (args[1] "exit") or close stdout and wait for stdin EOF
		if args[0] != "-" {
			sl := helperCmd("sleeper", args[0]) // stdin, stdout and stderr: the null device
			// Detached (setsid; on Windows without the adapter's console, whose host
			// process would otherwise stay and hold the adapter's handles, see
			// docs/supervision.md's Wine gaps).
			sl.SysProcAttr = setsidAttr()
			if sl.Start() != nil {
				return 5
			}
			waitRoles(args[0], "sleeper")
		}
		fmt.Println("ready")
		if len(args) > 1 && args[1] == "exit" {
			return 0
		}
		os.Stdout.Close()
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "daemon":
		record(args[0], "daemon")
		testkit.BlockForever()
	case "tree": // an adapter with a grandchild in its group and a double-forked setsid one
		record(args[0], "adapter")
		sl := helperCmd("sleeper", args[0])
		sl.Stdout = os.Stdout // a grandchild holding the adapter's stdout
		mid := helperCmd("middle", args[0])
		if sl.Start() != nil || mid.Run() != nil {
			return 5
		}
		waitRoles(args[0], "sleeper", "daemon")
		fmt.Println("ready")
		if len(args) > 1 && args[1] == "exit" {
			return 0 // the adapter exits; its grandchildren stay
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		testkit.BlockForever()
	case "host": // a host process: start a "tree" adapter, report, wait to be killed
		iso, _ := strconv.Atoi(args[1])
		tree, err := Start(context.Background(), Config{
			Path: mustExecutable(), Args: []string{helperArg, "tree", args[0]},
			Isolation: Isolation(iso), Env: []string{"GORACE=atexit_sleep_ms=0"},
		})
		if err != nil {
			fmt.Println("error", err)
			return 6
		}
		line, _ := bufio.NewReader(tree.Stdout()).ReadString('\n')
		record(args[0], "host")
		fmt.Printf("%s %s\n", strings.TrimSpace(line), tree.Supervision().Mechanism)
		testkit.BlockForever()
	case "sweep": // a second host on the machine: sweep, report one line per item
		rep, err := Sweep(context.Background(), nil)
		for _, it := range rep.Swept {
			fmt.Printf("swept %s %d %s\n", it.Path, it.HostPid, joinInts(it.Pids))
		}
		for _, it := range rep.Failed {
			fmt.Printf("failed %s %d %v\n", it.Path, it.HostPid, it.Err)
		}
		if err != nil {
			fmt.Printf("error %v\n", err)
		}
	case "pause": // a child of forkbomb
		testkit.BlockForever()
	case "forkbomb": // start children until refused, report, end them, then echo
		n, ferr := forkUntilRefused()
		fmt.Printf("refused %d %v\n", n, errors.Is(ferr, syscall.EAGAIN))
		_, _ = io.Copy(os.Stdout, os.Stdin)
	case "alloc": // allocate and touch memory without end (up to 8 GiB), then say so
		fmt.Println("allocating")
		var hoard [][]byte
		for range 8 << 10 {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
		fmt.Println("survived", len(hoard))
	default:
		if h := osHelpers[mode]; h != nil {
			return h(args)
		}
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	return 0
}

// osHelpers are the helper modes of one operating system's tests, registered by their
// files' init functions.
var osHelpers = map[string]func(args []string) int{}

func joinInts(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func mustExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe
}

// forkUntilRefused starts "pause" children until starting one fails, then kills and
// reaps them all; it returns how many ran and the error that stopped it.
func forkUntilRefused() (int, error) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	var kids []*os.Process
	defer func() {
		for _, k := range kids {
			_ = k.Kill()
			_, _ = k.Wait()
		}
	}()
	exe := mustExecutable()
	for range 1 << 16 {
		p, err := os.StartProcess(exe, []string{exe, helperArg, "pause"},
			&os.ProcAttr{Files: []*os.File{null, null, null}})
		if err != nil {
			return len(kids), err
		}
		kids = append(kids, p)
	}
	return len(kids), errors.New("never refused")
}
