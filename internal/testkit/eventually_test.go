package testkit

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestWithin: on fake time, Within looks until cond holds and no longer, and gives up
// at the timeout, not before.
func TestWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		if !Within(time.Second, func() bool { calls++; return time.Since(start) >= 3*Poll }) {
			t.Fatal("Within gave up on a condition that came true")
		}
		if calls != 4 || time.Since(start) != 3*Poll {
			t.Errorf("true after %v and %d looks, want %v and 4", time.Since(start), calls, 3*Poll)
		}
		start = time.Now()
		if Within(time.Second, func() bool { return false }) {
			t.Fatal("Within reported a condition that never held")
		}
		if time.Since(start) != time.Second {
			t.Errorf("gave up after %v, want 1s", time.Since(start))
		}
	})
}
