package stderrlog

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// goPanic is what the Go runtime writes on standard error for an unrecovered panic.
const goPanic = "panic: boom\n" +
	"\tsecond line of the panic value\n" +
	"\n" +
	"goroutine 1 [running]:\n" +
	"main.(*probe).read(0xc000012345, {0x4b1f20, 0x5})\n" +
	"\t/src/thermometer/main.go:42 +0x1d\n" +
	"main.main()\n" +
	"\t/src/thermometer/main.go:12 +0x25\n" +
	"...additional frames elided...\n" +
	"created by main.start in goroutine 1\n" +
	"\t/src/thermometer/main.go:9 +0x3c\n"

// pyTraceback is a Python traceback with a chained exception.
const pyTraceback = "Traceback (most recent call last):\n" +
	"  File \"/srv/a.py\", line 3, in <module>\n" +
	"    read()\n" +
	"KeyError: 'inlet'\n" +
	"\n" +
	"During handling of the above exception, another exception occurred:\n" +
	"\n" +
	"Traceback (most recent call last):\n" +
	"  File \"/srv/a.py\", line 5, in <module>\n" +
	"ValueError: no probe\n"

// A panic or traceback (consecutive lines of one) is one record: its first line the
// message, the rest the field "stack", with real newlines: hclog's multi-line value in
// the text format, a JSON string escaped once in the JSON format. The line after it,
// and a JSON record, are records of their own.
func TestStderrMultiLineRecord(t *testing.T) {
	for _, c := range []struct{ name, in, msg, after string }{
		{"go", goPanic, "panic: boom", "after"},
		{"python", pyTraceback, "Traceback (most recent call last):", "after"},
		{"java", "Exception in thread \"main\" java.lang.IllegalStateException: x\n\tat A.b(A.java:3)\nCaused by: java.io.IOException: y\n\t... 1 more\n", `Exception in thread "main" java.lang.IllegalStateException: x`, "after"},
		{"rust", "thread 'main' panicked at src/main.rs:2:5:\nexplicit panic\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n", "thread 'main' panicked at src/main.rs:2:5:", "after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantStack := strings.TrimSuffix(c.in[strings.IndexByte(c.in, '\n')+1:], "\n")
			var js testkit.Buffer
			w, _ := newTestLog(&js, true, 0)
			w.Write([]byte("before\n" + c.in + c.after + "\n" + `{"@level":"info","@message":"rec"}` + "\n"))
			w.Close()
			recs := jsonRecords(t, js.String())
			if len(recs) != 4 {
				t.Fatalf("%d records, want 4:\n%s", len(recs), js.String())
			}
			if recs[1]["@message"] != c.msg || recs[1]["stack"] != wantStack || recs[1]["@level"] != "debug" || recs[1]["pid"] != float64(42) {
				t.Errorf("record %q / %q, want %q / %q", recs[1]["@message"], recs[1]["stack"], c.msg, wantStack)
			}
			if strings.Contains(js.String(), `\\x0a`) || !strings.Contains(js.String(), `\n`) {
				t.Errorf("newlines not escaped once:\n%s", js.String())
			}
			if recs[0]["@message"] != "before" || recs[2]["@message"] != c.after || recs[3]["@message"] != "rec" {
				t.Errorf("records around it: %v", recs)
			}

			var text testkit.Buffer
			w, _ = newTestLog(&text, false, 0)
			w.Write([]byte(c.in))
			w.Close()
			var want strings.Builder
			want.WriteString(" [DEBUG] host.alpha: " + c.msg + ": pid=42\n  stack=\n")
			for _, l := range strings.Split(wantStack, "\n") {
				want.WriteString("  | " + strings.ReplaceAll(l, "\t", `\t`) + "\n")
			}
			want.WriteString("  \n")
			got := text.String()
			if i := strings.Index(got, " [DEBUG]"); i < 0 || got[i:] != want.String() {
				t.Errorf("text format:\n%s\nwant\n%s", got, want.String())
			}
		})
	}
}

// A JSON record's numbers and booleans keep their JSON types in the host's JSON log;
// a multi-line string field keeps its newlines (escaped once), as a multi-line message
// does in the field message_continued.
func TestStderrRecordTypes(t *testing.T) {
	var out testkit.Buffer
	w, _ := newTestLog(&out, true, 0)
	w.Write([]byte(`{"@level":"error","@message":"recovered: boom\ngoroutine 7 [running]:","bytes":1,"ratio":0.5,"big":12345678901234567890,"ok":true,"stack":"a\n\tb"}` + "\n"))
	w.Close()
	raw := out.String()
	for _, want := range []string{`"bytes":1,`, `"ratio":0.5,`, `"big":12345678901234567890,`, `"ok":true,`, `"stack":"a\n\tb"`, `"@message":"recovered: boom"`, `"message_continued":"goroutine 7 [running]:"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("host JSON lacks %s:\n%s", want, raw)
		}
	}
}

// advance lets d of a synctest bubble's fake time pass for the calling goroutine
// (no real time passes).
func advance(d time.Duration) { <-time.After(d) }

// A multi-line record is logged once standard error has been quiet for quietPeriod,
// not before; one that never ends is cut at maxRecord and logged at once, its rest
// discarded until it ends, so that it holds at most maxRecord.
func TestStderrMultiLineBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out testkit.Buffer
		w, _ := newTestLog(&out, true, 0)
		w.Write([]byte("panic: boom\n\ngoroutine 1 [running]:\n"))
		synctest.Wait()
		if out.String() != "" {
			t.Fatalf("logged before the quiet period: %s", out.String())
		}
		advance(quietPeriod / 2)
		w.Write([]byte("main.main()\n"))
		advance(quietPeriod - time.Millisecond)
		synctest.Wait()
		if out.String() != "" {
			t.Fatalf("logged before a quiet period after the last line: %s", out.String())
		}
		advance(time.Millisecond)
		synctest.Wait()
		recs := jsonRecords(t, out.String())
		if len(recs) != 1 || recs[0]["stack"] != "goroutine 1 [running]:\nmain.main()" {
			t.Fatalf("after the quiet period: %v", recs)
		}
		mark := out.Len()

		// Never ending: frames as fast as they come, no quiet period.
		w.Write([]byte("fatal error: all goroutines are asleep - deadlock!\n"))
		frame := []byte("\t/src/thermometer/loop.go:42 +0x1d\n")
		for range 2 * maxRecord / len(frame) {
			w.Write(frame)
			w.wmu.Lock()
			held := w.group.size()
			w.wmu.Unlock()
			if held > maxRecord {
				t.Fatalf("record holds %d bytes, bound %d", held, maxRecord)
			}
		}
		synctest.Wait()
		recs = jsonRecords(t, out.String()[mark:])
		if len(recs) != 1 {
			t.Fatalf("%d records before the end of a never-ending one, want 1 (cut)", len(recs))
		}
		msg, _ := recs[0]["@message"].(string)
		stack, _ := recs[0]["stack"].(string)
		if msg != "fatal error: all goroutines are asleep - deadlock!" || !strings.HasSuffix(stack, "\n"+recordTruncatedMarker) || len(msg)+len(stack) > maxRecord+len(recordTruncatedMarker)+1 {
			t.Errorf("cut record: %q, %d bytes of stack ending %q", msg, len(stack), stack[max(0, len(stack)-60):])
		}
		advance(quietPeriod)
		w.Write([]byte("next\n"))
		w.Close()
		recs = jsonRecords(t, out.String()[mark:])
		if len(recs) != 2 || recs[1]["@message"] != "next" {
			t.Errorf("after the cut record: %v", recs)
		}
	})
}
