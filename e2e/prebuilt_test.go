package e2e

import (
	"os"
	"path/filepath"
	"strings"
)

// prebuiltEnv names a directory holding the helper programs buildBin would build: set
// by a run that re-executes this test binary as another user, who may not use the
// build cache (see unpriv_test.go).
const prebuiltEnv = "ADAPTERKIT_E2E_PREBUILT"

// prebuilt is the path of a helper program built by the parent run, "" when buildBin
// must build it.
func prebuilt(name string) string {
	dir := os.Getenv(prebuiltEnv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
}
