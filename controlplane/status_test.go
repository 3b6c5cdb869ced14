package controlplane

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// Status carries each adapter's per-method figures, resource use and stderr tail.
func TestStatusFigures(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "thermometer_v1.0.0")}})
	c := dial(t, sock)
	ctx := testCtx(t)
	const oks, bad = 3, 2
	for i := range oks + bad {
		probe := "inlet"
		if i >= oks {
			probe = "nosuch"
		}
		_, err := c.Send(ctx, SendParams{Adapter: "thermometer", Method: "example.device.read",
			Params: json.RawMessage(`{"probe":"` + probe + `"}`)})
		if (err != nil) != (i >= oks) {
			t.Fatalf("read %s: %v", probe, err)
		}
	}
	// Standard error is read as it comes: wait until the last line has been.
	var a AdapterStatus
	testkit.Within(10*time.Second, func() bool {
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Adapters) != 1 {
			t.Fatalf("adapters: %+v", st.Adapters)
		}
		a = st.Adapters[0]
		return len(a.LogTail) >= oks+bad
	})
	if len(a.Methods) != 1 {
		t.Fatalf("methods: %+v", a.Methods)
	}
	m := a.Methods[0]
	if m.Method != "example.device.read" || m.Calls != oks+bad || m.Errors["invalid"] != bad || len(m.Errors) != 1 ||
		m.P50MS <= 0 || m.P99MS < m.P50MS || m.InFlight != 0 || m.BytesIn == 0 || m.BytesOut == 0 {
		t.Errorf("method figures: %+v", m)
	}
	reads := 0
	for _, l := range a.LogTail {
		if strings.Contains(l, `"@message":"reading"`) {
			reads++
		}
	}
	if reads != oks+bad {
		t.Errorf("log tail has %d reading records, want %d: %q", reads, oks+bad, a.LogTail)
	}
	if runtime.GOOS == "linux" && (a.MemoryBytes == nil || *a.MemoryBytes <= 0 || a.CPUSeconds == nil || a.MemoryPeakBytes == nil) {
		t.Errorf("no resource figures on Linux: %+v", a.AdapterFigures)
	}
	raw, _ := json.Marshal(a)
	for _, k := range []string{`"methods":[{"method":"example.device.read","calls":5,"errors":{"invalid":2}`, `"p50_ms":`, `"p99_ms":`, `"log_tail":[`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("status JSON lacks %s: %s", k, raw)
		}
	}
}
