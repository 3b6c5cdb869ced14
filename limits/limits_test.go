package limits_test

import (
	"fmt"
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

func TestLimitsNilZeroSmallerLarger(t *testing.T) {
	var nilL *limits.Limits
	if nilL.Frame() != limits.MaxFrameSize || nilL.InFlight() != 32 || nilL.RequestID() != limits.MaxRequestID ||
		nilL.Call() != limits.CallDeadline || nilL.Console() != limits.ConsoleClose ||
		nilL.PipeWrite() != limits.PipeWriteTimeout || nilL.Grace() != limits.DisconnectGrace ||
		nilL.Cleanup() != limits.ProcessCleanup {
		t.Fatal("nil Limits must give protocol values")
	}
	zero := &limits.Limits{}
	if zero.Frame() != limits.MaxFrameSize || zero.Call() != limits.CallDeadline {
		t.Fatal("zero Limits must give protocol values")
	}
	small := &limits.Limits{MaxFrameSize: 10, MaxInFlight: 2, MaxRequestID: 5, CallDeadline: time.Second,
		ConsoleClose: time.Millisecond, PipeWriteTimeout: 2 * time.Millisecond, DisconnectGrace: 3 * time.Millisecond,
		ProcessCleanup: 4 * time.Millisecond}
	if small.Frame() != 10 || small.InFlight() != 2 || small.RequestID() != 5 || small.Call() != time.Second ||
		small.Console() != time.Millisecond || small.PipeWrite() != 2*time.Millisecond ||
		small.Grace() != 3*time.Millisecond || small.Cleanup() != 4*time.Millisecond {
		t.Fatalf("smaller bounds not honoured: %+v", small)
	}
	large := &limits.Limits{MaxFrameSize: 1 << 30, MaxInFlight: 1000, MaxRequestID: 1 << 62, CallDeadline: time.Hour}
	if large.Frame() != limits.MaxFrameSize || large.InFlight() != limits.MaxInFlight ||
		large.RequestID() != limits.MaxRequestID || large.Call() != limits.CallDeadline {
		t.Fatalf("larger bounds must be clamped: %+v", large)
	}
}

func ExampleLimits() {
	// A test lowers the write timeout; everything else keeps the protocol's value.
	l := &limits.Limits{PipeWriteTimeout: 50 * time.Millisecond}
	fmt.Println(l.PipeWrite(), l.Call(), l.Frame())
	// Output: 50ms 30s 4194304
}
