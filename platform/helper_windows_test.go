package platform

import "syscall"

// Windows has no sessions; a detached grandchild is as close as it gets, and the job
// object contains it anyway.
func setsidAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: 0x00000008} // DETACHED_PROCESS
}
