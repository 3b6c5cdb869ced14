package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/runtime"
)

// errClientClosed is the cause of calls on a Client after Close; errors.Is matches
// runtime.ErrClosed too (the module's one "closed by the host" sentinel).
var errClientClosed = fmt.Errorf("controlplane: client %w", runtime.ErrClosed)

// ErrOutcomeUncertain is matched (errors.Is) by the error of a request whose
// connection ended after the request was sent and before its response came (the
// daemon stopped or was killed, the connection broke, the Client was closed): the
// daemon may or may not have carried it out, so a Send's adapter may have acted.
// errors.Is matches the connection's own error too (io.EOF, runtime.ErrClosed ...).
// A connection the daemon ended after saying why (a *Error not tied to a request,
// e.g. permission_denied) or a remote daemon's TLS refusal is no such case: the
// request was not carried out, and that error is returned as it is.
var ErrOutcomeUncertain = errors.New("controlplane: the connection ended with the request under way: its outcome is uncertain (it may have been carried out)")

// uncertain is the error of a request sent whose connection ended (cause) before
// its response came.
func uncertain(method string, cause error) error {
	var e *Error
	var oe *net.OpError
	if errors.As(cause, &e) || (errors.As(cause, &oe) && oe.Op == "remote error") { // crypto/tls's received alert
		return cause
	}
	return fmt.Errorf("%w: %s: %w", ErrOutcomeUncertain, method, cause)
}

// Client talks to a daemon over one connection. It is safe for concurrent use: any
// number of requests may be under way at once, each matched to its answers by id.
//
// The protocol has no cancel: a request whose ctx ends is abandoned by the client
// (its late answers are dropped), while the daemon finishes it. Closing the Client
// ends every request under way on the daemon's side too.
type Client struct {
	nc   net.Conn
	w    *framewriter.Writer // frames are written by the callers, batched under load
	done chan struct{}

	mu      sync.Mutex
	pending map[string]*pending
	err     error // why the connection ended, once done is closed
}

type pending struct {
	events chan json.RawMessage // events in order; nil for unstreamed requests
	final  chan *envelope       // the response, buffered
	gone   chan struct{}        // closed when the caller abandoned the request
}

// Dial connects to the daemon at the Unix socket path, and checks who runs it: the
// process listening there must be of this process's user or root (the kernel's
// peer credentials, SO_PEERCRED or LOCAL_PEERCRED), or the connection is closed
// with a *[DaemonOwnerError]: any local user who binds the path first would
// otherwise receive the calls' params and answer with forged results. A daemon
// ([Serve]) answers only clients of its own user, and refuses any other with a
// permission_denied error that ends the connection: run the client as the daemon's
// user. Root is trusted because a socket passed by systemd's socket activation is
// listened on by the service manager.
func Dial(ctx context.Context, socket string) (*Client, error) {
	return DialTrusting(ctx, socket)
}

// DialTrusting is [Dial] that also accepts a socket listened on by one of the users
// trusted (by uid). [Serve] answers only its own user's clients, so this is for a
// server that answers this process's user although another user listens (a proxy of
// the host's own making, say); a daemon run as another user refuses the connection.
func DialTrusting(ctx context.Context, socket string, trusted ...int) (*Client, error) {
	if ctx == nil {
		return nil, runtime.ErrNilContext
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("controlplane: dial %s: %w", socket, err)
	}
	uid, err := peerUID(nc)
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("controlplane: dial %s: cannot learn the daemon's user: %w", socket, err)
	}
	if uid != os.Getuid() && uid != 0 && !slices.Contains(trusted, uid) {
		_ = nc.Close()
		return nil, &DaemonOwnerError{Socket: socket, UID: uid, Name: userName(uid)}
	}
	return newClient(nc), nil
}

// ErrUntrustedDaemon: the process listening at a socket is run by a user the client
// does not trust (errors.Is matches a *DaemonOwnerError).
var ErrUntrustedDaemon = errors.New("controlplane: the daemon is run by an untrusted user")

// DaemonOwnerError is [Dial]'s refusal of a socket whose listening process is of
// another user than this process's, root, or one trusted.
type DaemonOwnerError struct {
	// Socket is the path dialled.
	Socket string
	// UID is the user of the process listening there; Name its name, or "" when the
	// system has none for it.
	UID  int
	Name string
}

func (e *DaemonOwnerError) Error() string {
	name := e.Name
	if name == "" {
		name = "no user name"
	}
	return fmt.Sprintf("controlplane: dial %s: the socket is owned by uid %d (%s), not by this user (uid %d) nor root: refused, "+
		"since that user could read the calls and forge the answers (a daemon answers only clients of its own user: "+
		"if that user runs the daemon, run this client as that user)",
		e.Socket, e.UID, name, os.Getuid())
}

// Is matches ErrUntrustedDaemon.
func (e *DaemonOwnerError) Is(target error) bool { return target == ErrUntrustedDaemon }

// userName returns the login name of uid, or "".
func userName(uid int) string {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return ""
	}
	return u.Username
}

// NewClient returns a Client over an established connection, which it owns.
func newClient(nc net.Conn) *Client {
	c := &Client{nc: nc, w: framewriter.New(nc, framewriter.Config{}), done: make(chan struct{}), pending: make(map[string]*pending)}
	go c.read()
	return c
}

// Close closes the connection; requests under way fail with an error matching
// runtime.ErrClosed and ErrOutcomeUncertain, later ones with runtime.ErrClosed.
func (c *Client) Close() error {
	c.fail(errClientClosed)
	<-c.done
	return nil
}

// Done is closed when the connection has ended; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open, else why it ended.
func (c *Client) Err() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	default:
		return nil
	}
}

// fail ends the connection with cause (the first cause is kept).
func (c *Client) fail(cause error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = cause
	}
	c.mu.Unlock()
	c.w.Stop()
	_ = c.nc.Close()
}

// read routes answers to their requests until the connection ends.
func (c *Client) read() {
	defer close(c.done)
	fr := frameReader{r: c.nc}
	for {
		body, err := fr.read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			} else if errors.As(err, new(*proto.FrameError)) && errors.Is(err, ErrFrameTooLarge) {
				err = fmt.Errorf("%w: %w", ErrProtocol, err)
			}
			c.fail(err)
			return
		}
		env, err := decodeAnswer(body)
		if err != nil {
			c.fail(err)
			return
		}
		if env.ID == "" && env.Error != nil {
			// An error the daemon could not tie to a request (e.g. frame_too_large
			// before it closes the connection): it explains what follows.
			c.fail(env.Error)
			continue
		}
		c.mu.Lock()
		p := c.pending[env.ID]
		if p != nil && env.Kind == kindResponse {
			delete(c.pending, env.ID)
		}
		c.mu.Unlock()
		if p == nil {
			continue // an abandoned request's answer
		}
		if env.Kind == kindResponse {
			p.final <- &env
			continue
		}
		if p.events == nil {
			c.fail(fmt.Errorf("%w: event for request %s, which is not streamed", ErrProtocol, env.ID))
			return
		}
		select {
		case p.events <- env.Params:
		case <-p.gone:
		}
	}
}

// Call sends one request and waits for its response, passing each event's params
// to onEvent (which may be nil for a method that streams nothing) in order, from
// the calling goroutine. params may be nil, raw JSON or any value that encodes to a
// JSON object. A failed response is returned as a *Error. If onEvent returns an
// error, the request is abandoned and that error returned. onEvent should return
// promptly: while events wait for it, answers to other requests on this Client wait
// too, and a daemon drops a client that leaves its answers unread for its write
// timeout (5 s by default).
func (c *Client) Call(ctx context.Context, method string, params any, onEvent func(json.RawMessage) error) (json.RawMessage, error) {
	if ctx == nil {
		return nil, runtime.ErrNilContext
	}
	env := envelope{ID: newID(), Kind: kindRequest, Method: method}
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		env.Params = p
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("controlplane: %s params: %w", method, err)
		}
		env.Params = b
	}
	body, err := json.Marshal(&env)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s params: %w", method, err)
	}
	frame, err := proto.AppendFrame(nil, body, maxFrame, true)
	if err != nil {
		return nil, newError(CodeFrameTooLarge, nil, "request of %d bytes exceeds the %d-byte cap; not sent", len(body), maxFrame)
	}
	p := &pending{final: make(chan *envelope, 1), gone: make(chan struct{})}
	if onEvent != nil {
		p.events = make(chan json.RawMessage, 16)
	}
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return nil, c.Err()
	default:
	}
	c.pending[env.ID] = p
	c.mu.Unlock()
	defer func() {
		close(p.gone)
		c.mu.Lock()
		delete(c.pending, env.ID)
		c.mu.Unlock()
	}()
	if err := c.write(ctx, frame); err != nil {
		return nil, err
	}
	// finish returns the response after the events that came before it.
	finish := func(resp *envelope) (json.RawMessage, error) {
		for {
			select {
			case ev := <-p.events:
				if err := onEvent(ev); err != nil {
					return nil, err
				}
			default:
				if resp.Error != nil {
					return nil, resp.Error
				}
				return resp.Result, nil
			}
		}
	}
	for {
		select {
		case ev := <-p.events:
			if err := onEvent(ev); err != nil {
				return nil, err
			}
		case resp := <-p.final:
			return finish(resp)
		case <-c.done:
			// The reader hands over a response before it ends the connection, so a
			// daemon that answers and then closes (a shutdown, a one-shot server) has
			// answered: when both are ready, select picks either, and the answer wins.
			select {
			case resp := <-p.final:
				return finish(resp)
			default:
			}
			return nil, uncertain(method, c.Err())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// writeFailGrace bounds the wait, after a write failed, for the reader to take what
// the daemon sent before it closed the connection.
const writeFailGrace = time.Second

// write queues one frame and writes what is queued within ctx, unless another caller
// is writing (it then writes this frame too, within its ctx); a failed write ends the
// connection, since the stream could not be followed after a frame left half-written.
func (c *Client) write(ctx context.Context, frame []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if c.w.Queue(frame, nil, 0, nil) {
		err = c.w.Flush(ctx)
	} else if err = c.w.Err(); err == nil {
		err = net.ErrClosed // the connection has ended
	}
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			// The daemon may have closed the connection after saying why (refusing
			// this client's user): the reader takes what it sent before the end.
			t := time.NewTimer(writeFailGrace)
			select {
			case <-c.done:
			case <-t.C:
			}
			t.Stop()
		}
		c.fail(err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.mu.Lock()
		cause := c.err
		c.mu.Unlock()
		if cause != err {
			return cause // the connection had ended already (e.g. the daemon's TLS alert): say why
		}
		return fmt.Errorf("controlplane: write: %w", err)
	}
	return nil
}

// call is Call with a typed result.
func call[T any](ctx context.Context, c *Client, method string, params any, onEvent func(json.RawMessage) error) (*T, error) {
	raw, err := c.Call(ctx, method, params, onEvent)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := codec.DecodeValue(raw, out, codec.IgnoreUnknown); err != nil {
		return nil, fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
	}
	return out, nil
}

// Ping checks that the daemon answers, and measures the round trip and the skew
// between the daemon's clock and this one.
func (c *Client) Ping(ctx context.Context) (*PingResult, error) {
	t0 := time.Now()
	r, err := call[PingResult](ctx, c, methodPing, nil, nil)
	if err != nil {
		return nil, err
	}
	r.RoundTrip = time.Since(t0)
	r.Skew = r.ServerTime.Sub(t0.Add(r.RoundTrip / 2))
	return r, nil
}

// Version returns the daemon's and the protocols' versions.
func (c *Client) Version(ctx context.Context) (*VersionResult, error) {
	return call[VersionResult](ctx, c, methodVersion, nil, nil)
}

// Capabilities returns every discovered adapter's catalog (the daemon opens each).
func (c *Client) Capabilities(ctx context.Context) (*CapabilitiesResult, error) {
	return call[CapabilitiesResult](ctx, c, methodCapabilities, nil, nil)
}

// Status returns the daemon's health and counters.
func (c *Client) Status(ctx context.Context) (*StatusResult, error) {
	return call[StatusResult](ctx, c, methodStatus, nil, nil)
}

// Upgrade makes the daemon look for new versions of the adapters it has open (of the
// one named, when name is not "") and let them take over; it returns their status once
// each took over or was refused.
func (c *Client) Upgrade(ctx context.Context, name string) (*UpgradeResult, error) {
	return call[UpgradeResult](ctx, c, methodUpgrade, upgradeParams{Adapter: name}, nil)
}

// RetryUpgrade forgets the daemon's refusals of adapter name's files (see
// [StatusResult].Refused), so that they may be started again, then does what
// [Client.Upgrade] does for name.
func (c *Client) RetryUpgrade(ctx context.Context, name string) (*UpgradeResult, error) {
	return call[UpgradeResult](ctx, c, methodUpgrade, upgradeParams{Adapter: name, Retry: true}, nil)
}

// Send calls one adapter method through the daemon. A failed call is a *Error
// whose CallDetails keep the adapter protocol's code and outcome.
func (c *Client) Send(ctx context.Context, p SendParams) (*SendResult, error) {
	return call[SendResult](ctx, c, methodSend, p, nil)
}

// Discover streams the adapters the daemon finds, and their changes, for timeout
// (rounded down to milliseconds; a daemon accepts from 1 ms to 10 minutes); onEvent
// is called for each, in order. It returns nil when the stream ended at the timeout.
func (c *Client) Discover(ctx context.Context, timeout time.Duration, onEvent func(DiscoverEvent) error) error {
	if onEvent == nil {
		onEvent = func(DiscoverEvent) error { return nil }
	}
	_, err := c.Call(ctx, methodDiscover, discoverParams{TimeoutMS: timeout.Milliseconds()}, func(raw json.RawMessage) error {
		var ev DiscoverEvent
		if err := codec.DecodeValue(raw, &ev, codec.IgnoreUnknown); err != nil {
			return fmt.Errorf("%w: Discover event: %v", ErrProtocol, err)
		}
		return onEvent(ev)
	})
	return err
}
