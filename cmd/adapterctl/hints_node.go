package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// Node's words, in the last lines of standard error of an adapter that exited at start,
// for a module it could not load: the error code, and the path it names when the line
// holding it is among the lines kept.
var (
	nodeModuleError = regexp.MustCompile(`\b(ERR_MODULE_NOT_FOUND|EACCES)\b`)
	nodePath        = regexp.MustCompile(`(?:^\s*path: '|Cannot find (?:package|module) ')(/[^']+)'`)
	quotedAbsPath   = regexp.MustCompile(`["'](/[^"'\n]+)["']`)
)

// nodeModuleHint is the hint for a Node adapter that exited at start because it could
// not find or read a module it imports; "" for any other error. Under --sandbox such a
// module exists but is not granted: `npm install FOLDER` (how the TypeScript SDK is
// installed from a checkout) links node_modules/NAME to FOLDER, and Node then fails
// with ERR_MODULE_NOT_FOUND or EACCES. The hint names what to grant: the path Node
// named, or else the folders the node_modules links near the adapter's entry point
// lead to.
func nodeModuleHint(err error) string {
	var oe *lifecycle.OpenError
	if !errors.As(err, &oe) {
		return ""
	}
	found, named := false, ""
	for _, q := range oe.Stderr {
		line, uerr := strconv.Unquote(q)
		if uerr != nil {
			line = q
		}
		found = found || nodeModuleError.MatchString(line)
		if m := nodePath.FindStringSubmatch(line); m != nil {
			named = m[1]
		}
	}
	if !found {
		return ""
	}
	var grants []string
	if named != "" {
		grants = []string{packageRoot(named)}
	} else {
		grants = linkedPackages(oe.Path)
	}
	const why = "node could not load a module the adapter imports; under --sandbox every module must be readable, and `npm install FOLDER` links node_modules to FOLDER, which is not granted by default"
	if len(grants) == 0 {
		return why + ": grant it with --allow-read FOLDER"
	}
	return why + ": grant it with --allow-read " + strings.Join(grants, " --allow-read ")
}

// packageRoot returns the directory of the package holding file: the nearest directory
// above it with a package.json, or file's own directory.
func packageRoot(file string) string {
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return filepath.Dir(file)
		}
	}
}

// linkedPackages returns the real directories of the symbolically linked packages
// (node_modules/NAME, node_modules/@SCOPE/NAME) of the node_modules directories above
// the absolute paths an adapter's launcher names in its first 4 KiB (a launcher such
// as the TypeScript SDK's README writes: import("/home/me/hello/dist/hello.js")).
func linkedPackages(launcher string) []string {
	f, err := os.Open(launcher)
	if err != nil {
		return nil
	}
	head := make([]byte, 4<<10)
	n, _ := f.Read(head)
	f.Close()
	var out []string
	for _, m := range quotedAbsPath.FindAllStringSubmatch(string(head[:n]), 8) {
		for dir := filepath.Dir(m[1]); filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
			nm := filepath.Join(dir, "node_modules")
			entries, err := os.ReadDir(nm)
			if err != nil {
				continue
			}
			for _, e := range entries {
				paths := []string{filepath.Join(nm, e.Name())}
				if strings.HasPrefix(e.Name(), "@") && e.IsDir() {
					scoped, _ := os.ReadDir(paths[0])
					paths = paths[:0]
					for _, s := range scoped {
						paths = append(paths, filepath.Join(nm, e.Name(), s.Name()))
					}
				}
				for _, p := range paths {
					if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
						continue
					}
					if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, real) {
						out = append(out, real)
					}
				}
			}
		}
	}
	return out
}
