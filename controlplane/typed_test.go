package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Contracts the echo adapter does not satisfy, for the bind-time checks.
var (
	echoV2     = contract.NewService("example.echo", 2)
	_          = contract.NewMethod[echoapi.Record, echoapi.Record](echoV2, "record")
	echoMore   = contract.NewService("example.echo", 1)
	_          = contract.NewMethod[echoapi.Record, echoapi.Record](echoMore, "record")
	_          = contract.NewMethod[echoapi.Record, echoapi.Record](echoMore, "nope")
	echoAbsent = contract.NewService("example.absent", 1)
)

// embeddedEcho opens the echo adapter in a registry of this process: the embedded
// path, whose errors the daemon's path must match.
func embeddedEcho(t *testing.T) (*registry.Registry, *registry.Handle) {
	t.Helper()
	reg := registry.New(&registry.Config{Dirs: []string{adapterDir(t, "echo_v1.2.0")}})
	t.Cleanup(func() {
		if err := reg.Close(context.Background()); err != nil {
			t.Errorf("registry Close: %v", err)
		}
	})
	h, err := reg.Open(testCtx(t), "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg, h
}

// callErr returns the *runtime.CallError in err's chain.
func callErr(t *testing.T, what string, err error) *runtime.CallError {
	t.Helper()
	var ce *runtime.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v (%T), want a *runtime.CallError", what, err, err)
	}
	return ce
}

// TestTypedThroughDaemon: one contract, one typed client, over the daemon's socket and
// over mutual TLS, with the same results, the same typed errors and the same bind-time
// checks as an adapter the host embeds.
func TestTypedThroughDaemon(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, nil)
	reg, h := embeddedEcho(t)
	ctx := testCtx(t)
	local, err := registry.NewClient(h, echoapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []struct {
		name string
		c    *Client
	}{
		{"socket", dial(t, d.sock)},
		{"mTLS", dialRemote(t, d.addr, p.client(t, "caller"))},
	} {
		t.Run(tr.name, func(t *testing.T) {
			a, err := tr.c.Adapter(ctx, "echo")
			if err != nil {
				t.Fatal(err)
			}
			var _ registry.Caller = a
			echo, err := registry.NewClient(a, echoapi.Service)
			if err != nil {
				t.Fatalf("bind through the daemon: %v", err)
			}
			rec := echoapi.Record{Probe: "inlet", Seq: 1<<53 + 1, Unit: "°C", Pad: "<&>"}
			got, err := registry.Call(ctx, echo, echoapi.EchoRecord, rec)
			if err != nil || got != rec {
				t.Fatalf("typed call: %+v, %v; want %+v", got, err, rec)
			}

			// The adapter's errors: the same *runtime.CallError as embedded.
			for _, f := range []echoapi.FailParams{{Code: "failed", Message: "boom"}, {Code: "busy", Message: "later"}, {Code: "invalid", Message: "bad sku"}} {
				_, lerr := registry.Call(ctx, local, echoapi.Fail, f)
				_, derr := registry.Call(ctx, echo, echoapi.Fail, f)
				want, got := callErr(t, "embedded", lerr), callErr(t, "daemon", derr)
				if got.Method != want.Method || got.Code != want.Code || got.RawCode != want.RawCode || got.Message != want.Message ||
					got.Uncertain != want.Uncertain || got.NeverStarted != want.NeverStarted {
					t.Errorf("%s: through the daemon %+v, embedded %+v", f.Code, *got, *want)
				}
				if CodeOf(derr) == "" {
					t.Errorf("%s: the daemon's *Error is not in the chain of %v", f.Code, derr)
				}
			}

			// A method the adapter does not advertise, raw: runtime.ErrUnknownMethod.
			_, lerr := h.Call(ctx, "example.echo.nope", json.RawMessage(`{}`))
			_, derr := a.Call(ctx, "example.echo.nope", json.RawMessage(`{}`))
			lce, dce := callErr(t, "embedded", lerr), callErr(t, "daemon", derr)
			if !errors.Is(derr, runtime.ErrUnknownMethod) || dce.Code != lce.Code || !dce.NeverStarted || !lce.NeverStarted {
				t.Errorf("unknown method: through the daemon %v, embedded %v", derr, lerr)
			}

			// A call that outlives its context's deadline: deadline, outcome uncertain.
			for name, c := range map[string]*registry.Client{"embedded": local, "daemon": echo} {
				dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				_, err := registry.Call(dctx, c, echoapi.Sleep, echoapi.SleepParams{MS: 5000})
				cancel()
				if ce := callErr(t, name, err); ce.Code != "deadline" || !ce.Uncertain || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s: a call past its deadline: %v", name, err)
				}
			}

			// Bind-time checks against the catalog the daemon has.
			for _, svc := range []*contract.Service{echoV2, echoMore, echoAbsent} {
				_, lerr := registry.NewClient(h, svc)
				_, derr := registry.NewClient(a, svc)
				var lb, db *registry.BindError
				if !errors.As(lerr, &lb) || !errors.As(derr, &db) {
					t.Fatalf("bind %s v%d: through the daemon %v, embedded %v: want *registry.BindError", svc.ID(), svc.Version(), derr, lerr)
				}
				if *db != *lb {
					t.Errorf("bind %s v%d: through the daemon %+v, embedded %+v", svc.ID(), svc.Version(), *db, *lb)
				}
			}

			// Not found, by name and by version: the same *discovery.NotFoundError.
			for _, ref := range []string{"nosuch", "echo@~> 9.0"} {
				_, lerr := reg.Open(ctx, ref, nil)
				_, derr := tr.c.Adapter(ctx, ref)
				var lnf, dnf *discovery.NotFoundError
				if !errors.As(lerr, &lnf) || !errors.As(derr, &dnf) {
					t.Fatalf("%s: through the daemon %v, embedded %v: want *discovery.NotFoundError", ref, derr, lerr)
				}
				if dnf.Err != lnf.Err || dnf.Ref.Raw != lnf.Ref.Raw || len(dnf.Candidates) != len(lnf.Candidates) || CodeOf(derr) != CodeNotFound {
					t.Errorf("%s: through the daemon %+v, embedded %+v", ref, *dnf, *lnf)
				}
			}
		})
	}
}

// TestTypedUncertainThroughDaemon: a typed call whose connection to the daemon ends
// under way is uncertain, as one whose adapter connection ended is on the embedded
// path (runtime.IsUncertain, code closed), and matches ErrOutcomeUncertain.
func TestTypedUncertainThroughDaemon(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}})
	owner, c := dial(t, sock), dial(t, sock)
	ctx := testCtx(t)
	a, err := c.Adapter(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	echo, err := registry.NewClient(a, echoapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := registry.Call(ctx, echo, echoapi.Sleep, echoapi.SleepParams{MS: 20000})
		done <- err
	}()
	waitFor(t, func() bool {
		st, err := owner.Status(ctx)
		return err == nil && st.InFlight == 1
	})
	_ = c.Close()
	err = <-done
	ce := callErr(t, "daemon", err)
	if !runtime.IsUncertain(err) || runtime.IsNeverStarted(err) || ce.Code != "closed" || !errors.Is(err, ErrOutcomeUncertain) || !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("call under way when the client closed: %v (%+v)", err, *ce)
	}
	// After Close: never started, closed.
	_, err = registry.Call(ctx, echo, echoapi.Sleep, echoapi.SleepParams{})
	if ce := callErr(t, "after Close", err); !ce.NeverStarted || ce.Code != "closed" || !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
}

// TestTypedErrorsRoundTrip: the errors of the embedded path that the daemon answers
// with (mapError), sent as JSON and read by a typed client's Adapter, are matched by
// errors.As/Is as they are embedded: a start backoff, a refused file, a start failure,
// a protocol violation.
func TestTypedErrorsRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	refusal := registry.Refusal{Name: "upg", Version: "1.5.0", Path: "/d/upg_v1.5.0", Size: 42, ModTime: at, SHA256: strings.Repeat("0f", 32), At: at, Reason: "handshake failed"}
	backoff := &lifecycle.BackoffError{Name: "/d/upg_v1.5.0", Failures: 3, Retry: time.Minute, Cause: errors.New("exit status 1")}
	openErr := &lifecycle.OpenError{Path: "/d/upg_v1.5.0", Stage: lifecycle.StageHandshake, Err: errors.New("no catalog"), Cleanup: errors.New("tree not verified gone")}
	tests := []struct {
		name  string
		err   error // the embedded path's
		check func(t *testing.T, got error)
	}{
		{"backoff on a call", &runtime.CallError{Method: "x.y.z", Code: "unavailable", NeverStarted: true, Message: "restarting", Cause: backoff}, func(t *testing.T, got error) {
			var be *lifecycle.BackoffError
			if !errors.As(got, &be) || be.Failures != 3 || be.Retry <= 50*time.Second || be.Retry > time.Minute || be.Cause.Error() != "exit status 1" {
				t.Errorf("%v: want the *lifecycle.BackoffError", got)
			}
		}},
		{"backoff at the open", &lifecycle.OpenError{Path: "/d/upg_v1.5.0", Stage: lifecycle.StageSpawn, Err: backoff}, func(t *testing.T, got error) {
			var oe *lifecycle.OpenError
			var be *lifecycle.BackoffError
			if !errors.As(got, &oe) || oe.Stage != lifecycle.StageSpawn || !errors.As(got, &be) || be.Failures != 3 {
				t.Errorf("%v: want an *lifecycle.OpenError at spawn around a *lifecycle.BackoffError", got)
			}
		}},
		{"refused file", &registry.RefusedError{Refusal: refusal}, func(t *testing.T, got error) {
			var rf *registry.RefusedError
			if !errors.As(got, &rf) || rf.Refusal != refusal {
				t.Errorf("%v: want the *registry.RefusedError", got)
			}
		}},
		{"start failure", openErr, func(t *testing.T, got error) {
			var oe *lifecycle.OpenError
			if !errors.As(got, &oe) || oe.Stage != openErr.Stage || oe.Path != openErr.Path || oe.Cleanup == nil || oe.Cleanup.Error() != openErr.Cleanup.Error() {
				t.Errorf("%v: want the *lifecycle.OpenError", got)
			}
		}},
		{"deadline", &runtime.CallError{Method: "x.y.z", Code: "deadline", Uncertain: true, Message: "the call deadline passed", Cause: context.DeadlineExceeded}, func(t *testing.T, got error) {
			if !errors.Is(got, context.DeadlineExceeded) || runtime.CodeOf(got) != "deadline" && runtime.CodeOf(got) != "" {
				t.Errorf("%v: want context.DeadlineExceeded in the chain", got)
			}
		}},
		{"violation", &runtime.CallError{Method: "x.y.z", Code: "closed", Uncertain: true, Cause: &wire.ViolationError{Kind: wire.InvalidResponse, Err: errors.New("bad id")}}, func(t *testing.T, got error) {
			var ve *wire.ViolationError
			if !errors.As(got, &ve) || ve.Kind != wire.InvalidResponse || !errors.Is(got, wire.InvalidResponse) {
				t.Errorf("%v: want the *wire.ViolationError", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(mapError(tt.err, "/d/upg_v1.5.0", "x.y.z"))
			if err != nil {
				t.Fatal(err)
			}
			var cp Error
			if err := json.Unmarshal(b, &cp); err != nil {
				t.Fatal(err)
			}
			call := callError(context.Background(), "upg", "x.y.z", &cp)
			if runtime.IsUncertain(call) != runtime.IsUncertain(tt.err) || runtime.IsNeverStarted(call) != (runtime.IsNeverStarted(tt.err) || !runtime.IsUncertain(tt.err) && runtime.CodeOf(tt.err) == "") {
				t.Errorf("%v: outcome differs from the embedded path's %v", call, tt.err)
			}
			for _, got := range []error{call, bindError(&cp, "upg")} {
				tt.check(t, got)
				if CodeOf(got) != cp.Code {
					t.Errorf("%v: the daemon's *Error is not in the chain", got)
				}
			}
		})
	}
}
