package promcollector_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The Prometheus client is linked only by hosts that import this package: none of
// the library's other packages depends on it.
func TestOthersDoNotLinkPrometheus(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	pkgs := []string{"registry", "controlplane", "lifecycle", "runtime", "platform", "plugin", "discovery", "codec", "contract"}
	args := []string{"list", "-deps"}
	for _, p := range pkgs {
		args = append(args, "github.com/adapterkit/adapterkit/"+p)
	}
	out, err := exec.Command(goTool, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/prometheus/") || strings.Contains(dep, "promcollector") || strings.Contains(dep, "prommetrics") {
			t.Errorf("a library package depends on %s", dep)
		}
	}
}
