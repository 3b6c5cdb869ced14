package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Schema returns the JSON Schema (draft 2020-12) of the params and result of every
// method of the services, for peers written in other languages, as one JSON document:
//
//	{"services":[{"id":"example.device","version":1,"methods":[
//	  {"name":"example.device.read","params":{...},"result":{...}}]}]}
//
// Each params and result schema is a schema resource of its own ("$schema", an "$id"
// such as "urn:adapterkit:example.device:1:read:params", and its own "$defs"), and
// follows the codec's rules (package codec), not encoding/json's: it accepts every value
// the codec writes for the Go type, and refuses what the codec refuses that JSON Schema
// can express:
//
//   - A struct is an object with "additionalProperties": false (a member naming no field
//     is refused) and no "required" member: the codec takes an absent member as the
//     field's zero value. The members the codec leaves out when empty (omitempty,
//     omitzero) are listed under [OmittedKeyword].
//   - An integer has its Go type's range, exactly (-9223372036854775808 to
//     9223372036854775807 for an int64, up to 18446744073709551615 for a uint64); int
//     and uint are those of the platform Schema runs on. A float has its type's range.
//   - A pointer, a slice, a map and []byte may be null (the codec writes nil as null);
//     other values are not (the codec never writes null for them, although it takes
//     null as an absent member).
//   - []byte is a base64 string ("contentEncoding": "base64", with a pattern).
//   - time.Time is the codec's RFC 3339 text ("format": "date-time" and a pattern that
//     checks the date, also the days of February).
//   - A map is an object; the names of a map with integer keys match the key type's
//     range (a pattern), as the codec reads them.
//   - A Go array has at most its length of elements (the codec takes fewer).
//   - A named struct, and a type that contains itself, is described once in "$defs",
//     named by its Go type ("device.Reading"); the method's own type is the root ("#").
//   - An empty interface is any JSON value whose numbers fit a float64.
//   - json.RawMessage, and any type with its own MarshalJSON, is any value; a type with
//     MarshalText (netip.Addr, an enum) is a string; json.Number is a number.
//
// What JSON Schema cannot say, the codec still refuses: a member named twice, an integer
// written with a fraction or an exponent (1.0, 1e2) or -0 for an unsigned integer, a
// string that a type's own UnmarshalText or UnmarshalJSON refuses, and nesting deeper
// than 10000. A host decodes results
// ignoring unknown members (codec.IgnoreUnknown), so that an adapter may add result
// fields within a service version: the schema describes the result an adapter of this
// contract writes.
//
// The error is that of a service's Validate (errors.Is(err, ErrInvalid)).
func Schema(services ...*Service) ([]byte, error) {
	type method struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
		Result map[string]any `json:"result"`
	}
	type service struct {
		ID      string   `json:"id"`
		Version int      `json:"version"`
		Methods []method `json:"methods"`
	}
	doc := struct {
		Services []service `json:"services"`
	}{Services: []service{}}
	for _, s := range services {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		out := service{ID: s.id, Version: s.version, Methods: []method{}}
		for i, name := range s.methods {
			id := fmt.Sprintf("urn:adapterkit:%s:%d:%s:", s.id, s.version, strings.TrimPrefix(name, s.id+"."))
			out.Methods = append(out.Methods, method{
				Name:   name,
				Params: typeSchema(s.types[i].params, id+"params"),
				Result: typeSchema(s.types[i].result, id+"result"),
			})
		}
		doc.Services = append(doc.Services, out)
	}
	var text bytes.Buffer
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err // not reached: the document holds strings, numbers, maps and slices
	}
	return text.Bytes(), nil
}
