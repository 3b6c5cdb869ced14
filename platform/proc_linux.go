package platform

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
)

var errBadStat = errors.New("malformed /proc stat")

func parseStat(b []byte) (procStat, error) {
	var s procStat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')') // the command name may contain anything, even ')'
	if open < 0 || end < open || end+2 >= len(b) {
		return s, errBadStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return s, errBadStat
	}
	f := bytes.Fields(b[end+2:]) // f[0] is field 3 (state)
	if len(f) < 20 || len(f[0]) != 1 {
		return s, errBadStat
	}
	s.pid, s.state = pid, f[0][0]
	ints := []*int{&s.ppid, &s.pgid, &s.sid}
	for i, dst := range ints {
		if *dst, err = strconv.Atoi(string(f[1+i])); err != nil {
			return s, errBadStat
		}
	}
	if s.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil { // field 22
		return s, errBadStat
	}
	return s, nil
}

// readStat reads one process's stat; an error wrapping fs.ErrNotExist means it is gone.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// selfStart is this process's start time (clock ticks since boot).
func selfStart() (uint64, error) {
	id, err := selfID()
	return id.start, err
}

// selfID is this process's pid as /proc names it and its start time, which never
// change: read once.
var selfID = sync.OnceValues(func() (procStat, error) {
	me, err := self()
	return procStat{pid: me.pid, start: me.start}, err
})

// allStats returns every process visible in /proc (vanishing ones are skipped).
func allStats() ([]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if s, err := readStat(pid); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// sameProcess reports whether pid still is the process that started at start.
func sameProcess(pid int, start uint64) bool {
	s, err := readStat(pid)
	return err == nil && s.start == start && s.alive()
}

// self is this process as /proc names it. In a PID namespace whose /proc is an outer
// one, os.Getpid() is a number that /proc gives to another process; /proc/self is
// always this one, with its pid in /proc's namespace, which is what Sweep reads.
func self() (procStat, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// descendants returns the living processes reachable from the roots by parent links,
// plus those in process group pgid (pgid 0: none) and the still-running known ones
// (see treeOf), from a walk of /proc.
func descendants(roots []int, pgid int, known map[int]uint64) ([]procStat, error) {
	all, err := allStats()
	if err != nil {
		return nil, err
	}
	return treeOf(all, roots, pgid, known), nil
}
