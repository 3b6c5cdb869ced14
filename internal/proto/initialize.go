package proto

import (
	"encoding/json"
	"strconv"

	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// AppendInitializeParams appends the params of the initialize request (R17):
// {"protocol":1,"configuration":...}. configuration must be a JSON object (A33); nil
// means {}. Use [ValidateParams] on a configuration from outside first.
func AppendInitializeParams(dst []byte, configuration []byte) []byte {
	dst = append(dst, `{"protocol":`...)
	dst = strconv.AppendInt(dst, limits.ProtocolVersion, 10)
	dst = append(dst, `,"configuration":`...)
	if len(configuration) == 0 {
		configuration = []byte("{}")
	}
	dst = append(dst, configuration...)
	return append(dst, '}')
}

// DecodeInitializeParams decodes the params of an initialize request on the adapter's
// side and returns the configuration object. protocol must be 1 and configuration an
// object (R17, A33); other members are tolerated. Errors are *EnvelopeError values
// with Field set to "params".
func DecodeInitializeParams(params []byte) (configuration []byte, err error) {
	var protocol []byte
	var haveProto bool
	err = walkObject(params, func(key []byte, escaped bool, start, end int, kind byte) error {
		switch keyString(key, escaped) {
		case "protocol":
			protocol, haveProto = params[start:end], kind == kindNumber
		case "configuration":
			if kind == kindObject {
				configuration = params[start:end:end]
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, &EnvelopeError{Reason: "initialize params are not a JSON object", Field: "params", Type: TypeRequest, ID: 1, Err: err}
	case !haveProto || string(protocol) != strconv.Itoa(limits.ProtocolVersion):
		return nil, &EnvelopeError{Reason: "initialize params: protocol is not 1", Field: "params", Type: TypeRequest, ID: 1}
	case configuration == nil:
		return nil, &EnvelopeError{Reason: "initialize params: configuration is not an object", Field: "params", Type: TypeRequest, ID: 1}
	}
	return configuration, nil
}

// wireService and wireCatalog decode strictly typed numbers: a version or protocol of
// 1.0 or 1e0 is not an integer (A13).
type wireService struct {
	ID      *string         `json:"id"`
	Version json.RawMessage `json:"version"`
	Methods *[]string       `json:"methods"`
}

type wireCatalog struct {
	Protocol json.RawMessage `json:"protocol"`
	Services *[]wireService  `json:"services"`
}

func intLiteral(n json.RawMessage) (int, bool) {
	s := string(n)
	if s == "" {
		return 0, false
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	if s == "" || len(s) > 9 {
		return 0, false
	}
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// DecodeCatalog decodes the value of an initialize result (R19) and validates it
// ([Catalog.Validate]). Extra members of the value and of service entries are tolerated
// (A12); the listed ones must be present and of the right JSON type. Every error is a
// *CatalogError.
func DecodeCatalog(value []byte) (*wire.Catalog, error) {
	if err := validObject(value); err != nil {
		return nil, &CatalogError{Rule: "R19", Reason: "initialize value is not a JSON object: " + err.Error()}
	}
	var wc wireCatalog
	if err := json.Unmarshal(value, &wc); err != nil {
		return nil, &CatalogError{Rule: "R19", Reason: "initialize value: " + err.Error()}
	}
	proto, ok := intLiteral(wc.Protocol)
	if !ok {
		return nil, &CatalogError{Rule: "R19", Reason: "protocol is missing or not an integer"}
	}
	if wc.Services == nil {
		return nil, &CatalogError{Rule: "R19", Reason: "services is missing"}
	}
	c := &wire.Catalog{Protocol: proto, Services: make([]wire.Service, 0, len(*wc.Services))}
	for i, ws := range *wc.Services {
		if ws.ID == nil {
			return nil, &CatalogError{Rule: "R19", Reason: "service " + strconv.Itoa(i) + " has no id"}
		}
		v, ok := intLiteral(ws.Version)
		if !ok {
			return nil, &CatalogError{Rule: "R22", Service: *ws.ID, Reason: "version is missing or not an integer"}
		}
		if ws.Methods == nil {
			return nil, &CatalogError{Rule: "R23", Service: *ws.ID, Reason: "methods is missing"}
		}
		c.Services = append(c.Services, wire.Service{ID: *ws.ID, Version: v, Methods: *ws.Methods})
	}
	if err := ValidateCatalog(c); err != nil {
		return nil, err
	}
	return c, nil
}

// AppendCatalog appends c as the value of an initialize result: the JSON encoding/json
// gives it (a nil slice as null), written directly. An adapter encodes its catalog
// before it reads anything, and encoding/json's first use of a type (building its
// encoder by reflection) would put a tenth of a millisecond into every adapter's start.
// It never fails; the error is there for a catalog form that could.
func AppendCatalog(dst []byte, c *wire.Catalog) ([]byte, error) {
	dst = append(dst, `{"protocol":`...)
	dst = strconv.AppendInt(dst, int64(c.Protocol), 10)
	dst = append(dst, `,"services":`...)
	if c.Services == nil {
		return append(dst, "null}"...), nil
	}
	dst = append(dst, '[')
	for i, s := range c.Services {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, s.ID)
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, int64(s.Version), 10)
		dst = append(dst, `,"methods":`...)
		if s.Methods == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '[')
			for j, m := range s.Methods {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, m)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}
