package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/internal/jsoncodec"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Client is a typed client's connection to one service of an open adapter: made by
// [NewClient] after the adapter's catalog was checked against the
// service's contract, used by [Call].
type Client struct {
	h     Caller
	hd    *Handle // h, when it is one: typed calls hand it their request (Handle.Do)
	svc   *contract.Service
	sizes map[string]*bufpool.Hint // how large each method's params were lately
}

// Caller is what a typed [Client] calls through: one adapter's raw call, JSON params
// in and JSON result out, failing with the errors [Handle.Call] returns, and the
// catalog the adapter advertised. A *Handle is one; an adapter reached through a
// daemon (controlplane.Client.Adapter) is another, so one contract serves a host that
// embeds its adapters and one that calls them through `adapterctl serve`.
type Caller interface {
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	Catalog() *wire.Catalog
}

// NewClient returns a client of the service svc on the adapter h, after checking the
// adapter's catalog against svc: the service is present, its version is svc's, and it
// advertises every method of svc. The error is a *BindError. A *Handle then keeps svc
// as a contract in use: a new version that lacks it is refused (see [Upgrade]).
func NewClient(h Caller, svc *contract.Service) (*Client, error) {
	if svc == nil {
		return nil, &BindError{Err: contract.ErrInvalid, Detail: "no service"}
	}
	if err := svc.Validate(); err != nil {
		return nil, &BindError{Service: svc.ID(), Err: err}
	}
	if h == nil {
		return nil, &BindError{Service: svc.ID(), Err: ErrNoAdapter}
	}
	if err := CheckCatalog(h.Catalog(), svc); err != nil {
		return nil, err
	}
	hd, _ := h.(*Handle)
	if hd != nil {
		hd.bind(svc)
	}
	sizes := make(map[string]*bufpool.Hint)
	for _, m := range svc.Methods() {
		sizes[m] = new(bufpool.Hint)
	}
	return &Client{h: h, hd: hd, svc: svc, sizes: sizes}, nil
}

// ErrNotInService is the cause of the error of a call, through a Client, of a method
// that is not one of its service's: nothing is sent.
var ErrNotInService = errors.New("registry: method is not one of the client's service")

// Call calls the contract method m through c: p is encoded (as a JSON object) and the
// result decoded into an R with package codec, the rules the adapter's SDK applies:
// numbers exact, json tag names matched exactly. A result member R does not know is ignored, so
// an adapter may add result fields within a service version; a member of the wrong
// kind, or a number R's field cannot hold, is a *DecodeError whose text is one line
// naming the field. A method of another service than c's fails before anything is
// sent. Other errors are the connection's (*runtime.CallError).
func Call[P, R any](ctx context.Context, c *Client, m *contract.Method[P, R], p P) (R, error) {
	var r R
	if m.Service() != c.svc {
		return r, notInService(c.svc, m.Service(), m.Name())
	}
	pv := any(p)
	// Raw params (json.RawMessage) are the caller's bytes, sent as they are: they must
	// never go to the pool, where a later call would encode its params into them.
	owned := !isRaw(pv)
	size := c.sizes[m.Name()]
	buf := bufpool.Get()
	dst := bufpool.Reserve(*buf, size.Size())
	params, err := encodeParams(m.Name(), dst, pv)
	if err != nil {
		bufpool.Put(buf)
		return r, err
	}
	req := handover.Request{Method: m.Name(), Params: params}
	if owned {
		size.Record(len(params))
		if len(params) > bufpool.SmallCap && c.hd != nil {
			// Large params written by the codec are lent to the connection with their
			// buffer: it writes them from there instead of copying them into its write
			// queue, and pools the buffer once they are written. Those of a type whose
			// encoding is always valid JSON are not checked again either: the check costs
			// a pass over every byte, the lease an allocation.
			req.Valid = pv != nil && jsoncodec.WritesValid(reflect.TypeOf(pv))
			*buf = params
			req.Lease = handover.Lend(buf)
		}
	}
	var raw json.RawMessage
	if c.hd != nil {
		raw, err = c.hd.Do(ctx, &req)
	} else {
		raw, err = c.h.Call(ctx, m.Name(), params)
	}
	// The call has returned: the caller lets go of params. A leased buffer goes back to
	// the pool once no writer holds it either (a call given up mid-write does not wait
	// for the write).
	switch {
	case req.Lease != nil:
		req.Lease.Release()
	case owned:
		*buf = params
		bufpool.Put(buf)
	default:
		*buf = dst
		bufpool.Put(buf)
	}
	if err != nil {
		return r, err
	}
	// raw is the reply frame's, the caller's alone: long strings share it. The
	// connection validated it whole on arrival (the envelope decoder checks every
	// value), so its strings are not checked a second time; where they lie it noted
	// in req.Long.
	var known *jsoncodec.Known
	if req.Long != nil {
		known = &jsoncodec.Known{Long: req.Long}
	}
	if err := jsoncodec.DecodeOwned(raw, known, &r, codec.IgnoreUnknown); err != nil {
		return r, &DecodeError{Method: m.Name(), Raw: raw, Err: err}
	}
	return r, nil
}

// notInService is the error of a call, through a client of svc, of the method named
// method of the contract msvc.
func notInService(svc, msvc *contract.Service, method string) error {
	msg := fmt.Sprintf("not a method of the client's service %s version %d", svc.ID(), svc.Version())
	if msvc.ID() == svc.ID() && msvc.Version() == svc.Version() {
		msg = fmt.Sprintf("declared on another contract.Service value than the client's (%s version %d): two distinct contract.Service values declared with the same id and version are different services; declare the contract once and use that value", svc.ID(), svc.Version())
	}
	return &runtime.CallError{Method: method, Code: wire.CodeInvalid, NeverStarted: true, Cause: ErrNotInService, Message: msg}
}

// encodeParams appends a call's params (a typed call's, or a stream's) to dst; a value
// that does not encode to a JSON object fails before anything is sent, as a
// never-started *runtime.CallError with code invalid that wraps an *encodeError.
func encodeParams(method string, dst []byte, p any) (json.RawMessage, error) {
	b, err := appendObject(dst, p)
	if err != nil {
		return nil, &runtime.CallError{Method: method, Code: wire.CodeInvalid, Message: "the params do not encode", NeverStarted: true, Cause: err}
	}
	return b, nil
}

// Errors of NewClient; a *BindError wraps one of them, or contract.ErrInvalid for a
// service description that is not valid.
var (
	ErrServiceMissing  = errors.New("adapter does not provide the service")
	ErrVersionMismatch = errors.New("adapter provides another version of the service")
	ErrMethodMissing   = errors.New("adapter's service lacks a method")
	ErrNoAdapter       = errors.New("no adapter is running")
)

// BindError says why a typed client could not be bound to an adapter.
type BindError struct {
	Service string
	Detail  string
	Err     error
}

func (e *BindError) Error() string {
	msg := fmt.Sprintf("registry: bind to service %q: %v", e.Service, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the cause: one of the errors of NewClient, or an error matching
// contract.ErrInvalid.
func (e *BindError) Unwrap() error { return e.Err }

// CheckCatalog checks that a catalog satisfies svc; it returns nil or a *BindError.
func CheckCatalog(cat *wire.Catalog, svc *contract.Service) error {
	if cat == nil {
		return &BindError{Service: svc.ID(), Err: ErrNoAdapter}
	}
	s, ok := cat.Service(svc.ID())
	if !ok {
		return &BindError{Service: svc.ID(), Err: ErrServiceMissing}
	}
	if s.Version != svc.Version() {
		return &BindError{Service: svc.ID(), Err: ErrVersionMismatch, Detail: fmt.Sprintf("adapter has version %d, client speaks %d", s.Version, svc.Version())}
	}
	for _, m := range svc.Methods() {
		if !contains(s.Methods, m) {
			return &BindError{Service: svc.ID(), Err: ErrMethodMissing, Detail: m}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// DecodeError is a result that does not decode into the caller's value. The call
// itself succeeded; Raw is the result as received. Err is a *codec.Error (or, for a
// result that is not JSON at all, the cause), and errors.Is(err, codec.ErrDecode) holds.
type DecodeError struct {
	Method string
	Raw    json.RawMessage
	Err    error
}

// Error is one line, e.g.
// `registry: example.stock.reserve: result: field "qty": 9223372036854775808 does not fit int64`.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("registry: %s: result: %v", e.Method, e.Err)
}

// Unwrap returns the cause, so errors.Is(err, codec.ErrDecode) holds.
func (e *DecodeError) Unwrap() []error { return []error{codec.ErrDecode, e.Err} }
