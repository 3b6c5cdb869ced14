package proto_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/wire"
)

func TestDecodeCatalog(t *testing.T) {
	tests := []struct {
		rule string
		in   string
		ok   bool
	}{
		{"R19", `{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}`, true},
		{"A12", `{"protocol":1,"services":[]}`, true},
		{"A12", `{"protocol":1,"services":[{"id":"a.b","version":2,"methods":["a.b.c"],"extra":1}],"more":true}`, true},
		{"A9", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c.d","a.b.C"]}]}`, true},
		{"A11", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c"]},{"id":"a.b.c","version":1,"methods":["a.b.c.d"]}]}`, true},
		{"R19", `{"protocol":1}`, false},
		{"R19", `{"services":[]}`, false},
		{"R19", `{"protocol":1,"services":null}`, false},
		{"R19", `{"protocol":1,"services":{}}`, false},
		{"R19", `[]`, false},
		{"A8", `{"protocol":2,"services":[]}`, false},
		{"A8", `{"protocol":1.0,"services":[]}`, false},
		{"R19", `{"protocol":1,"services":[{"version":1,"methods":["a.b.c"]}]}`, false},
		{"R19", `{"protocol":1,"services":[{"id":1,"version":1,"methods":["a.b.c"]}]}`, false},
		{"R20", `{"protocol":1,"services":[{"id":"device","version":1,"methods":["device.read"]}]}`, false},
		{"R20", `{"protocol":1,"services":[{"id":"a..b","version":1,"methods":["a..b.c"]}]}`, false},
		{"R20", `{"protocol":1,"services":[{"id":".a","version":1,"methods":[".a.c"]}]}`, false},
		{"R20", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b."]}]}`, false},
		{"R21", `{"protocol":1,"services":[{"id":"system.x","version":1,"methods":["system.x.y"]}]}`, false},
		{"R21", `{"protocol":1,"services":[{"id":"systemd.x","version":1,"methods":["systemd.x.y"]}]}`, false},
		{"R21", `{"protocol":1,"services":[{"id":"system","version":1,"methods":["system.y"]}]}`, false},
		{"R22", `{"protocol":1,"services":[{"id":"a.b","version":0,"methods":["a.b.c"]}]}`, false},
		{"R22", `{"protocol":1,"services":[{"id":"a.b","version":-1,"methods":["a.b.c"]}]}`, false},
		{"R22", `{"protocol":1,"services":[{"id":"a.b","version":1.5,"methods":["a.b.c"]}]}`, false},
		{"R22", `{"protocol":1,"services":[{"id":"a.b","version":"1","methods":["a.b.c"]}]}`, false},
		{"R22", `{"protocol":1,"services":[{"id":"a.b","methods":["a.b.c"]}]}`, false},
		{"R23", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":[]}]}`, false},
		{"R23", `{"protocol":1,"services":[{"id":"a.b","version":1}]}`, false},
		{"R24", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.c.d"]}]}`, false},
		{"R24", `{"protocol":1,"services":[{"id":"conf.echo","version":1,"methods":["conf.echoX"]}]}`, false},
		{"R25", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c"]},{"id":"a.b","version":2,"methods":["a.b.d"]}]}`, false},
		{"R25", `{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c","a.b.c"]}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" "+tt.in, func(t *testing.T) {
			c, err := proto.DecodeCatalog([]byte(tt.in))
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				if err := proto.ValidateCatalog(c); err != nil {
					t.Fatalf("decoded catalog does not validate: %v", err)
				}
				return
			}
			var ce *proto.CatalogError
			if !errors.As(err, &ce) || !errors.Is(err, proto.ErrInvalidCatalog) {
				t.Fatalf("err = %v, want *CatalogError", err)
			}
			if tt.rule != "A8" && ce.Rule != tt.rule {
				t.Fatalf("rule = %s (%v), want %s", ce.Rule, err, tt.rule)
			}
		})
	}
}

func TestCatalogLookups(t *testing.T) {
	c := &wire.Catalog{Protocol: 1, Services: []wire.Service{
		{ID: "a.b", Version: 1, Methods: []string{"a.b.x", "a.b.y"}},
		{ID: "c.d", Version: 3, Methods: []string{"c.d.z"}},
	}}
	if s, ok := c.Service("c.d"); !ok || s.Version != 3 {
		t.Fatal("wire.Service lookup")
	}
	if _, ok := c.Service("x.y"); ok {
		t.Fatal("found a missing service")
	}
	m := proto.Methods(c)
	if len(m) != 3 || !m["a.b.y"] || m["a.b"] {
		t.Fatalf("Methods = %v", m)
	}
	var nilCat *wire.Catalog
	if err := proto.ValidateCatalog(nilCat); !errors.Is(err, proto.ErrInvalidCatalog) {
		t.Fatal("nil catalog validated")
	}
}

func TestDecodeInitializeParams(t *testing.T) {
	tests := []struct {
		rule, in, want string
	}{
		{"R17", `{"protocol":1,"configuration":{}}`, `{}`},
		{"R17", `{"configuration":{"a":[1]},"protocol":1,"extra":0}`, `{"a":[1]}`},
		{"A33", `{"protocol":1}`, ""},
		{"A33", `{"protocol":1,"configuration":null}`, ""},
		{"R17", `{"protocol":2,"configuration":{}}`, ""},
		{"R17", `{"protocol":"1","configuration":{}}`, ""},
		{"R17", `[]`, ""},
	}
	for _, tt := range tests {
		got, err := proto.DecodeInitializeParams([]byte(tt.in))
		if tt.want == "" {
			if !errors.Is(err, proto.ErrInvalidEnvelope) {
				t.Errorf("%s %s: err = %v", tt.rule, tt.in, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s %s: got %s, %v", tt.rule, tt.in, got, err)
		}
	}
	if got := string(proto.AppendInitializeParams(nil, []byte(`{"k":"v"}`))); got != `{"protocol":1,"configuration":{"k":"v"}}` {
		t.Errorf("AppendInitializeParams = %s", got)
	}
}

func ExampleValidateCatalog() {
	c := &wire.Catalog{Protocol: 1, Services: []wire.Service{
		{ID: "example.device", Version: 1, Methods: []string{"example.device.read"}},
		{ID: "systemd.unit", Version: 1, Methods: []string{"systemd.unit.start"}},
	}}
	fmt.Println(proto.ValidateCatalog(c))
	// Output: wire: invalid catalog (R21): service identifier is or starts with system; service "systemd.unit"
}

func ExampleDecodeAdapterMessage() {
	m, err := proto.DecodeAdapterMessage([]byte(`{"type":"error","v":1,"id":7,"code":"unavailable","message":"Unknown method"}`))
	fmt.Println(m.Type, m.ID, m.Code, m.Message, err)
	_, err = proto.DecodeAdapterMessage([]byte(`{"type":"result","v":1,"id":7,"value":1,"extra":2}`))
	fmt.Println(err)
	// Output:
	// error 7 unavailable Unknown method <nil>
	// wire: invalid envelope: unknown field (field "extra") in result id 7
}

func ExampleAppendRequest() {
	frame, _ := proto.FinishFrame(proto.AppendRequest(proto.BeginFrame(nil), 2, "example.device.read", []byte(`{"probe":"inlet"}`)), 0)
	fmt.Printf("% x\n%s\n", frame[:4], frame[4:])
	// Output:
	// 00 00 00 59
	// {"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}
}

func TestWithLogLevel(t *testing.T) {
	env := []string{"TZ=UTC", "ADAPTERKIT_LOG_LEVEL=info", "HOME=/x"}
	got := proto.WithLogLevel(env, "debug")
	if want := []string{"TZ=UTC", "HOME=/x", "ADAPTERKIT_LOG_LEVEL=debug"}; !slices.Equal(got, want) {
		t.Fatalf("WithLogLevel = %v, want %v", got, want)
	}
	if env[1] != "ADAPTERKIT_LOG_LEVEL=info" {
		t.Fatal("WithLogLevel modified its argument")
	}
}

// The catalog vectors every SDK's validation runs (testdata/conformance/catalogs.json):
// the Go validation is the reference they are held to.
func TestConformanceCatalogs(t *testing.T) {
	var doc struct {
		Cases []struct {
			Name     string
			Services json.RawMessage
			Rule     string
		}
	}
	testkit.Vectors(t, "catalogs.json", &doc)
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			cat, err := proto.DecodeCatalog([]byte(`{"protocol":1,"services":` + string(c.Services) + `}`))
			if err == nil {
				err = proto.ValidateCatalog(cat)
			}
			var ce *proto.CatalogError
			switch {
			case c.Rule == "" && err != nil:
				t.Fatalf("valid catalog refused: %v", err)
			case c.Rule != "" && (!errors.As(err, &ce) || ce.Rule != c.Rule):
				t.Fatalf("got %v, want a %s refusal", err, c.Rule)
			}
		})
	}
}
