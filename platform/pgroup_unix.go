//go:build linux || darwin

package platform

import (
	"sync"

	"golang.org/x/sys/unix"
)

// killGroupTree is killRounds with POSIX signals, shared by the Linux process-group
// fallback and macOS: each round SIGKILLs the group while its leader is unreaped (mu
// guards reaped; an unreaped leader holds its pid, so the id still names the tree's
// group), then every process the scan found that still has the start time it was found
// with, so a recycled pid is never signalled.
func killGroupTree(mu *sync.Mutex, reaped *bool, pgid int, scan func() ([]procStat, error)) error {
	return killRounds(killWalkRounds, scan,
		func() {
			mu.Lock()
			defer mu.Unlock()
			if !*reaped {
				_ = unix.Kill(-pgid, unix.SIGKILL)
			}
		},
		func(p procStat) {
			if sameProcess(p.pid, p.start) {
				_ = unix.Kill(p.pid, unix.SIGKILL)
			}
		})
}
