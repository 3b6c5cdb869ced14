package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adapterkit/adapterkit/internal/validjson"
	"github.com/adapterkit/adapterkit/runtime"
)

// lendValid lends params as the typed client lends what package codec wrote from a
// type whose encoding is always valid.
func lendValid(params []byte) context.Context {
	buf := append([]byte(nil), params...)
	ctx, _ := validjson.Lend(context.Background(), params, &buf, true)
	return ctx
}

// Params are checked before anything is sent (ErrInvalidParams, never started), unless
// the context lends exactly these bytes as valid: the typed client's params, written by
// the codec from a type whose encoding is always valid, are not checked a second time.
// A loan of other bytes (a copy of them), or one not marked valid, checks nothing away.
func TestValidLoanParamsAreNotCheckedAgain(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	bad := []byte("{\"a\":\"\xff\"}") // not valid UTF-8: refused when checked
	notValid, _ := validjson.Lend(context.Background(), bad, &[]byte{}, false)
	for name, ctx := range map[string]context.Context{
		"no loan":           context.Background(),
		"a loan not valid":  notValid,
		"a loan of a copy":  lendValid(append([]byte(nil), bad...)),
		"a loan of a slice": lendValid(bad[:len(bad)-1]),
	} {
		_, err := c.Call(ctx, read, bad)
		if !errors.Is(err, runtime.ErrInvalidParams) || !runtime.IsNeverStarted(err) {
			t.Fatalf("%s: %v, want a never-started ErrInvalidParams", name, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(lendValid(bad), read, bad)
		done <- err
	}()
	f.expect(request(2, read, string(bad)))
	f.send(resultFrame(2, `{}`))
	if err := recv(t, done); err != nil {
		t.Fatalf("valid loan: %v", err)
	}
}
