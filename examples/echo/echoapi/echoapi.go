// Package echoapi is the contract of service example.echo version 1, the service of
// the echo test adapter (examples/echo): declared once, imported by the adapter and by
// the hosts that test and benchmark it.
package echoapi

import (
	"encoding/json"

	"github.com/adapterkit/adapterkit/contract"
)

// SleepParams are the params and result of example.echo.sleep.
type SleepParams struct {
	MS int `json:"ms"`
}

// FailParams are the params of example.echo.fail.
type FailParams struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// BigParams are the params of example.echo.big.
type BigParams struct {
	Bytes int `json:"bytes"`
}

// Record is the params and result of example.echo.record: a small struct (the
// benchmarks' typed round trip).
type Record struct {
	Probe string `json:"probe"`
	Seq   int64  `json:"seq"`
	Unit  string `json:"unit"`
	Pad   string `json:"pad"`
}

// Blob is the params and result of example.echo.blob: one string, as large as the
// frame allows (the benchmarks' typed large echo).
type Blob struct {
	S string `json:"s"`
}

// Exact is the params and result of example.echo.exact: values at the limits of what
// JSON and Go types carry, which must come back unchanged.
type Exact struct {
	Inner                    // embedded: its fields are the object's own
	I64Max  int64            `json:"i64_max"`
	I64Min  int64            `json:"i64_min"`
	U64Max  uint64           `json:"u64_max"`
	I32Min  int32            `json:"i32_min"`
	U32Max  uint32           `json:"u32_max"`
	I8Min   int8             `json:"i8_min"`
	U16Max  uint16           `json:"u16_max"`
	Beyond  int64            `json:"beyond"` // 2^53+1, not representable as a float64
	Int     int              `json:"int"`
	Tenth   float64          `json:"tenth"`
	Max     float64          `json:"max"`
	Tiny    float64          `json:"tiny"` // the smallest subnormal
	Third   float64          `json:"third"`
	F32     float32          `json:"f32"`
	Number  json.Number      `json:"number"`
	Escapes string           `json:"escapes"`
	Seps    string           `json:"seps"` // U+2028, U+2029
	Astral  string           `json:"astral"`
	Bytes   []byte           `json:"bytes"`
	Any     any              `json:"any"`
	Ptr     *Inner           `json:"ptr"`
	PtrPtr  **int64          `json:"ptr_ptr"`
	Nil     *Inner           `json:"nil"`
	Map     map[string]Inner `json:"map"`
	Slice   []Inner          `json:"slice"`
	Matrix  [][]uint64       `json:"matrix"`
	Empty   []string         `json:"empty"`
}

// Inner is nested in Exact.
type Inner struct {
	Name  string           `json:"name"`
	Count uint64           `json:"count"`
	Tags  map[string]int64 `json:"tags"`
}

var (
	// Service is example.echo version 1.
	Service = contract.NewService("example.echo", 1)
	// Echo returns its params unchanged, as raw JSON.
	Echo = contract.NewMethod[json.RawMessage, json.RawMessage](Service, "echo")
	// Sleep waits params.MS milliseconds (0 to 30000) and returns its params; a cancel
	// ends the wait early with aborted "Sleep canceled".
	Sleep = contract.NewMethod[SleepParams, SleepParams](Service, "sleep")
	// Fail answers with the error of its params (the SDK applies R28 and R30 to it).
	Fail = contract.NewMethod[FailParams, struct{}](Service, "fail")
	// Big returns a JSON string of params.Bytes 'x' characters.
	Big = contract.NewMethod[BigParams, json.RawMessage](Service, "big")
	// EchoRecord returns its params, decoded into a Record and encoded again.
	EchoRecord = contract.NewMethod[Record, Record](Service, "record")
	// EchoBlob returns its params, decoded into a Blob and encoded again.
	EchoBlob = contract.NewMethod[Blob, Blob](Service, "blob")
	// EchoExact returns its params, decoded into an Exact and encoded again.
	EchoExact = contract.NewMethod[Exact, Exact](Service, "exact")
)
