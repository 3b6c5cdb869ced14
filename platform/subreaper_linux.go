package platform

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// setSubreaper sets or clears PR_SET_CHILD_SUBREAPER on this process.
func setSubreaper(on bool) error {
	v := 0
	if on {
		v = 1
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, uintptr(v), 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	return nil
}
