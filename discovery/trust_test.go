//go:build unix

package discovery

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scanOne scans dir with opts and returns what became of the entry base: its
// rejection reason, or 0 when it was taken.
func scanOne(t *testing.T, opts *Options, dir, base string) (Reason, string) {
	t.Helper()
	res, err := Scan(context.Background(), opts, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Adapters {
		if filepath.Base(a.Path) == base {
			return 0, ""
		}
	}
	for _, r := range res.Rejected {
		if filepath.Base(r.Path) == base {
			return r.Reason, r.Error()
		}
	}
	t.Fatalf("%s neither taken nor rejected: %+v", base, res)
	return 0, ""
}

// TestScanTrustModes: the file, the scanned directory and a directory a link
// leads through must not be writable by their group; AllowGroupWritable takes
// them, world-writable ones never.
func TestScanTrustModes(t *testing.T) {
	needModes(t)
	groupAllowed := &Options{AllowGroupWritable: true}
	for _, tc := range []struct {
		name               string
		dirMode, fileMode  fs.FileMode
		viaSub             fs.FileMode // when set, the adapter is a link to sub/real, sub having this mode
		want, wantGroupOpt Reason
		detail             string
	}{
		{name: "owner only", dirMode: 0o755, fileMode: 0o755},
		{name: "group-writable file", dirMode: 0o755, fileMode: 0o775, want: GroupWritable, detail: "file is writable by its group"},
		{name: "group-writable dir", dirMode: 0o775, fileMode: 0o755, want: GroupWritable, detail: "is writable by its group"},
		{name: "setgid group-writable dir", dirMode: 0o775 | fs.ModeSetgid, fileMode: 0o755, want: GroupWritable},
		{name: "group-writable link dir", dirMode: 0o755, fileMode: 0o755, viaSub: 0o775, want: GroupWritable, detail: "/sub is writable by its group"},
		{name: "world-writable file", dirMode: 0o755, fileMode: 0o757, want: WorldWritable, wantGroupOpt: WorldWritable},
		{name: "world-writable dir", dirMode: 0o757, fileMode: 0o755, want: WorldWritable, wantGroupOpt: WorldWritable},
		{name: "world-writable link dir", dirMode: 0o755, fileMode: 0o755, viaSub: 0o777, want: WorldWritable, wantGroupOpt: WorldWritable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := mkdir(t, t.TempDir(), "adapters", 0o700)
			if tc.viaSub != 0 {
				mkfile(t, mkdir(t, dir, "sub", 0o755), "real", tc.fileMode)
				if err := os.Chmod(filepath.Join(dir, "sub"), tc.viaSub); err != nil {
					t.Fatal(err)
				}
				symlink(t, "sub/real", filepath.Join(dir, "thermo_v1.0.0"))
			} else {
				mkfile(t, dir, "thermo_v1.0.0", tc.fileMode)
			}
			if err := os.Chmod(dir, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			got, msg := scanOne(t, nil, dir, "thermo_v1.0.0")
			if got != tc.want || !strings.Contains(msg, tc.detail) {
				t.Errorf("default: got %v (%s), want %v with %q", got, msg, tc.want, tc.detail)
			}
			if got, msg := scanOne(t, groupAllowed, dir, "thermo_v1.0.0"); got != tc.wantGroupOpt {
				t.Errorf("AllowGroupWritable: got %v (%s), want %v", got, msg, tc.wantGroupOpt)
			}
		})
	}
}

// needRoot skips tests that change owners.
func needRoot(t *testing.T) {
	t.Helper()
	needModes(t)
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
}

// sharedDir makes a directory any user may reach: TempDir's are private to
// their owner.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "discovery-trust-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

const nobodyID = 65534

// TestScanTrustOwner: a file, scanned directory or link directory owned by a user
// other than the host's and root is refused; AllowGroupWritable takes it only when
// its group is the scanned directory's.
func TestScanTrustOwner(t *testing.T) {
	needRoot(t)
	type own struct{ uid, gid int }
	for _, tc := range []struct {
		name                  string
		dir, file, sub        *own
		want, wantGroupOption Reason
	}{
		{name: "root's", want: 0},
		{name: "file of another user", file: &own{nobodyID, 0}, want: UntrustedOwner, wantGroupOption: 0},
		{name: "file of another user and group", file: &own{nobodyID, nobodyID}, want: UntrustedOwner, wantGroupOption: UntrustedOwner},
		{name: "file of root, group other", file: &own{0, nobodyID}},
		{name: "dir of another user", dir: &own{nobodyID, nobodyID}, want: UntrustedOwner, wantGroupOption: 0},
		{name: "link dir of another user", sub: &own{nobodyID, nobodyID}, want: UntrustedOwner, wantGroupOption: UntrustedOwner},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := mkdir(t, sharedDir(t), "adapters", 0o755)
			sub := mkdir(t, dir, "sub", 0o755)
			file := mkfile(t, dir, "thermo_v1.0.0", 0o755)
			mkfile(t, sub, "real", 0o755)
			symlink(t, "sub/real", filepath.Join(dir, "linked_v1.0.0"))
			base := "thermo_v1.0.0"
			for _, c := range []struct {
				o *own
				p string
			}{{tc.dir, dir}, {tc.file, file}, {tc.sub, sub}} {
				if c.o != nil {
					if err := os.Lchown(c.p, c.o.uid, c.o.gid); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tc.sub != nil {
				base = "linked_v1.0.0"
			}
			if got, msg := scanOne(t, nil, dir, base); got != tc.want {
				t.Errorf("default: got %v (%s), want %v", got, msg, tc.want)
			} else if got == UntrustedOwner && !strings.Contains(msg, "owned by uid 65534") {
				t.Errorf("detail %q does not name the owner", msg)
			}
			if got, msg := scanOne(t, &Options{AllowGroupWritable: true}, dir, base); got != tc.wantGroupOption {
				t.Errorf("AllowGroupWritable: got %v (%s), want %v", got, msg, tc.wantGroupOption)
			}
		})
	}
}

// TestScanRefusesPlanted: nobody, a member of the directory's group, plants an
// adapter in a root:nogroup 2775 directory; root's scan refuses it (and the
// directory), and takes it only with AllowGroupWritable.
func TestScanRefusesPlanted(t *testing.T) {
	needRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is not installed")
	}
	dir := mkdir(t, sharedDir(t), "adapters", 0o755)
	if err := os.Chown(dir, 0, nobodyID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "planted_v1.0.0")
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
		"/bin/sh", "-c", `printf '#!/bin/sh\nid\n' > "$1" && chmod 0755 "$1"`, "sh", planted)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("planting as nobody: %v: %s", err, out)
	}
	fi, err := os.Stat(planted)
	if err != nil {
		t.Fatal(err)
	}
	if uid, gid, _ := ownerOf(fi); uid != nobodyID || gid != nobodyID {
		t.Fatalf("planted file owned by %d:%d, want nobody:nogroup", uid, gid)
	}
	if got, msg := scanOne(t, nil, dir, "planted_v1.0.0"); got != GroupWritable || !strings.Contains(msg, "directory "+dir+" is writable by its group") {
		t.Errorf("planted adapter: got %v (%s), want %v for the directory", got, msg, GroupWritable)
	}
	// The directory's fault aside, the file's owner is enough to refuse it.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, msg := scanOne(t, nil, dir, "planted_v1.0.0"); got != UntrustedOwner {
		t.Errorf("planted adapter in a 0755 directory: got %v (%s), want %v", got, msg, UntrustedOwner)
	}
	if err := os.Chmod(dir, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if got, msg := scanOne(t, &Options{AllowGroupWritable: true}, dir, "planted_v1.0.0"); got != 0 {
		t.Errorf("AllowGroupWritable trusts the group nogroup: got %v (%s)", got, msg)
	}
}
