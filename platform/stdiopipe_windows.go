package platform

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/windows"
)

// pipeSeq numbers the pipes this host makes, for their names.
var pipeSeq atomic.Uint64

// stdioPipeSize is each direction's buffer quota of an adapter's pipe.
const stdioPipeSize = 64 << 10

// stdioPipe creates a pipe for one of an adapter's standard streams; hostReads says
// whether the host reads it (stdout, stderr) or writes it (stdin).
//
// The host's end is opened for overlapped I/O, so the Go runtime does its reads and
// writes through its I/O completion port and closing the file ends an operation still
// pending on it. An anonymous pipe (CreatePipe) is synchronous: closing its handle while
// a read waits relies on CancelIoEx reaching the read, which misses one that has not yet
// entered the kernel and then waits for data that may never come (seen under Wine,
// where Conn.Close hung). Anonymous pipes are named pipes with a hidden name; this one
// has a random name, takes one instance only (FILE_FLAG_FIRST_PIPE_INSTANCE, so nobody
// can have made it before), refuses remote clients, and is opened by the adapter's end
// at once: if anyone else had connected first, that open fails and so does the start.
// The adapter's end stays synchronous, as a program expects of its standard handles.
//
// Neither handle is inheritable from the moment it exists (no SECURITY_ATTRIBUTES, so
// bInheritHandle is FALSE): C code in the host calling CreateProcess with
// bInheritHandles=TRUE and no handle list cannot hand the host's end of an adapter's
// stdin to an unrelated child, whose holding it would keep the adapter from ever seeing
// end of input (R49). The adapter gets inheritable duplicates of its own ends only,
// through a handle list (createInJob).
func stdioPipe(hostReads bool) (r, w *os.File, err error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand panics instead)
	name := fmt.Sprintf(`\\.\pipe\adapterkit-%d-%d-%s`, os.Getpid(), pipeSeq.Add(1), hex.EncodeToString(nonce[:]))
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	mode := uint32(windows.FILE_FLAG_OVERLAPPED | windows.FILE_FLAG_FIRST_PIPE_INSTANCE)
	access := uint32(windows.GENERIC_READ)
	if hostReads {
		mode |= windows.PIPE_ACCESS_INBOUND
		access = windows.GENERIC_WRITE
	} else {
		mode |= windows.PIPE_ACCESS_OUTBOUND
	}
	host, err := windows.CreateNamedPipe(name16, mode,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, stdioPipeSize, stdioPipeSize, 0, nil)
	if err != nil {
		return nil, nil, os.NewSyscallError("CreateNamedPipe", err)
	}
	// The adapter's end: opening it connects the pipe (a later ConnectNamedPipe would
	// only report ERROR_PIPE_CONNECTED).
	child, err := windows.CreateFile(name16, access, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		windows.CloseHandle(host)
		return nil, nil, os.NewSyscallError("CreateFile "+name, err)
	}
	hostF, childF := os.NewFile(uintptr(host), name), os.NewFile(uintptr(child), name)
	if hostReads {
		return hostF, childF, nil
	}
	return childF, hostF, nil
}
