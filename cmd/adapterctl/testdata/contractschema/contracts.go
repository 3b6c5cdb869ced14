// Package contractschema declares services the ways adapterctl contract schema finds
// them: with contract.NewService, with the type *contract.Service, in a var block, and
// one unexported, which it leaves out.
package contractschema

import (
	"time"

	c "github.com/adapterkit/adapterkit/contract"
)

// Event is sent by example.a.
type Event struct {
	At  time.Time `json:"at"`
	Seq uint64    `json:"seq"`
}

// A is declared with contract.NewService.
var A = c.NewService("example.a", 1)

var (
	// B is declared with its type; it is A's method's result that is recursive.
	B      *c.Service = newB()
	hidden            = c.NewService("example.hidden", 1)
	// Again is A once more: a service is described once.
	Again *c.Service = A
	_                = c.NewMethod[Event, []Event](A, "send")
	_                = c.NewMethod[struct{}, int8](hidden, "m")
)

func newB() *c.Service {
	s := c.NewService("example.b", 2)
	c.NewMethod[Event, map[string]any](s, "get")
	return s
}
