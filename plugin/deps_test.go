package plugin_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// An adapter built with the SDK links neither package net nor cgo's runtime: with cgo
// enabled (the default where a C compiler is installed) either makes the adapter a
// dynamically linked program, whose loader and C runtime start-up cost about a
// millisecond on every start, and which needs the C library inside a sandbox.
func TestAdapterLinksNoNetNorCgo(t *testing.T) {
	for _, dep := range testkit.Deps(t, "plugin") {
		switch dep {
		case "net", "runtime/cgo", "os/user", "plugin":
			t.Errorf("the adapter SDK depends on %s", dep)
		}
	}
}

// No package of this module that an adapter links imports regexp: a package-level
// regular expression is compiled at every start, before the first request. (regexp
// still reaches the adapter through go-hclog, the type of plugin.Logger, whose own
// initialisation compiles one; BENCH.md measures what it costs a start.)
func TestAdapterSDKImportsNoRegexp(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}",
		"github.com/adapterkit/adapterkit/plugin").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "github.com/adapterkit/adapterkit/") && slices.Contains(f[1:], "regexp") {
			t.Errorf("%s imports regexp", f[0])
		}
	}
}
