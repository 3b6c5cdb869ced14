package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/go-viper/mapstructure/v2"

	"github.com/adapterkit/adapterkit/runtime/wire"
)

// Service describes what a typed client needs of an adapter: a service id, the exact
// service version it speaks (a service's version is its contract: another version is
// another contract), and the methods it calls.
type Service struct {
	ID      string
	Version int
	Methods []string
}

// Client is a typed client's connection to one service of an open adapter.
type Client struct {
	h   *Handle
	svc Service
}

// Service returns the service the client is bound to.
func (c *Client) Service() Service { return c.svc }

// Handle returns the adapter the client is bound to.
func (c *Client) Handle() *Handle { return c.h }

// Invoke calls one of the service's methods; see [Handle.Invoke].
func (c *Client) Invoke(ctx context.Context, method string, params, result any) error {
	return c.h.Invoke(ctx, method, params, result)
}

type clientKey struct{ t reflect.Type }

type clientReg struct {
	svc  Service
	ctor func(*Client) any
}

// Errors of Register and Bind; a *BindError wraps one of them.
var (
	ErrNotRegistered   = errors.New("no client type registered")
	ErrServiceMissing  = errors.New("adapter does not provide the service")
	ErrVersionMismatch = errors.New("adapter provides another version of the service")
	ErrMethodMissing   = errors.New("adapter's service lacks a method")
	ErrInvalidService  = errors.New("invalid service description")
	ErrNoAdapter       = errors.New("no adapter is running")
)

// BindError says why a typed client could not be bound to an adapter.
type BindError struct {
	Type    string // the client type
	Service string
	Detail  string
	Err     error
}

func (e *BindError) Error() string {
	msg := fmt.Sprintf("registry: bind %s to service %q: %v", e.Type, e.Service, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel cause.
func (e *BindError) Unwrap() error { return e.Err }

// Register records the client type T for a service: Bind[T] on an open adapter
// checks the adapter's catalog against svc and builds the client with newClient.
// Registering the same type again replaces the earlier registration.
func Register[T any](r *Registry, svc Service, newClient func(*Client) T) error {
	t := reflect.TypeFor[T]()
	if err := wire.ValidateName(svc.ID); err != nil || svc.Version < 1 || newClient == nil {
		return &BindError{Type: t.String(), Service: svc.ID, Err: ErrInvalidService, Detail: "id must be a valid service id, version >= 1, constructor non-nil"}
	}
	for _, m := range svc.Methods {
		if err := wire.ValidateName(m); err != nil || len(m) <= len(svc.ID) || m[:len(svc.ID)+1] != svc.ID+"." {
			return &BindError{Type: t.String(), Service: svc.ID, Err: ErrInvalidService, Detail: fmt.Sprintf("method %q is not a method of the service", m)}
		}
	}
	svc.Methods = slices.Clone(svc.Methods)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients[clientKey{t}] = clientReg{svc: svc, ctor: func(c *Client) any { return newClient(c) }}
	return nil
}

// Bind returns a client of type T (registered with Register) bound to the adapter of
// h, after checking the adapter's catalog: the service is present, its version is the
// registered one and it advertises every registered method.
func Bind[T any](h *Handle) (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	h.reg.mu.Lock()
	reg, ok := h.reg.clients[clientKey{t}]
	h.reg.mu.Unlock()
	if !ok {
		return zero, &BindError{Type: t.String(), Err: ErrNotRegistered}
	}
	if err := CheckCatalog(h.Catalog(), reg.svc); err != nil {
		be := err.(*BindError)
		be.Type = t.String()
		return zero, be
	}
	return reg.ctor(&Client{h: h, svc: reg.svc}).(T), nil
}

// CheckCatalog checks that a catalog satisfies svc; it returns nil or a *BindError.
func CheckCatalog(cat *wire.Catalog, svc Service) error {
	if cat == nil {
		return &BindError{Service: svc.ID, Err: ErrNoAdapter}
	}
	s, ok := cat.Service(svc.ID)
	if !ok {
		return &BindError{Service: svc.ID, Err: ErrServiceMissing}
	}
	if s.Version != svc.Version {
		return &BindError{Service: svc.ID, Err: ErrVersionMismatch, Detail: fmt.Sprintf("adapter has version %d, client speaks %d", s.Version, svc.Version)}
	}
	for _, m := range svc.Methods {
		if !slices.Contains(s.Methods, m) {
			return &BindError{Service: svc.ID, Err: ErrMethodMissing, Detail: m}
		}
	}
	return nil
}

// ErrDecode is the cause of every *DecodeError.
var ErrDecode = errors.New("registry: result does not decode")

// DecodeError is a result that does not decode into the caller's value. The call
// itself succeeded; Raw is the result as received.
type DecodeError struct {
	Method string
	Raw    json.RawMessage
	Err    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("registry: %s: result does not decode: %v", e.Method, e.Err)
}

// Unwrap returns ErrDecode and the cause.
func (e *DecodeError) Unwrap() []error { return []error{ErrDecode, e.Err} }

// decodeResult decodes a raw result into out with mapstructure (json tags).
func decodeResult(method string, raw json.RawMessage, out any) error {
	switch out := out.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*out = append((*out)[:0], raw...)
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return &DecodeError{Method: method, Raw: raw, Err: err}
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:  out,
		TagName: "json",
		// Numbers arrive as float64: convert to the field's integer type only when exact.
		DecodeHook: mapstructure.ComposeDecodeHookFunc(exactIntHook),
	})
	if err != nil {
		return &DecodeError{Method: method, Raw: raw, Err: err}
	}
	if err := dec.Decode(v); err != nil {
		return &DecodeError{Method: method, Raw: raw, Err: err}
	}
	return nil
}

// exactIntHook refuses to truncate a fractional number into an integer field.
func exactIntHook(from, to reflect.Type, data any) (any, error) {
	f, ok := data.(float64)
	if !ok {
		return data, nil
	}
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if f != float64(int64(f)) {
			return nil, fmt.Errorf("%v is not an integer", f)
		}
	}
	return data, nil
}
