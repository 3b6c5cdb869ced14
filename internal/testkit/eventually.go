package testkit

import (
	"testing"
	"time"
)

// Poll is how often Eventually and Within look again.
const Poll = 10 * time.Millisecond

// Within calls cond until it returns true or timeout has passed, looking again every
// Poll, and reports whether it did. It is the one poller of the tests: for a state no
// channel announces (another process, the file system, a counter of the code under
// test). Where the code under test can say when it is done, wait on that instead.
func Within(timeout time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
			if cond() {
				return true
			}
		}
	}
}

// Eventually is Within that fails t, with the message formatted from format and args,
// when cond has not returned true within timeout.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Within(timeout, cond) {
		t.Fatalf("after %v: "+format, append([]any{timeout}, args...)...)
	}
}

// BlockForever blocks a helper process (a test binary re-executed as an adapter or a
// descendant) until a signal ends it. A bare `select {}` does not: when no other
// goroutine can run, the Go runtime reports "all goroutines are asleep" and exits 2 —
// which -race hides (its own goroutine keeps the process busy), so a helper would die
// by itself without -race and a test of its cleanup would prove nothing. A goroutine
// waiting for a timer is never reported, so this waits for one, an hour at a time.
func BlockForever() {
	for {
		<-time.After(time.Hour)
	}
}
