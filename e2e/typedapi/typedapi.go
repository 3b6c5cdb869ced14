// Package typedapi is the contract of service e2e.typed version 1, served by the test
// adapter e2e/cmd/typed: params and results made of the types real services send
// (time.Time, netip.Addr, a TextMarshaler enum, []byte, embedded structs,
// time.Duration, any), so that the e2e tests can prove that every value comes back
// exactly through a real adapter process.
package typedapi

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/adapterkit/adapterkit/contract"
)

// Level is an enum sent by name.
type Level uint8

// The levels.
const (
	Low Level = iota
	Mid
	High
)

var levelNames = []string{"low", "mid", "high"}

// MarshalText writes the level's name; a level without one does not encode.
func (l Level) MarshalText() ([]byte, error) {
	if int(l) < len(levelNames) {
		return []byte(levelNames[l]), nil
	}
	return nil, fmt.Errorf("level %d has no name", uint8(l))
}

// UnmarshalText reads a level's name.
func (l *Level) UnmarshalText(b []byte) error {
	i := slices.Index(levelNames, string(b))
	if i < 0 {
		return fmt.Errorf("unknown level %q", b)
	}
	*l = Level(i)
	return nil
}

// Origin is embedded in Event: its fields are the object's own.
type Origin struct {
	Host netip.Addr `json:"host"`
	Seen time.Time  `json:"seen"`
}

// Event is the params and result of e2e.typed.event.
type Event struct {
	Origin
	At      time.Time             `json:"at"`
	When    *time.Time            `json:"when"`
	Peer    netip.Addr            `json:"peer"`
	Peers   []netip.Addr          `json:"peers"`
	Level   Level                 `json:"level"`
	ByLevel map[Level]int64       `json:"by_level"`
	ByAddr  map[netip.Addr]string `json:"by_addr"`
	Payload []byte                `json:"payload"`
	Timeout time.Duration         `json:"timeout"`
	Extra   any                   `json:"extra"`
	Seq     uint64                `json:"seq"`
}

// Stamp is the result of e2e.typed.stamp: what the adapter read, seen from its side.
type Stamp struct {
	Year    int           `json:"year"`
	Offset  int           `json:"offset"` // seconds east of UTC
	Is4     bool          `json:"is4"`
	Level   string        `json:"level"`
	Seconds float64       `json:"seconds"`
	Len     int           `json:"len"`
	Kind    string        `json:"kind"` // the Go type the adapter's any field received
	Echo    time.Duration `json:"echo"`
}

var (
	// Service is e2e.typed version 1.
	Service = contract.NewService("e2e.typed", 1)
	// EventMethod returns its params, decoded into an Event and encoded again.
	EventMethod = contract.NewMethod[Event, Event](Service, "event")
	// StampMethod describes the Event it received, from the adapter's side.
	StampMethod = contract.NewMethod[Event, Stamp](Service, "stamp")
)
