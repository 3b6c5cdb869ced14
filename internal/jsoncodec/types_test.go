package jsoncodec

import (
	"encoding/json"
	"reflect"
)

// Types the tests and fuzz targets decode into: every kind the direct decoder handles,
// nested, embedded, behind pointers, in maps and slices.

type inner struct {
	A int8     `json:"a"`
	B *string  `json:"b,omitempty"`
	C []uint16 `json:"c"`
}

type Base struct {
	ID   uint64           `json:"id"`
	Tags map[string]int32 `json:"tags"`
}

type outer struct {
	Base
	I      int               `json:"i"`
	U8     uint8             // no tag: the Go name
	F32    float32           `json:"f32"`
	F      float64           `json:"f"`
	S      string            `json:"s"`
	N      json.Number       `json:"n"`
	X      any               `json:"x"`
	Bs     []byte            `json:"bs"`
	P      *inner            `json:"p"`
	L      []inner           `json:"l"`
	M      map[string]*inner `json:"m"`
	Ok     bool              `json:"ok"`
	hidden int
	//lint:ignore SA5008 "-," names a member "-" (encoding/json's documented special case)
	Dash  int    `json:"-,"`
	PP    **int  `json:"pp"`
	Named label  `json:"named"`
	I64   int64  `json:"i64"`
	U64   uint64 `json:"u64"`
}

type label string

type node struct {
	V    int   `json:"v"`
	Next *node `json:"next"`
}

// targets are the types the differential fuzz target decodes into, by index.
var targets = []reflect.Type{
	reflect.TypeFor[outer](),
	reflect.TypeFor[map[string]any](),
	reflect.TypeFor[[]int64](),
	reflect.TypeFor[any](),
	reflect.TypeFor[*uint32](),
	reflect.TypeFor[map[string][]float32](),
	reflect.TypeFor[string](),
	reflect.TypeFor[json.Number](),
	reflect.TypeFor[[]byte](),
	reflect.TypeFor[bool](),
	reflect.TypeFor[node](),
	reflect.TypeFor[map[label]inner](),
	reflect.TypeFor[[]*Base](),
	reflect.TypeFor[Stamped](), // self-encoding fields (time.Time, netip.Addr, an enum)
	reflect.TypeFor[Keyed](),   // integer and TextMarshaler map keys
}

// hidden is never set: a member naming it is unknown.
var _ = outer{}.hidden
