package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// Python's words, in the last lines of standard error of an interpreter that could not
// read its own standard library: the first when it cannot find its prefix, the second
// when it then fails to import the codecs it needs before anything else.
var pythonStdlibErrors = []string{"Could not find platform independent libraries", "No module named 'encodings'"}

// pythonPrefixHint is the hint for a Python adapter that exited at start because its
// interpreter could not read its standard library; "" for any other error. Under
// --sandbox an interpreter outside the system locations (pyenv, conda, a virtual
// environment's base, /opt) may be executed when it is granted or a root-owned system
// program, but its installation prefix is never derived from the adapter's own #! line
// (a file must not choose what it may read): the hint names the prefix to grant.
func pythonPrefixHint(err error) string {
	var oe *lifecycle.OpenError
	if !errors.As(err, &oe) {
		return ""
	}
	found := false
	for _, q := range oe.Stderr {
		line, uerr := strconv.Unquote(q)
		if uerr != nil {
			line = q
		}
		for _, w := range pythonStdlibErrors {
			found = found || strings.Contains(line, w)
		}
	}
	if !found {
		return ""
	}
	const why = "python could not read its standard library; under --sandbox an interpreter's installation prefix is readable only when it is a system location or granted"
	if prefix := interpreterPrefixOf(oe.Path); prefix != "" {
		return why + ": grant it with --allow-read " + prefix
	}
	return why + ": grant it with --allow-read PREFIX (the directory above the interpreter's bin)"
}

// interpreterPrefixOf returns the directory above the "bin" directory of the
// interpreter that script's #! line names by absolute path, or "" (also for env(1),
// whose program is found on PATH, and for the system prefixes already readable).
func interpreterPrefixOf(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) || filepath.Base(fields[0]) == "env" {
		return ""
	}
	bin := filepath.Dir(fields[0])
	if filepath.Base(bin) != "bin" {
		return ""
	}
	switch prefix := filepath.Dir(bin); prefix {
	case "/", "/usr":
		return ""
	default:
		return prefix
	}
}
