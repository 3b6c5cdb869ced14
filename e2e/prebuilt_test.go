package e2e

import (
	"os"
	"path/filepath"
	"strings"
)

// prebuiltEnv names a directory holding the helper programs buildBin would build (set by
// the unprivileged re-run of unpriv_test.go, whose user may not use the build cache).
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
