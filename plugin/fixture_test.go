package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"strings"
	"sync/atomic"

	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// thermometer is the specification's example service, as examples/thermometer serves it.
func thermometer() *plugin.Service {
	type params struct {
		Probe string `json:"probe"`
	}
	type reading struct {
		Celsius float64 `json:"celsius"`
	}
	svc := plugin.NewService("example.device", 1)
	plugin.Handle(svc, "example.device.read", func(ctx context.Context, p params) (reading, error) {
		switch p.Probe {
		case "inlet":
			return reading{Celsius: 21.5}, nil
		case "slow":
			<-ctx.Done()
			return reading{}, plugin.Errorf(wire.CodeAborted, "Read canceled")
		}
		return reading{}, plugin.Errorf(wire.CodeInvalid, "unknown probe")
	})
	return svc
}

// fixture is a test service whose handlers report what they do.
type fixture struct {
	started  chan struct{} // one value per handler of wait/stubborn that started
	release  chan struct{} // closed to let stubborn handlers return
	causes   chan error    // context.Cause seen by wait handlers when cancelled
	executed atomic.Int32  // runs of test.svc.count
}

func newFixture() *fixture {
	return &fixture{started: make(chan struct{}, 1024), release: make(chan struct{}), causes: make(chan error, 1024)}
}

// failParams select the error test.svc.fail returns.
type failParams struct {
	Mode    string `json:"mode"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// decodeParams exercise mapstructure decoding.
type decodeParams struct {
	Name   string         `json:"name"`
	Count  int            `json:"count"`
	Ratio  float64        `json:"ratio"`
	Tags   []string       `json:"tags"`
	Inner  *innerParams   `json:"inner"`
	Any    any            `json:"any"`
	Extras map[string]int `json:"extras"`
}

type innerParams struct {
	On bool `json:"on"`
}

// triple is a 3-field struct, for the typed benchmarks.
type triple struct {
	Seq  int64  `json:"seq"`
	Name string `json:"name"`
	Data string `json:"data"`
}

func (f *fixture) service() *plugin.Service {
	svc := plugin.NewService("test.svc", 1)
	plugin.Handle(svc, "test.svc.echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	plugin.Handle(svc, "test.svc.count", func(context.Context, struct{}) (int, error) {
		return int(f.executed.Add(1)), nil
	})
	plugin.Handle(svc, "test.svc.wait", func(ctx context.Context, _ struct{}) (struct{}, error) {
		f.started <- struct{}{}
		<-ctx.Done()
		f.causes <- context.Cause(ctx)
		return struct{}{}, ctx.Err()
	})
	plugin.Handle(svc, "test.svc.stubborn", func(context.Context, struct{}) (string, error) {
		f.started <- struct{}{}
		<-f.release
		return "released", nil
	})
	plugin.Handle(svc, "test.svc.fail", func(_ context.Context, p failParams) (struct{}, error) {
		switch p.Mode {
		case "coded":
			return struct{}{}, &plugin.Error{Code: wire.Code(p.Code), Message: p.Message}
		case "wrapped":
			return struct{}{}, fmt.Errorf("outer: %w", plugin.Errorf(wire.Code(p.Code), "%s", p.Message))
		case "plain":
			return struct{}{}, errors.New(p.Message)
		case "canceled":
			return struct{}{}, fmt.Errorf("stopped: %w", context.Canceled)
		case "deadline":
			return struct{}{}, context.DeadlineExceeded
		case "panic":
			panic("boom")
		case "goexit":
			goruntime.Goexit()
		case "badraw":
			return struct{}{}, nil
		}
		return struct{}{}, nil
	})
	plugin.Handle(svc, "test.svc.badjson", func(context.Context, struct{}) (json.RawMessage, error) {
		return json.RawMessage(`{"a":`), nil
	})
	// A NaN passes the declaration (a float64 result) and fails at encode.
	plugin.Handle(svc, "test.svc.unencodable", func(context.Context, struct{}) (float64, error) {
		return math.NaN(), nil
	})
	plugin.Handle(svc, "test.svc.large", func(_ context.Context, p struct {
		N int `json:"n"`
	}) (string, error) {
		return strings.Repeat("y", p.N), nil
	})
	plugin.Handle(svc, "test.svc.decode", func(_ context.Context, p decodeParams) (decodeParams, error) { return p, nil })
	plugin.Handle(svc, "test.svc.map", func(_ context.Context, p map[string]any) (map[string]any, error) { return p, nil })
	plugin.Handle(svc, "test.svc.triple", func(_ context.Context, p triple) (triple, error) { return p, nil })
	return svc
}

// adapter returns an adapter with the thermometer and the fixture's service.
func (f *fixture) adapter() *plugin.Adapter {
	return &plugin.Adapter{Services: []*plugin.Service{thermometer(), f.service()}}
}

// unblock releases stubborn handlers (once).
func (f *fixture) unblock() {
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}
