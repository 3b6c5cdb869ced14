package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/runtime"
)

// Params are checked before anything is sent (ErrInvalidParams, never started), unless
// the request marks them valid: the typed client's params, written by the codec from a
// type whose encoding is always valid, are not checked a second time. A plain Call, or
// a request not marked valid (with a lease or without), checks them.
func TestValidParamsAreNotCheckedAgain(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	bad := []byte("{\"a\":\"\xff\"}") // not valid UTF-8: refused when checked
	buf := append([]byte(nil), bad...)
	for name, call := range map[string]func() error{
		"Call": func() error { _, err := c.Call(context.Background(), read, bad); return err },
		"not valid": func() error {
			_, err := c.Do(context.Background(), &handover.Request{Method: read, Params: bad})
			return err
		},
		"leased, not valid": func() error {
			_, err := c.Do(context.Background(), &handover.Request{Method: read, Params: bad, Lease: handover.Lend(&buf)})
			return err
		},
	} {
		if err := call(); !errors.Is(err, runtime.ErrInvalidParams) || !runtime.IsNeverStarted(err) {
			t.Fatalf("%s: %v, want a never-started ErrInvalidParams", name, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), &handover.Request{Method: read, Params: bad, Valid: true})
		done <- err
	}()
	f.expect(request(2, read, string(bad)))
	f.send(resultFrame(2, `{}`))
	if err := recv(t, done); err != nil {
		t.Fatalf("valid: %v", err)
	}
}

// Do notes where a result's long strings lie, as the envelope decoder found them, in
// the request (for the typed client's decoder), and clears the note of a request made
// again when the answer is an error or has no long string.
func TestDoNotesLongStrings(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	long := strings.Repeat("x", 100<<10)
	req := &handover.Request{Method: read, Params: []byte(`{}`)}
	for i, tc := range []struct {
		reply func(id int) string
		want  int // long strings noted
	}{
		{func(id int) string { return resultFrame(id, `{"a":"`+long+`","b":"short","c":"`+long+`"}`) }, 2},
		{func(id int) string { return resultFrame(id, `{"b":"short"}`) }, 0},
		{func(id int) string { return resultFrame(id, `{"a":"`+long+`"}`) }, 1},
		{func(id int) string { return errorFrame(id, "internal", "no") }, 0},
	} {
		done := make(chan json.RawMessage, 1)
		go func() {
			v, _ := c.Do(context.Background(), req)
			done <- v
		}()
		id := 2 + i
		f.expect(request(id, read, `{}`))
		f.send(tc.reply(id))
		v := <-done
		if len(req.Long) != tc.want {
			t.Fatalf("reply %d: %d long strings noted, want %d", i, len(req.Long), tc.want)
		}
		for _, l := range req.Long {
			if s := string(v[l.Start:l.End]); s != `"`+long+`"` {
				t.Fatalf("reply %d: the noted string is %.20q…, want the long one", i, s)
			}
		}
	}
}
