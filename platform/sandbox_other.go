//go:build !linux

package platform

import (
	"errors"
	"fmt"
	"runtime"
)

// sandboxPreflight refuses a sandbox on a system that enforces none, or with BestEffort
// returns the gap to report. What each system would need: Windows an AppContainer (or
// a restricted token at low integrity) with capabilities for the granted files and
// network; macOS a sandbox profile (sandbox_init, as sandbox-exec applies) compiled
// from the policy.
func sandboxPreflight(cfg *Config) (*Dropped, error) {
	if cfg.Sandbox == nil {
		return nil, nil
	}
	needs := "a sandbox profile applied with sandbox_init"
	if runtime.GOOS == "windows" {
		needs = "an AppContainer or a restricted, low-integrity token"
	}
	err := sandboxUnsupported(runtime.GOOS, needs)
	if !cfg.Sandbox.BestEffort {
		return nil, err
	}
	return &Dropped{Reason: err.Error() + "; the adapter runs with all of its user's permissions"}, nil
}

// sandboxUnsupported is the error (or, with BestEffort, the gap) of a platform that
// enforces no sandbox.
func sandboxUnsupported(goos, needs string) error {
	return fmt.Errorf("%w: adapter sandboxing is not implemented on %s (it would need %s)", errors.ErrUnsupported, goos, needs)
}
