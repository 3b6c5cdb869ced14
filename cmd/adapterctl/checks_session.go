package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
)

// session is the checker's own raw protocol driver: one adapter process started with
// package platform, spoken to frame by frame with package wire, so that it can
// send what a normal host never would (requests before initialize, a second initialize,
// unknown envelope fields, cancels of unknown ids, 33 requests at once) and observe
// every byte the adapter writes to stdout.
type session struct {
	// note is why the end of the tree, its cgroup found empty, is still not proven
	// (see cgroupEvidence); "" when proven.
	note   string
	tree   *platform.Tree
	stdin  io.WriteCloser
	nextID uint64

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced whenever something is recorded
	sent         map[uint64]bool
	replies      map[uint64]proto.Message
	received     int           // replies recorded
	unexpected   []string      // unprompted, unknown-id or duplicate replies (R15, R16, R35)
	errorReplies []errorReply  // every error reply (R28, R30)
	streamErr    error         // first framing or envelope error on stdout (R6, R53, R54)
	ended        bool          // stdout ended or broke: nothing more will be recorded
	endedEarly   bool          // stdout ended before the host disconnected (R52)
	exitedEarly  bool          // the process exited before the host disconnected (R52)
	disconnected bool          // the host closed stdin
	closing      bool          // the host is tearing the session down: read errors are its own
	readerDone   chan struct{} // closed when the reader goroutine has returned
}

// errorReply is one error envelope as the adapter sent it.
type errorReply struct {
	id         uint64
	rawCode    string
	messageLen int // bytes of the message as sent, before any capping
}

// deadlineWriter is a pipe with write deadlines (an *os.File on most systems).
type deadlineWriter interface {
	SetWriteDeadline(t time.Time) error
}

// errOutputEnded is the cause of waits on a session whose stdout ended.
var errOutputEnded = errors.New("the adapter's output ended")

// startSession starts the adapter for one session. With observe the PID namespace is
// not used, so that a descendant the adapter leaves behind is visible to the R64 check
// instead of being killed by the kernel with the namespace's init; the other sessions
// keep the strongest isolation, whose end can be proven.
func startSession(ctx context.Context, cfg platform.Config, observe bool) (*session, error) {
	if observe {
		cfg.Isolation = platform.IsolationNoPIDNamespace
	}
	tree, err := platform.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &session{
		tree: tree, stdin: tree.Stdin(), nextID: 1,
		changed: make(chan struct{}), sent: make(map[uint64]bool),
		replies: make(map[uint64]proto.Message), readerDone: make(chan struct{}),
	}
	go s.read(tree.Stdout())
	go s.watchExit()
	return s, nil
}

// notify wakes waiters; s.mu must be held.
func (s *session) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// watchExit records a process exit before the host disconnected (R52).
func (s *session) watchExit() {
	<-s.tree.Exited()
	s.mu.Lock()
	if !s.disconnected {
		s.exitedEarly = true
	}
	s.notify()
	s.mu.Unlock()
}

// read is the only reader of the adapter's stdout. After a framing or envelope error it
// keeps draining stdout, so that the adapter never blocks on a full pipe.
func (s *session) read(stdout io.Reader) {
	defer close(s.readerDone)
	r := proto.NewReader(stdout, 0)
	for {
		p, err := r.ReadFrame()
		if err != nil {
			s.mu.Lock()
			s.ended = true
			switch {
			case s.closing:
			case err == io.EOF:
				s.endedEarly = !s.disconnected
			case s.streamErr == nil:
				s.streamErr = err // a *proto.FrameError says when its length reads as text
			}
			s.notify()
			s.mu.Unlock()
			if err != io.EOF {
				_, _ = io.Copy(io.Discard, stdout)
			}
			return
		}
		m, err := proto.DecodeAdapterMessage(p)
		s.mu.Lock()
		if err != nil {
			s.ended = true
			if !s.closing && s.streamErr == nil {
				s.streamErr = err
			}
			s.notify()
			s.mu.Unlock()
			_, _ = io.Copy(io.Discard, stdout)
			return
		}
		s.record(m, p)
		s.notify()
		s.mu.Unlock()
	}
}

// record files one reply; s.mu must be held.
func (s *session) record(m proto.Message, payload []byte) {
	s.received++
	switch {
	case !s.sent[m.ID]:
		s.unexpected = append(s.unexpected, fmt.Sprintf("%s for id %d, which was never sent as a request", m.Type, m.ID))
		return
	case hasKey(s.replies, m.ID):
		s.unexpected = append(s.unexpected, fmt.Sprintf("second reply (%s) for id %d", m.Type, m.ID))
		return
	}
	s.replies[m.ID] = m
	if m.Type == proto.TypeError {
		// The decoded message is capped (R31); the length as sent is what R30 is about.
		var raw struct {
			Message string `json:"message"`
		}
		n := len(m.Message)
		if json.Unmarshal(payload, &raw) == nil {
			n = len(raw.Message)
		}
		s.errorReplies = append(s.errorReplies, errorReply{id: m.ID, rawCode: m.RawCode, messageLen: n})
	}
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// broken returns why the session can no longer be used, or nil.
func (s *session) broken() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.streamErr != nil:
		return fmt.Errorf("the adapter's output violated the protocol: %w", s.streamErr)
	case s.ended:
		return errOutputEnded
	case s.exitedEarly:
		return fmt.Errorf("the adapter process exited (%v)", s.tree.ExitState())
	}
	return nil
}

// write writes frames to the adapter's stdin within the pipe write timeout (R45).
func (s *session) write(frames []byte) error {
	if dw, ok := s.stdin.(deadlineWriter); ok && dw.SetWriteDeadline(time.Now().Add(limits.PipeWriteTimeout)) == nil {
		_, err := s.stdin.Write(frames)
		return err
	}
	t := time.AfterFunc(limits.PipeWriteTimeout, func() { _ = s.stdin.Close() })
	defer t.Stop()
	_, err := s.stdin.Write(frames)
	return err
}

// newID takes the next request identity and records it as sent, before the write, so
// that a fast reply is never taken for an unknown one.
func (s *session) newID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID
	s.nextID++
	s.sent[id] = true
	return id
}

// request sends one request and returns its identity.
func (s *session) request(method string, params []byte) (uint64, error) {
	id := s.newID()
	return id, s.send(proto.AppendRequest(nil, id, method, params))
}

// requestRaw sends a payload built by build for the next identity.
func (s *session) requestRaw(build func(id uint64) []byte) (uint64, error) {
	id := s.newID()
	return id, s.send(build(id))
}

// requests sends n requests in one write and returns their identities.
func (s *session) requests(n int, method string, params []byte) ([]uint64, error) {
	var buf []byte
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = s.newID()
		var err error
		if buf, err = proto.AppendFrame(buf, proto.AppendRequest(nil, ids[i], method, params), 0, false); err != nil {
			return nil, err
		}
	}
	return ids, s.write(buf)
}

// cancel sends a cancel envelope.
func (s *session) cancel(id uint64) error { return s.send(proto.AppendCancel(nil, id)) }

func (s *session) send(payload []byte) error {
	frame, err := proto.AppendFrame(nil, payload, 0, false)
	if err != nil {
		return err
	}
	return s.write(frame)
}

// await waits up to timeout for the reply to id.
func (s *session) await(ctx context.Context, id uint64, timeout time.Duration) (proto.Message, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		m, ok := s.replies[id]
		ended, changed := s.ended, s.changed
		s.mu.Unlock()
		if ok {
			return m, nil
		}
		if ended {
			if err := s.broken(); err != nil {
				return proto.Message{}, err
			}
			return proto.Message{}, errOutputEnded
		}
		select {
		case <-changed:
		case <-t.C:
			return proto.Message{}, fmt.Errorf("no reply to id %d within %v", id, timeout)
		case <-ctx.Done():
			return proto.Message{}, ctx.Err()
		}
	}
}

// waitUntil waits up to timeout for cond, evaluated with s.mu held whenever something
// is recorded. It fails when the output ended first, the time passed or ctx ended.
func (s *session) waitUntil(ctx context.Context, timeout time.Duration, cond func(*session) bool) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		ok, ended, changed := cond(s), s.ended, s.changed
		s.mu.Unlock()
		switch {
		case ok:
			return nil
		case ended:
			if err := s.broken(); err != nil {
				return err
			}
			return errOutputEnded
		}
		select {
		case <-changed:
		case <-t.C:
			return fmt.Errorf("not within %v", timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// answered reports whether id has its reply.
func (s *session) answered(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hasKey(s.replies, id)
}

// quiet waits for d and returns how many replies arrived meanwhile.
func (s *session) quiet(ctx context.Context, d time.Duration) (int, error) {
	s.mu.Lock()
	before := s.received
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received - before, nil
}

// disconnect closes the adapter's stdin: end of input (R49).
func (s *session) disconnect() {
	s.mu.Lock()
	s.disconnected = true
	s.mu.Unlock()
	_ = s.stdin.Close()
}

// waitExit waits up to d for the adapter process to exit.
func (s *session) waitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.tree.Exited():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// finish ends the session for good: it disconnects (if not done), kills the whole tree
// and verifies it gone within the process cleanup bound (R48, R63), waits for the
// reader and releases the tree. It returns nil when the tree was proven gone.
func (s *session) finish() error {
	s.disconnect()
	s.mu.Lock()
	s.closing = true // a frame cut short by the kill is not the adapter's fault
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), limits.ProcessCleanup)
	defer cancel()
	kerr := s.tree.Kill(ctx)
	verr := s.tree.Verify(ctx)
	if cgroupEvidence(verr, s.tree) {
		// The observed session's cgroup is empty: what is left unproven is a process
		// the adapter deliberately moved out of it, which the checker reports aside.
		s.note, verr = verr.Error(), nil
	}
	if verr == nil && kerr != nil {
		verr = kerr
	}
	if verr == nil {
		// The tree is gone, so stdout has reached its end; the reader returns.
		select {
		case <-s.readerDone:
		case <-ctx.Done():
		}
	}
	cerr := s.tree.Close() // also unblocks a reader still in Read
	<-s.readerDone
	if verr != nil {
		return verr
	}
	return cerr
}

// cgroupEvidence reports whether err says only that the tree's cgroup, found empty, is
// no proof because the adapter could have moved processes out of it (a session without
// a PID namespace whose adapter may write an ancestor cgroup's cgroup.procs, as a root
// host's may): evidence that a cooperating adapter left nothing, not proof against one
// that hides.
func cgroupEvidence(err error, tree *platform.Tree) bool {
	var ue *platform.UnverifiedError
	why := tree.Supervision().NoProof
	return why != "" && errors.As(err, &ue) && len(ue.Pids) == 0 && ue.Reason == why
}
