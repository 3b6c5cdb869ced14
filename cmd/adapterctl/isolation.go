package main

import (
	"fmt"
	"strings"

	"github.com/adapterkit/adapterkit/platform"
)

// isolationNames are the values of --isolation, in the order of platform.Isolation's
// constants.
var isolationNames = []struct {
	name string
	iso  platform.Isolation
}{
	{"auto", platform.IsolationAuto},
	{"no-pid-namespace", platform.IsolationNoPIDNamespace},
	{"process-group", platform.IsolationProcessGroup},
	{"no-user-namespace", platform.IsolationNoUserNamespace},
}

// isolationFlag is the --isolation flag: a platform.Isolation by name.
type isolationFlag struct{ iso *platform.Isolation }

func (f isolationFlag) String() string {
	for _, n := range isolationNames {
		if f.iso != nil && n.iso == *f.iso {
			return n.name
		}
	}
	return "auto"
}

func (f isolationFlag) Set(v string) error {
	names := make([]string, 0, len(isolationNames))
	for _, n := range isolationNames {
		if n.name == v {
			*f.iso = n.iso
			return nil
		}
		names = append(names, n.name)
	}
	return fmt.Errorf("want one of %s", strings.Join(names, ", "))
}

// isolationUsage is the help line of --isolation.
const isolationUsage = "`MODE` of containment of adapter process trees: auto (the strongest available),\n" +
	"no-pid-namespace (needed by a debugger that executes the adapter: docs/debugging.md),\n" +
	"process-group or no-user-namespace (see platform.Isolation)"

// registerIsolation adds --isolation to f, setting *iso.
func registerIsolation(f *flags, iso *platform.Isolation) {
	f.Var(isolationFlag{iso}, "isolation", isolationUsage)
}
