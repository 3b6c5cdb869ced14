package promcollector_test

import (
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// The Prometheus client is linked only by hosts that import this package: none of
// the library's other packages depends on it.
func TestOthersDoNotLinkPrometheus(t *testing.T) {
	deps := testkit.Deps(t, "registry", "controlplane", "lifecycle", "runtime", "platform", "plugin", "discovery", "codec", "contract")
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/prometheus/") || strings.Contains(dep, "promcollector") || strings.Contains(dep, "prommetrics") {
			t.Errorf("a library package depends on %s", dep)
		}
	}
}
