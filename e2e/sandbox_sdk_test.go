//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realInterpreterDir runs the interpreter a shebang would find on the host's PATH and
// asks it where its executable really is (a pyenv or nvm shim is a script that runs
// another program, which a sandbox does not follow): the adapter's PATH names that
// directory, as the SECURITY.md containment section advises.
func realInterpreterDir(t *testing.T, name string) string {
	t.Helper()
	var cmd *exec.Cmd
	switch name {
	case "pyecho":
		cmd = exec.Command("python3", "-c", "import sys; print(sys.executable)")
	case "tsecho":
		cmd = exec.Command("node", "-p", "process.execPath")
	default:
		return "/usr/bin"
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: finding the interpreter: %v", name, err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// The Python, TypeScript and Rust echo adapters pass adapterctl check under the default
// sandbox; the TypeScript one also reads the SDK it imports from this checkout.
func TestSDKCheckSandboxed(t *testing.T) {
	ctl := buildBinT(t, "cmd/adapterctl")
	tsDist, err := filepath.Abs("../sdk/typescript/dist")
	if err != nil {
		t.Fatal(err)
	}
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		bin := realInterpreterDir(t, a.name)
		args := []string{"check", "--json", "--sandbox", "--env", "PATH=" + bin}
		switch a.name {
		case "tsecho":
			args = append(args, "--allow-read", tsDist)
		case "pyecho":
			// The build tool names the interpreter by its absolute path; its prefix
			// (pyenv's, here) is never derived from the adapter's own #! line, so it is
			// granted as the Python SDK's README says.
			if prefix := filepath.Dir(bin); prefix != "/usr" && prefix != "/" {
				args = append(args, "--allow-read", prefix)
			}
		}
		cmd := exec.CommandContext(ctx, ctl, append(args, a.path)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("adapterctl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		var res struct {
			Passed          bool `json:"passed"`
			CleanupVerified bool `json:"cleanup_verified"`
		}
		if err := json.Unmarshal(out, &res); err != nil || !res.Passed || !res.CleanupVerified {
			t.Errorf("check --sandbox: %v %s", err, out)
		}
		ins := exec.CommandContext(ctx, ctl, append([]string{"inspect", "--json"}, append(args[2:], a.path)...)...)
		out, err = ins.Output()
		if err != nil || !strings.Contains(string(out), `"sandbox": "landlock v`) {
			t.Errorf("inspect --sandbox: %v %s", err, out)
		}
	})
}
