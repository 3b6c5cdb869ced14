// Command rogue is an adapter that breaks the Adapter process protocol v1 on purpose,
// one misbehaviour per mode, so that the e2e tests can assert the host's exact reaction
// to each. It speaks the protocol by hand with package wire (not the plugin SDK,
// which would refuse to break the rules).
//
// The mode is the first argument, or else the environment variable ROGUE_MODE (a host
// passes the adapter's environment explicitly). Without a mode, or with mode "serve",
// it is a well-behaved adapter used for load tests.
//
// It advertises service rogue.test, version 1:
//
//   - rogue.test.echo returns its params (in mode "busy" it replies busy instead).
//   - rogue.test.fail, params {"code","message","repeat"}, replies with an error whose
//     code and message are sent exactly as given (message repeated "repeat" times), so
//     codes outside the list and messages above the cap reach the host.
//   - rogue.test.sleep, params {"ms"}, waits, or replies aborted on cancel.
//   - rogue.test.hang waits for a cancel and replies aborted; in mode "neverreply" it
//     never replies at all.
//   - rogue.test.trigger commits the misbehaviour of the mode (see below).
//   - rogue.test.crash exits with status 2 at once, while calls are in flight.
//   - rogue.test.stats returns {"requests","cancels"} received so far.
//   - rogue.test.fds lists /proc/self/fd: [{"fd","target"}] (Linux).
//   - rogue.test.env returns os.Environ().
//   - rogue.test.pid returns the pid as the host sees it (/proc/self).
//   - rogue.test.fork, params {"n"}, starts up to n sleeping children and returns
//     {"started","error"}; rogue.test.alloc, params {"mb"}, allocates and touches that
//     many MiB and returns {"mb"}: for resource limits.
//
// Modes that misbehave on rogue.test.trigger: garbage (a stray text line on stdout),
// zero (a zero-length frame), oversize (a length prefix of 4 MiB + 1 and no body),
// badjson (a truncated JSON payload), unknownfield (a result with an extra field),
// unknowntype (an envelope of type "event"), unsent (a result for an id never sent),
// dupreply (two results for the trigger's id), exitmid (exit with status 3), stopread
// (stop reading stdin for good).
//
// Modes that misbehave in the handshake: early (a result for id 1 before reading
// anything, then the real one), unprompted (a result for id 2 right after the
// handshake), noinit (never answer initialize), catalog (answer initialize with the raw
// JSON of ROGUE_CATALOG), initerror (answer initialize with an error).
//
// As a check on the host, the adapter exits with status 4 when a request id does not
// increase strictly (R33) and with status 5 when a cancel names an id never sent (R36);
// it exits with status 0 at end of input (R49) and 1 on a framing error of the host.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
)

// Catalog is the catalog the rogue advertises when it behaves.
const Catalog = `{"protocol":1,"services":[{"id":"rogue.test","version":1,"methods":[` +
	`"rogue.test.echo","rogue.test.fail","rogue.test.sleep","rogue.test.hang",` +
	`"rogue.test.trigger","rogue.test.crash","rogue.test.stats","rogue.test.fds",` +
	`"rogue.test.env","rogue.test.pid","rogue.test.fork","rogue.test.alloc"]}]}`

type rogue struct {
	mode string

	wmu sync.Mutex // serializes writes to stdout

	mu       sync.Mutex
	lastID   uint64
	requests int
	cancels  int
	cancel   map[uint64]context.CancelFunc // requests that wait for a cancel
	hoard    [][]byte                      // rogue.test.alloc keeps its memory
}

func main() {
	mode := os.Getenv("ROGUE_MODE")
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode == "sleeper" { // a child of rogue.test.fork
		time.Sleep(time.Hour)
		return
	}
	r := &rogue{mode: mode, cancel: make(map[uint64]context.CancelFunc)}
	exit(r.run())
}

// exit ends the process with code. With ROGUE_EXITLOG set it first appends "pid code"
// to that file, so that a test learns every exit status from the adapter itself — also
// when the host saw the end as a failed write (EPIPE) and never got a status.
func exit(code int) {
	if name := os.Getenv("ROGUE_EXITLOG"); name != "" {
		if f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			_, _ = fmt.Fprintf(f, "%d %d\n", os.Getpid(), code) // one write: O_APPEND keeps lines whole
			_ = f.Close()
		}
	}
	os.Exit(code)
}

// raw writes b to stdout as it is, in one write.
func (r *rogue) raw(b []byte) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if _, err := os.Stdout.Write(b); err != nil {
		exit(1)
	}
}

// frame writes payload as one frame, whatever it contains.
func (r *rogue) frame(payload []byte) {
	b := make([]byte, limits.FrameHeaderSize, limits.FrameHeaderSize+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(payload)))
	r.raw(append(b, payload...))
}

func (r *rogue) result(id uint64, value []byte) { r.frame(proto.AppendResult(nil, id, value)) }

// errorReply sends an error envelope with code and message exactly as given: unlike
// proto.AppendError it neither normalizes the code nor caps the message.
func (r *rogue) errorReply(id uint64, code, message string) {
	b := []byte(`{"type":"error","v":1,"id":`)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"code":`...)
	b = proto.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = proto.AppendString(b, message)
	r.frame(append(b, '}'))
}

func (r *rogue) run() int {
	in := proto.NewReader(os.Stdin, 0)
	if r.mode == "early" {
		r.result(1, []byte(Catalog)) // before any request
	}
	p, err := in.ReadFrame()
	if err != nil {
		return 1
	}
	m, err := proto.DecodeHostMessage(p)
	if err != nil || m.Type != proto.TypeRequest || m.ID != 1 || m.Method != proto.MethodInitialize {
		return 1
	}
	r.lastID = 1
	switch r.mode {
	case "noinit":
		for { // read and ignore everything until the host gives up
			if _, err := in.ReadFrame(); err != nil {
				return 0
			}
		}
	case "catalog":
		r.result(1, []byte(os.Getenv("ROGUE_CATALOG")))
	case "initerror":
		r.errorReply(1, "failed", "initialize refused")
	default:
		r.result(1, []byte(Catalog))
	}
	if r.mode == "unprompted" {
		r.result(2, []byte(`{"unprompted":true}`))
	}
	for {
		p, err := in.ReadFrame()
		if err != nil {
			if err == io.EOF {
				return 0
			}
			return 1
		}
		m, err := proto.DecodeHostMessage(p)
		if err != nil {
			return 1
		}
		if code := r.receive(&m); code >= 0 {
			return code
		}
	}
}

// receive handles one envelope from the host; a result >= 0 ends the process with it.
func (r *rogue) receive(m *proto.Message) int {
	r.mu.Lock()
	if m.Type == proto.TypeCancel {
		r.cancels++
		if m.ID > r.lastID {
			r.mu.Unlock()
			return 5 // R36: a cancel for an id never sent
		}
		if cancel := r.cancel[m.ID]; cancel != nil {
			cancel()
		}
		r.mu.Unlock()
		return -1
	}
	if m.ID <= r.lastID {
		r.mu.Unlock()
		return 4 // R33: ids increase strictly
	}
	r.lastID = m.ID
	r.requests++
	var ctx context.Context = context.Background()
	if m.Method == "rogue.test.hang" || m.Method == "rogue.test.sleep" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		r.cancel[m.ID] = cancel
	}
	r.mu.Unlock()
	if m.Method == "rogue.test.trigger" && r.mode == "stopread" {
		for { // never read stdin again, never exit: the host must give up
			time.Sleep(time.Hour)
		}
	}
	// The payload is not reused by the reader, so m's slices may outlive this call.
	go r.handle(ctx, m.ID, m.Method, m.Params)
	return -1
}

func (r *rogue) done(id uint64) {
	r.mu.Lock()
	if cancel := r.cancel[id]; cancel != nil {
		cancel()
		delete(r.cancel, id)
	}
	r.mu.Unlock()
}

func (r *rogue) handle(ctx context.Context, id uint64, method string, params []byte) {
	defer r.done(id)
	switch method {
	case "rogue.test.echo":
		if r.mode == "busy" {
			r.errorReply(id, "busy", "Adapter busy")
			return
		}
		r.result(id, params)
	case "rogue.test.fail":
		var p struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Repeat  int    `json:"repeat"`
		}
		_ = json.Unmarshal(params, &p)
		msg := p.Message
		if p.Repeat > 1 {
			msg = strings.Repeat(msg, p.Repeat)
		}
		r.errorReply(id, p.Code, msg)
	case "rogue.test.sleep":
		var p struct {
			MS int `json:"ms"`
		}
		_ = json.Unmarshal(params, &p)
		t := time.NewTimer(time.Duration(p.MS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			r.result(id, params)
		case <-ctx.Done():
			r.errorReply(id, "aborted", "Sleep canceled")
		}
	case "rogue.test.hang":
		if r.mode == "neverreply" {
			select {} // the slot stays held until the host ends the connection
		}
		<-ctx.Done()
		r.errorReply(id, "aborted", "Hang canceled")
	case "rogue.test.trigger":
		r.trigger(id)
	case "rogue.test.crash":
		exit(2)
	case "rogue.test.stats":
		r.mu.Lock()
		v := fmt.Sprintf(`{"requests":%d,"cancels":%d}`, r.requests, r.cancels)
		r.mu.Unlock()
		r.result(id, []byte(v))
	case "rogue.test.fds":
		r.reply(id, listFDs())
	case "rogue.test.env":
		r.reply(id, os.Environ())
	case "rogue.test.pid":
		s, err := os.Readlink("/proc/self")
		if err != nil {
			s = strconv.Itoa(os.Getpid())
		}
		r.result(id, []byte(s))
	case "rogue.test.fork":
		r.fork(id, params)
	case "rogue.test.alloc":
		r.alloc(id, params)
	default:
		r.errorReply(id, "unavailable", "Unknown method")
	}
}

func (r *rogue) reply(id uint64, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		r.errorReply(id, "failed", err.Error())
		return
	}
	r.result(id, b)
}

// trigger commits the mode's misbehaviour in answer to request id.
func (r *rogue) trigger(id uint64) {
	ids := strconv.FormatUint(id, 10)
	switch r.mode {
	case "garbage":
		r.raw([]byte("hello from a stray print on stdout\n"))
	case "zero":
		r.raw([]byte{0, 0, 0, 0})
	case "oversize":
		var h [limits.FrameHeaderSize]byte
		binary.BigEndian.PutUint32(h[:], limits.MaxFrameSize+1)
		r.raw(h[:]) // and no body: the host must not wait for it
	case "badjson":
		r.frame([]byte(`{"type":"result","v":1,"id":` + ids + `,"value":`))
	case "unknownfield":
		r.frame([]byte(`{"type":"result","v":1,"id":` + ids + `,"value":{},"extra":true}`))
	case "unknowntype":
		r.frame([]byte(`{"type":"event","v":1,"id":` + ids + `}`))
	case "unsent":
		r.result(id+1000, []byte(`{}`))
	case "dupreply":
		r.result(id, []byte(`{"reply":1}`))
		r.result(id, []byte(`{"reply":2}`))
	case "exitmid":
		exit(3)
	default:
		r.result(id, []byte(`{"triggered":false}`))
	}
}

type fd struct {
	FD     int    `json:"fd"`
	Target string `json:"target"`
}

func listFDs() []fd {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	out := make([]fd, 0, len(names))
	for _, n := range names {
		num, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + n)
		if err != nil {
			continue // the directory's own descriptor, closed meanwhile
		}
		out = append(out, fd{FD: num, Target: target})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FD < out[j].FD })
	return out
}

func (r *rogue) fork(id uint64, params []byte) {
	var p struct {
		N int `json:"n"`
	}
	_ = json.Unmarshal(params, &p)
	// A single-threaded child where there is one: under a process limit (which counts
	// threads) each child then takes one slot.
	child, args := "/bin/sleep", []string{"3600"}
	if _, err := os.Stat(child); err != nil {
		if child, err = os.Executable(); err != nil {
			r.errorReply(id, "failed", err.Error())
			return
		}
		args = []string{"sleeper"}
	}
	var res struct {
		Started int    `json:"started"`
		Error   string `json:"error"`
	}
	for res.Started < p.N {
		cmd := exec.Command(child, args...)
		cmd.Env = []string{}
		if err := cmd.Start(); err != nil {
			res.Error = err.Error()
			break
		}
		res.Started++
	}
	r.reply(id, res)
}

func (r *rogue) alloc(id uint64, params []byte) {
	var p struct {
		MB int `json:"mb"`
	}
	_ = json.Unmarshal(params, &p)
	for i := 0; i < p.MB; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		r.mu.Lock()
		r.hoard = append(r.hoard, b)
		r.mu.Unlock()
	}
	r.reply(id, map[string]int{"mb": p.MB})
}
