package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSDKSummaryLine runs sdk/make.sh summary on a skip log of two languages, one
// skipped twice for the same reason: the line names each language once, with its reason.
func TestSDKSummaryLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sdk/make.sh is a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("sdk/make.sh needs bash: %v", err)
	}
	log := filepath.Join(t.TempDir(), "skipped.txt")
	lines := "rust|rsecho (the Rust SDK's echo adapter)|cargo is not installed\n" +
		"rust|the Rust SDK's tests (sdk/rust)|cargo is not installed\n" +
		"python|pyecho (the Python SDK's echo adapter)|python3 is not installed\n"
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "../sdk/make.sh", "summary")
	cmd.Env = append(os.Environ(), "ADAPTERKIT_SKIPLOG="+log)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sdk/make.sh summary: %v\n%s", err, out)
	}
	want := "SDK summary: SKIPPED python: python3 is not installed; rust: cargo is not installed. The SKIP: lines above say how to get each.\n"
	if string(out) != want {
		t.Errorf("sdk/make.sh summary printed\n%q\nwant\n%q", out, want)
	}
}
