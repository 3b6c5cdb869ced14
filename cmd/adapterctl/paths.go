package main

import (
	"fmt"
	"path/filepath"
)

// The library launches adapters and scans directories by absolute path only (R61,
// A31): that rule is about what a host program runs, not about what a person types.
// adapterctl therefore resolves the relative paths given on its command line (DIR
// arguments, --dir, $ADAPTERKIT_PATH entries, an ADAPTER path) against the working
// directory, and says which absolute path it used.

// absPath returns p made absolute against the working directory, and whether it was
// relative. If the working directory cannot be had, p is returned as it is, and the
// library's refusal of a relative path explains the failure.
func absPath(p string) (string, bool) {
	if p == "" || filepath.IsAbs(p) {
		return p, false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p, false
	}
	return abs, true
}

// absPaths applies absPath to each of ps and returns the results and, for each
// relative one, a note saying which absolute path is used.
func absPaths(ps []string) (out []string, notes []string) {
	out = make([]string, len(ps))
	for i, p := range ps {
		abs, rel := absPath(p)
		out[i] = abs
		if rel {
			notes = append(notes, resolvedNote(p, abs))
		}
	}
	return out, notes
}

// resolvedNote says which absolute path a relative one stands for.
func resolvedNote(given, abs string) string {
	return fmt.Sprintf("%s is %s", given, abs)
}

// printNotes writes notes on stderr, one line each, unless the output is JSON.
func printNotes(e *env, cmd string, asJSON bool, notes []string) {
	if asJSON {
		return
	}
	prefix := "adapterctl: "
	if cmd != "" {
		prefix = "adapterctl " + cmd + ": "
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, prefix+n)
	}
}
