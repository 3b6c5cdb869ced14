package stderrlog

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// parseRecord reads line as an hclog JSON record ({"@level":..., "@message":...,
// fields...}). Fields are sorted by key; "@"-keys other than @module are dropped
// (the host stamps its own time); @module, when it is not the adapter's own name, is
// kept as the field "module". Every string is sanitized.
func parseRecord(line []byte, name string, rec *logRecord) bool {
	if len(line) < 2 || line[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || dec.More() {
		return false
	}
	lvl, ok1 := m["@level"].(string)
	msg, ok2 := m["@message"].(string)
	if !ok1 || !ok2 {
		return false
	}
	level := hclog.LevelFromString(lvl)
	if level == hclog.NoLevel || level == hclog.Off {
		return false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, "@") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	args := make([]any, 0, 2*len(keys)+2)
	if mod, ok := m["@module"].(string); ok && mod != "" && mod != name {
		args = append(args, "module", sanitizeString(mod))
	}
	for _, k := range keys {
		args = append(args, sanitizeString(k), fieldValue(m[k]))
	}
	// go-hclog writes a message as it is, so a message of several lines would start
	// lines of its own in the host's text log: its first line is the message, the
	// others a field, which go-hclog writes in its multi-line format.
	if first, rest, ok := strings.Cut(msg, "\n"); ok {
		msg = strings.TrimSuffix(first, "\r")
		args = append(args, messageField, sanitizeLines(rest))
	}
	*rec = logRecord{level: level, msg: sanitizeString(msg), args: args}
	return true
}

// messageField is the field of a record that holds the lines of its message after the
// first.
const messageField = "message_continued"

// fieldValue makes a decoded JSON value safe to log: strings sanitized (their
// newlines kept: go-hclog writes such a value in its multi-line format, each line
// after "  | ", in text, and as one JSON string in JSON), numbers and booleans as they
// are (a json.Number is written as the number it is in JSON), objects and arrays as
// compact JSON.
func fieldValue(v any) any {
	switch v := v.(type) {
	case string:
		return sanitizeLines(v)
	case json.Number:
		return v
	case bool:
		return v
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return sanitize(b)
}

// sanitizeLines is sanitizeString for each line of s (a '\r' before a '\n' dropped),
// the lines joined by '\n'.
func sanitizeLines(s string) string {
	if !strings.Contains(s, "\n") {
		return sanitizeString(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = sanitizeString(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

func sanitizeString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			return sanitize([]byte(s))
		}
	}
	return s
}

// sanitize returns b as text that cannot break a log line or forge one: control
// characters (C0 but tab, DEL, C1, the line and paragraph separators) are written as
// \xNN or \uNNNN escapes and bytes that are not UTF-8 as \xNN.
func sanitize(b []byte) string {
	clean := true
	for _, c := range b {
		if c < 0x20 && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			sb.WriteString(`\x`)
			sb.WriteString(hex2(b[0]))
		case r < 0x20 && r != '\t' || r == 0x7f:
			sb.WriteString(`\x`)
			sb.WriteString(hex2(byte(r)))
		case r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029:
			sb.WriteString(`\u`)
			s := strconv.FormatInt(int64(r), 16)
			sb.WriteString(strings.Repeat("0", 4-len(s)) + s)
		default:
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
