package plugin

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// Logger returns a logger for the adapter's own diagnostics: hclog JSON records on
// standard error, which a host using adapterkit turns into records of its own logger,
// at their level and with their fields, under the adapter's name. Standard error is
// never a reply: logging is safe at any time, from any goroutine.
//
// It is named after the executable without its version (thermometer for
// thermometer_v1.0.0, .exe removed); Logger().ResetNamed(name) names it otherwise. Its
// level is $ADAPTERKIT_LOG_LEVEL's (trace, debug, info, warn, error or off: a host
// sets it, e.g. with registry.Config.AdapterLogLevel), else info.
func Logger() hclog.Logger {
	name := exeName(os.Args[0])
	level := hclog.LevelFromString(os.Getenv(proto.LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, Output: os.Stderr, JSONFormat: true})
}

// exeName is the adapter's name from its executable path: the base name without
// ".exe" and without a "_vX.Y.Z" version suffix.
func exeName(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".exe")
	if i := strings.LastIndex(name, "_v"); i > 0 && i+2 < len(name) && name[i+2] >= '0' && name[i+2] <= '9' {
		name = name[:i]
	}
	return name
}
