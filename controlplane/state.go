package controlplane

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/registry"
)

// ErrState is matched (errors.Is) by Serve's error when the state directory
// (ServerConfig.StateDir) or its file of refused adapter files cannot be trusted or
// read: not owned by the daemon's user, writable by group or others, not a regular
// file, or not what the daemon writes. The error names the file and says why; the
// daemon does not start, since refused files would otherwise run.
var ErrState = errors.New("controlplane: unusable state")

// refusedFile is the name of the record of refused adapter files in the state
// directory.
const refusedFile = "refused.json"

// stateVersion is the version of the state file's format.
const stateVersion = 1

// maxStateFile bounds the size of the state file read.
const maxStateFile = 4 << 20

// stateDoc is the state file: the record of refused adapter files (registry.Refusal).
type stateDoc struct {
	Version int                `json:"version"`
	Refused []registry.Refusal `json:"refused"`
}

// stateError is an unusable state directory or file.
func stateError(path, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s (fix or remove it; the daemon will not start with a record it cannot trust)", ErrState, path, fmt.Sprintf(format, a...))
}

// checkOwned refuses a state file or directory that is not the daemon's own: owned
// by another user, or writable by group or others.
func checkOwned(path string, fi os.FileInfo) error {
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return stateError(path, "owned by uid %d, not the daemon's uid %d", uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return stateError(path, "writable by group or others (mode %04o)", fi.Mode().Perm())
	}
	return nil
}

// loadRefused reads the record of refused adapter files from the state directory
// dir: none when the directory or its file does not exist yet.
func loadRefused(dir string) ([]registry.Refusal, error) {
	if !filepath.IsAbs(dir) {
		return nil, stateError(dir, "the state directory must be an absolute path")
	}
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, stateError(dir, "%v", err)
	case !di.IsDir():
		return nil, stateError(dir, "not a directory")
	}
	if err := checkOwned(dir, di); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, refusedFile)
	f, err := openNoFollow(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, stateError(path, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stateError(path, "%v", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, stateError(path, "not a regular file")
	}
	if err := checkOwned(path, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, stateError(path, "%v", err)
	}
	if len(b) > maxStateFile {
		return nil, stateError(path, "larger than %d bytes", maxStateFile)
	}
	return decodeState(path, b)
}

// decodeState decodes and checks the state file's contents.
func decodeState(path string, b []byte) ([]registry.Refusal, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var doc stateDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, stateError(path, "corrupt: %v", err)
	}
	if dec.More() {
		return nil, stateError(path, "corrupt: data after the JSON object")
	}
	if doc.Version != stateVersion {
		return nil, stateError(path, "format version %d, this daemon reads %d", doc.Version, stateVersion)
	}
	for i, rf := range doc.Refused {
		_, nerr := discovery.ParseRef(rf.Name)
		_, derr := digest.Parse(rf.SHA256)
		switch {
		case !filepath.IsAbs(rf.Path) || filepath.Clean(rf.Path) != rf.Path:
			return nil, stateError(path, "corrupt: refusal %d: path %q is not a clean absolute path", i, rf.Path)
		case nerr != nil || strings.Contains(rf.Name, "@"):
			return nil, stateError(path, "corrupt: refusal %d: %q is not an adapter name", i, rf.Name)
		case derr != nil || rf.SHA256 != strings.ToLower(rf.SHA256):
			return nil, stateError(path, "corrupt: refusal %d: sha256 %q is not a lower-case hex SHA-256", i, rf.SHA256)
		case rf.Size < 0 || rf.At.IsZero():
			return nil, stateError(path, "corrupt: refusal %d: no size or time", i)
		}
	}
	return doc.Refused, nil
}

// saveRefused writes the record of refused adapter files into the state directory
// dir (created owner-only if missing) atomically: a new file, owner-only, synced,
// renamed over the old one.
func saveRefused(dir string, list []registry.Refusal) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(stateDoc{Version: stateVersion, Refused: list}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, filepath.Join(dir, refusedFile)); err != nil {
		return err
	}
	ok = true
	syncDir(dir)
	return nil
}

// tempPrefix starts the name of saveRefused's temporary files in the state
// directory (os.CreateTemp adds digits): the only files the daemon writes there
// besides refusedFile.
const tempPrefix = "." + refusedFile + "."

// removeTemps removes from the state directory dir the temporary files of writes
// that never completed (a daemon killed inside saveRefused): they are never read,
// and nothing else would remove them. Serve calls it once it holds its socket, so a
// second daemon refused on the same socket never removes the first one's file under
// way. Only regular files with the temporary name are removed; a failure is logged.
func removeTemps(dir string, log hclog.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.Warn("cannot look for leftover temporary files in the state directory", "dir", dir, "error", err)
		}
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("cannot remove a leftover temporary file", "path", path, "error", err)
			continue
		}
		log.Info("removed a temporary file left by an interrupted write", "path", path)
	}
}
