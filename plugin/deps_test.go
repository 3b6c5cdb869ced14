package plugin_test

import (
	"os/exec"
	"strings"
	"testing"
)

// An adapter built with the SDK links neither package net nor cgo's runtime: with cgo
// enabled (the default where a C compiler is installed) either makes the adapter a
// dynamically linked program, whose loader and C runtime start-up cost about a
// millisecond on every start, and which needs the C library inside a sandbox.
func TestAdapterLinksNoNetNorCgo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/adapterkit/adapterkit/plugin").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "net", "runtime/cgo", "os/user", "plugin":
			t.Errorf("the adapter SDK depends on %s", dep)
		}
	}
}
