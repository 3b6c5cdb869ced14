package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/adapterkit/adapterkit/contract"
)

// The params and result schemas of a method, as a peer in another language reads them:
// an object that names its members and refuses others, integers in their Go type's
// range, a slice that may be null.
func ExampleSchema() {
	type readParams struct {
		Probe string `json:"probe"`
		Seq   uint8  `json:"seq"`
	}
	device := contract.NewService("example.device", 1)
	contract.NewMethod[readParams, []int16](device, "read")
	text, err := contract.Schema(device)
	if err != nil {
		fmt.Println(err)
		return
	}
	var doc struct {
		Services []struct {
			ID      string
			Methods []struct {
				Name           string
				Params, Result json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		fmt.Println(err)
		return
	}
	m := doc.Services[0].Methods[0]
	for _, s := range []json.RawMessage{m.Params, m.Result} {
		var b bytes.Buffer
		_ = json.Compact(&b, s)
		fmt.Println(b.String())
	}
	// Output:
	// {"$id":"urn:adapterkit:example.device:1:read:params","$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"probe":{"type":"string"},"seq":{"maximum":255,"minimum":0,"type":"integer"}},"type":"object"}
	// {"$id":"urn:adapterkit:example.device:1:read:result","$schema":"https://json-schema.org/draft/2020-12/schema","items":{"maximum":32767,"minimum":-32768,"type":"integer"},"type":["array","null"]}
}
