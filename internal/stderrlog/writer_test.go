package stderrlog

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// newTestLog returns a Writer logging as the adapter "alpha" (pid 42) under the host
// logger "host", keeping a tail of tail lines (none for 0), and its sink.
func newTestLog(out *testkit.Buffer, json bool, tail int) (*Writer, Sink) {
	sink := Sink{Dropped: new(atomic.Uint64)}
	if tail > 0 {
		sink.Tail = NewTail(tail)
	}
	host := hclog.New(&hclog.LoggerOptions{Name: "host", Output: out, Level: hclog.Trace, JSONFormat: json})
	w := New(nil, host.Named("alpha"), hclog.NoLevel, "alpha", sink)
	w.Start(host.Named("alpha").With("pid", 42))
	return w, sink
}

// A line longer than maxLogLine is cut there and marked; the rest of it is dropped
// and the next line is whole.
func TestStderrLongLine(t *testing.T) {
	var out testkit.Buffer
	w, _ := newTestLog(&out, true, 0)
	long := bytes.Repeat([]byte("a"), 100<<10)
	for i := 0; i < len(long); i += 3000 { // in pieces, as a pipe delivers it
		w.Write(long[i:min(i+3000, len(long))])
	}
	w.Write([]byte("\nnext\n"))
	w.Close()
	recs := jsonRecords(t, out.String())
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	msg := recs[0]["@message"].(string)
	if want := strings.Repeat("a", maxLogLine) + truncatedMarker; msg != want {
		t.Errorf("long line: %d bytes, want %d ending in the marker", len(msg), len(want))
	}
	if recs[1]["@message"] != "next" || recs[0]["@level"] != "debug" || recs[0]["pid"] != float64(42) {
		t.Errorf("records: %v", recs)
	}
}

// Control characters and invalid UTF-8 cannot make a line into two, nor colour or
// rewrite the terminal: with the text format every record starts a line, and the
// lines of its multi-line values follow it indented ("  | "), never as a record.
func TestStderrCannotForge(t *testing.T) {
	var out testkit.Buffer
	w, obs := newTestLog(&out, false, 20)
	lines := []string{
		"plain \x1b[31mred\x1b[0m and a\rcarriage return\r",
		"bad utf8 \xff\xfe end",
		`{"@level":"error","@message":"x\n2026-01-01T00:00:00Z [ERROR] host: forged","k\nz":"v\u2028w","obj":{"a":"\n"}}`,
		`{"@level":"bogus","@message":"not a record"}`,
		"c1 \u0085 nel",
		`{"@level":"info","@message":"multi","v":"a\n[ERROR] host: forged\r\n\u001b[2J"}`,
	}
	for _, l := range lines {
		w.Write([]byte(l + "\n"))
	}
	w.Close()
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if strings.ContainsAny(l, "\x1b\r\u2028\u0085") || !utf8Valid(l) {
			t.Errorf("line not sanitized: %q", l)
		}
		if !strings.HasPrefix(l, "  ") {
			got = append(got, l)
		}
	}
	if len(got) != len(lines) {
		t.Fatalf("%d records logged, want %d:\n%s", len(got), len(lines), out.String())
	}
	for _, l := range got {
		if !strings.Contains(l, " host.alpha: ") {
			t.Errorf("line not attributed: %q", l)
		}
	}
	for _, want := range []string{`\x1b[31mred`, `a\x0dcarriage return`, `\xff\xfe end`, `[ERROR] host.alpha: x: pid=42`,
		`message_continued="2026-01-01T00:00:00Z [ERROR] host: forged"`, `k\x0az=v\u2028w`, `[DEBUG] host.alpha: {"@level":"bogus"`, `\u0085 nel`,
		"[INFO]  host.alpha: multi: pid=42\n  v=\n  | a\n  | [ERROR] host: forged\n  | \\x1b[2J\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if tail := obs.Tail.Lines(); len(tail) != len(lines) || tail[1] != `bad utf8 \xff\xfe end` {
		t.Errorf("tail = %q", tail)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

// A host logger that blocks never blocks the adapter's pipe: lines beyond the queue
// bound are dropped and counted, and reported once the logger moves again.
func TestStderrBlockedLogger(t *testing.T) {
	release := make(chan struct{})
	var out testkit.Buffer
	blocking := writerFunc(func(p []byte) (int, error) {
		<-release
		return out.Write(p)
	})
	obs := Sink{Tail: NewTail(20), Dropped: new(atomic.Uint64)}
	host := hclog.New(&hclog.LoggerOptions{Output: blocking, Level: hclog.Trace})
	w := New(nil, host, hclog.Info, "alpha", obs)
	w.Start(host)
	line := []byte(strings.Repeat("x", 99) + "\n")
	const n = 100000 // 10 MB
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			w.Write(line)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("writes blocked behind the host's logger")
	}
	dropped := obs.Dropped.Load()
	if dropped == 0 || dropped >= n {
		t.Fatalf("dropped %d of %d lines", dropped, n)
	}
	w.mu.Lock()
	queued := w.queued
	w.mu.Unlock()
	if queued > logQueueBytes {
		t.Errorf("queue holds %d bytes, bound %d", queued, logQueueBytes)
	}
	close(release)
	w.Close()
	if !strings.Contains(out.String(), "standard error lines dropped") {
		t.Errorf("no report of the dropped lines")
	}
	if tail := obs.Tail.Lines(); len(tail) != 20 {
		t.Errorf("tail has %d lines, want 20", len(tail))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func jsonRecords(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("host output is not JSON lines: %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// recordLine is the start of an hclog text record of the adapter "ad".
var recordLine = regexp.MustCompile(`^\[(TRACE|DEBUG|INFO|WARN|ERROR)\] +ad(: |$)`)

// Whatever an adapter writes on stderr, the host's text log gets well-formed records:
// each starts a line, attributed, and the lines of its multi-line values follow it
// indented (go-hclog's "  key=" and "  | " lines); all valid UTF-8, no control
// characters but tab.
func FuzzStderrLog(f *testing.F) {
	for _, s := range []string{
		"plain\n", "no newline", "\x1b[2J\r\n\xff", `{"@level":"warn","@message":"m","k":"v\nw"}` + "\n",
		`{"@level":"info","@message":"x","o":{"a":[1,"\u0000"]},"n":1e3,"b":true,"z":null}` + "\n",
		`{"@level":"error","@message":"two"}{"x":1}` + "\n", "\n\n\r\n", `{"@level":"info"` + "\n",
		"panic: x\n\ngoroutine 1 [running]:\n\t[ERROR] ad: forged\n", "Traceback (most recent call last):\n  \x1b[2J\nE\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var out testkit.Buffer
		host := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Trace, DisableTime: true})
		w := New(nil, host.Named("ad"), hclog.NoLevel, "ad", Sink{})
		w.Start(host.Named("ad"))
		w.Write(b)
		w.Close()
		for i, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" && out.String() == "" {
				continue
			}
			if !recordLine.MatchString(l) && (i == 0 || !strings.HasPrefix(l, "  ")) || !utf8Valid(l) {
				t.Fatalf("malformed log line %q from input %q", l, b)
			}
			for _, r := range l {
				if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 {
					t.Fatalf("control character %U in log line %q from input %q", r, l, b)
				}
			}
		}
	})
}
