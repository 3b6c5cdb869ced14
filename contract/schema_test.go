package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
)

// compiled returns the params schema of the first method of svc, compiled by an
// independent validator (santhosh-tekuri/jsonschema, draft 2020-12, formats and
// contentEncoding as annotations, as the draft's default is: the patterns must do).
func compiled(t testing.TB, svc *contract.Service) *jsonschema.Schema {
	t.Helper()
	text, err := contract.Schema(svc)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///contract.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///contract.json#/services/0/methods/0/params")
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return s
}

// schemaOf returns the compiled params schema of type T.
func schemaOf[T any](t testing.TB) *jsonschema.Schema {
	svc := contract.NewService("example.schema", 1)
	contract.NewMethod[T, struct{}](svc, "m")
	return compiled(t, svc)
}

// validates reports whether the schema accepts the JSON text (nil), or why not.
func validates(s *jsonschema.Schema, text []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return fmt.Errorf("not JSON for the validator: %w", err)
	}
	return s.Validate(inst)
}

// Every value the codec writes is valid against its type's schema, and comes back.
func TestSchemaAcceptsWhatTheCodecWrites(t *testing.T) {
	s := schemaOf[everything](t)
	for name, v := range map[string]everything{"zero": {}, "maxima": filled(true), "minima": filled(false)} {
		text, err := codec.Append(nil, v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := validates(s, text); err != nil {
			t.Errorf("%s: the schema refuses what the codec wrote:\n%s\n%v", name, text, err)
		}
		var back everything
		if err := codec.DecodeValue(text, &back, codec.RefuseUnknown); err != nil {
			t.Errorf("%s: the codec refuses what it wrote: %v", name, err)
		}
	}
}

// The differential table: JSON the codec takes, the schema takes; JSON the codec
// refuses (unknown members, wrong types, integers out of range, bad times, bad base64,
// map keys out of range, arrays too long, floats out of range), the schema refuses.
func TestSchemaAgreesWithTheCodec(t *testing.T) {
	s := schemaOf[everything](t)
	accepted := []string{
		`{}`, `{"i64":-9223372036854775808,"u64":18446744073709551615,"i8":-128,"u8":255,"i":9223372036854775807}`,
		`{"at":"2024-02-29T23:59:59.123456789-23:59"}`, `{"at":"2000-02-29T00:00:00Z","atP":null}`,
		`{"at":"0000-02-29T00:00:00+00:00"}`, `{"byTime":{"1999-12-31T23:59:59.5Z":1}}`,
		`{"byInt":{"-32768":"a","0032767":"b","-0":"c"}}`, `{"byUint":{"255":true,"000":false}}`,
		`{"byI64":{"-9223372036854775808":1,"9223372036854775807":2}}`, `{"byU64":{"18446744073709551615":1}}`,
		`{"bytes":null,"sl":null,"ptr":null,"pp":null,"blob":"QR==","byInt":null,"tree":null,"links":null}`,
		`{"bytes":"","blob":"AAECAw=="}`, `{"any":{"a":[1,"x",null,true,-1.7976931348623157e308]}}`,
		`{"raw":1e999,"num":1e999}`, `{"num":-0.5}`, `{"arr":[1]}`, `{"arr":[]}`, `{"f32":-3.4028235e38,"f64":5e-324}`,
		`{"e":65535,"h":-2147483648,"NoTag":true,"omit":"","anon":{"x":4294967295}}`,
		`{"link":{"n":1,"up":{"n":2,"up":{"n":3}}},"links":[{"up":null}],"tree":{"a":{"b":{}},"c":null}}`,
		`{"lvl":"high","addr":"10.0.0.1","byAddr":{"::1":1},"wait":-9223372036854775808}`,
	}
	refused := []string{
		`{"nope":1}`, `{"private":1}`, `{"Skip":"x"}`, `{"Embedded":{"e":1}}`, `{"hidden":{}}`, `{"notag":true}`,
		`{"link":{"up":{"zz":1}}}`, `{"anon":{"X":1}}`,
		`{"i8":128}`, `{"i8":-129}`, `{"u8":-1}`, `{"u8":256}`, `{"u":-1}`, `{"i16":32768}`, `{"u16":65536}`,
		`{"i32":2147483648}`, `{"u32":4294967296}`, `{"i64":9223372036854775808}`, `{"i64":-9223372036854775809}`,
		`{"u64":18446744073709551616}`, `{"i":9223372036854775808}`, `{"e":-1}`, `{"h":2147483648}`,
		`{"links":[{"n":128}]}`, `{"anon":{"x":-1}}`, `{"wait":9223372036854775808}`,
		`{"s":1}`, `{"i":"1"}`, `{"bool":0}`, `{"sl":"a"}`, `{"sl":[1]}`, `{"link":[]}`, `{"f64":"1"}`, `{"num":"1"}`,
		`{"at":1}`, `{"lvl":1}`, `{"bytes":[1]}`, `{"tree":{"a":{"b":1}}}`, `{"addr":1}`, `{"i":1.5}`,
		`{"f32":3.5e38}`, `{"f64":1e400}`, `{"f64":-1e309}`, `{"any":1e400}`, `{"any":[{"x":-1e309}]}`,
		`{"at":"2026-02-30T00:00:00Z"}`, `{"at":"2025-02-29T00:00:00Z"}`, `{"at":"1900-02-29T00:00:00Z"}`,
		`{"at":"2026-13-01T00:00:00Z"}`, `{"at":"2026-04-31T00:00:00Z"}`, `{"at":"2026-12-01T24:00:00Z"}`,
		`{"at":"2026-12-01T23:59:60Z"}`, `{"at":"2026-12-01T23:59:59"}`,
		`{"at":"10000-01-01T00:00:00Z"}`, `{"at":"2026-12-01t23:59:59Z"}`, `{"at":""}`, `{"atP":"x"}`,
		`{"byTime":{"2026-02-30T00:00:00Z":1}}`,
		`{"bytes":"QQ"}`, `{"bytes":"!!!!"}`, `{"blob":"QQ=="  ,"bytes":"Q==="}`,
		`{"byInt":{"32768":"x"}}`, `{"byInt":{"-32769":"x"}}`, `{"byInt":{"+1":"x"}}`, `{"byInt":{"":"x"}}`,
		`{"byUint":{"-0":true}}`, `{"byUint":{"256":true}}`, `{"byUint":{"x":true}}`, `{"byUint":{"1.0":true}}`,
		`{"byI64":{"9223372036854775808":1}}`, `{"byI64":{"-9223372036854775809":1}}`, `{"byU64":{"18446744073709551616":1}}`,
		`{"byU64":{"-1":1}}`, `{"byI64":{"--1":1}}`,
		`{"arr":[1,2,3]}`, `{"arr":[1,32768]}`, `[]`, `1`, `"x"`,
	}
	for _, text := range accepted {
		var v everything
		if err := codec.DecodeValue([]byte(text), &v, codec.RefuseUnknown); err != nil {
			t.Errorf("the codec refuses %s: %v (fix the table)", text, err)
		}
		if err := validates(s, []byte(text)); err != nil {
			t.Errorf("the schema refuses %s, which the codec takes: %v", text, err)
		}
	}
	for _, text := range refused {
		var v everything
		if err := codec.DecodeValue([]byte(text), &v, codec.RefuseUnknown); err == nil {
			t.Errorf("the codec takes %s (fix the table)", text)
		}
		if err := validates(s, []byte(text)); err == nil {
			t.Errorf("the schema takes %s, which the codec refuses", text)
		}
	}
}

// The document: one service, its methods in order, each params and result a schema
// resource; named structs in $defs, the root referred to as "#".
func TestSchemaDocument(t *testing.T) {
	svc := contract.NewService("example.doc", 2)
	contract.NewMethod[link, []reading](svc, "walk")
	contract.NewMethod[json.RawMessage, any](svc, "raw")
	text, err := contract.Schema(svc)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services []struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
			Methods []struct {
				Name   string         `json:"name"`
				Params map[string]any `json:"params"`
				Result map[string]any `json:"result"`
			} `json:"methods"`
		} `json:"services"`
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Services) != 1 || doc.Services[0].ID != "example.doc" || doc.Services[0].Version != 2 || len(doc.Services[0].Methods) != 2 {
		t.Fatalf("document:\n%s", text)
	}
	walk := doc.Services[0].Methods[0]
	if walk.Name != "example.doc.walk" || walk.Params["$id"] != "urn:adapterkit:example.doc:2:walk:params" ||
		walk.Params["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("method %q params %v", walk.Name, walk.Params)
	}
	if got := fmt.Sprint(walk.Params["properties"]); !strings.Contains(got, "up:map[anyOf:[map[$ref:#] map[type:null]]]") {
		t.Errorf("the root's recursion is not a reference to the root: %s", got)
	}
	if raw := doc.Services[0].Methods[1]; len(raw.Params) != 2 || raw.Result["$ref"] != "#/$defs/any" { // $schema and $id: any value
		t.Errorf("json.RawMessage params: %v, any result: %v", raw.Params, raw.Result)
	}
	bad := contract.NewService("nodots", 1)
	if _, err := contract.Schema(bad); err == nil || !reflect.DeepEqual(err, bad.Validate()) {
		t.Errorf("an invalid service: %v", err)
	}
}
