//go:build !linux

package platform

// setSubreaper: only Linux has PR_SET_CHILD_SUBREAPER.
func setSubreaper(on bool) error {
	if on {
		return ErrUnsupported
	}
	return nil
}
