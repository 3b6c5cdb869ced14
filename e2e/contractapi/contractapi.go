// Package contractapi is the contract of service e2e.contract version 1, for the tests
// of adapterctl contract gen and check --contract: params and results made of every
// kind the codec writes, with the codec's own shapes (the types of package contract's
// schema tests: every integer size, floats, bytes, arrays, pointers, times, maps with
// integer keys, embedded structs, types that write themselves, a struct and a map that
// contain themselves) and the e2e.typed service's Event. Adapters in every language,
// written from the generated types, echo each method's params as its result.
package contractapi

import (
	"encoding/json"
	"errors"
	"net/netip"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/e2e/typedapi"
)

// Level is an enum written as text.
type Level int

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) {
	switch l {
	case 0:
		return []byte("low"), nil
	case 1:
		return []byte("high"), nil
	}
	return nil, errors.New("no such level")
}

// UnmarshalText reads a level's name.
func (l *Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 0
	case "high":
		*l = 1
	default:
		return errors.New("unknown level " + string(b))
	}
	return nil
}

// Blob is bytes of a type of their own.
type Blob []byte

// Link contains itself through a pointer.
type Link struct {
	N  int8  `json:"n"`
	Up *Link `json:"up,omitempty"`
}

// Tree contains itself through a map.
type Tree map[string]Tree

// Embedded is inlined in Everything.
type Embedded struct {
	E uint16 `json:"e"`
}

type hidden struct {
	H int32 `json:"h"`
}

// Everything has a field of every kind the codec writes.
type Everything struct {
	Embedded
	hidden
	I      int                `json:"i"`
	I8     int8               `json:"i8"`
	I16    int16              `json:"i16"`
	I32    int32              `json:"i32"`
	I64    int64              `json:"i64"`
	U      uint               `json:"u"`
	U8     uint8              `json:"u8"`
	U16    uint16             `json:"u16"`
	U32    uint32             `json:"u32"`
	U64    uint64             `json:"u64"`
	F32    float32            `json:"f32"`
	F64    float64            `json:"f64"`
	S      string             `json:"s"`
	Bool   bool               `json:"bool"`
	Bytes  []byte             `json:"bytes"`
	Blob   Blob               `json:"blob"`
	Arr    [2]int16           `json:"arr"`
	Sl     []string           `json:"sl"`
	Ptr    *int64             `json:"ptr"`
	PP     **uint8            `json:"pp"`
	At     time.Time          `json:"at"`
	AtP    *time.Time         `json:"atP"`
	Wait   time.Duration      `json:"wait"`
	Addr   netip.Addr         `json:"addr"`
	Raw    json.RawMessage    `json:"raw"`
	Num    json.Number        `json:"num"`
	Any    any                `json:"any"`
	Lvl    Level              `json:"lvl"`
	ByInt  map[int16]string   `json:"byInt"`
	ByUint map[uint8]bool     `json:"byUint"`
	ByI64  map[int64]int      `json:"byI64"`
	ByU64  map[uint64]int     `json:"byU64"`
	ByStr  map[string]float32 `json:"byStr"`
	ByAddr map[netip.Addr]int `json:"byAddr"`
	ByTime map[time.Time]int  `json:"byTime"`
	Tree   Tree               `json:"tree"`
	Link   Link               `json:"link"`
	Links  []*Link            `json:"links"`
	Omit   string             `json:"omit,omitempty"`
	Skip   string             `json:"-"`
	Anon   struct {
		X uint32 `json:"x"`
	} `json:"anon"`
	NoTag bool
}

var (
	// Service is e2e.contract version 1.
	Service = contract.NewService("e2e.contract", 1)
	// EverythingMethod returns its params.
	EverythingMethod = contract.NewMethod[Everything, Everything](Service, "everything")
	// EventMethod returns its params.
	EventMethod = contract.NewMethod[typedapi.Event, typedapi.Event](Service, "event")
	// TreeMethod returns its params.
	TreeMethod = contract.NewMethod[Tree, Tree](Service, "tree")
)
