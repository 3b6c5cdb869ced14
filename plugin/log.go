package plugin

import (
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// Logger returns a logger for the adapter's own diagnostics: go-hclog's JSON records
// ("@timestamp", "@level", "@message", "@module", then the fields) on standard error,
// which a host using adapterkit turns into records of its own logger, at their level
// and with their fields, under the adapter's name. Standard error is never a reply:
// logging is safe at any time, from any goroutine.
//
// It is a standard [slog.Logger]: log.Info("reading", "probe", p.Probe). Its
// "@module" is the executable's name without its version (thermometer for
// thermometer_v1.0.0, .exe removed); Logger().With("part", "cache") tags the records of
// a part of the adapter with a field, as any other. Its level is
// $ADAPTERKIT_LOG_LEVEL's (trace, debug, info, warn, error or off: a host sets it, e.g.
// with registry.Config.AdapterLogLevel), else info; trace is [slog.Level] -8, below
// debug.
//
// The SDK does not use go-hclog itself, whose package initialisation (colours, a
// regular expression) every adapter would pay at each start; an adapter that prefers it
// may write the same records with hclog.New and JSONFormat.
func Logger() *slog.Logger {
	return newLogger(os.Stderr, os.Getenv(proto.LogLevelEnv), exeName(os.Args[0]))
}

// newLogger returns a logger writing go-hclog JSON records to w at the level named level
// or above, with name as their "@module".
func newLogger(w io.Writer, level, name string) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: logLevel(level), ReplaceAttr: hclogAttr})
	return slog.New(h).With("@module", name)
}

// levelTrace is go-hclog's trace level, below slog's debug.
const levelTrace = slog.LevelDebug - 4

// levelOff is above every level a record is logged at.
const levelOff = slog.Level(math.MaxInt32)

// logLevel is the level $ADAPTERKIT_LOG_LEVEL names (go-hclog's names, any case,
// spaces around ignored), info if it names none.
func logLevel(name string) slog.Level {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "trace":
		return levelTrace
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	case "off":
		return levelOff
	}
	return slog.LevelInfo
}

// levelName is go-hclog's name of the level at or below l.
func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

// hclogTime is the layout of go-hclog's "@timestamp".
const hclogTime = "2006-01-02T15:04:05.000000Z07:00"

// hclogAttr gives slog's built-in attributes go-hclog's JSON keys and values.
func hclogAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		if t, ok := a.Value.Any().(time.Time); ok {
			return slog.String("@timestamp", t.Format(hclogTime))
		}
	case slog.LevelKey:
		if l, ok := a.Value.Any().(slog.Level); ok {
			return slog.String("@level", levelName(l))
		}
	case slog.MessageKey:
		return slog.Attr{Key: "@message", Value: a.Value}
	}
	return a
}

// discard is the diagnostics logger of an Adapter without one.
var discard = slog.New(slog.DiscardHandler)

// exeName is the adapter's name from its executable path: the base name without
// ".exe" and without a "_vX.Y.Z" version suffix.
func exeName(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".exe")
	if i := strings.LastIndex(name, "_v"); i > 0 && i+2 < len(name) && name[i+2] >= '0' && name[i+2] <= '9' {
		name = name[:i]
	}
	return name
}
