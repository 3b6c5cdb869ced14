package proto

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// Type is an envelope type (R9).
type Type uint8

// Envelope types. TypeNone is the zero value: no type was recognised.
const (
	TypeNone Type = iota
	TypeRequest
	TypeCancel
	TypeResult
	TypeError
)

var typeNames = [...]string{"", "request", "cancel", "result", "error"}

// String returns the type's name on the wire.
func (t Type) String() string {
	if int(t) < len(typeNames) && t != TypeNone {
		return typeNames[t]
	}
	return "none"
}

// Message is one decoded envelope. Which fields are meaningful depends on Type:
// request has ID, Method and Params; cancel has ID; result has ID and Value; error has
// ID, Code, RawCode and Message. Params and Value are sub-slices of the decoded payload.
type Message struct {
	Type    Type
	ID      uint64
	Method  string
	Params  []byte    // a JSON object
	Value   []byte    // any JSON value
	Code    wire.Code // normalized: anything unknown is wire.CodeFailed (R29)
	RawCode string    // the code as sent, kept for diagnostics
	Message string    // capped at limits.MaxErrorMessage bytes (R31)
	// Strings are the long strings of Params or Value, at offsets into it (see
	// LongString), in the order of the text.
	Strings []LongString
}

// ErrInvalidEnvelope is the cause of every *EnvelopeError (R54).
var ErrInvalidEnvelope = errors.New("invalid envelope")

// EnvelopeError describes a payload that is not a valid envelope for the receiver.
// When the type and identity could be read they are set, so an adapter can answer a
// request with extra fields with an invalid error (A4).
type EnvelopeError struct {
	Reason string
	Type   Type   // TypeNone when not recognised
	ID     uint64 // 0 when not known
	Field  string // the offending field, when there is one
	Err    error  // an underlying syntax error, if any
}

func (e *EnvelopeError) Error() string {
	var b bytes.Buffer
	b.WriteString("wire: invalid envelope: ")
	b.WriteString(e.Reason)
	if e.Field != "" {
		fmt.Fprintf(&b, " (field %q)", e.Field)
	}
	if e.Type != TypeNone {
		fmt.Fprintf(&b, " in %s", e.Type)
	}
	if e.ID != 0 {
		fmt.Fprintf(&b, " id %d", e.ID)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns ErrInvalidEnvelope and any underlying error.
func (e *EnvelopeError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidEnvelope, e.Err}
	}
	return []error{ErrInvalidEnvelope}
}

// field bits of the envelope members.
const (
	fType uint8 = 1 << iota
	fV
	fID
	fMethod
	fParams
	fValue
	fCode
	fMessage
)

var fieldNames = map[string]uint8{
	"type": fType, "v": fV, "id": fID, "method": fMethod,
	"params": fParams, "value": fValue, "code": fCode, "message": fMessage,
}

// required fields of each type (R11).
var required = [...]uint8{
	TypeRequest: fType | fV | fID | fMethod | fParams,
	TypeCancel:  fType | fV | fID,
	TypeResult:  fType | fV | fID | fValue,
	TypeError:   fType | fV | fID | fCode | fMessage,
}

type span struct {
	start, end int
	kind       byte
	escaped    bool // strings only
}

// raw is the first pass over an envelope: where each member is.
type raw struct {
	have    uint8
	spans   [8]span
	unknown string
	hasUnk  bool // unknown is set (an unknown member may be named "")
	dup     string
	long    []LongString // the long strings of the whole payload
}

func (r *raw) at(bit uint8) *span {
	for i := 0; i < 8; i++ {
		if bit == 1<<i {
			return &r.spans[i]
		}
	}
	panic("wire: bad field bit")
}

// scanEnvelope validates p as one JSON object and records its members. It walks the
// top level itself (rather than through walkObject's callback) so that nothing of it
// escapes to the heap: decoding a reply allocates only its strings.
func scanEnvelope(p []byte, r *raw) error {
	s := scanner{p: p}
	fail := func(err error) error {
		return &EnvelopeError{Reason: "not a JSON object of valid UTF-8", Err: err}
	}
	s.ws()
	if s.i >= len(p) || p[s.i] != '{' {
		return fail(s.fail("payload is not a JSON object"))
	}
	s.i++
	s.depth = 1
	s.ws()
	if s.i < len(p) && p[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(p) || p[s.i] != '"' {
				return fail(s.fail("expected string key in object"))
			}
			ks := s.i
			escaped, err := s.str()
			if err != nil {
				return fail(err)
			}
			key := p[ks+1 : s.i-1]
			s.ws()
			if s.i >= len(p) || p[s.i] != ':' {
				return fail(s.fail("expected : after object key"))
			}
			s.i++
			s.ws()
			vs := s.i
			kind, err := s.value()
			if err != nil {
				return fail(err)
			}
			r.member(p, key, escaped, vs, s.i, kind)
			s.ws()
			if s.i >= len(p) {
				return fail(s.fail("unterminated object"))
			}
			if p[s.i] == '}' {
				s.i++
				break
			}
			if p[s.i] != ',' {
				return fail(s.fail("expected , or } in object"))
			}
			s.i++
		}
	}
	s.ws()
	if s.i != len(p) {
		return fail(s.fail("data after the JSON object"))
	}
	r.long = s.long
	return nil
}

// within returns the long strings that lie in p[start:end], at offsets into it; it
// reuses long's array.
func within(long []LongString, start, end int) []LongString {
	out := long[:0]
	for _, l := range long {
		if l.Start >= start && l.End <= end {
			l.Start, l.End = l.Start-start, l.End-start
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// member records one top-level member of an envelope.
func (r *raw) member(p, key []byte, escaped bool, start, end int, kind byte) {
	var bit uint8
	var ok bool
	if escaped {
		bit, ok = fieldNames[unquote(key)]
	} else {
		bit, ok = fieldNames[string(key)] // no allocation: map lookup by converted bytes
	}
	if !ok {
		if !r.hasUnk {
			r.unknown, r.hasUnk = keyString(key, escaped), true
		}
		return
	}
	if r.have&bit != 0 {
		if r.dup == "" {
			r.dup = keyString(key, escaped)
		}
		return
	}
	r.have |= bit
	sp := r.at(bit)
	*sp = span{start: start, end: end, kind: kind}
	if kind == kindString {
		sp.escaped = bytes.IndexByte(p[start:end], '\\') >= 0
	}
}

func (r *raw) str(p []byte, bit uint8) (string, bool) {
	sp := r.at(bit)
	if sp.kind != kindString {
		return "", false
	}
	inner := p[sp.start+1 : sp.end-1]
	if sp.escaped {
		return unquote(inner), true
	}
	return string(inner), true
}

// is reports whether the string member bit equals want, without allocating.
func (r *raw) is(p []byte, bit uint8, want string) bool {
	sp := r.at(bit)
	if sp.kind != kindString {
		return false
	}
	if sp.escaped {
		return unquote(p[sp.start+1:sp.end-1]) == want
	}
	return string(p[sp.start+1:sp.end-1]) == want
}

// decode interprets a scanned envelope; allowed says which types the receiver accepts.
func decode(p []byte, allowed func(Type) bool) (Message, error) {
	var r raw
	if err := scanEnvelope(p, &r); err != nil {
		return Message{}, err
	}
	var m Message
	if r.have&fType == 0 {
		return m, &EnvelopeError{Reason: "missing field", Field: "type"}
	}
	if r.at(fType).kind != kindString {
		return m, &EnvelopeError{Reason: "type is not a string", Field: "type"}
	}
	for t := TypeRequest; t <= TypeError; t++ {
		if r.is(p, fType, typeNames[t]) {
			m.Type = t
			break
		}
	}
	if m.Type == TypeNone {
		ts, _ := r.str(p, fType)
		return m, &EnvelopeError{Reason: "unknown type " + strconv.Quote(ts), Field: "type"}
	}
	// The identity first, so that later errors can name it (A4).
	if r.have&fID == 0 {
		return m, &EnvelopeError{Reason: "missing field", Field: "id", Type: m.Type}
	}
	idSpan := r.at(fID)
	id, ok := parseID(p[idSpan.start:idSpan.end], limits.MaxRequestID)
	if idSpan.kind != kindNumber || !ok {
		return m, &EnvelopeError{Reason: "id is not an integer from 1 to 2^53-1", Field: "id", Type: m.Type}
	}
	m.ID = id
	fail := func(reason, field string) (Message, error) {
		return m, &EnvelopeError{Reason: reason, Field: field, Type: m.Type, ID: m.ID}
	}
	if !allowed(m.Type) {
		return fail("wrong direction for this type", "type")
	}
	if r.dup != "" {
		return fail("duplicate field", r.dup)
	}
	if r.hasUnk {
		return fail("unknown field", r.unknown)
	}
	want := required[m.Type]
	if extra := r.have &^ want; extra != 0 {
		return fail("field not allowed in this type", bitName(extra))
	}
	if missing := want &^ r.have; missing != 0 {
		return fail("missing field", bitName(missing))
	}
	if vs := r.at(fV); string(p[vs.start:vs.end]) != "1" {
		return fail("v is not 1", "v")
	}
	switch m.Type {
	case TypeRequest:
		if m.Method, ok = r.str(p, fMethod); !ok {
			return fail("method is not a string", "method")
		}
		ps := r.at(fParams)
		if ps.kind != kindObject {
			return fail("params is not an object", "params")
		}
		m.Params = p[ps.start:ps.end:ps.end]
		m.Strings = within(r.long, ps.start, ps.end)
	case TypeResult:
		vs := r.at(fValue)
		m.Value = p[vs.start:vs.end:vs.end]
		m.Strings = within(r.long, vs.start, vs.end)
	case TypeError:
		if m.RawCode, ok = r.str(p, fCode); !ok {
			return fail("code is not a string", "code")
		}
		m.Code = NormalizeCode(m.RawCode)
		msg, ok := r.str(p, fMessage)
		if !ok {
			return fail("message is not a string", "message")
		}
		m.Message = TruncateMessage(msg)
	}
	return m, nil
}

func bitName(bits uint8) string {
	for name, bit := range fieldNames {
		if bits&bit != 0 && bits&(bit-1) == 0 {
			return name
		}
	}
	for name, bit := range fieldNames {
		if bits&bit != 0 {
			return name
		}
	}
	return ""
}

func fromAdapter(t Type) bool { return t == TypeResult || t == TypeError }
func fromHost(t Type) bool    { return t == TypeRequest || t == TypeCancel }

// DecodeAdapterMessage decodes a payload the host received: a result or an error
// envelope (R10). Any other payload is an *EnvelopeError.
func DecodeAdapterMessage(p []byte) (Message, error) { return decode(p, fromAdapter) }

// DecodeHostMessage decodes a payload the adapter received: a request or a cancel
// envelope (R10). Any other payload is an *EnvelopeError.
func DecodeHostMessage(p []byte) (Message, error) { return decode(p, fromHost) }

// AppendRequest appends a request envelope to dst. params must be a JSON object; nil
// means {}. It does not validate params: see [ValidateParams].
func AppendRequest(dst []byte, id uint64, method string, params []byte) []byte {
	dst = AppendRequestHead(dst, id, method)
	if len(params) == 0 {
		params = []byte("{}")
	}
	dst = append(dst, params...)
	return append(dst, '}')
}

// AppendRequestHead appends a request envelope up to its params, which come last: the
// envelope is complete once the params and a closing '}' follow.
func AppendRequestHead(dst []byte, id uint64, method string) []byte {
	dst = append(dst, `{"type":"request","v":1,"id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	return append(dst, `,"params":`...)
}

// AppendCancel appends a cancel envelope to dst.
func AppendCancel(dst []byte, id uint64) []byte {
	dst = append(dst, `{"type":"cancel","v":1,"id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	return append(dst, '}')
}

// AppendResult appends a result envelope to dst. value must be one JSON value; nil
// means null.
func AppendResult(dst []byte, id uint64, value []byte) []byte {
	dst = append(dst, `{"type":"result","v":1,"id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `,"value":`...)
	if len(value) == 0 {
		value = []byte("null")
	}
	dst = append(dst, value...)
	return append(dst, '}')
}

// AppendError appends an error envelope to dst. An invalid code is sent as failed and
// the message is capped (R28, R30).
func AppendError(dst []byte, id uint64, code wire.Code, message string) []byte {
	if !ValidCode(code) {
		code = wire.CodeFailed
	}
	dst = append(dst, `{"type":"error","v":1,"id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `,"code":"`...)
	dst = append(dst, code...)
	dst = append(dst, `","message":`...)
	dst = appendString(dst, TruncateMessage(message))
	return append(dst, '}')
}

// ValidateParams checks that p is exactly one JSON object of valid UTF-8, as a
// request's params must be (A4). nil is valid and stands for {}.
func ValidateParams(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	return validObject(p)
}

// ValidateValue checks that p is exactly one JSON value of valid UTF-8.
func ValidateValue(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	return validValue(p)
}
