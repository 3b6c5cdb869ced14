package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// containOp tries one of the attacks that need Linux system calls; handled is false
// for an op it does not know. detail says what a success achieved.
func containOp(a Attempt) (detail string, handled bool, err error) {
	handled = true
	switch a.Op {
	case "chmod-suid": // set the set-user-ID bit on a file
		err = unix.Chmod(a.Arg, 0o4755)
		if err == nil {
			err = hasSetID(a.Arg)
		}
	case "chown": // give a file to our own uid and gid (a change only root may make on others' files)
		err = unix.Chown(a.Arg, os.Getuid(), os.Getgid())
	case "utimes": // set a file's times to the epoch
		err = unix.UtimesNano(a.Arg, []unix.Timespec{{}, {}})
	case "setxattr":
		err = unix.Setxattr(a.Arg, "user.hostile", []byte("1"), 0)
	case "create-suid": // create a set-user-ID file
		p := fresh(a.Arg, "hostile-suid")
		var fd int
		if fd, err = unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755); err == nil {
			unix.Close(fd)
			err = hasSetID(p)
		}
	case "copy-suid": // copy /usr/bin/id, then make the copy set-user-ID
		p := fresh(a.Arg, "hostile-id")
		if err = copyFile("/usr/bin/id", p); err == nil {
			if err = unix.Chmod(p, 0o4755); err == nil {
				err = hasSetID(p)
			}
		}
	case "mknod-suid": // create a set-user-ID regular file with mknod
		p := fresh(a.Arg, "hostile-node")
		if err = unix.Mknod(p, unix.S_IFREG|0o4755, 0); err == nil {
			err = hasSetID(p)
		}
	case "tgkill": // PID:SIG or parent:SIG: the signal to every thread of that process
		detail, err = signalThreads(a.Arg)
	case "prlimit": // PID or parent: rewrite that process's RLIMIT_CORE (to what it is)
		var pid int
		if pid, err = targetPid(a.Arg); err == nil {
			var old unix.Rlimit
			if err = unix.Prlimit(pid, unix.RLIMIT_CORE, nil, &old); err == nil {
				err = unix.Prlimit(pid, unix.RLIMIT_CORE, &old, nil)
			}
			err = unreachable(err, pid)
		}
	case "renice", "affinity", "ioprio": // PID or parent: rewrite its priority, CPU affinity or I/O priority (to what it is)
		var pid int
		if pid, err = targetPid(a.Arg); err == nil {
			err = unreachable(rewriteSched(a.Op, pid), pid)
		}
	case "listen": // listen on a TCP socket without bind: the kernel picks a port on every address
		detail, err = listenUnbound()
	case "dgram": // a datagram socket pair, then sendto a pathname datagram socket
		var fds [2]int
		if fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err == nil {
			err = unix.Sendto(fds[0], []byte("hostile datagram"), 0, &unix.SockaddrUnix{Name: a.Arg})
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	case "udp": // HOST:PORT (IPv4): a UDP datagram
		detail, err = sendUDP(a.Arg)
	case "userns": // a child in a user namespace of its own, holding every capability there
		detail, err = newUserNamespace()
	case "clone-parent": // a child of the host (CLONE_PARENT) in a session of its own
		detail, err = cloneParent()
	case "shm": // ID: write into a System V shared memory segment of another process
		var id int
		var mem []byte
		if id, err = strconv.Atoi(a.Arg); err == nil {
			if mem, err = unix.SysvShmAttach(id, 0, 0); err == nil {
				copy(mem, "hostile shm")
				err = unix.SysvShmDetach(mem)
			} else {
				err = fmt.Errorf("shmat: %w", err)
			}
		}
	default:
		handled = false
	}
	return detail, handled, err
}

// fresh is DIR/NAME with any earlier file of that name removed (adapterctl check
// starts the adapter several times).
func fresh(dir, name string) string {
	p := filepath.Join(dir, name)
	_ = os.Remove(p)
	return p
}

// rewriteSched reads a scheduling property of pid and sets it to the same value: the
// kernel checks the permission either way.
func rewriteSched(op string, pid int) error {
	switch op {
	case "renice":
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
		if err != nil {
			return err
		}
		return unix.Setpriority(unix.PRIO_PROCESS, pid, 20-prio) // getpriority's 40..1 is nice -20..19
	case "affinity":
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &set); err != nil {
			return err
		}
		return unix.SchedSetaffinity(pid, &set)
	}
	const whoProcess = 1 // IOPRIO_WHO_PROCESS
	prio, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, whoProcess, uintptr(pid), 0)
	if e == 0 {
		_, _, e = unix.Syscall(unix.SYS_IOPRIO_SET, whoProcess, uintptr(pid), prio)
	}
	if e != 0 {
		return e
	}
	return nil
}

func hasSetID(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return err
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) == 0 {
		return fmt.Errorf("mode %o: no set-id bit although the call succeeded", st.Mode&0o7777)
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// targetPid reads "parent" (the adapter's parent, its host: 0 inside a PID namespace,
// which hides it) or a pid.
func targetPid(arg string) (int, error) {
	if arg == "parent" {
		if pid := os.Getppid(); pid != 0 {
			return pid, nil
		}
		return 0, errors.New("unreachable: no parent is visible (PID namespace)")
	}
	return strconv.Atoi(arg)
}

// unreachable rewords ESRCH: the process exists, but not where the adapter can name it.
func unreachable(err error, pid int) error {
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("unreachable: pid %d is not visible here: %w", pid, err)
	}
	return err
}

// signalThreads sends a signal to each thread of a process. The threads are listed from
// /proc when it is readable; otherwise they are found as an attacker would, by probing
// thread ids near the process's pid and near the adapter's own (a thread that forked
// the adapter was created just before it) with signal 0, whose answer tells a thread
// that exists (EPERM or success) from one that does not (ESRCH).
func signalThreads(arg string) (string, error) {
	target, sigName, _ := strings.Cut(arg, ":")
	pid, err := targetPid(target)
	if err != nil {
		return "", err
	}
	sig, err := strconv.Atoi(sigName)
	if err != nil {
		return "", err
	}
	if err := unix.Tgkill(pid, pid, 0); errors.Is(err, unix.ESRCH) {
		return "", unreachable(err, pid)
	}
	var tids []int
	if names, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
		for _, n := range names {
			if tid, err := strconv.Atoi(n.Name()); err == nil {
				tids = append(tids, tid)
			}
		}
	} else {
		seen := map[int]bool{}
		self := os.Getpid()
		for _, r := range [][2]int{{pid, pid + 4096}, {max(1, self-4096), self}} {
			for tid := r[0]; tid < r[1]; tid++ {
				if !seen[tid] && !errors.Is(unix.Tgkill(pid, tid, 0), unix.ESRCH) {
					seen[tid] = true
					tids = append(tids, tid)
				}
			}
		}
	}
	var sent []int
	var refusals []string
	for _, tid := range tids {
		if err := unix.Tgkill(pid, tid, syscall.Signal(sig)); err != nil {
			refusals = append(refusals, fmt.Sprintf("%d: %v", tid, err))
		} else {
			sent = append(sent, tid)
		}
	}
	if len(sent) > 0 {
		return fmt.Sprintf("signal %d reached threads %v of %d", sig, sent, pid), nil
	}
	return "", fmt.Errorf("signal %d reached none of the %d threads of %d: %s", sig, len(tids), pid, strings.Join(refusals, "; "))
}

func listenUnbound() (string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Listen(fd, 1); err != nil {
		return "", fmt.Errorf("listen: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return "", err
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return "", fmt.Errorf("bound to %T", sa)
	}
	return fmt.Sprintf("listening on %d.%d.%d.%d:%d", in4.Addr[0], in4.Addr[1], in4.Addr[2], in4.Addr[3], in4.Port), nil
}

func sendUDP(arg string) (string, error) {
	host, portStr, _ := strings.Cut(arg, ":")
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", err
	}
	var addr unix.SockaddrInet4
	addr.Port = port
	if _, err := fmt.Sscanf(host, "%d.%d.%d.%d", &addr.Addr[0], &addr.Addr[1], &addr.Addr[2], &addr.Addr[3]); err != nil {
		return "", err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, []byte("hostile datagram"), 0, &addr); err != nil {
		return "", fmt.Errorf("sendto: %w", err)
	}
	return "sent to " + arg, nil
}
