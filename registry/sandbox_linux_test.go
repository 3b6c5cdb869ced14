package registry_test

import (
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// Config.Sandbox applies to every adapter and Config.Sandboxes replaces it by name; the
// handle's status says which sandbox is in force.
func TestSandboxPerAdapter(t *testing.T) {
	r := newRegistry(t, func(c *registry.Config) {
		c.Sandbox = &platform.Sandbox{}
		c.Sandboxes = map[string]*platform.Sandbox{"thermometer": nil}
	})
	echo, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEchoClient(echo)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Echo(ctxT(t), map[string]any{"a": "b"}); err != nil || got["a"] != "b" {
		t.Fatalf("sandboxed Echo = %v, %v", got, err)
	}
	st := echo.Status()
	if !st.Mechanism.Has(platform.MechLandlock|platform.MechSeccomp) || !strings.Contains(st.Supervision.Sandbox, "net none") {
		t.Errorf("echo status: %v", st.Supervision)
	}
	th, err := r.Open(ctxT(t), "thermometer", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := th.Status(); st.Supervision.Sandbox != "" || st.Mechanism.Has(platform.MechLandlock) {
		t.Errorf("thermometer (nil in Sandboxes) is sandboxed: %v", st.Supervision)
	}
}
