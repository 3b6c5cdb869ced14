//go:build !unix

package discovery

import "io/fs"

// ownerOf reports no owner: outside Unix, ownership is not inspected (see
// checkModes).
func ownerOf(fs.FileInfo) (uid, gid int, known bool) { return -1, -1, false }

// hostUID is -1: outside Unix, ownership is not inspected.
func hostUID() int { return -1 }
