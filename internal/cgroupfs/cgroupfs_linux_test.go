package cgroupfs

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	hybrid := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
`
	cases := []struct {
		name, in, mount, root string
		err                   error
	}{
		{"hybrid", hybrid, "/sys/fs/cgroup/unified", "/", nil},
		{"escaped", "50 1 0:40 /sub /mnt/with\\040space rw - cgroup2 none rw\n", "/mnt/with space", "/sub", nil},
		{"none", "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", "", "", ErrNoCgroup2},
		{"v1 only", "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "", "", ErrNoCgroup2},
	}
	for _, tc := range cases {
		m, r, err := ParseMountinfo(strings.NewReader(tc.in))
		if m != tc.mount || r != tc.root || !errors.Is(err, tc.err) {
			t.Errorf("%s: got %q %q %v, want %q %q %v", tc.name, m, r, err, tc.mount, tc.root, tc.err)
		}
	}
}
