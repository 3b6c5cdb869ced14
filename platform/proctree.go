package platform

// procStat is what this package knows of one process from the system's process table
// (Linux: /proc/<pid>/stat; macOS: kern.proc sysctl).
type procStat struct {
	pid, ppid, pgid, sid int
	state                byte
	// start is the process's start time in a unit of the system's (Linux: clock ticks
	// since boot; macOS: microseconds since the epoch): with pid, an identity that a
	// recycled pid does not share.
	start uint64
}

// alive reports whether the process runs code: zombies ('Z') and dead tasks ('X', 'x')
// do not. macOS entries use 'Z' for zombies too.
func (p procStat) alive() bool { return p.state != 'Z' && p.state != 'X' && p.state != 'x' }

// treeOf returns the living processes of the table all that belong to a tree: those
// reachable from the roots by parent links, those in process group pgid (0: none), and
// the known ones (pid -> start time) that still run with the same start time even when
// they were re-parented out of reach, together with their descendants. A dead entry
// still links its children. Each process appears once.
func treeOf(all []procStat, roots []int, pgid int, known map[int]uint64) []procStat {
	children := make(map[int][]procStat)
	for _, s := range all {
		children[s.ppid] = append(children[s.ppid], s)
	}
	seen := make(map[int]bool)
	var out []procStat
	add := func(s procStat) bool {
		if seen[s.pid] {
			return false
		}
		seen[s.pid] = true
		if s.alive() {
			out = append(out, s)
		}
		return true
	}
	queue := append([]int(nil), roots...)
	for _, s := range all {
		if (pgid > 0 && s.pgid == pgid) || (known[s.pid] != 0 && known[s.pid] == s.start) {
			if add(s) {
				queue = append(queue, s.pid)
			}
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if add(c) {
				queue = append(queue, c.pid)
			}
		}
	}
	return out
}

// scanScope says where a scan of a process-group tree may look. Until the direct child
// (pid, also the group id pgid) is reaped, its pid and group id cannot be given to
// another process, so the scan follows both. Once it is reaped either may name
// unrelated processes: the scan then follows only processes it recorded earlier (by pid
// and start time) and their descendants.
func scanScope(pid, pgid int, reaped bool) (roots []int, group int) {
	if reaped {
		return nil, 0
	}
	return []int{pid}, pgid
}

// killRounds is the bounded kill loop of the process-group mechanisms: it scans the
// tree, signals the group (killGroup, which must itself refuse once the group id may
// have been reused) and every process found, and repeats while processes are found, so
// that a member forking during a round is caught by the next. It stops after rounds
// rounds; what still runs is for Verify to report.
func killRounds(rounds int, scan func() ([]procStat, error), killGroup func(), killOne func(procStat)) error {
	for range rounds {
		found, err := scan()
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return nil
		}
		killGroup()
		for _, p := range found {
			killOne(p)
		}
	}
	return nil
}

// killWalkRounds bounds killRounds: a tree that keeps forking faster than it is killed
// is left for Verify to report.
const killWalkRounds = 8

func pidsOf(ps []procStat) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.pid
	}
	return out
}
