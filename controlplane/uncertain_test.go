package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/runtime"
)

// TestClientUncertain: a request whose connection ends after it was sent and before
// its response fails with ErrOutcomeUncertain (and the connection's own error); one
// the daemon refused, saying why, before closing does not; nor does a request sent
// after the end.
func TestClientUncertain(t *testing.T) {
	cases := []struct {
		name      string
		server    func(nc net.Conn) // after the request was read
		close     bool              // the client is closed instead
		uncertain bool
		is        error
	}{
		{name: "daemon gone", server: func(nc net.Conn) { _ = nc.Close() }, uncertain: true, is: io.EOF},
		{name: "client closed", close: true, uncertain: true, is: runtime.ErrClosed},
		{name: "daemon said why", server: func(nc net.Conn) {
			body, _ := json.Marshal(&envelope{Kind: kindResponse, Error: newError(CodePermissionDenied, nil, "no")})
			frame, _ := proto.AppendFrame(nil, body, maxFrame, true)
			_, _ = nc.Write(frame)
			_ = nc.Close()
		}, is: &Error{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cn, sn := net.Pipe()
			defer sn.Close()
			c := newClient(cn)
			defer c.Close()
			read := make(chan struct{})
			go func() {
				fr := frameReader{r: sn}
				if _, err := fr.read(); err != nil {
					t.Error(err)
				}
				close(read)
				if tc.server != nil {
					tc.server(sn)
				}
			}()
			if tc.close {
				go func() { <-read; _ = c.Close() }()
			}
			_, err := c.Ping(context.Background())
			if errors.Is(err, ErrOutcomeUncertain) != tc.uncertain {
				t.Errorf("Ping: %v: uncertain %v, want %v", err, !tc.uncertain, tc.uncertain)
			}
			if e, ok := tc.is.(*Error); ok {
				if !errors.As(err, &e) {
					t.Errorf("Ping: %v, want a *Error", err)
				}
			} else if !errors.Is(err, tc.is) {
				t.Errorf("Ping: %v, want it to match %v", err, tc.is)
			}
			// Once the connection has ended, nothing is sent: not uncertain.
			if _, err := c.Ping(context.Background()); err == nil || errors.Is(err, ErrOutcomeUncertain) {
				t.Errorf("Ping after the end: %v", err)
			}
		})
	}
}
