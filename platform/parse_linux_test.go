package platform

import (
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name may contain spaces and parentheses.
	line := "4242 (a) b (c) S 1 4242 4000 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 rest"
	s, err := parseStat([]byte(line))
	if err != nil || s != (procStat{pid: 4242, ppid: 1, pgid: 4242, sid: 4000, state: 'S', start: 987654}) {
		t.Fatalf("got %+v, %v", s, err)
	}
	if !s.alive() || (procStat{state: 'Z'}).alive() {
		t.Error("alive is wrong")
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1 2", "x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestParseCgroupName(t *testing.T) {
	cases := []struct {
		name  string
		pid   int
		start uint64
		ok    bool
	}{
		{"adapterkit-123-456-7", 123, 456, true},
		{"adapterkit-123-456", 0, 0, false},
		{"adapterkit-0-456-7", 0, 0, false},
		{"adapterkit-x-456-7", 0, 0, false},
		{"adapterkit-1-2-3-4", 0, 0, false},
		{"other-123-456-7", 0, 0, false},
	}
	for _, tc := range cases {
		pid, start, ok := parseCgroupName(tc.name)
		if pid != tc.pid || start != tc.start || ok != tc.ok {
			t.Errorf("parseCgroupName(%q) = %d %d %v", tc.name, pid, start, ok)
		}
	}
}

func TestParseV1Mountinfo(t *testing.T) {
	in := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 /sub /sys/fs/cgroup/mem\040ory rw,relatime shared:5 - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,memory_recursiveprot
`
	m, err := parseV1Mountinfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]v1Mount{
		"memory":  {"/sys/fs/cgroup/mem ory", "/sub"},
		"pids":    {"/sys/fs/cgroup/pids", "/"},
		"cpuacct": {"/sys/fs/cgroup/cpu,cpuacct", "/"},
	}
	for c, w := range want {
		if m[c] != w {
			t.Errorf("%s: got %+v, want %+v", c, m[c], w)
		}
	}
	if _, ok := m["memory_recursiveprot"]; ok {
		t.Error("a cgroup2 mount option was taken for a v1 controller")
	}
}

func TestParseProcCgroup(t *testing.T) {
	in := "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/ab\n2:cpu,cpuacct:/x\n0::/\n"
	got := parseProcCgroup([]byte(in))
	want := map[string]string{"name=systemd": "/", "pids": "/", "memory": "/process_api/ab", "cpu": "/x", "cpuacct": "/x"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

func TestKeyedValue(t *testing.T) {
	file := []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	cases := []struct {
		key  string
		n    int64
		okay bool
	}{
		{"oom_kill", 3, true},
		{"oom_kill_disable", 0, true},
		{"oom", 0, false},
		{"missing", 0, false},
	}
	for _, tc := range cases {
		if n, ok := keyedValue(file, tc.key); n != tc.n || ok != tc.okay {
			t.Errorf("keyedValue(%q) = %d, %v", tc.key, n, ok)
		}
	}
}
