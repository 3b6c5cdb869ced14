// Command typed is a test adapter serving e2e.typed version 1 (e2e/typedapi): it
// decodes params made of time.Time, netip.Addr, a TextMarshaler enum, []byte,
// embedded structs, time.Duration and any into Go values and encodes them again, so
// that the e2e tests can require every value back exactly.
package main

import (
	"context"
	"fmt"

	"github.com/adapterkit/adapterkit/e2e/typedapi"
	"github.com/adapterkit/adapterkit/plugin"
)

func event(_ context.Context, e typedapi.Event) (typedapi.Event, error) { return e, nil }

func stamp(_ context.Context, e typedapi.Event) (typedapi.Stamp, error) {
	_, off := e.At.Zone()
	name, err := e.Level.MarshalText()
	if err != nil {
		return typedapi.Stamp{}, err
	}
	return typedapi.Stamp{Year: e.At.Year(), Offset: off, Is4: e.Peer.Is4(), Level: string(name),
		Seconds: e.Timeout.Seconds(), Len: len(e.Payload), Kind: fmt.Sprintf("%T", e.Extra), Echo: e.Timeout}, nil
}

func main() {
	s := plugin.ServiceOf(typedapi.Service)
	plugin.Implement(s, typedapi.EventMethod, event)
	plugin.Implement(s, typedapi.StampMethod, stamp)
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{s}})
}
