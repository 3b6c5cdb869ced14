package discovery

import (
	"errors"
	"strconv"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Reason says why a file in a scanned directory was not taken as an adapter.
type Reason int

// The reasons a file is rejected. Scan checks them in the order given in the
// package documentation; a file is reported once, with the first that applies.
const (
	// Unreadable: the entry could not be examined (it vanished, a symbolic
	// link is dangling or loops, or stat failed). Rejected.Err holds the cause.
	Unreadable Reason = iota + 1
	// LinkLeavesDir: a symbolic link, or a link it leads to, points outside
	// the scanned directory.
	LinkLeavesDir
	// NotRegular: not a regular file (a directory, device, FIFO, socket, or a
	// link to one).
	NotRegular
	// BadName: the file name does not have the form NAME_vVERSION, or NAME
	// breaks the NAME rule.
	BadName
	// BadVersion: VERSION is not strict semantic versioning.
	BadVersion
	// WrongOSExtension: a valid NAME_vVERSION with ".exe" on an OS other than
	// Windows, or without ".exe" on Windows.
	WrongOSExtension
	// WorldWritable: the file, the scanned directory, or a directory between
	// them that a link leads through, is writable by everyone.
	WorldWritable
	// NotExecutable: no execute permission bit is set.
	NotExecutable
	// Duplicate: an adapter with the same NAME and an equal VERSION (build
	// metadata is ignored, as SemVer says) was already taken from an earlier
	// directory or an earlier file of the same directory.
	Duplicate
	// GroupWritable: the file, the scanned directory, or a directory between
	// them that a link leads through, is writable by its group (allowed for the
	// scanned directory's group by Options.AllowGroupWritable). Checked with
	// WorldWritable, before NotExecutable.
	GroupWritable
	// UntrustedOwner: the file, the scanned directory, or a directory between
	// them that a link leads through, is owned by a user other than the host's
	// (its effective uid) and root, who could replace it. Checked after
	// GroupWritable, before NotExecutable.
	UntrustedOwner
)

var reasonNames = [...]string{
	Unreadable:       "unreadable",
	LinkLeavesDir:    "symbolic link leaves the directory",
	NotRegular:       "not a regular file",
	BadName:          "bad name",
	BadVersion:       "bad version",
	WrongOSExtension: "wrong extension for the operating system",
	WorldWritable:    "world-writable",
	NotExecutable:    "not executable",
	Duplicate:        "duplicate name and version",
	GroupWritable:    "group-writable",
	UntrustedOwner:   "owned by another user",
}

// String returns a short lower-case description of r.
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Rejected describes one file that Scan did not take, and why.
type Rejected struct {
	Path   string // absolute, cleaned path of the directory entry (a bare file name from ParseFileName)
	Reason Reason
	Detail string // human-readable specifics; never needed to decide anything
	Err    error  // underlying error, if any (e.g. *fs.PathError for Unreadable)
}

// Error implements error.
func (r *Rejected) Error() string {
	s := "discovery: " + r.Path + ": " + r.Reason.String()
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	if r.Err != nil && (r.Detail == "" || r.Detail != r.Err.Error()) {
		s += ": " + r.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error, if any.
func (r *Rejected) Unwrap() error { return r.Err }

// ErrNotAbsolute: a directory given to Scan is not an absolute path (inside a
// *DirError; platform.ErrNotAbsolute is the same value).
var ErrNotAbsolute = sentinel.ErrNotAbsolute

// The other reasons of a *DirError. They are not exported: a host fixes its directory
// list whatever the reason, and the operating system's error, wrapped too, tells a
// missing directory (fs.ErrNotExist) or a permission problem (fs.ErrPermission).
var (
	errDirNotFound   = errors.New("directory does not exist")
	errNotDirectory  = errors.New("not a directory")
	errDirUnreadable = errors.New("directory cannot be read")
	errDirRepeated   = errors.New("directory given more than once")
)

// DirError reports a directory argument that Scan cannot scan. Nothing is
// scanned when any argument is bad.
type DirError struct {
	Dir    string // the argument as given
	Reason error  // ErrNotAbsolute, or why else (its message: not found, not a directory, unreadable, repeated)
	Err    error  // underlying error from the OS, or nil
}

// Error implements error.
func (e *DirError) Error() string {
	s := "discovery: directory " + strconv.Quote(e.Dir) + ": " + e.Reason.Error()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the Reason and the underlying error, so errors.Is works with
// both ErrNotAbsolute and OS errors (fs.ErrNotExist, ...).
func (e *DirError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}
