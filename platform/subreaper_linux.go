package platform

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// setSubreaper sets or clears PR_SET_CHILD_SUBREAPER on this process.
func setSubreaper(on bool) error {
	v := 0
	if on {
		v = 1
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, uintptr(v), 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	return nil
}

// noteCgroupMembers records, when the host is a child subreaper, the processes of a
// tree that has a cgroup but no PID namespace, before they are killed: those that left
// the adapter's descent are the host's children by then, and once killed they are its
// zombies, which reapOrphans reaps.
func (s *osTree) noteCgroupMembers() {
	if s.cg == nil || s.pidns || !currentHostOptions().ChildSubreaper {
		return
	}
	pids := s.cg.pids()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		s.known = make(map[int]uint64)
	}
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil {
			s.known[pid] = st.start
		}
	}
}

// reapOrphans reaps the recorded processes of the tree (by pid and start time) that
// were re-parented to this host, a child subreaper, and have exited: nothing else waits
// for them. A process killed a moment ago may still be exiting; it is waited for a
// little, up to orphanReapBound. A zombie's pid cannot be reused, so nothing else is
// reaped.
func (s *osTree) reapOrphans(t *Tree) {
	if !currentHostOptions().ChildSubreaper {
		return
	}
	me, err := self()
	if err != nil {
		return
	}
	s.mu.Lock()
	known := make(map[int]uint64, len(s.known))
	for pid, start := range s.known {
		if pid != t.pid { // the direct child is Tree.reap's
			known[pid] = start
		}
	}
	s.mu.Unlock()
	deadline := time.Now().Add(orphanReapBound)
	for len(known) > 0 {
		for pid, start := range known {
			st, err := readStat(pid)
			switch {
			case err != nil || st.start != start || st.ppid != me.pid:
				delete(known, pid) // gone, or not the host's child
			case !st.alive():
				var ws unix.WaitStatus
				_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				delete(known, pid)
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// orphanReapBound bounds how long reapOrphans waits for killed orphans to exit.
const orphanReapBound = time.Second
