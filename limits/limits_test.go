package limits_test

import (
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/limits"
)

// The protocol's numbers, as the specification states them (R3, R14, R30, R40, R43-R48).
func TestProtocolValues(t *testing.T) {
	tests := []struct {
		name      string
		got, want int64
	}{
		{"R3 frame cap", limits.MaxFrameSize, 4194304},
		{"R40 in flight", limits.MaxInFlight, 32},
		{"R14 largest id", limits.MaxRequestID, 9007199254740991},
		{"R30 message cap", limits.MaxErrorMessage, 4096},
		{"R43 call deadline", int64(limits.CallDeadline), int64(30 * time.Second)},
		{"R44 console close", int64(limits.ConsoleClose), int64(3 * time.Second)},
		{"R45 pipe write", int64(limits.PipeWriteTimeout), int64(10 * time.Second)},
		{"R47 grace", int64(limits.DisconnectGrace), int64(5 * time.Second)},
		{"R48 cleanup", int64(limits.ProcessCleanup), int64(2 * time.Second)},
		{"control frame", limits.ControlMaxFrameSize, 16 << 20},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}
