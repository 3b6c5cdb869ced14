package discovery

import (
	"io/fs"
	"strconv"
)

// trust decides whether a file or directory found by Scan may be written by
// someone the host does not trust: everyone, its group, or an owner other than
// the host's user and root.
type trust struct {
	uid        int  // the host's effective user
	allowGroup bool // Options.AllowGroupWritable
	group      int  // the scanned directory's group, trusted when allowGroup (-1: unknown)
}

// newTrust returns the rules for the entries of the scanned directory dir.
func newTrust(dir fs.FileInfo, allowGroup bool) trust {
	_, gid, _ := ownerOf(dir)
	return trust{uid: hostUID(), allowGroup: allowGroup, group: gid}
}

// check returns the reason fi may be replaced by someone untrusted, with the
// detail (a phrase following the file or directory's name), or 0 when it may
// not.
func (t trust) check(fi fs.FileInfo) (Reason, string) {
	perm := fi.Mode().Perm()
	mode := " (mode " + fi.Mode().String() + ")"
	uid, gid, known := ownerOf(fi)
	groupTrusted := t.allowGroup && known && gid == t.group
	switch {
	case perm&0o002 != 0:
		return WorldWritable, "is writable by everyone" + mode
	case perm&0o020 != 0 && !groupTrusted:
		return GroupWritable, "is writable by its group (gid " + strconv.Itoa(gid) + ")" + mode
	case known && uid != t.uid && uid != 0 && !groupTrusted:
		return UntrustedOwner, "is owned by uid " + strconv.Itoa(uid) + ", neither this process's user (uid " + strconv.Itoa(t.uid) + ") nor root"
	}
	return 0, ""
}
