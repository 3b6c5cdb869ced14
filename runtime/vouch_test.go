package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adapterkit/adapterkit/internal/validjson"
	"github.com/adapterkit/adapterkit/runtime"
)

// Params are checked before anything is sent (ErrInvalidParams, never started), unless
// the context vouches for exactly these bytes: the typed client's params, written by
// the codec from a type whose encoding is always valid, are not checked a second time.
// A vouching for other bytes (a copy of them) checks nothing.
func TestVouchedParamsAreNotCheckedAgain(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	bad := []byte("{\"a\":\"\xff\"}") // not valid UTF-8: refused when checked
	for name, ctx := range map[string]context.Context{
		"no vouching":          context.Background(),
		"vouching for a copy":  validjson.Vouch(context.Background(), append([]byte(nil), bad...)),
		"vouching for a slice": validjson.Vouch(context.Background(), bad[:len(bad)-1]),
	} {
		_, err := c.Call(ctx, read, bad)
		if !errors.Is(err, runtime.ErrInvalidParams) || !runtime.IsNeverStarted(err) {
			t.Fatalf("%s: %v, want a never-started ErrInvalidParams", name, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(validjson.Vouch(context.Background(), bad), read, bad)
		done <- err
	}()
	f.expect(request(2, read, string(bad)))
	f.send(resultFrame(2, `{}`))
	if err := recv(t, done); err != nil {
		t.Fatalf("vouched call: %v", err)
	}
}
