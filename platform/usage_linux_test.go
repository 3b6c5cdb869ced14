package platform

import (
	"testing"
	"time"
)

// statCPU adds utime and stime (fields 14, 15), and with the children's cutime and
// cstime (16, 17), whatever the command name holds.
func TestStatCPU(t *testing.T) {
	line := []byte("42 (a) b) c) S 1 42 42 0 -1 4194560 100 0 0 0 30 12 5 3 20 0 1 0 12345 0 0")
	for _, c := range []struct {
		children bool
		want     time.Duration
	}{{false, 420 * time.Millisecond}, {true, 500 * time.Millisecond}} {
		if got := statCPU(line, c.children); got != c.want {
			t.Errorf("statCPU(children %v) = %v, want %v", c.children, got, c.want)
		}
	}
	if got := statCPU([]byte("42 (short) S 1"), true); got != 0 {
		t.Errorf("statCPU of a short line = %v", got)
	}
}
