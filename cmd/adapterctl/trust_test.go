//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGroupWritableRefused: an adapter in a group-writable directory is listed as not
// taken, with the reason, and cannot be started by name; --allow-group-writable takes
// it.
func TestGroupWritableRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good("echo_v1.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, dir, "echo_v1.2.0", string(b), 0o755)
	if err := os.Chmod(dir, 0o2775); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, "", "list", dir)
	r.want(t, ExitOK, []string{"Not taken (1)", p, "group-writable", "directory " + dir + " is writable by its group"}, nil)
	runCmd(t, "", "inspect", "--dir", dir, "echo").want(t, ExitNotFound, nil, []string{"echo"})

	r = runCmd(t, "", "list", "--allow-group-writable", dir)
	r.want(t, ExitOK, []string{"echo", "1.2.0", p}, nil)
	runCmd(t, "", "inspect", "--allow-group-writable", "--dir", dir, "echo").want(t, ExitOK, []string{"example.echo v1"}, nil)
}
