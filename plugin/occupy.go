package plugin

// occupy makes a freshly created handle take the value target, which the caller has just
// closed, so that stale copies of target (on Windows the C runtime's file descriptor 1
// keeps the old standard output handle value) reach the new object rather than whatever
// the system hands that value to next. dup creates one new handle (on Windows a
// duplicate of stderr); Windows gives a process's most recently freed handle value to
// its next new handle, so the first try normally succeeds, but another thread may take
// the value first. At most tries handles are made; those that did not get the value are
// closed again. It reports whether target is now occupied (its handle is then kept open
// for the life of the process).
func occupy[H comparable](target H, tries int, dup func() (H, error), closeH func(H)) bool {
	var others []H
	defer func() {
		for _, h := range others {
			closeH(h)
		}
	}()
	for range tries {
		h, err := dup()
		if err != nil {
			return false
		}
		if h == target {
			return true
		}
		others = append(others, h) // held open so that the next try gets another value
	}
	return false
}

// occupyTries bounds occupy on Windows.
const occupyTries = 64
