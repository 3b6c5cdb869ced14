//go:build !unix && !windows

package plugin

import (
	"errors"
	"os"
)

// protectStdout is not available on this platform: Main refuses to start rather than
// risk stray output on the protocol stream (R6).
func protectStdout() (*os.File, error) {
	return nil, errors.New("plugin: protecting stdout is not supported on this platform")
}
