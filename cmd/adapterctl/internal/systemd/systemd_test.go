package systemd

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseListen(t *testing.T) {
	for _, tt := range []struct {
		name      string
		env       map[string]string
		n         int
		names     []string
		malformed bool
	}{
		{name: "not activated", env: map[string]string{}},
		{name: "only FDS", env: map[string]string{EnvListenFDs: "1"}},
		{name: "another process's", env: map[string]string{EnvListenPID: "99", EnvListenFDs: "1"}},
		{name: "one unnamed", env: map[string]string{EnvListenPID: "42", EnvListenFDs: "1"}, n: 1, names: []string{""}},
		{name: "two named", env: map[string]string{EnvListenPID: "42", EnvListenFDs: "2", EnvListenFDNames: "control:remote"},
			n: 2, names: []string{"control", "remote"}},
		{name: "zero", env: map[string]string{EnvListenPID: "42", EnvListenFDs: "0"}, names: []string{}},
		{name: "pid not a number", env: map[string]string{EnvListenPID: "x", EnvListenFDs: "1"}, malformed: true},
		{name: "negative fds", env: map[string]string{EnvListenPID: "42", EnvListenFDs: "-1"}, malformed: true},
		{name: "absurd fds", env: map[string]string{EnvListenPID: "42", EnvListenFDs: "100000"}, malformed: true},
		{name: "names miscounted", env: map[string]string{EnvListenPID: "42", EnvListenFDs: "2", EnvListenFDNames: "one"}, malformed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, names, err := parseListen(func(k string) string { return tt.env[k] }, 42)
			if tt.malformed {
				if !errors.Is(err, ErrListenEnv) {
					t.Fatalf("err %v, want ErrListenEnv", err)
				}
				return
			}
			if err != nil || n != tt.n || !slices.Equal(names, tt.names) {
				t.Fatalf("got %d %q %v, want %d %q", n, names, err, tt.n, tt.names)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	env := []string{"PATH=/bin", "LISTEN_PID=1", "LISTEN_FDS=1", "LISTEN_FDNAMES=x", "NOTIFY_SOCKET=/run/n", "LISTEN_FDSX=keep", "HOME=/h"}
	got := Without(env)
	if want := []string{"PATH=/bin", "LISTEN_FDSX=keep", "HOME=/h"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if len(env) != 7 {
		t.Fatal("env modified")
	}
}

func TestReloading(t *testing.T) {
	before := monotonicUsec()
	s := Reloading()
	after := monotonicUsec()
	v, ok := strings.CutPrefix(s, "RELOADING=1\nMONOTONIC_USEC=")
	if !ok {
		t.Fatalf("%q", s)
	}
	us, err := strconv.ParseUint(v, 10, 64)
	if err != nil || us < before || us > after || us == 0 {
		t.Fatalf("MONOTONIC_USEC=%s not within [%d, %d]", v, before, after)
	}
}

func TestNilNotifier(t *testing.T) {
	var n *Notifier
	if err := n.Notify("READY=1"); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// Whatever the three variables hold, parseListen never panics, and what it accepts
// is consistent: a count within bounds, one name per descriptor, descriptors only
// for this process.
func FuzzParseListen(f *testing.F) {
	for _, s := range [][3]string{{"42", "1", ""}, {"42", "2", "a:b"}, {"41", "3", ""}, {"x", "1", ""}, {"42", "-1", ""},
		{"42", "1024", ""}, {"42", "1025", ""}, {"42", "2", "a"}, {"", "", ""}, {"42", "0", ":"}, {"0042", "+1", "a"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pid, fds, names string) {
		env := map[string]string{EnvListenPID: pid, EnvListenFDs: fds, EnvListenFDNames: names}
		n, got, err := parseListen(func(k string) string { return env[k] }, 42)
		if err != nil {
			if !errors.Is(err, ErrListenEnv) || n != 0 || got != nil {
				t.Fatalf("error %v with %d %q", err, n, got)
			}
			return
		}
		if n < 0 || n > maxListenFDs || (n > 0 && len(got) != n) {
			t.Fatalf("%d descriptors, %d names", n, len(got))
		}
		if p, _ := strconv.Atoi(pid); n > 0 && p != 42 {
			t.Fatalf("%d descriptors for pid %q", n, pid)
		}
		if names != "" && n > 0 && strings.Join(got, ":") != names {
			t.Fatalf("names %q from %q", got, names)
		}
	})
}
