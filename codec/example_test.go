package codec_test

import (
	"fmt"
	"net/netip"
	"reflect"
	"time"

	"github.com/adapterkit/adapterkit/codec"
)

// A struct of time.Time, netip.Addr and time.Duration comes back as the same value:
// each type writes and reads itself.
func ExampleAppend() {
	type event struct {
		At   time.Time     `json:"at"`
		Peer netip.Addr    `json:"peer"`
		Wait time.Duration `json:"wait"`
		Any  any           `json:"any"`
	}
	sent := event{At: time.Date(2026, 12, 3, 8, 7, 15, 0, time.UTC), Peer: netip.MustParseAddr("fe80::1%eth0"),
		Wait: time.Second, Any: map[string]any{"n": 7}}
	text, err := codec.Append(nil, sent)
	fmt.Println(string(text), err)
	var got event
	err = codec.DecodeValue(text, &got, codec.RefuseUnknown)
	fmt.Println(got.At.Equal(sent.At), got.Peer == sent.Peer, got.Wait, got.Any, err)
	// Output:
	// {"at":"2026-12-03T08:07:15Z","peer":"fe80::1%eth0","wait":1000000000,"any":{"n":7}} <nil>
	// true true 1s map[n:7] <nil>
}

// What cannot make the trip is named with its field.
func ExampleCheckType() {
	type job struct {
		Name string        `json:"name"`
		Done chan struct{} `json:"done"`
	}
	fmt.Println(codec.CheckType(reflect.TypeFor[job]()))
	fmt.Println(codec.CheckType(reflect.TypeFor[struct {
		At time.Time `json:"at"`
	}]()))
	// Output:
	// field "done": chan struct {} cannot be sent
	// <nil>
}
