package bound_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/limits"
)

func TestLimitsNilZeroSmallerLarger(t *testing.T) {
	var nilL *limits.Limits
	if bound.Frame(nilL) != limits.MaxFrameSize || bound.InFlight(nilL) != 32 || bound.RequestID(nilL) != limits.MaxRequestID ||
		bound.Call(nilL) != limits.CallDeadline || bound.Console(nilL) != limits.ConsoleClose ||
		bound.PipeWrite(nilL) != limits.PipeWriteTimeout || bound.Grace(nilL) != limits.DisconnectGrace ||
		bound.Cleanup(nilL) != limits.ProcessCleanup {
		t.Fatal("nil Limits must give protocol values")
	}
	zero := &limits.Limits{}
	if bound.Frame(zero) != limits.MaxFrameSize || bound.Call(zero) != limits.CallDeadline {
		t.Fatal("zero Limits must give protocol values")
	}
	small := &limits.Limits{MaxFrameSize: 10, MaxInFlight: 2, MaxRequestID: 5, CallDeadline: time.Second,
		ConsoleClose: time.Millisecond, PipeWriteTimeout: 2 * time.Millisecond, DisconnectGrace: 3 * time.Millisecond,
		ProcessCleanup: 4 * time.Millisecond}
	if bound.Frame(small) != 10 || bound.InFlight(small) != 2 || bound.RequestID(small) != 5 || bound.Call(small) != time.Second ||
		bound.Console(small) != time.Millisecond || bound.PipeWrite(small) != 2*time.Millisecond ||
		bound.Grace(small) != 3*time.Millisecond || bound.Cleanup(small) != 4*time.Millisecond {
		t.Fatalf("smaller bounds not honoured: %+v", small)
	}
	large := &limits.Limits{MaxFrameSize: 1 << 30, MaxInFlight: 1000, MaxRequestID: 1 << 62, CallDeadline: time.Hour}
	if bound.Frame(large) != limits.MaxFrameSize || bound.InFlight(large) != limits.MaxInFlight ||
		bound.RequestID(large) != limits.MaxRequestID || bound.Call(large) != limits.CallDeadline {
		t.Fatalf("larger bounds must be clamped: %+v", large)
	}
}

func ExampleCall() {
	// A test lowers the write timeout; everything else keeps the protocol's value.
	l := &limits.Limits{PipeWriteTimeout: 50 * time.Millisecond}
	fmt.Println(bound.PipeWrite(l), bound.Call(l), bound.Frame(l))
	// Output: 50ms 30s 4194304
}
