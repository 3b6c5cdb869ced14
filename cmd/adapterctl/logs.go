package main

import (
	"io"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/stderrlog"
	"github.com/adapterkit/adapterkit/lifecycle"
)

// logOpts are the -v and --log-level flags of call, inspect and check: the adapter's
// standard error shown on adapterctl's, attributed to the adapter.
type logOpts struct {
	verbose  bool
	logLevel string
	writer   *stderrlog.Writer // check's, closed by closeLogs
}

func (o *logOpts) registerLogs(f *flags) {
	f.BoolVar(&o.verbose, "v", false, "show the adapter's stderr on stderr as log records attributed to it (its logger at info)")
	f.StringVar(&o.logLevel, "log-level", "", "`LEVEL` of the adapter's logger and of the records shown: trace, debug, info, warn, error (implies -v)")
}

// level is the level of the records shown: NoLevel when they are not shown.
func (o *logOpts) level() (hclog.Level, error) {
	if o.logLevel == "" {
		if o.verbose {
			return hclog.Info, nil
		}
		return hclog.NoLevel, nil
	}
	l := hclog.LevelFromString(o.logLevel)
	if l == hclog.NoLevel || l == hclog.Off {
		return hclog.NoLevel, usagef("--log-level %q is not one of trace, debug, info, warn, error", o.logLevel)
	}
	return l, nil
}

// applyLogs makes the adapter's stderr shown on w, attributed to name: lines that are
// hclog JSON records (the logger plugin gives adapters) at their level, other lines at
// info; the adapter's logger is set to the level asked.
func (o *logOpts) applyLogs(w io.Writer, name string, cfg *lifecycle.Config) error {
	level, err := o.level()
	if err != nil || level == hclog.NoLevel {
		return err
	}
	if cfg.Stderr != nil {
		return usagef("-v and --log-level show the adapter's stderr: do not also give --adapter-stderr")
	}
	cfg.StderrLogger = hclog.New(&hclog.LoggerOptions{Output: &lockedWriter{w: w}, Level: level, DisableTime: true})
	cfg.StderrLevel = hclog.Info
	cfg.Env = proto.WithLogLevel(cfg.Env, level.String())
	return nil
}

// checkStderr is the stderr writer of check's adapter processes, which check starts
// itself: the configuration's, or one that logs as lifecycle does.
func (o *logOpts) checkStderr(cfg lifecycle.Config) io.Writer {
	if cfg.StderrLogger == nil {
		return cfg.Stderr
	}
	log := cfg.StderrLogger.Named(cfg.Name)
	o.writer = stderrlog.New(nil, log, cfg.StderrLevel, cfg.Name, stderrlog.Sink{})
	o.writer.Start(log)
	return o.writer
}

// closeLogs logs check's last records.
func (o *logOpts) closeLogs() {
	if o.writer != nil {
		o.writer.Close()
	}
}
