package contract_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"time"
)

// The types the schema tests send: every kind the codec writes, with the codec's own
// shapes (embedded structs inlined, unexported and "-" fields left out, types that write
// themselves, a recursive struct and a recursive map).

// level is an enum written as text.
type level int

func (l level) MarshalText() ([]byte, error) {
	switch l {
	case 0:
		return []byte("low"), nil
	case 1:
		return []byte("high"), nil
	}
	return nil, errors.New("no such level")
}

func (l *level) UnmarshalText(b []byte) error {
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

type blob []byte

// link contains itself through a pointer.
type link struct {
	N  int8  `json:"n"`
	Up *link `json:"up,omitempty"`
}

// tree contains itself through a map.
type tree map[string]tree

type Embedded struct {
	E uint16 `json:"e"`
}

type hidden struct {
	H int32 `json:"h"`
}

type everything struct {
	Embedded
	hidden
	I       int                `json:"i"`
	I8      int8               `json:"i8"`
	I16     int16              `json:"i16"`
	I32     int32              `json:"i32"`
	I64     int64              `json:"i64"`
	U       uint               `json:"u"`
	U8      uint8              `json:"u8"`
	U16     uint16             `json:"u16"`
	U32     uint32             `json:"u32"`
	U64     uint64             `json:"u64"`
	F32     float32            `json:"f32"`
	F64     float64            `json:"f64"`
	S       string             `json:"s"`
	Bool    bool               `json:"bool"`
	Bytes   []byte             `json:"bytes"`
	Blob    blob               `json:"blob"`
	Arr     [2]int16           `json:"arr"`
	Sl      []string           `json:"sl"`
	Ptr     *int64             `json:"ptr"`
	PP      **uint8            `json:"pp"`
	At      time.Time          `json:"at"`
	AtP     *time.Time         `json:"atP"`
	Wait    time.Duration      `json:"wait"`
	Addr    netip.Addr         `json:"addr"`
	Raw     json.RawMessage    `json:"raw"`
	Num     json.Number        `json:"num"`
	Any     any                `json:"any"`
	Lvl     level              `json:"lvl"`
	ByInt   map[int16]string   `json:"byInt"`
	ByUint  map[uint8]bool     `json:"byUint"`
	ByI64   map[int64]int      `json:"byI64"`
	ByU64   map[uint64]int     `json:"byU64"`
	ByStr   map[string]float32 `json:"byStr"`
	ByAddr  map[netip.Addr]int `json:"byAddr"`
	ByTime  map[time.Time]int  `json:"byTime"`
	Tree    tree               `json:"tree"`
	Link    link               `json:"link"`
	Links   []link             `json:"links"`
	Omit    string             `json:"omit,omitempty"`
	Skip    string             `json:"-"`
	private int                // never written: a member naming it is unknown
	Anon    struct {
		X uint32 `json:"x"`
	} `json:"anon"`
	NoTag bool
}

// filled returns an everything with every field set, its integers at their types'
// extremes (max true: the largest, else the smallest).
func filled(maxima bool) everything {
	pick := func(lo, hi int64) int64 {
		if maxima {
			return hi
		}
		return lo
	}
	u8 := uint8(200)
	pu8 := &u8
	i64 := pick(math.MinInt64, math.MaxInt64)
	at := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -(23*3600+59*60)))
	if !maxima {
		at = time.Date(0, 2, 29, 0, 0, 0, 1, time.UTC)
	}
	e := everything{
		Embedded: Embedded{E: math.MaxUint16}, I: int(pick(math.MinInt, math.MaxInt)), I8: int8(pick(math.MinInt8, math.MaxInt8)),
		I16: int16(pick(math.MinInt16, math.MaxInt16)), I32: int32(pick(math.MinInt32, math.MaxInt32)), I64: i64,
		U: math.MaxUint, U8: math.MaxUint8, U16: math.MaxUint16, U32: math.MaxUint32, U64: math.MaxUint64,
		F32: math.MaxFloat32, F64: -math.MaxFloat64, S: "a\u2028\"<>&\x00", Bool: true, Bytes: []byte{0, 1, 2, 255},
		Blob: blob("xy"), Arr: [2]int16{math.MinInt16, 7}, Sl: []string{}, Ptr: &i64, PP: &pu8, At: at, AtP: &at,
		Wait: time.Duration(i64), Addr: netip.MustParseAddr("fe80::1%eth0"), Raw: json.RawMessage(`{"k":[1e999]}`),
		Num: "-12345678901234567890.5e-3", Any: map[string]any{"n": 1.5, "l": []any{"x", nil, true}}, Lvl: 1,
		ByInt: map[int16]string{math.MinInt16: "lo", math.MaxInt16: "hi"}, ByUint: map[uint8]bool{0: true, 255: false},
		ByI64: map[int64]int{math.MinInt64: 1, math.MaxInt64: 2}, ByU64: map[uint64]int{math.MaxUint64: 3},
		ByStr: map[string]float32{"": math.SmallestNonzeroFloat32}, ByAddr: map[netip.Addr]int{netip.MustParseAddr("10.0.0.1"): 1},
		ByTime: map[time.Time]int{at: 1}, Tree: tree{"a": tree{"b": nil}}, Link: link{N: -128, Up: &link{N: 127}},
		Links: []link{{Up: &link{}}}, Omit: "x", Skip: "never sent", NoTag: true,
	}
	e.H, e.private = 5, 1
	e.Anon.X = math.MaxUint32
	return e
}
