package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func goInit(ctx context.Context, c *runtime.Conn, config string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		var cfg json.RawMessage
		if config != "" {
			cfg = json.RawMessage(config)
		}
		cat, err := c.Initialize(ctx, cfg)
		if cat != nil {
			b, _ := json.Marshal(cat)
			ch <- result{b, err}
			return
		}
		ch <- result{nil, err}
	}()
	return ch
}

// R17: the first frame is exactly the initialize request, over both pipe kinds.
func TestInitializeFirstFrame(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, f := newConn(t, kind, nil)
			if c.Catalog() != nil {
				t.Fatal("Catalog before Initialize is not nil")
			}
			res := goInit(context.Background(), c, "")
			f.expect(initFrame) // R17
			f.send(initResult)
			r := recv(t, res)
			if r.err != nil {
				t.Fatal(r.err)
			}
			cat := c.Catalog()
			if cat == nil || len(cat.Services) != 1 || cat.Services[0].ID != "example.device" {
				t.Fatalf("Catalog() = %+v", cat)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := f.eof(); err != io.EOF { // the adapter sees end of input
				t.Fatalf("adapter stdin: %v, want EOF", err)
			}
		})
	}
}

// R17, A33: the configuration object is sent as given.
func TestInitializeConfiguration(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	res := goInit(context.Background(), c, `{"port":"/dev/ttyUSB0","baud":9600}`)
	f.expect(`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{"port":"/dev/ttyUSB0","baud":9600}}}`)
	f.send(initResult)
	if r := recv(t, res); r.err != nil {
		t.Fatal(r.err)
	}
}

// A33, A32, A7: refusals before anything is sent leave the connection as it was, and the
// next initialize is still id 1.
func TestInitializeRefusedLocally(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	for _, cfg := range []string{`[1]`, `"x"`, `{`, `null`, `{} {}`} {
		_, err := c.Initialize(context.Background(), json.RawMessage(cfg))
		checkOutcome(t, err, wire.CodeInvalid, false, true)
		if !errors.Is(err, runtime.ErrInvalidParams) {
			t.Errorf("configuration %s: %v, want ErrInvalidParams", cfg, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Initialize(ctx, nil) // R50 for initialize: nothing sent
	checkOutcome(t, err, wire.CodeAborted, false, true)
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = c.Initialize(ctx, nil)
	checkOutcome(t, err, wire.CodeDeadline, false, true)

	f.handshake(c) // expects id 1
	_, err = c.Initialize(context.Background(), nil)
	checkOutcome(t, err, wire.CodeInvalid, false, true)
	if !strings.Contains(err.Error(), "initialize was already called") {
		t.Errorf("second Initialize: %v, want the refusal of a second initialize", err)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}

// R18, R27: nothing else is sent before the catalog is accepted; callers are refused.
func TestCallsBeforeInitialize(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	_, err := c.Call(context.Background(), read, nil) // R27
	checkOutcome(t, err, wire.CodeInvalid, false, true)
	if !strings.Contains(err.Error(), "not initialized") {
		t.Fatalf("Call before Initialize: %v", err)
	}
	res := goInit(context.Background(), c, "")
	f.expect(initFrame)
	// R18: initialize is in progress; a call is refused and nothing is written.
	_, err = c.Call(context.Background(), "example.device.write", nil)
	if !strings.Contains(err.Error(), "not initialized") || !runtime.IsNeverStarted(err) {
		t.Fatalf("Call during Initialize: %v", err)
	}
	f.send(initResult)
	if r := recv(t, res); r.err != nil {
		t.Fatal(r.err)
	}
	call := goCall(context.Background(), c, read, `{"probe":"inlet"}`)
	f.expect(request(2, read, `{"probe":"inlet"}`)) // the refused write never reached the wire
	f.send(resultFrame(2, `1`))
	if r := recv(t, call); r.err != nil || string(r.v) != "1" {
		t.Fatalf("call: %s, %v", r.v, r.err)
	}
}

// R26, A8: every kind of invalid catalog, an error reply and protocol 2 end the
// connection.
func TestInitializeInvalidCatalog(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		rule  string
	}{
		{"error reply", errorFrame(1, "failed", "no device"), "R26"},
		{"error reply invalid", errorFrame(1, "invalid", "bad configuration"), "R26"},
		{"protocol 2", resultFrame(1, `{"protocol":2,"services":[]}`), "R19"},
		{"protocol missing", resultFrame(1, `{"services":[]}`), "R19"},
		{"protocol 1.0", resultFrame(1, `{"protocol":1.0,"services":[]}`), "R19"},
		{"value not an object", resultFrame(1, `[]`), "R19"},
		{"value null", resultFrame(1, `null`), "R19"},
		{"services missing", resultFrame(1, `{"protocol":1}`), "R19"},
		{"service without id", resultFrame(1, `{"protocol":1,"services":[{"version":1,"methods":["a.b.c"]}]}`), "R19"},
		{"id not dotted", resultFrame(1, `{"protocol":1,"services":[{"id":"device","version":1,"methods":["device.read"]}]}`), "R20"},
		{"id empty segment", resultFrame(1, `{"protocol":1,"services":[{"id":"a..b","version":1,"methods":["a..b.c"]}]}`), "R20"},
		{"method not dotted", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["read"]}]}`), "R20"},
		{"id system", resultFrame(1, `{"protocol":1,"services":[{"id":"system","version":1,"methods":["system.x"]}]}`), "R21"},
		{"id starts with system", resultFrame(1, `{"protocol":1,"services":[{"id":"systemd.unit","version":1,"methods":["systemd.unit.start"]}]}`), "R21"},
		{"version 0", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":0,"methods":["a.b.c"]}]}`), "R22"},
		{"version 1.5", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1.5,"methods":["a.b.c"]}]}`), "R22"},
		{"version missing", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","methods":["a.b.c"]}]}`), "R22"},
		{"methods empty", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":[]}]}`), "R23"},
		{"methods missing", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1}]}`), "R23"},
		{"method not prefixed", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.c.d"]}]}`), "R24"},
		{"method prefix without dot", resultFrame(1, `{"protocol":1,"services":[{"id":"conf.echo","version":1,"methods":["conf.echoX"]}]}`), "R24"},
		{"duplicate service", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c"]},{"id":"a.b","version":2,"methods":["a.b.d"]}]}`), "R25"},
		{"duplicate method", resultFrame(1, `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c","a.b.c"]}]}`), "R25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newConn(t, ioPipe, nil)
			res := goInit(context.Background(), c, "")
			f.expect(initFrame)
			f.send(tt.reply)
			r := recv(t, res)
			if r.err == nil {
				t.Fatalf("Initialize accepted %s", tt.reply)
			}
			var catErr *proto.CatalogError
			if !errors.As(r.err, &catErr) || !errors.Is(r.err, proto.ErrInvalidCatalog) {
				t.Fatalf("Initialize: %v, want a *proto.CatalogError", r.err)
			}
			if catErr.Rule != tt.rule {
				t.Errorf("rule %s, want %s (%v)", catErr.Rule, tt.rule, r.err)
			}
			ce := callError(t, r.err)
			if ce.ID != 1 || ce.Uncertain || ce.NeverStarted {
				t.Errorf("call error %+v", ce)
			}
			// R26: the connection ends; no half-working start.
			if cause := ended(t, c); !errors.Is(cause, proto.ErrInvalidCatalog) {
				t.Errorf("cause %v, want an invalid catalog", cause)
			}
			if c.Catalog() != nil {
				t.Error("Catalog() is set after an invalid catalog")
			}
			_, err := c.Call(context.Background(), "a.b.c", nil)
			checkOutcome(t, err, wire.CodeClosed, false, true)
			if err := f.eof(); err != io.EOF {
				t.Errorf("adapter stdin: %v, want EOF", err)
			}
		})
	}
}

// R43, A37: initialize has the call deadline; passing it ends the connection.
func TestInitializeDeadline(t *testing.T) {
	c, f := newConn(t, ioPipe, &runtime.Options{Limits: &limits.Limits{CallDeadline: 20 * time.Millisecond}})
	res := goInit(context.Background(), c, "")
	f.expect(initFrame)
	r := recv(t, res)
	checkOutcome(t, r.err, wire.CodeDeadline, true, false)
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("Initialize: %v, want context.DeadlineExceeded", r.err)
	}
	if cause := ended(t, c); runtime.CodeOf(cause) != wire.CodeDeadline {
		t.Errorf("cause %v", cause)
	}
}

// R56: a broken input pipe during initialize ends the connection.
func TestInitializeBrokenPipe(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, f := newConn(t, kind, nil)
			_ = f.inEnd.Close() // the adapter's stdin is gone
			r := recv(t, goInit(context.Background(), c, ""))
			checkOutcome(t, r.err, wire.CodeClosed, true, false)
			if !errors.Is(r.err, wire.InputPipe) {
				t.Errorf("Initialize: %v, want ErrInputPipe", r.err)
			}
			var v *wire.ViolationError
			if cause := ended(t, c); !errors.As(cause, &v) || v.Kind != wire.InputPipe {
				t.Errorf("cause %v", cause)
			}
		})
	}
}
