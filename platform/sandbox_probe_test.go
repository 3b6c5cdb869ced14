package platform

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// osProbes are the probes of one operating system's tests, registered by their files'
// init functions.
var osProbes = map[string]func(arg string) error{}

// sandboxProbe tries each "op:arg" of args and prints one "op:arg ok" or
// "op:arg err ..." line per attempt: the sandbox tests read what the kernel allowed.
func sandboxProbe(args []string) int {
	for _, a := range args {
		op, arg, _ := strings.Cut(a, ":")
		var err error
		switch op {
		case "read":
			_, err = os.ReadFile(arg)
		case "list":
			_, err = os.ReadDir(arg)
		case "write":
			err = os.WriteFile(filepath.Join(arg, "probe"), []byte("x"), 0o600)
		case "tmp":
			var f *os.File
			if f, err = os.CreateTemp("", "probe"); err == nil {
				f.Close()
			}
		case "connect":
			var c net.Conn
			if c, err = net.DialTimeout("tcp", arg, 5*time.Second); err == nil {
				c.Close()
			}
		case "bind":
			var l net.Listener
			if l, err = net.Listen("tcp", arg); err == nil {
				l.Close()
			}
		case "unix":
			var c net.Conn
			if c, err = net.Dial("unix", arg); err == nil {
				c.Close()
			}
		case "truncate":
			err = os.Truncate(arg, 0)
		case "otrunc": // opened for reading only: O_TRUNC truncates it all the same
			var f *os.File
			if f, err = os.OpenFile(arg, os.O_RDONLY|os.O_TRUNC, 0); err == nil {
				f.Close()
			}
		case "exec":
			err = exec.Command(arg).Run()
		case "kill":
			pid, _ := strconv.Atoi(arg)
			var p *os.Process
			if p, err = os.FindProcess(pid); err == nil {
				err = p.Signal(syscall.Signal(0))
			}
		default:
			if f := osProbes[op]; f != nil {
				err = f(arg)
			} else {
				err = fmt.Errorf("unknown probe %q", op)
			}
		}
		if err != nil {
			fmt.Printf("%s err %v\n", a, err)
		} else {
			fmt.Printf("%s ok\n", a)
		}
	}
	return 0
}
