package plugin_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// Register typed handlers on a service: params are decoded from the request's params
// object by their json tags, results are encoded as JSON.
func ExampleHandle() {
	type greetParams struct {
		Name string `json:"name"`
	}
	type greeting struct {
		Text string `json:"text"`
	}
	svc := plugin.NewService("example.greeter", 1)
	plugin.Handle(svc, "example.greeter.greet", func(ctx context.Context, p greetParams) (greeting, error) {
		if p.Name == "" {
			return greeting{}, plugin.Errorf(wire.CodeInvalid, "name is required")
		}
		return greeting{Text: "Hello, " + p.Name}, nil
	})
	a := &plugin.Adapter{Services: []*plugin.Service{svc}}
	catalog, err := a.Catalog()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(catalog.Services[0].ID, catalog.Services[0].Methods)
	// Output: example.greeter [example.greeter.greet]
}

// Serve an adapter over a pair of pipes, playing the host: the handshake, a call, and
// the disconnect that ends Serve.
func ExampleAdapter_Serve() {
	svc := plugin.NewService("example.device", 1)
	plugin.Handle(svc, "example.device.read", func(ctx context.Context, p struct {
		Probe string `json:"probe"`
	}) (map[string]float64, error) {
		return map[string]float64{"celsius": 21.5}, nil
	})
	a := &plugin.Adapter{Services: []*plugin.Service{svc}}

	toAdapter, adapterIn := io.Pipe()
	fromAdapter, adapterOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- a.Serve(context.Background(), toAdapter, adapterOut) }()

	replies := proto.NewReader(fromAdapter, 0)
	for _, request := range []string{
		`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`,
		`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`,
		`{"type":"request","v":1,"id":3,"method":"example.device.write","params":{}}`,
	} {
		frame, err := proto.AppendFrame(nil, []byte(request), 0, false)
		if err == nil {
			_, err = adapterIn.Write(frame)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		reply, err := replies.ReadFrame()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(strings.TrimSpace(string(reply)))
	}
	adapterIn.Close() // the host disconnects
	fmt.Println("Serve returned:", <-served)
	fromAdapter.Close()
	// Output:
	// {"type":"result","v":1,"id":1,"value":{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}}
	// {"type":"result","v":1,"id":2,"value":{"celsius":21.5}}
	// {"type":"error","v":1,"id":3,"code":"unavailable","message":"Unknown method"}
	// Serve returned: <nil>
}

// Handlers choose the code of their error reply with Errorf; other errors are failed.
func ExampleErrorf() {
	err := fmt.Errorf("reading probe: %w", plugin.Errorf(wire.CodeUnavailable, "probe %q is offline", "inlet"))
	fmt.Println(err)
	// Output: reading probe: unavailable: probe "inlet" is offline
}
