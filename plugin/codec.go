package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/internal/jsoncodec"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// paramsDecoder returns the function that decodes a request's params (a JSON object,
// already validated by the envelope decoder) into a *P, with package codec: the same
// rules as the host's result decoding. known, if not nil, is what the envelope decoder
// found of the params' long strings (see jsoncodec.Known).
func paramsDecoder[P any]() func(params []byte, known *jsoncodec.Known, p *P) error {
	var zero P
	if _, ok := any(&zero).(*json.RawMessage); ok {
		// The params are a sub-slice of a frame nobody else uses: no copy, no pass.
		return func(params []byte, _ *jsoncodec.Known, p *P) error {
			*any(p).(*json.RawMessage) = params
			return nil
		}
	}
	return func(params []byte, known *jsoncodec.Known, p *P) error {
		if len(params) == 0 {
			params = emptyObject
		}
		// The frame is this request's alone and never written again: long strings
		// share it instead of being copied. The envelope decoder validated the params
		// whole (A4), so their strings are not checked a second time, and where its
		// long strings end is known.
		if err := jsoncodec.DecodeOwned(params, known, p, codec.RefuseUnknown); err != nil {
			return &Error{Code: wire.CodeInvalid, Message: "params: " + err.Error()}
		}
		return nil
	}
}

var emptyObject = []byte("{}")

// decodeObject decodes a JSON object into target (a non-nil pointer) with package codec.
func decodeObject(object []byte, target any) error {
	return codec.DecodeValue(object, target, codec.RefuseUnknown)
}

// validRaw checks a json.RawMessage result: empty (sent as null) or one JSON value.
func validRaw(raw json.RawMessage) error {
	if err := proto.ValidateValue(raw); err != nil {
		return fmt.Errorf("plugin: handler result is not one JSON value: %w", err)
	}
	return nil
}

// appendResult appends r encoded as one JSON value to dst (json.RawMessage results are
// handled by the caller). Its strings longer than a batched frame are not copied: they
// are returned as splices into the returned text, written to the host in turn (a result
// that echoes a large string of the params thus sends the request frame's own bytes).
//
// verbatim are strings of the params known to be written as they are
// (jsoncodec.Known.Verbatim): an echoed one is not checked again.
func appendResult[R any](dst []byte, r R, verbatim [][]byte) ([]byte, []jsoncodec.Splice, error) {
	out, parts, err := jsoncodec.AppendSpliced(dst, r, smallFrame, verbatim, nil)
	if err != nil {
		return dst, nil, fmt.Errorf("plugin: encoding the result: %w", err)
	}
	return out, parts, nil
}
