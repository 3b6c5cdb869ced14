package proto

// The envelope rules, for the other protocol of the module that frames JSON objects
// (the control plane): one policy for both, applied by the one scanner.

// Span is where one member's value lies in an object [ScanObject] validated:
// p[Start:End], of the JSON kind Kind: '{' object, '[' array, '"' string, '0' number,
// 't' true, 'f' false, 'n' null; Kind is 0 for a member that is absent.
type Span struct {
	Start, End int
	Kind       byte
}

// Value returns the member's text in p, or nil when it is absent.
func (s Span) Value(p []byte) []byte {
	if s.Kind == 0 {
		return nil
	}
	return p[s.Start:s.End:s.End]
}

// Object is what [ScanObject] found of an object's members.
type Object struct {
	// Members are the spans of the members named by ScanObject's names, at the same
	// index; a member given twice keeps its first span.
	Members []Span
	// Duplicate is the name of the first member given twice, or "".
	Duplicate string
	// Unknown is the name of the first member that is none of names (which may be "":
	// see HasUnknown).
	Unknown string
	// HasUnknown reports whether a member is none of names.
	HasUnknown bool
}

// ScanObject applies the adapter protocol's envelope rules to p as a whole (R2, A2): p
// must be exactly one JSON object (whitespace around it allowed) of valid UTF-8, every
// string, key and escape of it checked, nested to at most the decoder's depth. A
// violation is an *EnvelopeError (errors.Is ErrInvalidEnvelope) whose Err says where.
// It records each top-level member into o: the members named by names (matched
// exactly, letter case included, after their escapes are resolved, as the envelope
// decoder matches its field names), the first name given twice, and the first name
// that is none of names; what they mean is the caller's to say, so that it can still
// read the rest of the object (a request's id, to answer it).
func ScanObject(p []byte, names []string, o *Object) error {
	if cap(o.Members) >= len(names) {
		o.Members = o.Members[:len(names)]
		clear(o.Members)
	} else {
		o.Members = make([]Span, len(names))
	}
	o.Duplicate, o.Unknown, o.HasUnknown = "", "", false
	err := walkObject(p, func(key []byte, escaped bool, start, end int, kind byte) error {
		i := -1
		if escaped {
			i = indexOf(names, unquote(key))
		} else {
			i = indexOfBytes(names, key)
		}
		switch {
		case i < 0:
			if !o.HasUnknown {
				o.Unknown, o.HasUnknown = keyString(key, escaped), true
			}
		case o.Members[i].Kind != 0:
			if o.Duplicate == "" {
				o.Duplicate = names[i]
			}
		default:
			o.Members[i] = Span{Start: start, End: end, Kind: kind}
		}
		return nil
	})
	if err != nil {
		return &EnvelopeError{Reason: "not a JSON object of valid UTF-8", Err: err}
	}
	return nil
}

func indexOf(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

func indexOfBytes(names []string, b []byte) int {
	for i, n := range names {
		if n == string(b) { // no allocation: compared as converted bytes
			return i
		}
	}
	return -1
}

// StringValue returns the contents of a string member's value text (as Span.Value
// gives it, quotes included) with its escapes resolved; ok is false when the text is
// not a string.
func StringValue(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' {
			return unquote(inner), true
		}
	}
	return string(inner), true
}
