package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// CallerErrors counts the failures that were the caller's doing, by code, and only
// those: an unknown method, params refused before sending, the caller's own deadline
// or cancellation; not the adapter's error replies, nor the protocol's deadline,
// whether the runtime applied it or a host on the caller's behalf.
func TestCallerErrors(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancel()
	protocol, cancelP := context.WithDeadlineCause(live, time.Now().Add(-time.Second), runtime.ErrCallDeadline)
	defer cancelP()
	cancelled, cancelC := context.WithCancel(live)
	cancelC()
	callErr := func(code wire.Code, cause error) error {
		return fmt.Errorf("wrapped: %w", &runtime.CallError{Method: "m", Code: code, Cause: cause})
	}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		caller bool
	}{
		{"unknown method", live, callErr(wire.CodeUnavailable, runtime.ErrUnknownMethod), true},
		{"params not an object", live, callErr(wire.CodeInvalid, runtime.ErrInvalidParams), true},
		{"request too large", live, callErr(wire.CodeInvalid, runtime.ErrRequestTooLarge), true},
		{"caller's deadline", expired, callErr(wire.CodeDeadline, context.DeadlineExceeded), true},
		{"caller's cancellation", cancelled, callErr(wire.CodeAborted, context.Canceled), true},
		{"protocol deadline set by the host", protocol, callErr(wire.CodeDeadline, runtime.ErrCallDeadline), false},
		{"protocol deadline of the runtime", live, callErr(wire.CodeDeadline, runtime.ErrCallDeadline), false},
		{"adapter replied deadline", live, callErr(wire.CodeDeadline, nil), false},
		{"adapter replied unavailable", live, callErr(wire.CodeUnavailable, nil), false},
		{"adapter failed", expired, callErr(wire.CodeFailed, nil), false},
		{"not a call error", live, errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newObserved("a", &Config{})
			o.end(tc.ctx, o.begin("m", nil), "m", nil, tc.err)
			o.end(tc.ctx, o.begin("m", nil), "m", json.RawMessage(`{}`), nil)
			st := o.stats(nil, 0)
			if len(st.Methods) != 1 {
				t.Fatalf("methods %+v", st.Methods)
			}
			m := st.Methods[0]
			code := runtime.CodeOf(tc.err)
			if code == "" {
				code = wire.CodeFailed
			}
			if m.Calls != 2 || m.Errors[code] != 1 {
				t.Fatalf("calls %d, errors %v", m.Calls, m.Errors)
			}
			want := map[wire.Code]uint64{}
			if tc.caller {
				want[code] = 1
			}
			if fmt.Sprint(m.CallerErrors) != fmt.Sprint(want) && !(len(want) == 0 && m.CallerErrors == nil) {
				t.Errorf("caller errors %v, want %v", m.CallerErrors, want)
			}
		})
	}
}
