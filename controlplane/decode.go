package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// The envelope is decoded by the adapter protocol's rules, with its scanner
// (proto.ScanObject): one JSON object of valid UTF-8 (every string of the body
// checked, nothing replaced), field names matched exactly (letter case included), no
// field given twice, no unknown field. Params are decoded by package codec, which
// applies the same rules at every level of the value (RefuseUnknown), as an adapter
// decodes its params; results, on the client, with IgnoreUnknown, as a host decodes
// an adapter's results (a newer daemon may add fields).

// envelopeNames are the envelope's fields, indexed by the env* constants.
var envelopeNames = []string{"id", "kind", "method", "params", "result", "error"}

const (
	envID = iota
	envKindField
	envMethod
	envParams
	envResult
	envError
	envFields
)

// maxEchoedID bounds an invalid id echoed back in an error response.
const maxEchoedID = 128

// scanEnvelope checks body by the envelope rules common to both directions and returns
// its members; echo is the id to answer with: the body's id when it is a JSON string
// of at most maxEchoedID bytes (even if not a UUID v4), else "".
func scanEnvelope(body []byte, o *proto.Object) (echo string, err *Error) {
	if serr := proto.ScanObject(body, envelopeNames, o); serr != nil {
		var ee *proto.EnvelopeError
		if errors.As(serr, &ee) && ee.Err != nil {
			return "", newError(CodeInvalidParams, nil, "frame body is not one JSON object of valid UTF-8: %v", ee.Err)
		}
		return "", newError(CodeInvalidParams, nil, "frame body is not one JSON object of valid UTF-8")
	}
	if id, ok := proto.StringValue(o.Members[envID].Value(body)); ok && len(id) <= maxEchoedID {
		echo = id
	}
	switch {
	case o.Duplicate != "":
		return echo, newError(CodeInvalidParams, nil, "envelope field %q given twice", o.Duplicate)
	case o.HasUnknown:
		return echo, newError(CodeInvalidParams, nil, "unknown envelope field %q (names match exactly, letter case included)", o.Unknown)
	}
	return echo, nil
}

// envString returns the string member i, and whether it is one (absent: "", true when
// optional).
func envString(body []byte, o *proto.Object, i int) (string, bool) {
	if o.Members[i].Kind == 0 {
		return "", true
	}
	return proto.StringValue(o.Members[i].Value(body))
}

// decodeRequest decodes a request body strictly. On failure it returns an
// invalid_params *Error and the id to answer with. Params is a sub-slice of body, which
// must not change afterwards.
func decodeRequest(body []byte) (envelope, string, *Error) {
	var spans [envFields]proto.Span
	o := proto.Object{Members: spans[:0]}
	echo, perr := scanEnvelope(body, &o)
	if perr != nil {
		return envelope{}, echo, perr
	}
	m := o.Members
	id, idOK := envString(body, &o, envID)
	kind, kindOK := envString(body, &o, envKindField)
	method, methodOK := envString(body, &o, envMethod)
	switch {
	case m[envID].Kind == 0:
		return envelope{}, echo, newError(CodeInvalidParams, nil, "request without an id")
	case !idOK:
		return envelope{}, echo, newError(CodeInvalidParams, nil, "id is not a string")
	case !validID(id):
		return envelope{}, echo, newError(CodeInvalidParams, nil, "id %q is not a UUID v4", id)
	case !kindOK:
		return envelope{}, echo, newError(CodeInvalidParams, nil, "kind is not a string")
	case envKind(kind) != kindRequest:
		return envelope{}, echo, newError(CodeInvalidParams, nil, "kind %q: a client sends only requests", kind)
	case !methodOK:
		return envelope{}, echo, newError(CodeInvalidParams, nil, "method is not a string")
	case method == "":
		return envelope{}, echo, newError(CodeInvalidParams, nil, "request without a method")
	case m[envResult].Kind != 0 || m[envError].Kind != 0:
		return envelope{}, echo, newError(CodeInvalidParams, nil, "a request carries no result or error")
	case m[envParams].Kind != 0 && m[envParams].Kind != '{' && m[envParams].Kind != 'n':
		return envelope{}, echo, newError(CodeInvalidParams, nil, "params must be a JSON object")
	}
	return envelope{ID: id, Kind: kindRequest, Method: method, Params: m[envParams].Value(body)}, echo, nil
}

// decodeAnswer decodes a body the client received: a response or an event, by the
// same rules as a request (the id is not checked to be a UUID v4: the client only
// looks it up among its own).
func decodeAnswer(body []byte) (envelope, error) {
	var spans [envFields]proto.Span
	o := proto.Object{Members: spans[:0]}
	if _, perr := scanEnvelope(body, &o); perr != nil {
		return envelope{}, fmt.Errorf("%w: %s", ErrProtocol, perr.Message)
	}
	m := o.Members
	id, idOK := envString(body, &o, envID)
	kind, kindOK := envString(body, &o, envKindField)
	method, methodOK := envString(body, &o, envMethod)
	fail := func(format string, args ...any) (envelope, error) {
		return envelope{}, fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
	}
	env := envelope{ID: id, Kind: envKind(kind), Method: method}
	switch {
	case !idOK || !kindOK || !methodOK:
		return fail("an envelope's id, kind or method is not a string")
	case env.Kind == kindEvent:
		if m[envParams].Kind != '{' || method == "" || m[envResult].Kind != 0 || m[envError].Kind != 0 {
			return fail("an event carries a method and params object, and no result or error")
		}
		env.Params = m[envParams].Value(body)
	case env.Kind == kindResponse:
		if m[envMethod].Kind != 0 || m[envParams].Kind != 0 || (m[envResult].Kind == 0) == (m[envError].Kind == 0) {
			return fail("a response carries a result or an error, and no method or params")
		}
		env.Result = m[envResult].Value(body)
		if m[envError].Kind != 0 {
			env.Error = new(Error)
			if err := codec.DecodeValue(m[envError].Value(body), env.Error, codec.IgnoreUnknown); err != nil {
				return fail("error: %v", err)
			}
			if env.Error.Code == "" {
				return fail("an error without a code")
			}
		}
	default:
		return fail("kind %q: a daemon sends responses and events", kind)
	}
	return env, nil
}

// decodeParams decodes params strictly into v by the codec's rules (RefuseUnknown):
// field names exactly, no field twice, types exact, at every level of the value;
// absent or null params decode as {}.
func decodeParams(params json.RawMessage, v any) *Error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := codec.DecodeValue(params, v, codec.RefuseUnknown); err != nil {
		return newError(CodeInvalidParams, nil, "params: %v", err)
	}
	return nil
}

// sendNames are Send's params, indexed by the send* constants.
var sendNames = []string{"adapter", "method", "params", "timeout_ms"}

const (
	sendAdapter = iota
	sendMethod
	sendParams
	sendTimeout
	sendFields
)

// decodeSend decodes Send's params by the rules of decodeParams, but keeps the
// adapter's params as their text (a sub-slice of params), unparsed: they are the
// adapter's, and follow the adapter protocol (its decoder applies the same rules to
// them). params were checked as a whole already (decodeRequest).
func decodeSend(params []byte) (w sendWire, perr *Error) {
	if len(params) == 0 || string(params) == "null" {
		return w, nil
	}
	var spans [sendFields]proto.Span
	o := proto.Object{Members: spans[:0]}
	if err := proto.ScanObject(params, sendNames, &o); err != nil {
		return w, newError(CodeInvalidParams, nil, "params: %v", err)
	}
	switch {
	case o.Duplicate != "":
		return w, newError(CodeInvalidParams, nil, "params: field %q given twice", o.Duplicate)
	case o.HasUnknown:
		return w, newError(CodeInvalidParams, nil, "params: unknown field %q (names match exactly, letter case included)", o.Unknown)
	}
	m := o.Members
	for i, dst := range []any{&w.Adapter, &w.Method, nil, &w.TimeoutMS} {
		if dst == nil || m[i].Kind == 0 {
			continue
		}
		if err := codec.DecodeValue(m[i].Value(params), dst, codec.RefuseUnknown); err != nil {
			return w, newError(CodeInvalidParams, nil, "params: field %q: %v", sendNames[i], err)
		}
	}
	if m[sendParams].Kind != 0 {
		w.Params = m[sendParams].Value(params)
	}
	return w, nil
}
