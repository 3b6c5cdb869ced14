package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// thermometer is a tiny adapter: it serves example.device.read until its input ends.
func thermometer(stdin io.Reader, stdout io.WriteCloser) {
	defer stdout.Close()
	in := proto.NewReader(stdin, 0)
	for {
		p, err := in.ReadFrame()
		if err != nil {
			return // end of input: the host disconnected
		}
		m, err := proto.DecodeHostMessage(p)
		if err != nil || m.Type == proto.TypeCancel {
			continue
		}
		var out []byte
		switch m.Method {
		case proto.MethodInitialize:
			out, _ = proto.AppendCatalog(nil, &wire.Catalog{Protocol: 1, Services: []wire.Service{
				{ID: "example.device", Version: 1, Methods: []string{"example.device.read"}},
			}})
			out = proto.AppendResult(nil, m.ID, out)
		case "example.device.read":
			out = proto.AppendResult(nil, m.ID, []byte(`{"celsius":21.5}`))
		default:
			out = proto.AppendError(nil, m.ID, wire.CodeUnavailable, proto.MessageUnknownMethod)
		}
		frame, err := proto.AppendFrame(nil, out, 0, false)
		if err == nil {
			_, err = stdout.Write(frame)
		}
		if err != nil {
			return
		}
	}
}

func ExampleConn() {
	hostR, adapterW := io.Pipe() // the adapter's stdout
	adapterR, hostW := io.Pipe() // the adapter's stdin
	adapterDone := make(chan struct{})
	go func() {
		defer close(adapterDone)
		thermometer(adapterR, adapterW)
	}()

	conn := runtime.NewConn(hostR, hostW, &runtime.Options{Name: "thermometer"})
	ctx := context.Background()
	cat, err := conn.Initialize(ctx, json.RawMessage(`{"unit":"celsius"}`))
	if err != nil {
		fmt.Println("initialize:", err)
		return
	}
	fmt.Println(cat.Services[0].ID, cat.Services[0].Methods)

	value, err := conn.Call(ctx, "example.device.read", json.RawMessage(`{"probe":"inlet"}`))
	fmt.Println(string(value), err)

	// A method the catalog does not advertise never reaches the adapter.
	_, err = conn.Call(ctx, "example.device.erase", nil)
	fmt.Println(runtime.CodeOf(err) == wire.CodeUnavailable, runtime.IsNeverStarted(err))

	fmt.Println(conn.Close(), conn.Err())
	<-adapterDone // the adapter saw the end of its input and returned
	// Output:
	// example.device [example.device.read]
	// {"celsius":21.5} <nil>
	// true true
	// <nil> closed by the host
}
