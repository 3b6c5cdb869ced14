package lifecycle_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// The error of a call to an adapter that will not be restarted says so once, and says
// why and what to do: no restart policy (and how to set one), the restarts used up,
// or the adapter closed.
func TestGaveUpMessages(t *testing.T) {
	tests := []struct {
		name   string
		policy lifecycle.RestartPolicy
		crashs int  // crashes before the call
		close  bool // close the supervisor before the call
		want   []string
	}{
		{"no policy", lifecycle.RestartPolicy{}, 1, false,
			[]string{"allows no restarts", "set RestartPolicy.MaxRestarts"}},
		{"one restart used", lifecycle.RestartPolicy{MaxRestarts: 1, Backoff: time.Millisecond}, 2, false,
			[]string{"its one allowed restart is used up (RestartPolicy.MaxRestarts 1)"}},
		{"closed", lifecycle.RestartPolicy{MaxRestarts: 3}, 0, true,
			[]string{"the adapter was closed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal")}, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := 0; i < tt.crashs; i++ {
				pid := mustInt(t, must(s.Call(ctxT(t), "test.proc.pid", nil)))
				_, _ = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":1}`))
				waitGone(t, pid)
			}
			if tt.close {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			_, err = s.Call(ctxT(t), "test.proc.ok", nil)
			if !errors.Is(err, lifecycle.ErrGaveUp) || !runtime.IsNeverStarted(err) || runtime.CodeOf(err) != wire.CodeClosed {
				t.Fatalf("call after giving up: %v", err)
			}
			msg := err.Error()
			if n := strings.Count(msg, lifecycle.ErrGaveUp.Error()); n != 1 {
				t.Errorf("%q is said %d times: %s", lifecycle.ErrGaveUp, n, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
		})
	}
}
