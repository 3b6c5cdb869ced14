// Command echo is a test adapter: service example.echo version 1, whose methods make
// the behaviours a host must handle easy to provoke. Tests and benchmarks of the host
// side use it.
//
//   - example.echo.echo returns its params unchanged (as raw JSON, without decoding).
//   - example.echo.sleep, params {"ms": N}, waits N milliseconds (0 <= N <= 30000) and
//     returns {"ms": N}; a cancel ends the wait early with aborted "Sleep canceled".
//   - example.echo.fail, params {"code": string, "message": string}, answers with that
//     error. The SDK applies the protocol to it: a code that is not one of the eight is
//     sent as failed (R28) and a message longer than 4096 bytes is capped (R30), so a
//     host sees exactly what the protocol allows an adapter to send.
//   - example.echo.big, params {"bytes": N}, returns a JSON string of N 'x' characters;
//     N may be at most the frame limit less 1 KiB for the envelope, else invalid.
//   - example.echo.record, example.echo.blob and example.echo.exact decode their params
//     into a Go struct and return it, encoded again: the typed path, for tests of
//     exactness and for the benchmarks.
//
// The service is declared once, in examples/echo/echoapi.
package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// maxBig is the largest string example.echo.big returns: the frame limit less room for
// the envelope around it.
const maxBig = limits.MaxFrameSize - 1024

func echo(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil }

type (
	sleepParams = echoapi.SleepParams
	failParams  = echoapi.FailParams
	bigParams   = echoapi.BigParams
)

func sleep(ctx context.Context, p sleepParams) (sleepParams, error) {
	if p.MS < 0 || time.Duration(p.MS)*time.Millisecond > limits.CallDeadline {
		return sleepParams{}, plugin.Errorf(wire.CodeInvalid, "ms must be from 0 to %d", limits.CallDeadline.Milliseconds())
	}
	t := time.NewTimer(time.Duration(p.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return p, nil
	case <-ctx.Done():
		return sleepParams{}, plugin.Errorf(wire.CodeAborted, "Sleep canceled")
	}
}

func fail(_ context.Context, p failParams) (struct{}, error) {
	log.Info("failing as asked", "code", p.Code)
	return struct{}{}, &plugin.Error{Code: wire.Code(p.Code), Message: p.Message}
}

func big(_ context.Context, p bigParams) (json.RawMessage, error) {
	if p.Bytes < 0 || p.Bytes > maxBig {
		return nil, plugin.Errorf(wire.CodeInvalid, "bytes must be from 0 to %d", maxBig)
	}
	b := make([]byte, p.Bytes+2)
	for i := range b {
		b[i] = 'x'
	}
	b[0], b[len(b)-1] = '"', '"'
	return b, nil
}

// log is the adapter's logger: JSON records on stderr that the host shows under the
// adapter's name (plugin.Logger).
var log = plugin.Logger()

// same returns its params: the SDK decoded them into a T and encodes the T again.
func same[T any](_ context.Context, p T) (T, error) { return p, nil }

// newAdapter returns the echo adapter.
func newAdapter() *plugin.Adapter {
	svc := plugin.ServiceOf(echoapi.Service)
	plugin.Implement(svc, echoapi.Echo, echo)
	plugin.Implement(svc, echoapi.Sleep, sleep)
	plugin.Implement(svc, echoapi.Fail, fail)
	plugin.Implement(svc, echoapi.Big, big)
	plugin.Implement(svc, echoapi.EchoRecord, same[echoapi.Record])
	plugin.Implement(svc, echoapi.EchoBlob, same[echoapi.Blob])
	plugin.Implement(svc, echoapi.EchoExact, same[echoapi.Exact])
	return &plugin.Adapter{Services: []*plugin.Service{svc}}
}

func main() { plugin.Main(newAdapter()) }
