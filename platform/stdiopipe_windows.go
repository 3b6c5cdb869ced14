package platform

import (
	"os"

	"golang.org/x/sys/windows"
)

// stdioPipe creates an anonymous pipe whose two handles are NOT inheritable from the
// moment they exist (no SECURITY_ATTRIBUTES, so bInheritHandle is FALSE). os.Pipe makes
// inheritable handles: between its return and a later SetHandleInformation, C code in
// the host calling CreateProcess with bInheritHandles=TRUE and no handle list would hand
// the host's end of an adapter's stdin to an unrelated child, and the adapter would
// never see end of input (R49). The adapter gets inheritable duplicates of its own ends
// only, through a handle list (createInJob).
func stdioPipe() (r, w *os.File, err error) {
	var rh, wh windows.Handle
	if err := windows.CreatePipe(&rh, &wh, nil, 0); err != nil {
		return nil, nil, os.NewSyscallError("CreatePipe", err)
	}
	return os.NewFile(uintptr(rh), "|0"), os.NewFile(uintptr(wh), "|1"), nil
}
