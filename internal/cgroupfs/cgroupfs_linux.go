package cgroupfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrNoCgroup2 is the error of Mount (and Dir) when no cgroup2 filesystem is mounted.
var ErrNoCgroup2 = errors.New("no cgroup2 filesystem mounted")

var mount struct {
	once       sync.Once
	mountpoint string // where the cgroup2 filesystem is mounted
	root       string // the cgroup path that mountpoint shows (mountinfo field 4)
	err        error
}

// Mount returns where the cgroup2 filesystem is mounted and the cgroup path that
// mountpoint shows, read once from /proc/self/mountinfo.
func Mount() (mountpoint, root string, err error) {
	m := &mount
	m.once.Do(func() {
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			m.err = err
			return
		}
		defer f.Close()
		m.mountpoint, m.root, m.err = ParseMountinfo(f)
	})
	return m.mountpoint, m.root, m.err
}

// ParseMountinfo returns the mount point and root of the first cgroup2 mount of a
// mountinfo file, or ErrNoCgroup2.
func ParseMountinfo(r io.Reader) (mountpoint, root string, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		return Unescape(f[4]), Unescape(f[3]), nil
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", ErrNoCgroup2
}

// Unescape undoes the octal escapes (\040 etc.) of a mountinfo field.
func Unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Dir returns the filesystem directory of the cgroup v2 of process proc: "self" or a
// process id.
func Dir(proc string) (string, error) {
	mountpoint, root, err := Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/" + proc + "/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel, err := filepath.Rel(root, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				return "", fmt.Errorf("the cgroup %q of /proc/%s is outside the cgroup2 mount root %q", p, proc, root)
			}
			return filepath.Join(mountpoint, rel), nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 entry in /proc/%s/cgroup", proc)
}
