package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// The service's bounds.
const (
	// bufferSize bounds the output kept per session; the command waits while it is full.
	bufferSize = 1 << 20
	// maxReadBytes is the most a read returns: its base64 stays far below the frame limit.
	maxReadBytes = 1 << 20
	// maxWait is the longest wait a read may ask for: half the call deadline, so that a
	// waiting read always answers before the host gives up on it (A34).
	maxWait = limits.CallDeadline / 2
	// maxSessions bounds the sessions that exist at once.
	maxSessions = 64
)

// console holds the sessions of one adapter process.
type console struct {
	closeBound time.Duration // the console close bound (R44)

	mu       sync.Mutex
	next     int64
	starting int // starts under way, counted against maxSessions
	closing  bool
	sessions map[int64]*session
}

func newConsole(lim *limits.Limits) *console {
	return &console{closeBound: bound.Console(lim), sessions: make(map[int64]*session)}
}

// session is one running (or finished) command and its output.
type session struct {
	id     int64
	cmd    *exec.Cmd
	out    *os.File      // the read end of the command's stdout and stderr
	stop   chan struct{} // closed when the session is being closed
	exited chan struct{} // closed when the command has been reaped
	pumped chan struct{} // closed when the output pump has returned

	mu      sync.Mutex
	buf     []byte        // output not read yet, at most bufferSize bytes
	eof     bool          // the output has ended
	changed chan struct{} // closed and replaced whenever buf or eof changes
}

// signal wakes everyone waiting on the session's state; s.mu must be held.
func (s *session) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// pump copies the command's output into the buffer, waiting while it is full, until
// the output ends or the session is closed.
func (s *session) pump() {
	defer close(s.pumped)
	chunk := make([]byte, 32<<10)
	for {
		s.mu.Lock()
		room, ch := bufferSize-len(s.buf), s.changed
		s.mu.Unlock()
		if room == 0 {
			select {
			case <-ch:
				continue
			case <-s.stop:
				return
			}
		}
		n, err := s.out.Read(chunk[:min(room, len(chunk))])
		s.mu.Lock()
		s.buf = append(s.buf, chunk[:n]...)
		if err != nil {
			s.eof = true // io.EOF, or the read end was closed by close
		}
		if n > 0 || err != nil {
			s.signal()
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// terminate kills the command if it still runs (its process group where the OS has
// them), waits for it within bound, then closes the output and waits for the pump. It
// reports how the command ended.
func (s *session) terminate(bound time.Duration) (closeResult, error) {
	close(s.stop)
	res := closeResult{Session: s.id}
	select {
	case <-s.exited:
	default:
		killCommand(s.cmd)
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	var err error
	select {
	case <-s.exited:
		res.ExitCode = s.cmd.ProcessState.ExitCode()
	case <-t.C:
		err = plugin.Errorf(wire.CodeFailed, "session %d: the command did not end within %v", s.id, bound)
	}
	// Closing the read end wakes the pump; a process that still writes gets EPIPE.
	s.out.Close()
	<-s.pumped
	return res, err
}

// The params and results of the service, declared once in package consoleapi.
type (
	startParams   = consoleapi.StartParams
	sessionResult = consoleapi.SessionResult
	readParams    = consoleapi.ReadParams
	readResult    = consoleapi.ReadResult
	sessionParams = consoleapi.SessionParams
	closeResult   = consoleapi.CloseResult
)

func (c *console) start(_ context.Context, p startParams) (sessionResult, error) {
	if err := checkCommand(p.Command); err != nil {
		return sessionResult{}, err
	}
	c.mu.Lock()
	switch {
	case c.closing:
		c.mu.Unlock()
		return sessionResult{}, plugin.Errorf(wire.CodeClosed, "the console is shutting down")
	case len(c.sessions)+c.starting >= maxSessions:
		c.mu.Unlock()
		return sessionResult{}, plugin.Errorf(wire.CodeBusy, "at most %d sessions may exist at once; close one first", maxSessions)
	}
	c.starting++
	c.mu.Unlock()

	s, err := startSession(p)

	c.mu.Lock()
	c.starting--
	closing := c.closing
	if err == nil && !closing {
		c.next++
		s.id = c.next
		c.sessions[s.id] = s
	}
	c.mu.Unlock()
	switch {
	case err != nil:
		return sessionResult{}, err
	case closing: // shutdown began while the command started: it must not survive
		_, _ = s.terminate(c.closeBound)
		return sessionResult{}, plugin.Errorf(wire.CodeClosed, "the console is shutting down")
	}
	return sessionResult{Session: s.id}, nil
}

// checkCommand refuses what must never be run: a relative path (it would depend on the
// working directory) and, on Windows, anything but an explicit .exe (R62's rule for
// adapters, applied to commands too: a batch file would run through cmd.exe).
func checkCommand(path string) error {
	switch {
	case path == "":
		return plugin.Errorf(wire.CodeInvalid, "command is required: an absolute path")
	case !filepath.IsAbs(path):
		return plugin.Errorf(wire.CodeInvalid, "command %q is not an absolute path; it is never resolved or run through a shell", path)
	case isWindows && !strings.EqualFold(filepath.Ext(path), ".exe"):
		return plugin.Errorf(wire.CodeInvalid, "command %q is not an explicit .exe", path)
	}
	return nil
}

// startSession starts the command with its stdout and stderr on one pipe.
func startSession(p startParams) (*session, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, plugin.Errorf(wire.CodeFailed, "creating the output pipe: %v", err)
	}
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Stdout, cmd.Stderr = pw, pw // *os.File: handed to the command, no copying goroutine
	setProcessGroup(cmd)
	err = cmd.Start()
	pw.Close() // the command has its copy; EOF comes when every holder closed it
	if err != nil {
		pr.Close()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, plugin.Errorf(wire.CodeInvalid, "command %q does not exist", p.Command)
		case errors.Is(err, fs.ErrPermission):
			return nil, plugin.Errorf(wire.CodeDenied, "command %q may not be executed: %v", p.Command, err)
		}
		return nil, plugin.Errorf(wire.CodeFailed, "starting %q: %v", p.Command, err)
	}
	s := &session{
		cmd: cmd, out: pr,
		stop: make(chan struct{}), exited: make(chan struct{}), pumped: make(chan struct{}),
		changed: make(chan struct{}),
	}
	go s.pump()
	go func() {
		_ = cmd.Wait() // the exit status is kept in cmd.ProcessState
		close(s.exited)
	}()
	return s, nil
}

// lookup returns the session with the given id or an invalid error.
func (c *console) lookup(id int64) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.sessions[id]; ok {
		return s, nil
	}
	return nil, plugin.Errorf(wire.CodeInvalid, "unknown session %d", id)
}

func (c *console) read(ctx context.Context, p readParams) (readResult, error) {
	if p.MaxBytes < 1 || p.MaxBytes > maxReadBytes {
		return readResult{}, plugin.Errorf(wire.CodeInvalid, "max_bytes must be from 1 to %d", maxReadBytes)
	}
	if p.WaitMS < 0 || p.WaitMS > maxWait.Milliseconds() {
		return readResult{}, plugin.Errorf(wire.CodeInvalid, "wait_ms must be from 0 to %d", maxWait.Milliseconds())
	}
	s, err := c.lookup(p.Session)
	if err != nil {
		return readResult{}, err
	}
	t := time.NewTimer(time.Duration(p.WaitMS) * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		if len(s.buf) > 0 || s.eof {
			n := min(len(s.buf), p.MaxBytes)
			res := readResult{Data: base64.StdEncoding.EncodeToString(s.buf[:n])}
			s.buf = s.buf[n:]
			if len(s.buf) == 0 {
				s.buf = nil // let the array go; the pump allocates anew
				res.EOF = s.eof
			}
			if n > 0 {
				s.signal() // room for the pump
			}
			s.mu.Unlock()
			return res, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return readResult{}, nil // nothing yet: answer before the call deadline (A34)
		case <-ctx.Done():
			return readResult{}, plugin.Errorf(wire.CodeAborted, "Read canceled") // R38
		case <-s.stop:
			return readResult{}, plugin.Errorf(wire.CodeClosed, "session %d was closed", s.id)
		}
	}
}

func (c *console) close(_ context.Context, p sessionParams) (closeResult, error) {
	c.mu.Lock()
	s, ok := c.sessions[p.Session]
	delete(c.sessions, p.Session)
	c.mu.Unlock()
	if !ok {
		return closeResult{}, plugin.Errorf(wire.CodeInvalid, "unknown session %d", p.Session)
	}
	return s.terminate(c.closeBound)
}

// closeAll ends every session concurrently and refuses new ones; it is what the adapter
// does when the host disconnects. It returns when all are done or ctx ends.
func (c *console) closeAll(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	all := make([]*session, 0, len(c.sessions))
	for id, s := range c.sessions {
		all = append(all, s)
		delete(c.sessions, id)
	}
	c.mu.Unlock()
	errs := make(chan error, len(all))
	for _, s := range all {
		go func() {
			_, err := s.terminate(c.closeBound)
			errs <- err
		}()
	}
	var joined []error
	for range all {
		select {
		case err := <-errs:
			joined = append(joined, err)
		case <-ctx.Done():
			return fmt.Errorf("console: sessions still closing: %w", ctx.Err())
		}
	}
	return errors.Join(joined...)
}
