//go:build !linux

package platform

import "errors"

// setSubreaper: only Linux has PR_SET_CHILD_SUBREAPER.
func setSubreaper(on bool) error {
	if on {
		return errors.ErrUnsupported
	}
	return nil
}
