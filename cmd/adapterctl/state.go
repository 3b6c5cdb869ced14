package main

import (
	"os"
	"path/filepath"
	"strings"
)

// stateNone is the --state-dir value that keeps the record of refused adapter files
// in memory only.
const stateNone = "none"

// stateHelp documents --state-dir.
const stateHelp = "`DIR`: where the daemon keeps what survives its restarts, the record of refused adapter files\n" +
	"(default: $STATE_DIRECTORY, as systemd's StateDirectory= sets it; else /var/lib/adapterkit for root,\n" +
	"$XDG_STATE_HOME/adapterkit or ~/.local/state/adapterkit for other users; \"none\": kept in memory only)"

// defaultStateDir is serve's state directory when --state-dir is not given; ""
// when none can be named (no home directory).
func defaultStateDir() string {
	if v := os.Getenv("STATE_DIRECTORY"); v != "" {
		// systemd lists one directory per StateDirectory= entry, colon-separated.
		first, _, _ := strings.Cut(v, ":")
		if filepath.IsAbs(first) {
			return first
		}
	}
	if os.Getuid() == 0 {
		return "/var/lib/adapterkit"
	}
	if v := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(v) {
		return filepath.Join(v, "adapterkit")
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "adapterkit")
	}
	return ""
}

// stateDir resolves the --state-dir value: the default when not given, "" for
// "none", else the directory made absolute.
func stateDir(flag string, given bool) (string, error) {
	switch {
	case !given:
		return defaultStateDir(), nil
	case flag == stateNone:
		return "", nil
	case flag == "":
		return "", usagef("--state-dir needs a directory (or %q)", stateNone)
	}
	return filepath.Abs(flag)
}
