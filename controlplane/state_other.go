//go:build !unix

package controlplane

import (
	"fmt"
	"os"
)

// ownerOf cannot tell a file's owner here (the daemon does not run on these
// systems: see serveSupported).
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

// openNoFollow opens path for reading, refusing a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link", path)
	}
	return os.Open(path)
}

// syncDir does nothing here.
func syncDir(string) {}
