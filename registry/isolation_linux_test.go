package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// TestIsolationReachesAdapters: Config.Isolation is the containment every adapter of
// the registry is started with; IsolationNoPIDNamespace (what a debugger that executes
// the adapter needs) leaves the PID namespace out, saying so in the adapter's status.
func TestIsolationReachesAdapters(t *testing.T) {
	r := registry.New(&registry.Config{Dirs: []string{adapterDir}, Isolation: platform.IsolationNoPIDNamespace})
	h, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := h.Status()
	if st.Mechanism&platform.MechPidNamespace != 0 {
		t.Errorf("mechanism %v has the PID namespace turned off", st.Mechanism)
	}
	off := false
	for _, d := range st.Supervision.Dropped {
		off = off || strings.Contains(d.Reason, "IsolationNoPIDNamespace")
	}
	if !off {
		t.Errorf("the status does not say the PID namespace was turned off: %+v", st.Supervision.Dropped)
	}
	// Without the PID namespace, a cgroup proves the end only when the adapter's user
	// cannot move a process out of it (not as root): an unverified end is expected then.
	var uv *platform.UnverifiedError
	if err := r.Close(context.Background()); err != nil && !(errors.As(err, &uv) && st.Supervision.NoProof != "") {
		t.Errorf("registry Close: %v", err)
	}
}
