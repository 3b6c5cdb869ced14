package controlplane

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/limits"
)

// rawConn is a client that writes frames by hand.
type rawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, sock string) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc}
}

func (r *rawConn) writeFrame(body []byte) {
	r.t.Helper()
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
	if _, err := r.nc.Write(append(hdr[:], body...)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawConn) writeHeader(n uint32) {
	r.t.Helper()
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], n)
	if _, err := r.nc.Write(hdr[:]); err != nil {
		r.t.Fatal(err)
	}
}

// read reads one frame and decodes the envelope, strictly.
func (r *rawConn) read() envelope {
	r.t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(r.nc, hdr[:]); err != nil {
		r.t.Fatalf("reading a frame: %v", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > limits.ControlMaxFrameSize {
		r.t.Fatalf("daemon sent a frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.nc, body); err != nil {
		r.t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var env envelope
	if err := dec.Decode(&env); err != nil {
		r.t.Fatalf("daemon sent %s: %v", body, err)
	}
	return env
}

func (r *rawConn) wantEOF() {
	r.t.Helper()
	var b [1]byte
	if _, err := r.nc.Read(b[:]); !errors.Is(err, io.EOF) {
		r.t.Fatalf("read after the connection should have closed: %v", err)
	}
}

func (r *rawConn) wantError(env envelope, id string, code Code) {
	r.t.Helper()
	if env.Kind != kindResponse || env.ID != id || env.Error == nil || env.Error.Code != code || env.Result != nil {
		r.t.Fatalf("got %+v (error %+v), want a response with id %q and error %s", env, env.Error, id, code)
	}
}

func (r *rawConn) ping() {
	r.t.Helper()
	id := newID()
	r.writeFrame(mustJSON(map[string]any{"id": id, "kind": "request", "method": "Ping"}))
	env := r.read()
	if env.Kind != kindResponse || env.ID != id || env.Error != nil || env.Result == nil {
		r.t.Fatalf("Ping answered %+v", env)
	}
}

// TestFramingViolations: how the daemon answers bodies that are not requests. The
// length prefix keeps the stream in step, so each is answered with invalid_params and
// the connection continues (checked with a Ping after each).
func TestFramingViolations(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	r := dialRaw(t, sock)
	id := newID()
	for _, tc := range []struct {
		name   string
		body   string
		echoID string
	}{
		{"zero-length body", ``, ""},
		{"not JSON", `{"id":`, ""},
		{"not an object", `[1,2]`, ""},
		{"two values", `{"id":"` + id + `","kind":"request","method":"Ping"} {}`, ""},
		{"missing id", `{"kind":"request","method":"Ping"}`, ""},
		{"id not a UUID", `{"id":"abc","kind":"request","method":"Ping"}`, "abc"},
		{"id a number", `{"id":7,"kind":"request","method":"Ping"}`, ""},
		{"UUID of another version", `{"id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","kind":"request","method":"Ping"}`, "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		{"kind event", `{"id":"` + id + `","kind":"event","method":"Ping"}`, id},
		{"kind response", `{"id":"` + id + `","kind":"response","result":{}}`, id},
		{"kind missing", `{"id":"` + id + `","method":"Ping"}`, id},
		{"method missing", `{"id":"` + id + `","kind":"request"}`, id},
		{"unknown envelope field", `{"id":"` + id + `","kind":"request","method":"Ping","extra":1}`, id},
		{"request with result", `{"id":"` + id + `","kind":"request","method":"Ping","result":{}}`, id},
		{"params not an object", `{"id":"` + id + `","kind":"request","method":"Ping","params":[]}`, id},
		{"method not a string", `{"id":"` + id + `","kind":"request","method":1}`, id},
		{"method twice", `{"id":"` + id + `","kind":"request","method":"Ping","method":"Version"}`, id},
		{"kind twice", `{"id":"` + id + `","kind":"request","kind":"request","method":"Ping"}`, id},
		{"params twice", `{"id":"` + id + `","kind":"request","method":"Ping","params":{},"params":null}`, id},
		{"method in another case", `{"id":"` + id + `","kind":"request","Method":"Ping"}`, id},
		{"invalid UTF-8", `{"id":"` + id + `","kind":"request","method":"Ping","params":{"a":"` + "\xff" + `"}}`, ""},
		{"nested name in another case", `{"id":"` + id + `","kind":"request","method":"Discover","params":{"Timeout_ms":5}}`, id},
		{"nested field twice", `{"id":"` + id + `","kind":"request","method":"Discover","params":{"timeout_ms":5,"timeout_ms":6}}`, id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.t = t
			r.writeFrame([]byte(tc.body))
			r.wantError(r.read(), tc.echoID, CodeInvalidParams)
			r.ping()
		})
	}
}

// TestFrameCap: a body of exactly 16 MiB is read (and, not being JSON, refused with
// invalid_params); a length prefix one byte larger is answered with frame_too_large
// and the connection closed, without the body being sent or read.
func TestFrameCap(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	r := dialRaw(t, sock)
	r.writeFrame(bytes.Repeat([]byte{' '}, limits.ControlMaxFrameSize))
	r.wantError(r.read(), "", CodeInvalidParams)
	r.ping()

	r.writeHeader(limits.ControlMaxFrameSize + 1)
	r.wantError(r.read(), "", CodeFrameTooLarge)
	r.wantEOF()

	// The daemon serves on.
	c := dial(t, sock)
	if _, err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// TestDuplicateID: an id already in use by a request under way on the connection is
// refused; the first request is still answered.
func TestDuplicateID(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	r := dialRaw(t, sock)
	id := newID()
	req := mustJSON(map[string]any{"id": id, "kind": "request", "method": "Discover", "params": map[string]any{"timeout_ms": 1000}})
	r.writeFrame(req)
	r.writeFrame(req)
	r.wantError(r.read(), id, CodeInvalidParams) // an empty directory: no events
	env := r.read()
	if env.Kind != kindResponse || env.ID != id || env.Error != nil || string(env.Result) != "{}" {
		t.Fatalf("Discover ended with %+v, want an empty result", env)
	}
	// Once answered, the id may be used again.
	r.writeFrame(mustJSON(map[string]any{"id": id, "kind": "request", "method": "Ping"}))
	if env := r.read(); env.ID != id || env.Error != nil {
		t.Fatalf("Ping reusing a finished id: %+v", env)
	}
}

func TestIDs(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := newID()
		if !validID(id) || seen[id] || strings.ToLower(id) != id {
			t.Fatalf("newID() = %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"f47ac10b-58cc-4372-a567-0e02b2c3d479", true},
		{"F47AC10B-58CC-4372-A567-0E02B2C3D479", true},
		{"f47ac10b-58cc-3372-a567-0e02b2c3d479", false}, // version 3
		{"f47ac10b-58cc-4372-c567-0e02b2c3d479", false}, // variant 110
		{"f47ac10b58cc4372a5670e02b2c3d479", false},
		{"{f47ac10b-58cc-4372-a567-0e02b2c3d479}", false},
		{"g47ac10b-58cc-4372-a567-0e02b2c3d479", false},
		{"", false},
	} {
		if got := validID(tc.id); got != tc.ok {
			t.Errorf("validID(%q) = %v, want %v", tc.id, got, tc.ok)
		}
	}
}

// TestConnBudget: the bodies of one connection's requests under way share a budget
// of twice the frame cap (a request keeps its params for its whole life): a third
// 12 MiB Send while two run is answered frame_too_large with its id, and the
// connection stays usable. (That the budget comes back as requests end is what every
// connection making more than 32 MiB of requests in its life relies on.)
func TestConnBudget(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}})
	r := dialRaw(t, sock)
	_ = r.nc.SetDeadline(time.Now().Add(3 * time.Minute)) // 36 MiB of JSON to decode, under -race
	padded := func(id string) []byte {
		b := []byte(`{"id":"` + id + `","kind":"request","method":"Send","params":{"adapter":"echo","method":"example.echo.sleep","params":{"ms":20000}}`)
		b = append(b, bytes.Repeat([]byte{' '}, 12<<20)...)
		return append(b, '}')
	}
	a, b, c := newID(), newID(), newID()
	r.writeFrame(padded(a))
	r.writeFrame(padded(b))
	r.writeFrame(padded(c))
	// The first two sleep 20 s; on a loaded machine under -race one of them may end
	// before the daemon has read all of the third, and its answer comes first.
	env := r.read()
	for env.ID == a || env.ID == b {
		env = r.read()
	}
	r.wantError(env, c, CodeFrameTooLarge)
	r.ping()
}

// TestSmallMethodsSmallBodies: a request of any method but Send is at most 16 KiB (its
// params are a few bytes by nature); a larger one is answered frame_too_large with its
// own id and the connection stays usable, instead of the body being held while the
// request runs (a Discover: up to ten minutes).
func TestSmallMethodsSmallBodies(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	r := dialRaw(t, sock)
	for _, m := range []string{methodPing, methodVersion, methodCapabilities, methodStatus, methodDiscover, methodUpgrade, "Frobnicate"} {
		t.Run(m, func(t *testing.T) {
			r.t = t
			id := newID()
			head := `{"id":"` + id + `","kind":"request","method":"` + m + `","params":{}`
			big := append([]byte(head), bytes.Repeat([]byte{' '}, 1<<20)...)
			r.writeFrame(append(big, '}'))
			env := r.read()
			r.wantError(env, id, CodeFrameTooLarge)
			var d struct {
				Size, Max int
				Method    string
			}
			if err := json.Unmarshal(env.Error.Details, &d); err != nil || d.Max != maxSmallBody || d.Method != m || d.Size != len(big)+1 {
				t.Fatalf("details %s (%v)", env.Error.Details, err)
			}
			r.ping()
		})
	}
	// At the cap, a body is taken.
	id := newID()
	head := `{"id":"` + id + `","kind":"request","method":"Ping"`
	r.writeFrame(append(append([]byte(head), bytes.Repeat([]byte{' '}, maxSmallBody-len(head)-1)...), '}'))
	if env := r.read(); env.ID != id || env.Error != nil {
		t.Fatalf("a Ping of %d bytes: %+v", maxSmallBody, env)
	}
}
