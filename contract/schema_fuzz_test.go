package contract_test

import (
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/codec"
)

// FuzzSchema checks the schema of everything against the codec both ways:
//
//   - a value built from the fuzzer's numbers, string, bytes and time, as the codec
//     writes it, is valid against the schema (and what the codec takes from the text
//     below, written again, is too);
//   - JSON text the schema accepts, the codec takes, except for what JSON Schema cannot
//     say and Schema's documentation lists: a member named twice, an integer written with
//     a fraction or an exponent or as -0 for an unsigned integer, a string a type's own
//     UnmarshalText refuses, nesting deeper than the codec's limit.
func FuzzSchema(f *testing.F) {
	for _, e := range []everything{{}, filled(true), filled(false)} {
		text, err := codec.Append(nil, e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text, int64(-1), uint64(math.MaxUint64), 1.5, "s", []byte{1}, int64(0), uint32(0), int16(0))
	}
	for _, text := range []string{`{"i8":1.0}`, `{"u":-0}`, `{"at":"2024-02-29T00:00:00Z"}`, `{"byInt":{"-1":"x"}}`,
		`{"any":[1e308]}`, `{"any":[1e309]}`, `{"lvl":"mid"}`, `{"s":"a","s":"b"}`, `{"bytes":"QQ=="}`, `{"arr":[1,2]}`} {
		f.Add([]byte(text), int64(math.MinInt64), uint64(0), math.Copysign(0, -1), "", []byte(nil), int64(253402300799), uint32(999999999), int16(-1439))
	}
	s := schemaOf[everything](f)
	f.Fuzz(func(t *testing.T, text []byte, i int64, u uint64, x float64, str string, b []byte, sec int64, nsec uint32, off int16) {
		v := filled(i >= 0)
		v.I, v.I8, v.I16, v.I32, v.I64, v.Wait = int(i), int8(i), int16(i), int32(i), i, time.Duration(i)
		v.U, v.U8, v.U16, v.U32, v.U64, v.E = uint(u), uint8(u), uint16(u), uint32(u), u, uint16(u)
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			v.F64 = x
			if math.Abs(x) <= math.MaxFloat32 {
				v.F32 = float32(x)
			}
		}
		v.S, v.Bytes, v.Blob, v.Sl = str, b, blob(str), []string{str}
		v.ByInt = map[int16]string{int16(i): str}
		v.ByUint = map[uint8]bool{uint8(u): true}
		v.ByI64, v.ByU64 = map[int64]int{i: 1}, map[uint64]int{u: 1}
		v.ByStr = map[string]float32{str: v.F32}
		v.At = time.Unix(sec, int64(nsec%1e9)).In(time.FixedZone("", int(off)%1440*60))
		v.ByTime = map[time.Time]int{v.At: 1}
		v.AtP = &v.At
		written, err := codec.Append(nil, v)
		if err != nil { // a time beyond year 9999 or before year 0, which no JSON can carry
			v.At, v.ByTime, v.AtP = time.Time{}, nil, nil
			if written, err = codec.Append(nil, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := validates(s, written); err != nil {
			t.Fatalf("the schema refuses what the codec wrote:\n%s\n%v", written, err)
		}

		if !utf8.Valid(text) || !json.Valid(text) {
			return // not JSON: neither the codec nor a validator gets that far
		}
		if hugeExponent.Match(text) {
			return // the validator computes 10^exponent exactly (math/big): minutes for 1e999999999
		}
		var got everything
		decodeErr := codec.DecodeValue(text, &got, codec.RefuseUnknown)
		if decodeErr == nil {
			again, err := codec.Append(nil, got)
			if err != nil {
				t.Fatal(err)
			}
			if err := validates(s, again); err != nil {
				t.Fatalf("the schema refuses what the codec wrote of %s:\n%s\n%v", text, again, err)
			}
		}
		if decodeErr != nil && validates(s, text) == nil && !inexpressible(decodeErr) {
			t.Fatalf("the schema takes %s, which the codec refuses: %v", text, decodeErr)
		}
	})
}

var hugeExponent = regexp.MustCompile(`[eE][-+]?0*[0-9]{5,}`)

// inexpressible reports whether the codec refused a value for a reason JSON Schema
// cannot state (see FuzzSchema).
func inexpressible(err error) bool {
	var e *codec.Error
	if !errors.As(err, &e) {
		return false
	}
	d := e.Detail
	switch {
	case d == "appears twice", strings.Contains(d, "exceeded max depth"):
		return true
	case strings.HasPrefix(d, "expected an integer, got the number "):
		return strings.ContainsAny(strings.TrimPrefix(d, "expected an integer, got the number "), ".eE")
	case strings.HasPrefix(d, "-0 does not fit uint"):
		return true
	case strings.HasPrefix(d, "netip.Addr refuses a string"), strings.HasPrefix(d, "contract_test.level refuses a string"):
		return true
	}
	return false
}
