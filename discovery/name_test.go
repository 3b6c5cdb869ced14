package discovery

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

func TestParseFileName(t *testing.T) {
	long := strings.Repeat("a", maxNameLen)
	tests := []struct {
		base, goos string
		name, ver  string // on success
		reason     Reason // on failure
	}{
		{base: "thermo_v1.2.3", goos: "linux", name: "thermo", ver: "1.2.3"},
		{base: "modbus-tcp_v0.4.0", goos: "darwin", name: "modbus-tcp", ver: "0.4.0"},
		{base: "9lives_v2.0.0-beta.1", goos: "linux", name: "9lives", ver: "2.0.0-beta.1"},
		{base: "x_v1.0.0+build.7", goos: "linux", name: "x", ver: "1.0.0+build.7"},
		{base: "x_v1.0.0-rc.1+sha.abc", goos: "linux", name: "x", ver: "1.0.0-rc.1+sha.abc"},
		{base: "x-_v1.0.0", goos: "linux", name: "x-", ver: "1.0.0"},
		{base: long + "_v1.0.0", goos: "linux", name: long, ver: "1.0.0"},
		// R62: on Windows only an explicit .exe.
		{base: "thermo_v1.2.3.exe", goos: "windows", name: "thermo", ver: "1.2.3"},
		{base: "thermo_v1.2.3.EXE", goos: "windows", name: "thermo", ver: "1.2.3"},
		{base: "thermo_v1.2.3", goos: "windows", reason: WrongOSExtension},
		{base: "thermo_v1.2.3.exe", goos: "linux", reason: WrongOSExtension},
		{base: "thermo_v1.2.3.Exe", goos: "darwin", reason: WrongOSExtension},
		{base: "x_v1.0.0+build.exe", goos: "linux", reason: WrongOSExtension},
		{base: "README.txt", goos: "windows", reason: BadName},
		{base: "setup.exe", goos: "linux", reason: BadName},

		{base: "thermo", goos: "linux", reason: BadName},
		{base: "thermo-1.2.3", goos: "linux", reason: BadName},
		{base: "thermo_1.2.3", goos: "linux", reason: BadName},
		{base: "Thermo_v1.2.3", goos: "linux", reason: BadName},
		{base: "-x_v1.2.3", goos: "linux", reason: BadName},
		{base: "_v1.2.3", goos: "linux", reason: BadName},
		{base: ".hidden", goos: "linux", reason: BadName},
		{base: ".x_v1.0.0", goos: "linux", reason: BadName},
		{base: "my_tool_v1.0.0", goos: "linux", reason: BadName},
		{base: "x.y_v1.0.0", goos: "linux", reason: BadName},
		{base: "é_v1.0.0", goos: "linux", reason: BadName},
		{base: long + "a_v1.0.0", goos: "linux", reason: BadName},
		{base: ".exe", goos: "windows", reason: BadName},

		{base: "x_v", goos: "linux", reason: BadVersion},
		{base: "x_v1", goos: "linux", reason: BadVersion},
		{base: "x_v1.2", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3.4", goos: "linux", reason: BadVersion},
		{base: "x_vv1.2.3", goos: "linux", reason: BadVersion},
		{base: "x_v01.2.3", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3-01", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3-", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3beta", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3+", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3~1", goos: "linux", reason: BadVersion},
		{base: "x_v99999999999999999999.0.0", goos: "linux", reason: BadVersion},
		{base: "x_v1.2.3.exe", goos: "linux", reason: WrongOSExtension},
		{base: "x_v1.2.exe", goos: "windows", reason: BadVersion},
	}
	for _, tt := range tests {
		t.Run(tt.goos+"/"+tt.base, func(t *testing.T) {
			name, v, err := ParseFileName(tt.base, tt.goos)
			if tt.reason != 0 {
				var rej *Rejected
				if !errors.As(err, &rej) {
					t.Fatalf("err = %v, want *Rejected %v", err, tt.reason)
				}
				if rej.Reason != tt.reason || rej.Path != tt.base {
					t.Fatalf("got %v for %q, want %v", rej.Reason, rej.Path, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if name != tt.name || v.Original() != tt.ver {
				t.Fatalf("got %q %q, want %q %q", name, v.Original(), tt.name, tt.ver)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	tests := []struct {
		name, ver, goos, want string
		reason                Reason
	}{
		{name: "thermo", ver: "1.2.3", goos: "linux", want: "thermo_v1.2.3"},
		{name: "thermo", ver: "1.2.3-rc.1+b", goos: "windows", want: "thermo_v1.2.3-rc.1+b.exe"},
		{name: "thermo", ver: "1.2", goos: "linux", want: "thermo_v1.2.0"},     // canonical form
		{name: "thermo", ver: "v1.02.3", goos: "linux", want: "thermo_v1.2.3"}, // canonical form
		{name: "thermo", ver: "1.2.3.4", goos: "linux", reason: BadVersion},
		{name: "Thermo", ver: "1.2.3", goos: "linux", reason: BadName},
		{name: "", ver: "1.2.3", goos: "linux", reason: BadName},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+tt.ver, func(t *testing.T) {
			got, err := fileName(tt.name, version.Must(version.NewVersion(tt.ver)), tt.goos)
			if tt.reason != 0 {
				var rej *Rejected
				if !errors.As(err, &rej) || rej.Reason != tt.reason {
					t.Fatalf("err = %v, want reason %v", err, tt.reason)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	var rej *Rejected
	if _, err := fileName("x", nil, "linux"); !errors.As(err, &rej) || rej.Reason != BadVersion {
		t.Fatalf("nil version: err = %v", err)
	}
}

func TestReasonString(t *testing.T) {
	seen := map[string]Reason{}
	for r := Unreadable; r <= UntrustedOwner; r++ {
		s := r.String()
		if s == "" || strings.HasPrefix(s, "Reason(") {
			t.Errorf("Reason %d has no name", int(r))
		}
		if prev, ok := seen[s]; ok {
			t.Errorf("%v and %v share the name %q", int(prev), int(r), s)
		}
		seen[s] = r
	}
	if got := Reason(0).String(); got != "Reason(0)" {
		t.Errorf("Reason(0) = %q", got)
	}
	if got := (UntrustedOwner + 1).String(); !strings.HasPrefix(got, "Reason(") {
		t.Errorf("unknown reason = %q", got)
	}
}

func TestRejectedError(t *testing.T) {
	cause := errors.New("boom")
	r := &Rejected{Path: "/a/b", Reason: Unreadable, Detail: "stat", Err: cause}
	if !errors.Is(r, cause) {
		t.Fatal("Rejected does not unwrap to its Err")
	}
	for _, want := range []string{"/a/b", "unreadable", "stat", "boom"} {
		if !strings.Contains(r.Error(), want) {
			t.Errorf("%q lacks %q", r.Error(), want)
		}
	}
}
