package codec_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

// The types of the shared value vectors (testdata/conformance/values.json), as a Go
// contract declares them; TestValueVectors checks that they are the ones the file
// describes.
type (
	vEntry struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
		N     int64  `json:"n"`
		OK    bool   `json:"ok"`
	}
	vShapes struct {
		Entry vEntry           `json:"entry"`
		Ptr   *vEntry          `json:"ptr"`
		List  []vEntry         `json:"list"`
		Names []string         `json:"names"`
		Tags  map[string]int64 `json:"tags"`
		Any   any              `json:"any"`
	}
	vStamp struct {
		At time.Time `json:"at"`
	}
	vInts struct {
		I8  int8   `json:"i8"`
		U8  uint8  `json:"u8"`
		I32 int32  `json:"i32"`
		U32 uint32 `json:"u32"`
		I64 int64  `json:"i64"`
		U64 uint64 `json:"u64"`
	}
	vFloats struct {
		F32 float32 `json:"f32"`
		F64 float64 `json:"f64"`
	}
)

var valueTypes = map[string]reflect.Type{
	"Entry":  reflect.TypeFor[vEntry](),
	"Shapes": reflect.TypeFor[vShapes](),
	"Stamp":  reflect.TypeFor[vStamp](),
	"Ints":   reflect.TypeFor[vInts](),
	"Floats": reflect.TypeFor[vFloats](),
}

// goTypeName writes t as the vectors name it: a type of the file by its name there.
func goTypeName(t reflect.Type) string {
	for name, vt := range valueTypes {
		if vt == t {
			return name
		}
	}
	switch {
	case t == reflect.TypeFor[[]byte]():
		return "[]byte"
	case t == reflect.TypeFor[time.Time]():
		return "time.Time"
	case t.Kind() == reflect.Interface && t.NumMethod() == 0:
		return "any"
	case t.Kind() == reflect.Pointer:
		return "*" + goTypeName(t.Elem())
	case t.Kind() == reflect.Slice:
		return "[]" + goTypeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map[" + goTypeName(t.Key()) + "]" + goTypeName(t.Elem())
	}
	return t.String()
}

type valueVectors struct {
	Types map[string][][2]string
	Cases []struct {
		Rule, Name, Type, Input, Output string
		Error                           *string
		ErrorPrefix                     *string `json:"error_prefix"`
	}
	Encode []struct {
		Rule, Name, F64 string
	}
}

// TestValueVectors runs the shared value vectors (A38-A44) against the codec, which is
// the reference every SDK's decoder follows: params decoded as an adapter decodes them
// (unknown members refused), the value written back as a result is written.
func TestValueVectors(t *testing.T) {
	var doc valueVectors
	testkit.Vectors(t, "values.json", &doc)
	if len(doc.Types) != len(valueTypes) {
		t.Errorf("the file declares %d types, the test %d", len(doc.Types), len(valueTypes))
	}
	for name, members := range doc.Types {
		rt, ok := valueTypes[name]
		if !ok {
			t.Errorf("type %s: not declared in the test", name)
			continue
		}
		var have [][2]string
		for f := range rt.Fields() {
			have = append(have, [2]string{strings.Split(f.Tag.Get("json"), ",")[0], goTypeName(f.Type)})
		}
		if !reflect.DeepEqual(have, members) {
			t.Errorf("type %s: the test declares %q, the file %q", name, have, members)
		}
	}
	for _, c := range doc.Cases {
		t.Run(c.Rule+" "+c.Name, func(t *testing.T) {
			rt, ok := valueTypes[c.Type]
			if !ok {
				t.Fatalf("no type %s", c.Type)
			}
			v := reflect.New(rt)
			err := codec.DecodeValue([]byte(c.Input), v.Interface(), codec.RefuseUnknown)
			switch {
			case c.Error != nil || c.ErrorPrefix != nil:
				if err == nil {
					t.Fatalf("%s: decoded, want a refusal", c.Input)
				}
				if c.Error != nil && err.Error() != *c.Error {
					t.Fatalf("%s:\n got %s\nwant %s", c.Input, err, *c.Error)
				}
				if c.ErrorPrefix != nil && !strings.HasPrefix(err.Error(), *c.ErrorPrefix) {
					t.Fatalf("%s: got %s, want it to start with %q", c.Input, err, *c.ErrorPrefix)
				}
			case err != nil:
				t.Fatalf("%s: %v", c.Input, err)
			default:
				out, err := codec.Append(nil, v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				if same, err := testkit.SameJSON(out, []byte(c.Output)); err != nil || !same {
					t.Fatalf("%s:\n got %s\nwant %s (%v)", c.Input, out, c.Output, err)
				}
			}
		})
	}
	specials := map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1), "-Inf": math.Inf(-1)}
	for _, c := range doc.Encode {
		t.Run(c.Rule+" "+c.Name, func(t *testing.T) {
			f, ok := specials[c.F64]
			if !ok {
				t.Fatalf("f64 %q: want NaN, +Inf or -Inf", c.F64)
			}
			if out, err := codec.Append(nil, vFloats{F64: f}); err == nil {
				t.Fatalf("wrote %s", out)
			}
		})
	}
}
