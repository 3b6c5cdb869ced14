package platform

import (
	"errors"
	"slices"
	"testing"
)

// The process-group mechanisms (Linux fallback, macOS) find a tree in a process table:
// by parent links from the roots, by group, and by recorded identity once re-parented.
func TestTreeOf(t *testing.T) {
	table := []procStat{
		{pid: 1, ppid: 0, pgid: 1, state: 'S', start: 1},
		{pid: 100, ppid: 50, pgid: 100, state: 'S', start: 10},  // the adapter (leader of group 100)
		{pid: 101, ppid: 100, pgid: 100, state: 'S', start: 11}, // its child
		{pid: 102, ppid: 101, pgid: 102, state: 'S', start: 12}, // setsid grandchild, still linked
		{pid: 103, ppid: 1, pgid: 100, state: 'S', start: 13},   // group member re-parented to init
		{pid: 104, ppid: 1, pgid: 104, state: 'S', start: 14},   // escaped: only known by identity
		{pid: 105, ppid: 104, pgid: 104, state: 'S', start: 15}, // child of the escaped one
		{pid: 106, ppid: 101, pgid: 100, state: 'Z', start: 16}, // zombie: not alive
		{pid: 107, ppid: 106, pgid: 107, state: 'S', start: 17}, // child of a zombie still links
		{pid: 200, ppid: 1, pgid: 200, state: 'S', start: 20},   // unrelated
		{pid: 201, ppid: 1, pgid: 201, state: 'S', start: 99},   // recycled pid of a known process
	}
	known := map[int]uint64{104: 14, 201: 21}
	pids := func(ps []procStat) []int { p := pidsOf(ps); slices.Sort(p); return p }

	got := pids(treeOf(table, []int{100}, 100, known))
	if want := []int{100, 101, 102, 103, 104, 105, 107}; !slices.Equal(got, want) {
		t.Errorf("before reap: %v, want %v", got, want)
	}
	roots, group := scanScope(100, 100, true)
	got = pids(treeOf(table, roots, group, known))
	if want := []int{104, 105}; !slices.Equal(got, want) {
		t.Errorf("after reap only recorded processes and their descendants: %v, want %v", got, want)
	}
	if roots, group := scanScope(100, 100, false); !slices.Equal(roots, []int{100}) || group != 100 {
		t.Errorf("scanScope before reap = %v, %d", roots, group)
	}
}

// Kill rounds repeat while the tree has members (a fork during a round is caught by the
// next), stop when it is empty, are bounded, and signal the group once per round.
func TestKillRounds(t *testing.T) {
	t.Run("forks during rounds", func(t *testing.T) {
		// Each round finds what the previous round's victims forked: 3 rounds of members.
		pending := [][]procStat{{{pid: 10}}, {{pid: 11}, {pid: 12}}, {{pid: 13}}, {}}
		var killed []int
		groups, scans := 0, 0
		err := killRounds(8, func() ([]procStat, error) {
			s := pending[scans]
			scans++
			return s, nil
		}, func() { groups++ }, func(p procStat) { killed = append(killed, p.pid) })
		if err != nil || !slices.Equal(killed, []int{10, 11, 12, 13}) || groups != 3 || scans != 4 {
			t.Errorf("err %v killed %v groups %d scans %d", err, killed, groups, scans)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		scans := 0
		_ = killRounds(killWalkRounds, func() ([]procStat, error) { scans++; return []procStat{{pid: 1}}, nil },
			func() {}, func(procStat) {})
		if scans != killWalkRounds {
			t.Errorf("a tree that never empties: %d scans, want %d", scans, killWalkRounds)
		}
	})
	t.Run("scan error", func(t *testing.T) {
		boom := errors.New("boom")
		if err := killRounds(8, func() ([]procStat, error) { return nil, boom }, func() {}, func(procStat) {}); !errors.Is(err, boom) {
			t.Errorf("err %v", err)
		}
	})
}
