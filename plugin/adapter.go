package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/jsoncodec"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// Adapter describes an adapter: the services it provides and how it is configured.
// Fill it in before calling [Adapter.Serve] or [Main] and do not change it afterwards.
// Serve never writes to it, except into the struct Configuration points to.
type Adapter struct {
	// Services are the services advertised in the catalog, in order.
	Services []*Service

	// Configuration, if not nil, is a pointer (usually to a struct) that initialize's
	// configuration object is decoded into by package codec: members matched to json tag
	// names exactly. Fields absent from the configuration keep the values they had, so
	// defaults can be set beforehand. An unknown key or a value of the wrong type
	// answers initialize with invalid. When Configuration is nil the configuration
	// object is accepted and ignored.
	Configuration any

	// OnInitialize, if not nil, runs after Configuration has been decoded and before
	// initialize is answered. An error answers initialize with the error's code (see
	// [Errorf]); the host then ends the connection. Its context is cancelled when
	// the host cancels initialize or disconnects.
	OnInitialize func(ctx context.Context) error

	// Logger receives the engine's diagnostics (handler panics, a host's protocol
	// violation) as Warn and Error records with key-value pairs: a *slog.Logger (what
	// [Logger] returns) and a go-hclog Logger both fit. Nil discards them in Serve; Main
	// uses [Logger] instead. It is never given stdout.
	Logger interface {
		Warn(msg string, args ...any)
		Error(msg string, args ...any)
	}

	// Limits lowers the protocol's bounds (frame size, requests in flight); nil means
	// the protocol's own values.
	Limits *limits.Limits

	// reportsCause is set by Main, which reports the cause of a connection's end
	// itself: Serve then does not log a host's violation a second time.
	reportsCause bool
}

// handlerFunc runs one request: it decodes params, runs the user's handler and
// appends the encoded result value to dst. The value is out with parts spliced in
// (framewriter.Splice, At an index of out): the large strings of the result, or a large
// json.RawMessage result (validated), which are written to the host after the bytes
// before them instead of being copied into the frame.
type handlerFunc func(ctx context.Context, params []byte, long []proto.LongString, dst []byte) (out []byte, parts []framewriter.Splice, err error)

// Service is one service of the catalog: an id, a version and its methods. Create it
// with [NewService] and add methods with [Handle].
type Service struct {
	id       string
	version  int
	methods  []string
	handlers map[string]handlerFunc
	problem  error // a registration mistake, reported by Serve
	contract *contract.Service
}

// ServiceOf returns a service implementing the contract c: its id and version are c's,
// and [Implement] registers the handler of each of c's methods. Serve refuses the
// adapter while a method of c has no handler, or c itself is invalid.
func ServiceOf(c *contract.Service) *Service {
	s := NewService(c.ID(), c.Version())
	s.contract = c
	if err := c.Validate(); err != nil {
		s.problem = errors.Join(s.problem, err)
	}
	return s
}

// Implement registers h as the handler of the contract method m on s, a service made
// with [ServiceOf] of m's service. Params and result are decoded and encoded as with
// [Handle].
func Implement[P, R any](s *Service, m *contract.Method[P, R], h func(ctx context.Context, p P) (R, error)) {
	if s.contract == nil || m.Service() != s.contract {
		s.problem = errors.Join(s.problem, foreignMethod(s, m.Name(), m.Service()))
		return
	}
	handle(s, m.Name(), h, false) // the contract checked P and R (and ServiceOf reported it)
}

// foreignMethod is the mistake of implementing on s the method named method of the
// contract svc, which is not s's contract.
func foreignMethod(s *Service, method string, svc *contract.Service) error {
	if s.contract != nil && svc.ID() == s.id && svc.Version() == s.version {
		return fmt.Errorf("method %q is declared on another contract.Service value than the one service %q version %d was made from: two distinct contract.Service values declared with the same id and version are different services; declare the contract once and use that value", method, s.id, s.version)
	}
	return fmt.Errorf("method %q is not a method of the contract of service %q", method, s.id)
}

// NewService returns a service with the given id (dotted and namespaced, e.g.
// "example.device") and version (>= 1). Both are checked when the adapter is served.
func NewService(id string, version int) *Service {
	return &Service{id: id, version: version, handlers: make(map[string]handlerFunc)}
}

// Handle registers h as the handler of method on s. method is the full name, prefixed
// with the service id (e.g. "example.device.read"). Registering a method twice is a
// duplicate in the catalog and makes Serve fail.
//
// The request's params object is decoded into P by package codec, whose rules the host
// shares: members matched to json tag names exactly, embedded structs inlined,
// unknown keys refused with invalid, numbers exact (an integer field refuses 1.5 and a
// number it cannot hold). The invalid reply's message is one line naming the field,
// e.g. `params: field "warehouse" is not known (known: sku, qty)`. P may be
// json.RawMessage, which receives the params unchanged without any decoding; it
// aliases the request's frame: treat it as read-only (it may be kept after the handler
// returns). The result R is encoded by package codec, as encoding/json encodes it (its
// MarshalJSON or MarshalText honoured) but with HTML characters not escaped; types
// that encode themselves are decoded by their UnmarshalJSON or UnmarshalText on the
// other side. A json.RawMessage result is checked to be one JSON value and sent as is.
// A json.RawMessage result is copied when the handler returns, so the handler may reuse
// its memory at once (a pooled buffer's bytes, say); [HandleLent] lends it instead. The
// result's strings over 32 KiB are not copied into the reply frame: they are written to
// the host from their own memory after the handler returned, which a Go string allows
// (one made with unsafe.String over a buffer the handler reuses would not).
//
// P and R must make that trip and come back the same value (codec.CheckType): a type
// that cannot (a chan or func field, an interface with methods...) makes Serve refuse
// the adapter, with one line naming the method, the field and the type.
//
// The handler's context is cancelled when the host cancels the request or disconnects.
// Call Handle before serving; it is not safe to call concurrently with Serve.
func Handle[P, R any](s *Service, method string, h func(ctx context.Context, p P) (R, error)) {
	for _, c := range []struct {
		what string
		t    reflect.Type
	}{{"params", reflect.TypeFor[P]()}, {"result", reflect.TypeFor[R]()}} {
		if err := codec.CheckType(c.t); err != nil {
			s.problem = errors.Join(s.problem, fmt.Errorf("method %q %s: %w", method, c.what, err))
		}
	}
	handle(s, method, h, false)
}

// HandleLent is [Handle] for a handler whose json.RawMessage result is lent, not copied:
// a result over 32 KiB is written to the host from the handler's own memory after the
// handler returned, when the reply's turn to be written comes. Hazard: the bytes must not
// change until the reply frame is written, which the handler cannot observe; a buffer
// reused or returned to a pool after the handler returned corrupts the reply. Lend only
// memory that is never written again (a slice made for this one result), to save the
// copy of a large result. A result that is the request's params unchanged is never
// copied, with Handle as with HandleLent: that memory is the request's own.
func HandleLent[P any](s *Service, method string, h func(ctx context.Context, p P) (json.RawMessage, error)) {
	if err := codec.CheckType(reflect.TypeFor[P]()); err != nil {
		s.problem = errors.Join(s.problem, fmt.Errorf("method %q params: %w", method, err))
	}
	handle(s, method, h, true)
}

// handle is Handle for types already checked (a contract's, by contract.NewMethod). lend
// says whether a large json.RawMessage result is written from the handler's memory
// ([HandleLent]) rather than copied.
func handle[P, R any](s *Service, method string, h func(ctx context.Context, p P) (R, error), lend bool) {
	if h == nil {
		s.problem = errors.Join(s.problem, fmt.Errorf("method %q has a nil handler", method))
		return
	}
	if s.handlers == nil {
		s.handlers = make(map[string]handlerFunc)
	}
	s.methods = append(s.methods, method)
	dec := paramsDecoder[P]()
	var size bufpool.Hint // how large this method's results were lately
	s.handlers[method] = func(ctx context.Context, params []byte, long []proto.LongString, dst []byte) ([]byte, []framewriter.Splice, error) {
		var p P
		var known *jsoncodec.Known
		if len(long) > 0 {
			known = &jsoncodec.Known{Long: long}
		}
		if err := dec(params, known, &p); err != nil {
			return dst, nil, err
		}
		r, err := h(ctx, p)
		if err != nil {
			return dst, nil, err
		}
		if raw, ok := any(&r).(*json.RawMessage); ok {
			// The params returned unchanged: the request's frame, this request's alone,
			// validated on arrival.
			own := aliases(*raw, params)
			if !own {
				if err := validRaw(*raw); err != nil {
					return dst, nil, err
				}
			}
			if len(*raw) > smallFrame {
				// Written after the head: the handler's memory only if it is the
				// request's own or lent (HandleLent), otherwise a copy taken now,
				// before the handler can reuse that memory.
				data := []byte(*raw)
				if !own && !lend {
					data = bytes.Clone(data)
				}
				return dst, []framewriter.Splice{{At: len(dst), Data: data}}, nil
			}
			if len(*raw) == 0 {
				return append(dst, "null"...), nil, nil
			}
			return append(dst, *raw...), nil, nil
		}
		dst = bufpool.Reserve(dst, size.Size())
		var verbatim [][]byte
		if known != nil {
			verbatim = known.Verbatim
		}
		out, parts, err := appendResult(dst, r, verbatim)
		size.Record(len(out) - len(dst))
		return out, parts, err
	}
}

// Error is an error with a protocol error code. Return one from a handler (or
// OnInitialize) to choose the code of the error reply; errors.As finds it through
// wrapping.
type Error struct {
	Code    wire.Code // one of the eight codes (wire.CodeInvalid ...); anything else is sent as failed
	Message string    // capped at 4096 bytes on the wire
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code wire.Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errors about the adapter itself, returned by Serve before it reads anything.
var (
	// ErrInvalidAdapter is matched (errors.Is) by the error of an adapter that cannot be
	// served: an invalid catalog or a registration mistake, which the error names.
	ErrInvalidAdapter = errors.New("plugin: invalid adapter definition")
)

// adapterError says why an Adapter cannot be served: an invalid catalog (Err is then a
// *proto.CatalogError) or a registration mistake. errors.Is(err, ErrInvalidAdapter)
// holds, and so does errors.Is(err, proto.ErrInvalidCatalog) for a catalog problem.
type adapterError struct {
	Reason string
	Err    error
}

func (e *adapterError) Error() string {
	if e.Err != nil {
		return "plugin: invalid adapter: " + e.Reason + ": " + e.Err.Error()
	}
	return "plugin: invalid adapter: " + e.Reason
}

// Unwrap returns ErrInvalidAdapter and the underlying error.
func (e *adapterError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidAdapter, e.Err}
	}
	return []error{ErrInvalidAdapter}
}

// Catalog builds the catalog the adapter advertises and validates it. It is
// what Serve answers initialize with. The error is an *adapterError.
func (a *Adapter) Catalog() (*wire.Catalog, error) {
	c := &wire.Catalog{Protocol: limits.ProtocolVersion, Services: make([]wire.Service, 0, len(a.Services))}
	for i, s := range a.Services {
		if s == nil {
			return nil, &adapterError{Reason: fmt.Sprintf("service %d is nil", i)}
		}
		if s.problem != nil {
			return nil, &adapterError{Reason: "service " + s.id, Err: s.problem}
		}
		if s.contract != nil {
			for _, m := range s.contract.Methods() {
				if _, ok := s.handlers[m]; !ok {
					return nil, &adapterError{Reason: "service " + s.id, Err: fmt.Errorf("method %q of the contract has no handler", m)}
				}
			}
		}
		c.Services = append(c.Services, wire.Service{ID: s.id, Version: s.version, Methods: append([]string(nil), s.methods...)})
	}
	if err := proto.ValidateCatalog(c); err != nil {
		return nil, &adapterError{Reason: "catalog", Err: err}
	}
	if a.Configuration != nil {
		v := reflect.ValueOf(a.Configuration)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return nil, &adapterError{Reason: fmt.Sprintf("Configuration must be a non-nil pointer, not %T", a.Configuration)}
		}
	}
	return c, nil
}

// Causes of a handler's context cancellation, seen through context.Cause. Both wrap
// context.Canceled, so a handler returning them is answered aborted.
var (
	// ErrCanceledByHost: the host sent cancel for the request.
	ErrCanceledByHost = fmt.Errorf("plugin: request canceled by the host: %w", context.Canceled)
	// ErrDisconnected: the host closed stdin, or the connection ended.
	ErrDisconnected = fmt.Errorf("plugin: host disconnected: %w", context.Canceled)
)

// replyError maps a handler's error to a code and message (R28, R30 are applied when
// the envelope is built).
func replyError(err error) (wire.Code, string) {
	var pe *Error
	switch {
	case errors.As(err, &pe):
		return proto.NormalizeCode(string(pe.Code)), pe.Message
	case errors.Is(err, context.Canceled):
		return wire.CodeAborted, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return wire.CodeDeadline, err.Error()
	}
	return wire.CodeFailed, err.Error()
}

// aliases reports whether a and b are the very same bytes (same start and length).
func aliases(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}
