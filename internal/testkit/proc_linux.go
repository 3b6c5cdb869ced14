package testkit

import (
	"os"
	"strconv"
	"strings"
)

// stat returns the fields of /proc/PID/stat after the command name: state, ppid, ...
func stat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// Running reports whether pid names a live process, read from /proc rather than from
// the code under test: a zombie (exited, not yet reaped) is not running.
func Running(pid int) bool {
	f, ok := stat(pid)
	return ok && len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Children lists the pids whose parent is pid, read from /proc.
func Children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(pid)
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := stat(p); ok && len(f) > 1 && f[1] == want {
			out = append(out, p)
		}
	}
	return out
}

// Proc is a process as /proc shows it: its pid and its start time (clock ticks since
// boot), which together tell it apart from a later process reusing the pid.
type Proc struct {
	Pid   int
	Start string
}

// Descendants lists the running processes below pid (children, their children, ...),
// read from /proc's parent links.
func Descendants(pid int) []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	start := map[int]string{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// Fields after the command name: state(0) ppid(1) ... starttime(19).
		if f, ok := stat(p); ok && len(f) > 19 && f[0] != "Z" && f[0] != "X" {
			parent[p], _ = strconv.Atoi(f[1])
			start[p] = f[19]
		}
	}
	var out []Proc
	for p := range parent {
		for q := parent[p]; q > 0; q = parent[q] {
			if q == pid {
				out = append(out, Proc{p, start[p]})
				break
			}
			if _, known := parent[q]; !known {
				break
			}
		}
	}
	return out
}
