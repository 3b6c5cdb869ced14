// Package contract describes a service once, in Go, for both ends of a connection: an
// adapter registers a handler on each method (plugin.Implement) and a host calls it
// through a typed client (registry.Call), so neither side can drift from the other.
//
// In the module's layers it sits above codec and below runtime, plugin and registry; it
// imports only codec and the layers below it.
//
//	var (
//		Device = contract.NewService("example.device", 1)
//		Read   = contract.NewMethod[ReadParams, Reading](Device, "read")
//	)
//
// Put the description in a package both the adapter and its hosts import. A service's
// version is its contract: changing a method's params or result in a way old peers
// cannot read is a new version.
//
// [Schema] gives the same description to peers written in other languages, as JSON
// Schema of each method's params and result by the codec's rules (docs/contracts.md;
// "adapterctl contract schema PACKAGE" writes it for a contract's Go packages).
//
// The package sits above wire (whose name rules it checks) and codec, and
// below plugin and registry, which both import it.
package contract

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// ErrInvalid is the cause of every error Validate returns.
var ErrInvalid = errors.New("contract: invalid service description")

// Service is a service's id, version and methods. Create it with [NewService] and add
// methods with [NewMethod], at package initialization; it is read-only afterwards.
type Service struct {
	id      string
	version int
	methods []string
	types   []methodTypes // the params and result types of methods[i]
	problem error
}

// methodTypes are a method's params and result types, for [Schema].
type methodTypes struct{ params, result reflect.Type }

// NewService returns a service with the given id (dotted and namespaced, e.g.
// "example.device") and version (>= 1); [Service.Validate] checks both.
func NewService(id string, version int) *Service {
	s := &Service{id: id, version: version}
	if err := proto.ValidateName(id); err != nil {
		s.problem = errors.Join(s.problem, fmt.Errorf("%w: service id %q: %v", ErrInvalid, id, err))
	}
	if version < 1 {
		s.problem = errors.Join(s.problem, fmt.Errorf("%w: service %q: version %d is below 1", ErrInvalid, id, version))
	}
	return s
}

// ID returns the service id.
func (s *Service) ID() string { return s.id }

// Version returns the service version.
func (s *Service) Version() int { return s.version }

// Methods returns the full names of the service's methods, in order.
func (s *Service) Methods() []string { return slices.Clone(s.methods) }

// Validate returns nil, or what is wrong with the description (an invalid id, version
// or method name, a method declared twice); errors.Is(err, ErrInvalid) holds.
func (s *Service) Validate() error { return s.problem }

// Method is one method of a service: its full name, the params type P (usually a
// struct with json tags; it must encode to a JSON object) and the result type R.
type Method[P, R any] struct {
	svc  *Service
	name string
}

// NewMethod adds the method svc.ID()+"."+name to svc and returns its description.
//
// P and R must make the trip a call gives them (encoded by one end, decoded by the
// other, the same value again). A type that cannot, such as a field of type chan or
// func, an interface with methods, or a type with MarshalJSON but no UnmarshalJSON, is
// a programming error in the contract: NewMethod panics, as regexp.MustCompile does,
// with an error (errors.Is(err, ErrInvalid)) of one line naming the method, which of
// the two types, the field and the type (see codec.CheckType), e.g.
//
//	contract: invalid service description: method "example.device.read" params: field "done": chan struct {} cannot be sent
//
// so that it is refused where the contract is written — at the package initialization
// of a contract declared in a var block — not when it is called. An invalid name, or a
// name declared twice, is reported by [Service.Validate].
func NewMethod[P, R any](svc *Service, name string) *Method[P, R] {
	full := svc.id + "." + name
	if err := checkTypes[P, R](full); err != nil {
		panic(fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	if err := proto.ValidateName(full); err != nil {
		svc.problem = errors.Join(svc.problem, fmt.Errorf("%w: method %q: %v", ErrInvalid, full, err))
	} else if slices.Contains(svc.methods, full) {
		svc.problem = errors.Join(svc.problem, fmt.Errorf("%w: method %q declared twice", ErrInvalid, full))
	} else {
		svc.methods = append(svc.methods, full)
		svc.types = append(svc.types, methodTypes{reflect.TypeFor[P](), reflect.TypeFor[R]()})
	}
	return &Method[P, R]{svc: svc, name: full}
}

// checkTypes returns nil when the params type P and the result type R of the method
// named method can make the trip a call gives them (codec.CheckType), or else an error
// of one line naming the method, which of the two, the field and the type.
func checkTypes[P, R any](method string) error {
	if err := codec.CheckType(reflect.TypeFor[P]()); err != nil {
		return fmt.Errorf("method %q params: %w", method, err)
	}
	if err := codec.CheckType(reflect.TypeFor[R]()); err != nil {
		return fmt.Errorf("method %q result: %w", method, err)
	}
	return nil
}

// Name returns the method's full name, e.g. "example.device.read".
func (m *Method[P, R]) Name() string { return m.name }

// Service returns the service the method belongs to.
func (m *Method[P, R]) Service() *Service { return m.svc }
