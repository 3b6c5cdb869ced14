package framewriter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// frame returns payload framed.
func frame(t testing.TB, payload string) []byte {
	t.Helper()
	b, err := proto.FinishFrame(append(proto.BeginFrame(nil), payload...), 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll reads frames from r until it ends and returns their payloads.
func readAll(r io.Reader) ([]string, error) {
	fr := proto.NewReader(r, 0)
	var got []string
	for {
		p, err := fr.ReadFrame()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, string(p))
	}
}

// counter counts releases.
type counter struct{ n atomic.Int32 }

func (c *counter) Release() { c.n.Add(1) }

// waitDone waits for the writer to be over.
func waitDone(t *testing.T, w *Writer) {
	t.Helper()
	select {
	case <-w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the writer did not end")
	}
}

// Every way of handing frames to the writer — written by the producer (Flush), by the
// write goroutine or a non-blocking attempt (Kick) — with frames copied, written by
// reference or spliced, tagged or not, from concurrent producers,
// delivers every frame whole, once, and each producer's frames in the order queued; and
// every borrowed buffer is released exactly once.
func TestConcurrentProducersRoundTrip(t *testing.T) {
	outputs := []struct {
		name string
		make func(t *testing.T) (io.ReadCloser, io.WriteCloser)
	}{
		{"io.Pipe", func(*testing.T) (io.ReadCloser, io.WriteCloser) { return io.Pipe() }},
		{"os.Pipe", func(t *testing.T) (io.ReadCloser, io.WriteCloser) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return r, w
		}},
	}
	for _, out := range outputs {
		t.Run(out.name, func(t *testing.T) {
			r, pw := out.make(t)
			w := New(pw, Config{Timeout: 10 * time.Second, OnStall: func() { pw.Close() }, Try: 64 << 10, Idle: time.Millisecond, Batch: 4 << 10, CopyMax: 1 << 10})
			var rel counter
			var queued atomic.Int32
			const producers, each = 6, 150
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						payload := fmt.Sprintf("p%d n%04d %s", p, i, bytes.Repeat([]byte{'a' + byte(i%26)}, (i*97)%3000))
						fb := frame(t, payload)
						switch (p + i) % 4 {
						case 0: // copied or by reference, with a release
							queued.Add(1)
							w.Queue(fb, nil, 0, &rel)
							_ = w.Flush(context.Background())
						case 1: // spliced, by reference, to the write goroutine
							queued.Add(1)
							mid := len(fb) / 2
							w.Queue(fb[:mid], []Splice{{At: mid, Data: fb[mid:]}}, 0, &rel)
							w.Kick()
						case 2: // tagged, a non-blocking attempt first
							queued.Add(1)
							if !w.Queue(fb, nil, uint64(i+1), &rel) {
								t.Error("the writer refused a frame")
								return
							}
							w.Kick()
						case 3: // a part by reference, inside the frame
							queued.Add(1)
							text := append(fb[:10:10], fb[len(fb)-1])
							w.Queue(text, []Splice{{At: 10, Data: fb[10 : len(fb)-1]}}, 0, &rel)
							_ = w.Flush(context.Background())
						}
					}
				}()
			}
			type result struct {
				got []string
				err error
			}
			res := make(chan result, 1)
			go func() { got, err := readAll(r); res <- result{got, err} }()
			wg.Wait()
			w.Close()
			waitDone(t, w)
			pw.Close()
			rr := <-res
			r.Close()
			if rr.err != nil {
				t.Fatal(rr.err)
			}
			if len(rr.got) != producers*each {
				t.Fatalf("%d frames read, want %d", len(rr.got), producers*each)
			}
			next := make([]int, producers)
			for _, g := range rr.got {
				var p, i int
				if _, err := fmt.Sscanf(g, "p%d n%d", &p, &i); err != nil {
					t.Fatalf("frame %.40q: %v", g, err)
				}
				want := fmt.Sprintf("p%d n%04d %s", p, i, bytes.Repeat([]byte{'a' + byte(i%26)}, (i*97)%3000))
				if g != want || i != next[p] {
					t.Fatalf("producer %d: frame %d (%d bytes) where frame %d was due, or changed", p, i, len(g), next[p])
				}
				next[p]++
			}
			if got, want := rel.n.Load(), queued.Load(); got != want {
				t.Fatalf("%d releases, want %d", got, want)
			}
		})
	}
}

// attemptingWriter returns a writer of an os.Pipe that makes non-blocking attempts, and
// the pipe's read end; the pipe is closed when the test ends. It skips the test where
// the system offers no such attempts.
func attemptingWriter(t *testing.T, cfg Config) (*os.File, *Writer) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	w := New(pw, cfg)
	if w.try == nil {
		t.Skip("no non-blocking writes on this system")
	}
	return pr, w
}

// A non-blocking attempt never waits for a full pipe, and whatever the pipe did not
// take (nothing, or part of a frame) is written later, in order, by the write
// goroutine, in front of what was queued meanwhile: the reader sees every byte once.
func TestTryPartialWrites(t *testing.T) {
	pr, w := attemptingWriter(t, Config{Try: 64 << 10, Idle: time.Millisecond})
	// Fill the pipe but for 1000 bytes, whatever its size: write until it is full.
	var want bytes.Buffer
	chunk := bytes.Repeat([]byte("f"), 1000)
	for {
		n, ok := w.try(chunk)
		want.Write(chunk[:n])
		if !ok || n < len(chunk) {
			break
		}
	}
	var first, second []string
	for i := range 20 {
		f := fmt.Sprintf("[frame %03d %s]", i, bytes.Repeat([]byte{'a' + byte(i%26)}, 300))
		want.WriteString(f)
		if i < 14 {
			first = append(first, f)
		} else {
			second = append(second, f)
		}
	}
	queue := func(frames []string) {
		for _, f := range frames {
			w.Queue([]byte(f), nil, 0, nil)
		}
	}
	queue(first)
	if w.tryFlush() {
		t.Fatal("tryFlush reported the whole queue written into a full pipe")
	}
	// Frames queued during an attempt go after the ones put back.
	try := w.try
	w.try = func(p []byte) (int, bool) { queue(second); return try(p) }
	if w.tryFlush() {
		t.Fatal("tryFlush reported a write into a full pipe")
	}
	w.try = try
	w.Kick() // the write goroutine takes what is left, waiting for the pipe as it must
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(pr, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the reader saw %d bytes that differ from the %d queued", len(got), want.Len())
	}
	w.Close()
	waitDone(t, w)
}

// The write goroutine starts only for frames that nobody writes at once, ends once
// idle, and starts again when kicked.
func TestLoopStartsOnDemandAndRetires(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	w := New(pw, Config{Idle: 20 * time.Millisecond})
	looping := func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.looping }
	got := make([]byte, 3)
	go func() { w.Queue([]byte("one"), nil, 0, nil); _ = w.Flush(context.Background()) }()
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "one" {
		t.Fatalf("read %q, %v", got, err)
	}
	if looping() {
		t.Fatal("the write goroutine started though the producer wrote its frame")
	}
	w.Queue([]byte("two"), nil, 0, nil)
	w.Kick()
	if !looping() {
		t.Fatal("Kick did not start the write goroutine")
	}
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "two" {
		t.Fatalf("read %q, %v", got, err)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return !looping() }, "the write goroutine did not end once idle")
	w.Queue([]byte("new"), nil, 0, nil)
	w.Kick()
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v after the goroutine ended and was kicked again", got, err)
	}
	if w.Close() {
		// Close may find everything written at once, or wait for the goroutine.
	}
	waitDone(t, w)
}

// Stop drops what is queued, releasing what it borrows and returning the tags of the
// frames never handed to a Write; a frame being written is written whole first.
func TestStopReturnsUnwrittenTags(t *testing.T) {
	pr, pw := io.Pipe()
	w := New(pw, Config{CopyMax: 100})
	var rel counter
	big := bytes.Repeat([]byte("x"), 1000)
	w.Queue(big, nil, 7, &rel) // by reference: Flush blocks in its Write
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush(context.Background()) }()
	head := make([]byte, 10)
	if _, err := io.ReadFull(pr, head); err != nil {
		t.Fatal(err)
	}
	for tag := uint64(8); tag < 11; tag++ {
		w.Queue(bytes.Repeat([]byte("f"), 200), nil, tag, &rel) // by reference: released when dropped
	}
	tags := w.Stop()
	if fmt.Sprint(tags) != "[8 9 10]" {
		t.Fatalf("Stop returned %v, want the three queued frames' tags", tags)
	}
	if n := rel.n.Load(); n != 3 {
		t.Fatalf("%d releases after Stop, want the 3 dropped frames'", n)
	}
	select {
	case <-w.Done():
		t.Fatal("Done before the Write in progress returned")
	default:
	}
	rest := make([]byte, len(big)-10)
	if _, err := io.ReadFull(pr, rest); err != nil {
		t.Fatal(err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	waitDone(t, w)
	if n := rel.n.Load(); n != 4 {
		t.Fatalf("%d releases, want 4", n)
	}
	if w.Queue([]byte("late"), nil, 0, &rel); rel.n.Load() != 5 {
		t.Fatal("a frame queued after Stop was not released")
	}
	pr.Close()
}

// A failed Write fails the writer once: OnFail is called once, Done is closed, what
// is queued is dropped and released (Stop then names the frames never handed to a
// Write), and later frames are refused.
func TestWriteFailure(t *testing.T) {
	pr, pw := io.Pipe()
	var fails atomic.Int32
	w := New(pw, Config{CopyMax: 100, OnFail: func(error) { fails.Add(1) }})
	var rel counter
	w.Queue(bytes.Repeat([]byte("x"), 1000), nil, 1, &rel)
	w.Kick()
	head := make([]byte, 10)
	if _, err := io.ReadFull(pr, head); err != nil { // the Write is under way
		t.Fatal(err)
	}
	w.Queue(bytes.Repeat([]byte("y"), 1000), nil, 2, &rel)
	pr.CloseWithError(errors.New("gone"))
	select {
	case <-w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the failed Write")
	}
	if err := w.Err(); err == nil || err.Error() != "gone" {
		t.Fatalf("Err %v", err)
	}
	if ok := w.Queue([]byte("x"), nil, 0, &rel); ok {
		t.Fatal("a failed writer took a frame")
	}
	if err := w.Flush(context.Background()); err == nil {
		t.Fatal("Flush of a failed writer reported no error")
	}
	if fails.Load() != 1 || rel.n.Load() != 3 {
		t.Fatalf("OnFail called %d times, %d releases; want 1 and 3", fails.Load(), rel.n.Load())
	}
	if tags := w.Stop(); fmt.Sprint(tags) != "[2]" {
		t.Fatalf("Stop returned %v, want the frame queued behind the failed Write", tags)
	}
}

// A Write that outlasts Timeout fails: through the write deadline of an output that
// has one, through OnStall (which closes the output) for one that has none.
func TestWriteTimeout(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		w := New(pw, Config{Timeout: 50 * time.Millisecond})
		w.Queue(bytes.Repeat([]byte("x"), 4<<20), nil, 0, nil) // more than a pipe holds
		if err := w.Flush(context.Background()); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Flush: %v, want the deadline", err)
		}
	})
	t.Run("stall", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pr.Close()
		stalled := make(chan struct{})
		w := New(pw, Config{Timeout: 50 * time.Millisecond, OnStall: func() { close(stalled); pw.Close() }})
		w.Queue([]byte("x"), nil, 0, nil)
		if err := w.Flush(context.Background()); !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("Flush: %v, want the closed pipe", err)
		}
		<-stalled
	})
	t.Run("context", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		w := New(pw, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		w.Queue(bytes.Repeat([]byte("x"), 4<<20), nil, 0, nil)
		if err := w.Flush(ctx); !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Flush: %v, want the context's deadline", err)
		}
	})
}

// WaitRoom waits while more than MaxQueued bytes are queued, and gives up after its
// timeout when nothing is written.
func TestWaitRoom(t *testing.T) {
	pr, pw := io.Pipe()
	w := New(pw, Config{MaxQueued: 10})
	w.Queue([]byte("0123456789ab"), nil, 0, nil)
	if w.WaitRoom(20 * time.Millisecond) {
		t.Fatal("WaitRoom found room over the bound with nothing written")
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	w.Kick()
	if !w.WaitRoom(10 * time.Second) {
		t.Fatal("WaitRoom found no room once the queue was written")
	}
	w.Close()
	waitDone(t, w)
	pw.Close()
}

// Kick of a writer that makes non-blocking attempts writes a small queue in the calling
// goroutine: no write goroutine starts for what the pipe takes at once.
func TestKickWritesInline(t *testing.T) {
	pr, w := attemptingWriter(t, Config{Try: 64 << 10})
	f := frame(t, `{"x":1}`)
	w.Queue(f, nil, 1, nil)
	w.Kick()
	w.mu.Lock()
	looping, left := w.looping, len(w.q.ends)
	w.mu.Unlock()
	if looping || left != 0 {
		t.Fatalf("after Kick: write goroutine started %v, %d frames left queued; want the frame written inline", looping, left)
	}
	got := make([]byte, len(f))
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(pr, got); err != nil || !bytes.Equal(got, f) {
		t.Fatalf("read %x, %v; want %x", got, err, f)
	}
	w.Close()
	waitDone(t, w)
}

// lockingRelease is a Releaser that uses the writer: it would deadlock if the writer
// released with its lock held.
type lockingRelease struct {
	w *Writer
	n atomic.Int32
}

func (r *lockingRelease) Release() { _ = r.w.Err(); r.n.Add(1) }

// What frames borrow is released with no lock of the writer held, also when they are
// dropped: by Stop, and after a failed Write.
func TestDropReleasesWithoutLock(t *testing.T) {
	for _, c := range []struct {
		name string
		end  func(w *Writer, pr *io.PipeReader, rel Releaser)
	}{
		{"stop", func(w *Writer, _ *io.PipeReader, rel Releaser) {
			w.Queue(bytes.Repeat([]byte("z"), 200), nil, 1, rel) // by reference
			w.Stop()
		}},
		{"failed write", func(w *Writer, pr *io.PipeReader, rel Releaser) {
			w.Queue(bytes.Repeat([]byte("x"), 1000), nil, 0, nil)
			w.Kick()
			head := make([]byte, 10)
			_, _ = io.ReadFull(pr, head) // the Write is under way; the next frame waits
			w.Queue(bytes.Repeat([]byte("z"), 200), nil, 1, rel)
			pr.CloseWithError(errors.New("gone"))
			<-w.Done()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pr.Close()
			w := New(pw, Config{CopyMax: 100})
			rel := &lockingRelease{w: w}
			ended := make(chan struct{})
			go func() { defer close(ended); c.end(w, pr, rel) }()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the writer released a dropped frame with its lock held (deadlock)")
			}
			if n := rel.n.Load(); n != 1 {
				t.Fatalf("%d releases of the dropped frame, want 1", n)
			}
			w.Stop()
			waitDone(t, w)
		})
	}
}

// A text of at most CopyMax bytes is copied by Queue, also around parts written by
// reference: the caller may reuse its memory at once (the host builds the envelope of
// large lent params in a pooled buffer it puts back right away).
func TestQueueCopiesShortText(t *testing.T) {
	var out bytes.Buffer
	w := New(&out, Config{CopyMax: 100})
	want := frame(t, `{"data":"`+string(bytes.Repeat([]byte("x"), 500))+`"}`)
	at := len(`....{"data":"`)
	text := append(append([]byte(nil), want[:at]...), want[len(want)-2:]...)
	var rel counter
	w.Queue(text, []Splice{{At: at, Data: want[at : len(want)-2]}}, 1, &rel)
	for i := range text {
		text[i] = '!' // reused by its owner
	}
	if n := rel.n.Load(); n != 0 {
		t.Fatalf("%d releases before the part was written, want 0", n)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("wrote %q, want %q", out.Bytes(), want)
	}
	if n := rel.n.Load(); n != 1 {
		t.Fatalf("%d releases after the write, want 1", n)
	}
	w.Close()
	waitDone(t, w)
}
