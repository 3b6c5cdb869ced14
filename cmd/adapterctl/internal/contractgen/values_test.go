package contractgen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/e2e/contractapi"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
)

// Every case Values makes for check --contract is valid against the method's params
// schema (checked by an independent validator), and the edge cases come first.
func TestValuesValid(t *testing.T) {
	doc, err := contract.Schema(contractapi.Service, echoapi.Service, device.Service)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(doc)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///c.json", inst); err != nil {
		t.Fatal(err)
	}
	deep := false
	for i, s := range m.Services {
		for j, meth := range s.Methods {
			sch, err := c.Compile(fmt.Sprintf("mem:///c.json#/services/%d/methods/%d/params", i, j))
			if err != nil {
				t.Fatal(err)
			}
			values := m.Values(meth.Params)
			if len(values) < 2+randomCases || values[len(values)-1].Case != "random 3" {
				t.Errorf("%s: cases %v", meth.Name, values)
			}
			for _, v := range values {
				deep = deep || v.Case == "deep" && bytes.Count(v.JSON, []byte("{")) > deepDepth/2
				x, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.JSON))
				if err != nil {
					t.Fatalf("%s %s: %v", meth.Name, v.Case, err)
				}
				if err := sch.Validate(x); err != nil {
					t.Errorf("%s %s: %s\n%v", meth.Name, v.Case, v.JSON, err)
				}
				if !bytes.HasPrefix(v.JSON, []byte("{")) {
					t.Errorf("%s %s: params %s are not an object", meth.Name, v.Case, v.JSON)
				}
			}
		}
	}
	if !deep {
		t.Error("no deep case nests a recursive type")
	}
}

// Missing names the first member of a struct a result leaves out, at any depth.
func TestMissing(t *testing.T) {
	doc, err := contract.Schema(contractapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(doc)
	if err != nil {
		t.Fatal(err)
	}
	full := m.Values("EventParams")[1].JSON // maxima: every member
	for _, c := range []struct{ value, want string }{
		{string(full), ""},
		{`{}`, "/: at"},
		{strings.Replace(string(full), `"seq":`, `"other":`, 1), "/: seq"},
	} {
		if got := m.Missing("EventResult", []byte(c.value)); got != c.want {
			t.Errorf("Missing(%s) = %q, want %q", c.value, got, c.want)
		}
	}
	links := `{"n":1,"up":{"up":null}}`
	if got := m.Missing("Link", []byte(links)); got != "/up: n" {
		t.Errorf("Missing(%s) = %q, want /up: n", links, got)
	}
	// A member tagged omitempty may be left out (a Go adapter leaves it out when empty);
	// the others may not.
	for value, want := range map[string]string{`{"n":1}`: "", `{"n":1,"up":{"n":2}}`: "", `{"up":{"n":2}}`: "/: n"} {
		if got := m.Missing("Link", []byte(value)); got != want {
			t.Errorf("Missing(%s) = %q, want %q", value, got, want)
		}
	}
}

// A schema of another shape than contract.Schema writes is refused, naming the place.
func TestReadRefuses(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"integer","minimum":0,"maximum":10}`, "an integer from 0 to 10 is of no Go integer type"},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`, `member "a": $ref "#/$defs/x": no such $defs entry`},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, "anyOf other than a schema or null"},
		{`{"type":"array"}`, "an array without items"},
	} {
		doc := `{"services":[{"id":"x.y","version":1,"methods":[{"name":"x.y.z","params":` + c.schema + `,"result":{}}]}]}`
		_, err := Read([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.schema, err, c.want)
		}
	}
}
