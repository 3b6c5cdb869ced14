package jsoncodec

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Types that encode themselves, and the family of types the round-trip tests and
// FuzzRoundTrip send: every value the encoder accepts must decode back to the same value.

// level is an enum written by name (MarshalText, value receiver; UnmarshalText, pointer
// receiver); a level without a name does not encode.
type level uint8

var levelNames = []string{"low", "mid", "high"}

func (l level) MarshalText() ([]byte, error) {
	if int(l) < len(levelNames) {
		return []byte(levelNames[l]), nil
	}
	return nil, fmt.Errorf("level %d has no name", uint8(l))
}

func (l *level) UnmarshalText(b []byte) error {
	i := slices.Index(levelNames, string(b))
	if i < 0 {
		return fmt.Errorf("unknown level %q", b)
	}
	*l = level(i)
	return nil
}

// celsius writes itself as an object, with both methods on the pointer (encoding/json
// would skip its MarshalJSON in a map value, or a struct passed by value), and with
// white space that the encoder must take out.
type celsius struct{ milli int64 }

func (c *celsius) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "{ \"mC\" :\n %d }", c.milli), nil
}

func (c *celsius) UnmarshalJSON(b []byte) error {
	var x struct {
		MC *int64 `json:"mC"`
	}
	if err := DecodeValue(b, &x, RefuseUnknown); err != nil {
		return err
	}
	if x.MC == nil {
		return fmt.Errorf("no mC in %s", b)
	}
	c.milli = *x.MC
	return nil
}

// span writes itself as a string "lo..hi" (MarshalJSON on the value).
type span struct{ lo, hi int32 }

func (s span) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, fmt.Sprintf("%d..%d", s.lo, s.hi)), nil
}

func (s *span) UnmarshalJSON(b []byte) error {
	q, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("not a string: %s", b)
	}
	lo, hi, ok := strings.Cut(q, "..")
	l, err1 := strconv.ParseInt(lo, 10, 32)
	h, err2 := strconv.ParseInt(hi, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("not lo..hi: %q", q)
	}
	*s = span{int32(l), int32(h)}
	return nil
}

// Stamped holds the standard library's self-encoding types.
type Stamped struct {
	At    time.Time     `json:"at"`
	Addr  netip.Addr    `json:"addr"`
	Level level         `json:"level"`
	Wait  time.Duration `json:"wait"`
}

// Keyed has maps with keys that are not strings.
type Keyed struct {
	ByLevel map[level]string   `json:"by_level"`
	ByAddr  map[netip.Addr]int `json:"by_addr"`
	ByID    map[int64]Stamped  `json:"by_id"`
	ByU8    map[uint8]bool     `json:"by_u8"`
}

// hidden is embedded unexported: encoding/json writes its exported fields inline.
type hidden struct {
	Secret string `json:"secret"`
}

// family is the fixed family's root: embedded structs, pointers, maps, slices, self-
// encoding fields, any, and itself.
type family struct {
	Stamped
	Keyed
	When  *time.Time         `json:"when"`
	Blob  []byte             `json:"blob"`
	Temp  celsius            `json:"temp"`
	Temps map[string]celsius `json:"temps"`
	PTemp *celsius           `json:"ptemp"`
	Span  span               `json:"span"`
	Spans []span             `json:"spans"`
	Any   any                `json:"any"`
	Lvls  []level            `json:"lvls"`
	Addrs []*netip.Addr      `json:"addrs"`
	Next  *family            `json:"next"`
	Ratio float32            `json:"ratio"`
	Big   uint64             `json:"big"`
	Raw   json.RawMessage    `json:"raw"`
	Since time.Time          `json:"since,omitzero"` // left out when IsZero
	Count int                `json:"count,omitzero"`
}

// viaRef holds shapes mapstructure, the reference decoder, handles its own way (an
// array, an unexported embedded struct), with self-encoding types inside.
type viaRef struct {
	hidden
	Pair  [2]Stamped       `json:"pair"`
	Temps map[int16]span   `json:"temps"`
	Lvl   map[level]family `json:"lvl"`
}

// leafTypes are the field types FuzzRoundTrip builds struct types from.
var leafTypes = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[int8](), reflect.TypeFor[int64](), reflect.TypeFor[uint16](),
	reflect.TypeFor[uint64](), reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[string](),
	reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](), reflect.TypeFor[time.Duration](),
	reflect.TypeFor[netip.Addr](), reflect.TypeFor[level](), reflect.TypeFor[celsius](), reflect.TypeFor[span](),
	reflect.TypeFor[any](), reflect.TypeFor[Stamped](), reflect.TypeFor[uint](),
}

// generated builds a type from shape: a struct of up to 6 fields whose types are leaves,
// pointers, slices, maps (with string, integer, level and netip.Addr keys), other
// generated structs, embedded or not. Field names are unique over the whole type, so
// that embedding never makes two fields of one name.
func generated(shape []byte) reflect.Type {
	g := typeGen{b: shape}
	return g.structType(0)
}

type typeGen struct {
	b []byte
	n int // fields made so far, for unique names
}

func (g *typeGen) next() int {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return int(c)
}

func (g *typeGen) structType(depth int) reflect.Type {
	n := g.next() % 7
	fields := make([]reflect.StructField, 0, n)
	for range n {
		g.n++
		c := g.next()
		f := reflect.StructField{Name: "F" + strconv.Itoa(g.n)}
		if c&1 == 1 {
			f.Tag = reflect.StructTag(`json:"f` + strconv.Itoa(g.n) + `"`)
		}
		if c&2 == 2 && depth < 2 {
			f.Type = g.structType(depth + 1)
			f.Anonymous = c&4 == 4 // inlined: its fields are this struct's
			if f.Anonymous {
				f.Name = "E" + strconv.Itoa(g.n)
				f.Tag = ""
			}
		} else {
			f.Type = g.fieldType(depth)
		}
		fields = append(fields, f)
	}
	return reflect.StructOf(fields)
}

var mapKeys = []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int32](), reflect.TypeFor[uint64](),
	reflect.TypeFor[level](), reflect.TypeFor[netip.Addr]()}

func (g *typeGen) fieldType(depth int) reflect.Type {
	c := g.next()
	if depth >= 2 || c < 160 {
		return leafTypes[c%len(leafTypes)]
	}
	elem := g.fieldType(depth + 1)
	if c&8 == 8 && depth < 2 {
		elem = g.structType(depth + 1)
	}
	switch c % 3 {
	case 0:
		return reflect.PointerTo(elem)
	case 1:
		return reflect.SliceOf(elem)
	}
	return reflect.MapOf(mapKeys[g.next()%len(mapKeys)], elem)
}

// filler makes a value of any of these types from bytes.
type filler struct{ b []byte }

func (f *filler) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *filler) u64() uint64 {
	var u uint64
	for range 8 {
		u = u<<8 | uint64(f.byte())
	}
	return u
}

func (f *filler) str() string {
	n := int(f.byte() % 12)
	s := make([]byte, 0, n)
	for range n {
		s = append(s, f.byte())
	}
	// A Go string that is not UTF-8 is sent with U+FFFD for its bad bytes, as
	// encoding/json does: text is sent as text.
	return strings.ToValidUTF8(string(s), "\uFFFD")
}

var (
	timeType = reflect.TypeFor[time.Time]()
	addrType = reflect.TypeFor[netip.Addr]()
)

// fill sets v (settable) to a value made from f's bytes.
func (f *filler) fill(v reflect.Value, depth int) {
	switch v.Type() {
	case timeType:
		// Years 1 to 9999 (RFC 3339), in UTC or at an offset of whole minutes.
		sec := int64(f.u64()%(253402214400-(-62135596800))) - 62135596800 + 86400
		t := time.Unix(sec, int64(f.u64()%1e9))
		if c := f.byte(); c%2 == 0 {
			t = t.UTC()
		} else {
			t = t.In(time.FixedZone("", (int(c)-128)*11*60))
		}
		v.Set(reflect.ValueOf(t))
		return
	case addrType:
		var a netip.Addr
		switch f.byte() % 4 {
		case 1:
			a = netip.AddrFrom4([4]byte{f.byte(), f.byte(), f.byte(), f.byte()})
		case 2, 3:
			var b [16]byte
			for i := range b {
				b[i] = f.byte()
			}
			a = netip.AddrFrom16(b)
			if f.byte()%3 == 0 {
				a = a.WithZone("eth0")
			}
		}
		v.Set(reflect.ValueOf(a))
		return
	case reflect.TypeFor[celsius]():
		v.Set(reflect.ValueOf(celsius{int64(f.u64())}))
		return
	case reflect.TypeFor[span]():
		v.Set(reflect.ValueOf(span{int32(f.u64()), int32(f.u64())}))
		return
	case reflect.TypeFor[level]():
		v.SetUint(uint64(f.byte() % 3))
		return
	case reflect.TypeFor[json.RawMessage]():
		if c := f.byte(); c%2 == 1 {
			v.SetBytes([]byte(strconv.Itoa(int(c))))
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.byte()%2 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.u64()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(f.u64())
	case reflect.Float32:
		x := math.Float32frombits(uint32(f.u64()))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			x = 0 // refused at encode
		}
		v.SetFloat(float64(x))
	case reflect.Float64:
		x := math.Float64frombits(f.u64())
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0
		}
		v.SetFloat(x)
	case reflect.String:
		v.SetString(f.str())
	case reflect.Interface:
		if x := f.jsonShaped(depth); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Pointer:
		if f.byte()%4 != 0 && depth < 4 {
			p := reflect.New(v.Type().Elem())
			f.fill(p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		c := f.byte()
		if c%5 == 0 || depth >= 4 {
			return // nil
		}
		n := int(c % 4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		c := f.byte()
		if c%5 == 0 || depth >= 4 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range int(c % 4) {
			k := reflect.New(v.Type().Key()).Elem()
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(k, depth+1)
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			} else if v.Type().Field(i).Anonymous {
				f.fill(exported(v.Field(i)), depth+1)
			}
		}
	}
}

// exported returns the exported fields of an unexported embedded struct as settable.
func exported(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem()
}

// jsonShaped makes what an empty interface receives: nil, bool, float64, string,
// []any, map[string]any.
func (f *filler) jsonShaped(depth int) any {
	switch c := f.byte(); c % 7 {
	case 1:
		return c%2 == 0
	case 2:
		x := math.Float64frombits(f.u64())
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0.0
		}
		return x
	case 3:
		return f.str()
	case 4:
		if depth < 4 {
			a := []any{}
			for range int(f.byte() % 3) {
				a = append(a, f.jsonShaped(depth+1))
			}
			return a
		}
	case 5:
		if depth < 4 {
			m := map[string]any{}
			for range int(f.byte() % 3) {
				m[f.str()] = f.jsonShaped(depth + 1)
			}
			return m
		}
	case 6:
		return float64(int64(f.u64()) >> 11) // an integer float64 holds exactly
	}
	return nil
}

// same reports whether b is the value a: reflect.DeepEqual's rules, except that a
// time.Time is the same instant at the same offset (its Equal, and the zone offset:
// the location's name is not sent), that a pointer to a nil map, slice, pointer or
// interface is nil (JSON has one null), and that unexported fields are compared as
// values.
func same(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == timeType {
		ta, tb := valueOf[time.Time](a), valueOf[time.Time](b)
		_, oa := ta.Zone()
		_, ob := tb.Zone()
		return ta.Equal(tb) && oa == ob
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if null(a) || null(b) {
			return null(a) == null(b)
		}
		return same(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !same(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			e := b.MapIndex(it.Key())
			if !e.IsValid() || !same(it.Value(), e) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !same(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() && math.Signbit(a.Float()) == math.Signbit(b.Float())
	}
	return a.Equal(b)
}

// null reports whether v is written as JSON null: a nil pointer, interface, map or
// slice, or a pointer to one of those (which therefore comes back as a nil pointer).
func null(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return v.IsNil() || null(v.Elem())
	case reflect.Interface, reflect.Map, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// valueOf returns the T in v (reached through exported fields only).
func valueOf[T any](v reflect.Value) T { return v.Interface().(T) }
