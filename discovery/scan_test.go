package discovery

import (
	"github.com/adapterkit/adapterkit/internal/testkit"

	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// needModes skips tests that rely on Unix permission bits or symbolic links.
func needModes(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("permission bits and symbolic links are not checked on Windows")
	}
}

// mkfile creates dir/name with mode (umask does not apply).
func mkfile(t *testing.T, dir, name string, mode fs.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+name+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdir(t *testing.T, dir, name string, mode fs.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// reasons maps the base name of every rejected entry to its reason.
func reasons(res *Result) map[string]Reason {
	m := make(map[string]Reason, len(res.Rejected))
	for _, r := range res.Rejected {
		m[filepath.Base(r.Path)] = r.Reason
	}
	return m
}

func takenNames(res *Result) []string {
	var s []string
	for _, a := range res.Adapters {
		s = append(s, filepath.Base(a.Path))
	}
	return s
}

// TestScanReasons builds one directory with an entry for every rule and
// checks that each is taken or rejected for the documented reason, and that
// nothing is skipped silently.
func TestScanReasons(t *testing.T) {
	needModes(t)
	dir := testkit.TempDir(t)
	outside := testkit.TempDir(t)
	mkfile(t, outside, "evil", 0o755)
	symlink(t, filepath.Join(dir, "thermo_v1.2.3"), filepath.Join(outside, "back"))

	mkfile(t, dir, "thermo_v1.2.3", 0o755)
	mkfile(t, dir, "only-owner_v1.0.0", 0o700)
	mkfile(t, dir, "group-only_v1.0.0", 0o614) // execute for others only still counts
	mkfile(t, dir, "thermo_v1.2.3.exe", 0o755)
	mkfile(t, dir, "noexec_v1.0.0", 0o644)
	mkfile(t, dir, "ww_v1.0.0", 0o777)
	mkfile(t, dir, "Thermo_v1.0.0", 0o755)
	mkfile(t, dir, "thermo-1.0.0", 0o755)
	mkfile(t, dir, ".hidden", 0o644)
	mkfile(t, dir, "README.txt", 0o644)
	mkfile(t, dir, "thermo_v1.2", 0o755)
	mkfile(t, dir, "thermo_v01.2.3", 0o755)
	mkdir(t, dir, "sub", 0o755)
	mkdir(t, dir, "subdir_v1.0.0", 0o755)
	symlink(t, "thermo_v1.2.3", filepath.Join(dir, "link_v1.0.0"))
	symlink(t, "../"+filepath.Base(dir)+"/thermo_v1.2.3", filepath.Join(dir, "dotdot_v1.0.0"))
	symlink(t, filepath.Join(outside, "evil"), filepath.Join(dir, "out_v1.0.0"))
	symlink(t, filepath.Join(outside, "back"), filepath.Join(dir, "hop_v1.0.0"))
	symlink(t, "missing", filepath.Join(dir, "dangling_v1.0.0"))
	symlink(t, "loop_v1.0.0", filepath.Join(dir, "loop_v1.0.0"))
	symlink(t, "sub", filepath.Join(dir, "dirlink_v1.0.0"))
	mkfile(t, mkdir(t, dir, "open", 0o777), "real", 0o755)
	symlink(t, "open/real", filepath.Join(dir, "viaopen_v1.0.0"))
	mkfile(t, filepath.Join(dir, "sub"), "real", 0o755)
	symlink(t, "sub/real", filepath.Join(dir, "viasub_v1.0.0"))
	symlink(t, outside, filepath.Join(dir, "outdir"))
	symlink(t, "outdir/evil", filepath.Join(dir, "viaoutdir_v1.0.0"))

	res, err := Scan(context.Background(), &Options{GOOS: "linux"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	wantTaken := []string{"dotdot_v1.0.0", "group-only_v1.0.0", "link_v1.0.0", "only-owner_v1.0.0", "thermo_v1.2.3", "viasub_v1.0.0"}
	if got := takenNames(res); !slices.Equal(got, wantTaken) {
		t.Errorf("taken %v, want %v", got, wantTaken)
	}
	wantRejected := map[string]Reason{
		"thermo_v1.2.3.exe": WrongOSExtension,
		"noexec_v1.0.0":     NotExecutable,
		"ww_v1.0.0":         WorldWritable,
		"Thermo_v1.0.0":     BadName,
		"thermo-1.0.0":      BadName,
		".hidden":           BadName,
		"README.txt":        BadName,
		"thermo_v1.2":       BadVersion,
		"thermo_v01.2.3":    BadVersion,
		"sub":               NotRegular,
		"subdir_v1.0.0":     NotRegular,
		"open":              NotRegular,
		"outdir":            LinkLeavesDir,
		"out_v1.0.0":        LinkLeavesDir,
		"hop_v1.0.0":        LinkLeavesDir, // leaves, then comes back: still refused
		"viaoutdir_v1.0.0":  LinkLeavesDir, // lexically inside, resolves outside
		"dangling_v1.0.0":   Unreadable,
		"loop_v1.0.0":       Unreadable,
		"dirlink_v1.0.0":    NotRegular,
		"viaopen_v1.0.0":    WorldWritable,
	}
	got := reasons(res)
	for name, want := range wantRejected {
		if got[name] != want {
			t.Errorf("%s: got %v, want %v", name, got[name], want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Adapters) + len(res.Rejected); n != len(entries) {
		t.Errorf("%d taken + %d rejected != %d entries", len(res.Adapters), len(res.Rejected), len(entries))
	}
	if len(res.Rejected) != len(wantRejected) {
		t.Errorf("rejected %v, want exactly %v", got, wantRejected)
	}
	for _, r := range res.Rejected {
		if !filepath.IsAbs(r.Path) || r.Error() == "" {
			t.Errorf("rejected entry %+v", r)
		}
		if r.Reason == Unreadable && r.Err == nil && r.Detail == "" {
			t.Errorf("unreadable entry %s without cause", r.Path)
		}
	}
}

// TestScanAdapterFields checks Path, Dir and Resolved (R61: an absolute path
// to launch; R63: the package directory a host reserves).
func TestScanAdapterFields(t *testing.T) {
	needModes(t)
	realDir := testkit.TempDir(t)
	p := mkfile(t, realDir, "thermo_v1.2.3", 0o755)
	mkfile(t, mkdir(t, realDir, "pkg", 0o755), "bin", 0o755)
	symlink(t, "pkg/bin", filepath.Join(realDir, "linked_v2.0.0"))
	alias := filepath.Join(testkit.TempDir(t), "alias")
	symlink(t, realDir, alias)

	res, err := Scan(context.Background(), nil, alias+string(filepath.Separator)+".")
	if err != nil {
		t.Fatal(err)
	}
	realResolved, err := filepath.EvalSymlinks(realDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Adapters) != 2 {
		t.Fatalf("adapters %v, rejected %v", res.Adapters, res.Rejected)
	}
	l, a := res.Adapters[0], res.Adapters[1]
	if a.Name != "thermo" || a.Version.String() != "1.2.3" || a.Path != filepath.Join(alias, "thermo_v1.2.3") ||
		a.Dir != alias || a.Resolved != filepath.Join(realResolved, "thermo_v1.2.3") {
		t.Errorf("plain adapter %+v (file %s)", a, p)
	}
	if l.Name != "linked" || l.Path != filepath.Join(alias, "linked_v2.0.0") || l.Dir != alias ||
		l.Resolved != filepath.Join(realResolved, "pkg", "bin") {
		t.Errorf("linked adapter %+v", l)
	}
	if !filepath.IsAbs(a.Path) || !filepath.IsAbs(a.Dir) {
		t.Errorf("paths not absolute: %+v", a)
	}
	if s := a.String(); s != "thermo 1.2.3 ("+a.Path+")" {
		t.Errorf("String() = %q", s)
	}
}

func TestScanWorldWritableDir(t *testing.T) {
	needModes(t)
	dir := mkdir(t, testkit.TempDir(t), "open", 0o777|fs.ModeSticky)
	mkfile(t, dir, "thermo_v1.0.0", 0o755)
	mkfile(t, dir, "notes.txt", 0o644)
	res, err := Scan(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Adapters) != 0 {
		t.Fatalf("taken from a world-writable directory: %v", res.Adapters)
	}
	want := map[string]Reason{"thermo_v1.0.0": WorldWritable, "notes.txt": BadName}
	if got := reasons(res); !mapsEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func mapsEqual(a, b map[string]Reason) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestScanWindowsRule applies the Windows naming rule on any OS, Windows included (R62).
func TestScanWindowsRule(t *testing.T) {
	dir := testkit.TempDir(t)
	mkfile(t, dir, "thermo_v1.0.0.exe", 0o755)
	mkfile(t, dir, "upper_v1.0.0.EXE", 0o755)
	mkfile(t, dir, "thermo_v2.0.0", 0o755)
	mkfile(t, dir, "run.bat", 0o755)
	want := map[string]Reason{"thermo_v2.0.0": WrongOSExtension, "run.bat": BadName}
	if runtime.GOOS != "windows" { // Windows has no execute bit
		mkfile(t, dir, "noexec_v1.0.0.exe", 0o644) // the running OS's permission rule still applies
		want["noexec_v1.0.0.exe"] = NotExecutable
	}
	res, err := Scan(context.Background(), &Options{GOOS: "windows"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := takenNames(res); !slices.Equal(got, []string{"thermo_v1.0.0.exe", "upper_v1.0.0.EXE"}) {
		t.Errorf("taken %v", got)
	}
	if got := reasons(res); !mapsEqual(got, want) {
		t.Errorf("rejected %v, want %v", got, want)
	}
	if res.Adapters[0].Name != "thermo" {
		t.Errorf("name %q keeps the extension", res.Adapters[0].Name)
	}
}

func TestScanDuplicatesAndOrder(t *testing.T) {
	needModes(t)
	first, second := testkit.TempDir(t), testkit.TempDir(t)
	for _, n := range []string{"thermo_v1.10.0", "thermo_v1.9.0", "alpha_v0.1.0", "thermo_v2.0.0-beta.1", "dup_v1.0.0+b"} {
		mkfile(t, first, n, 0o755)
	}
	for _, n := range []string{"thermo_v1.9.0", "thermo_v2.0.0", "zeta_v3.0.0", "dup_v1.0.0+a", "dup_v1.0.0+c"} {
		mkfile(t, second, n, 0o755)
	}
	res, err := Scan(context.Background(), nil, first, second)
	if err != nil {
		t.Fatal(err)
	}
	type nv struct{ name, ver, dir string }
	want := []nv{
		{"alpha", "0.1.0", first},
		{"dup", "1.0.0+b", first},
		{"thermo", "2.0.0", second},
		{"thermo", "2.0.0-beta.1", first},
		{"thermo", "1.10.0", first},
		{"thermo", "1.9.0", first},
		{"zeta", "3.0.0", second},
	}
	var got []nv
	for _, a := range res.Adapters {
		got = append(got, nv{a.Name, a.Version.Original(), a.Dir})
	}
	if !slices.Equal(got, want) {
		t.Errorf("adapters\n got %v\nwant %v", got, want)
	}
	wantDup := []string{filepath.Join(second, "dup_v1.0.0+a"), filepath.Join(second, "dup_v1.0.0+c"), filepath.Join(second, "thermo_v1.9.0")}
	var dups []string
	for _, r := range res.Rejected {
		if r.Reason != Duplicate {
			t.Errorf("unexpected rejection %v", &r)
		}
		dups = append(dups, r.Path)
	}
	if !slices.Equal(dups, wantDup) {
		t.Errorf("duplicates %v, want %v", dups, wantDup)
	}
}

func TestScanDirErrors(t *testing.T) {
	dir := testkit.TempDir(t)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		dirs   []string
		reason error
		osErr  error
	}{
		{"relative", []string{"adapters"}, ErrNotAbsolute, nil},
		{"empty", []string{""}, ErrNotAbsolute, nil},
		{"missing", []string{filepath.Join(dir, "missing")}, errDirNotFound, fs.ErrNotExist},
		{"file", []string{file}, errNotDirectory, nil},
		{"repeated", []string{dir, dir + string(filepath.Separator)}, errDirRepeated, nil},
		{"bad after good", []string{dir, "rel"}, ErrNotAbsolute, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Scan(context.Background(), nil, tt.dirs...)
			var de *DirError
			if !errors.As(err, &de) || res != nil {
				t.Fatalf("got %v, %v; want *DirError", res, err)
			}
			if de.Reason != tt.reason || !errors.Is(err, tt.reason) {
				t.Errorf("reason %v, want %v", de.Reason, tt.reason)
			}
			if tt.osErr != nil && !errors.Is(err, tt.osErr) {
				t.Errorf("%v does not wrap %v", err, tt.osErr)
			}
			if de.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestScanRepeatedThroughLink(t *testing.T) {
	needModes(t)
	dir := testkit.TempDir(t)
	alias := filepath.Join(testkit.TempDir(t), "alias")
	symlink(t, dir, alias)
	if _, err := Scan(context.Background(), nil, dir, alias); !errors.Is(err, errDirRepeated) {
		t.Fatalf("err = %v, want errDirRepeated", err)
	}
}

func TestScanEmpty(t *testing.T) {
	res, err := Scan(context.Background(), nil)
	if err != nil || len(res.Adapters) != 0 || len(res.Rejected) != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	res, err = Scan(context.Background(), nil, testkit.TempDir(t))
	if err != nil || res.Adapters == nil || res.Rejected == nil || len(res.Adapters)+len(res.Rejected) != 0 {
		t.Fatalf("empty directory: %+v, %v", res, err)
	}
}

func TestScanContextCancelled(t *testing.T) {
	dir := testkit.TempDir(t)
	mkfile(t, dir, "thermo_v1.0.0", 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Scan(ctx, nil, dir)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v; want context.Canceled", res, err)
	}
}
