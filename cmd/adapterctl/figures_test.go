package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/wire"
)

// figures copies every figure the collector reads: from a snapshot with all of them
// set, no field of the result is left zero.
func TestFiguresCopiesEveryField(t *testing.T) {
	st := lifecycle.Stats{Pid: 7, Restarts: 1, Violations: 2, LimitHits: 3, InFlight: 4, Abandoned: 5,
		Backoff: lifecycle.BackoffStats{Starts: 6, Failed: 7, Failures: 8},
		Usage:   platform.Usage{MemoryBytes: 5, CPU: time.Second, HasMemory: true, HasCPU: true},
		Methods: []lifecycle.MethodStats{{Method: "m", Calls: 6, Errors: map[wire.Code]uint64{wire.CodeFailed: 1},
			CallerErrors: map[wire.Code]uint64{wire.CodeFailed: 1}, Uncertain: 1,
			Latency: lifecycle.Latency{Count: 6, Sum: time.Millisecond}}}}
	f := figures(&st)
	if len(f.Methods) != 1 {
		t.Fatalf("%d methods", len(f.Methods))
	}
	for _, v := range []reflect.Value{reflect.ValueOf(f), reflect.ValueOf(f.Methods[0])} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Errorf("%s.%s not copied", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	if f.Methods[0].Latency != &st.Methods[0].Latency {
		t.Error("the latency histogram is not the snapshot's")
	}
}
