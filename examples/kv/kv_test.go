// Package kv_test runs go-plugin's KV example as ported to adapterkit: the host
// (examples/kv/host) puts and gets values through the adapter (examples/kv/adapter),
// both built and run as real processes.
package kv_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

func TestKV(t *testing.T) {
	bin := testkit.BuildT(t,
		testkit.Build{Pkg: "github.com/adapterkit/adapterkit/examples/kv/adapter", Name: "kv_v1.0.0"},
		testkit.Build{Pkg: "github.com/adapterkit/adapterkit/examples/kv/host", Name: "kvhost"})
	adapter, host := filepath.Join(bin, exe("kv_v1.0.0")), filepath.Join(bin, exe("kvhost"))
	data := testkit.TempDir(t)
	// The host runs from a directory of its own, which is neither the adapter's nor the data's.
	cwd := testkit.TempDir(t)
	kv := func(args ...string) (string, string, error) {
		cmd := exec.Command(host, append([]string{"-adapter", adapter, "-data", data}, args...)...)
		cmd.Dir = cwd
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	for _, tc := range []struct {
		args            []string
		stdout, errText string
	}{
		{args: []string{"put", "hello", "world"}},
		{args: []string{"get", "hello"}, stdout: "world\n"},
		{args: []string{"put", "hello", "again"}},
		{args: []string{"get", "hello"}, stdout: "again\n"},
		{args: []string{"get", "missing"}, errText: `no value for key "missing"`},
		{args: []string{"put", "../escape", "x"}, errText: "key must be a non-empty name without path separators"},
	} {
		out, errOut, err := kv(tc.args...)
		if (err != nil) != (tc.errText != "") || out != tc.stdout || !strings.Contains(errOut, tc.errText) {
			t.Errorf("host %q: stdout %q, stderr %q, %v; want stdout %q, an error containing %q",
				tc.args, out, errOut, err, tc.stdout, tc.errText)
		}
	}
	// The value is where the host said, and nowhere else: not beside the adapter (its
	// working directory), not in the host's.
	if b, err := os.ReadFile(filepath.Join(data, "kv_hello")); err != nil || string(b) != "again" {
		t.Errorf("data/kv_hello: %q, %v", b, err)
	}
	for _, dir := range []string{bin, cwd} {
		if _, err := os.Stat(filepath.Join(dir, "kv_hello")); err == nil {
			t.Errorf("the adapter wrote kv_hello into %s, not only into the data directory", dir)
		}
	}
	// An adapter not told an existing directory refuses to start (initialize answered
	// invalid) instead of writing elsewhere.
	data = filepath.Join(cwd, "absent")
	if _, errOut, err := kv("put", "k", "v"); err == nil || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("host with a missing data directory: %v\n%s", err, errOut)
	}
}

func exe(name string) string {
	if filepath.Separator == '\\' {
		return name + ".exe"
	}
	return name
}
