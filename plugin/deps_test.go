package plugin_test

import (
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

// An adapter links neither regexp nor go-hclog: every package-level regular expression
// is compiled, and go-hclog's initialisation (colours, a terminal check, a regular
// expression) runs, at every start before the first request; BENCH.md measures what it
// cost. plugin.Logger is a log/slog logger for that reason.
func TestAdapterLinksNoRegexpNorHclog(t *testing.T) {
	for _, dep := range testkit.Deps(t, "plugin") {
		switch dep {
		case "regexp", "github.com/hashicorp/go-hclog", "github.com/fatih/color":
			t.Errorf("the adapter SDK depends on %s", dep)
		}
	}
}
