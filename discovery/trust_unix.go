//go:build unix

package discovery

import (
	"io/fs"
	"os"
	"syscall"
)

// ownerOf returns fi's owner and group; known is false when the OS did not
// report them.
func ownerOf(fi fs.FileInfo) (uid, gid int, known bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1, false
	}
	return int(st.Uid), int(st.Gid), true
}

// hostUID is the user whose files Scan trusts besides root's.
func hostUID() int { return os.Geteuid() }
