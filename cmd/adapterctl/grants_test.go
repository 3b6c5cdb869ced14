package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/controlplane"
)

// The help of --sandbox names exactly the /etc files the default policy lets an
// adapter read, as SECURITY.md lists them (not "a few /etc files": /etc/passwd is one),
// and so does inspect's list of default grants.
func TestSandboxHelpNamesEtcFiles(t *testing.T) {
	sec, err := os.ReadFile(filepath.Join("..", "..", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)under `/etc`\\s+exactly (.*?);").FindSubmatch(sec)
	if m == nil {
		t.Fatal("SECURITY.md has no \"under `/etc` exactly ...;\" list of the default policy")
	}
	files := regexp.MustCompile("`([^`]+)`").FindAllSubmatch(m[1], -1)
	if len(files) < 5 {
		t.Fatalf("SECURITY.md lists %d /etc files", len(files))
	}
	help := strings.Join(strings.Fields(sandboxHelp), " ")
	for _, f := range files {
		name := string(f[1])
		if !regexp.MustCompile(`(^|[ ,])` + regexp.QuoteMeta(name) + `[ ,;)]`).MatchString(help) {
			t.Errorf("--sandbox's help does not name /etc/%s", name)
		}
		if !strings.Contains(" "+sandboxDefaultRead+" ", " "+name+" ") && !strings.Contains(sandboxDefaultRead, " "+name+";") {
			t.Errorf("inspect's default grants do not name /etc/%s", name)
		}
	}
	if strings.Contains(help, "a few /etc files") {
		t.Error(`--sandbox's help still says "a few /etc files"`)
	}
}

// inspect lists the grants of the sandbox in force: the default policy, then each
// --allow-* with the flag that asked for it; --json carries the same list.
func TestInspectListsGrants(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--sandbox is Linux's")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"inspect", "--sandbox", "--allow-read", dir, "--allow-write", filepath.Join(dir, "w"), "--allow-net", "443,8443", good("echo_v1.2.0")}
	r := runCmd(t, "", args...)
	r.want(t, ExitOK, []string{
		"  read   " + filepath.Dir(good("echo_v1.2.0")) + " (the adapter's directory) [default]",
		"/etc: ld.so.cache", " passwd group ",
		"  read   " + dir + " [--allow-read]",
		"  write  " + filepath.Join(dir, "w") + " [--allow-write]",
		"  net    TCP connect to ports 443,8443 [--allow-net]",
	}, nil)
	r = runCmd(t, "", append([]string{"inspect", "--json"}, args[1:]...)...)
	var out inspectOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	want := sandboxGrant{Access: "read", What: dir, From: "--allow-read"}
	found := false
	for _, g := range out.Grants {
		found = found || g == want
	}
	if !found {
		t.Errorf("inspect --json grants %+v, want %+v among them", out.Grants, want)
	}
	if r := runCmd(t, "", "inspect", "--json", good("echo_v1.2.0")); strings.Contains(r.stdout, `"grants"`) {
		t.Errorf("inspect without --sandbox lists grants:\n%s", r.stdout)
	}
}

// status shows, below its adapter table, the sandbox each adapter runs in and what of
// its supervision was dropped, as the daemon reports them.
func TestStatusListsSandboxes(t *testing.T) {
	var b bytes.Buffer
	err := printSandboxes(&b, []controlplane.AdapterStatus{
		{AdapterInfo: controlplane.AdapterInfo{Name: "echo"}, Sandbox: "landlock v7: fs, tcp, scope; net none",
			Dropped: []controlplane.DroppedMechanism{{Mechanism: "cgroup", Reason: "not writable"}}},
		{AdapterInfo: controlplane.AdapterInfo{Name: "plain"}},
	})
	want := "  echo: sandbox landlock v7: fs, tcp, scope; net none\n  echo: cgroup dropped: not writable\n"
	if err != nil || b.String() != want {
		t.Errorf("printSandboxes: %v\n%q\nwant\n%q", err, b.String(), want)
	}
}
