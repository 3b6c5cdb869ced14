package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The stream workload as `make bench` runs it: the bench tool, built without the race
// detector (which slows base64 and hashing tenfold), streams 256 MiB up to a real
// adapter process and 256 MiB down, each checked against its CRC-32C (a mismatch fails
// the workload), and reports both beside the typed 1 MiB echo of the same run.
func TestStream256MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts processes, moves 512 MiB")
	}
	dir := builtDir(t)
	self := filepath.Join(t.TempDir(), "bench")
	if _, err := goOutput("", nil, "build", "-o", self, "."); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(self, "-bin", dir, "-workloads", "stream", "-systems", sysAdapterkit, "-reps", "1", "-json").Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r result
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "{") && strings.Contains(line, `"workload":"stream"`) {
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(r.Errors) > 0 || r.Median["mbps_upload"] <= 0 || r.Median["mbps_download"] <= 0 || r.Median["upload_per_echo"] <= 0 {
		t.Fatalf("stream result %+v\n%s", r, out)
	}
	t.Logf("256 MiB: upload %.0f MB/s, download %.0f MB/s; typed 1 MiB echo %.0f MB/s (both ways)",
		r.Median["mbps_upload"], r.Median["mbps_download"], r.Median["mbps_echo_1MiB"])
}
