package handover

import "testing"

// A leased buffer goes back to the pool (which empties it) when the last holder lets
// go, not before; one release more than held panics.
func TestLeaseReturnsBufferOnLastRelease(t *testing.T) {
	buf := make([]byte, 10, 64)
	l := Lend(&buf)
	l.Hold() // a connection queued a frame of it
	if n := l.Holders(); n != 2 {
		t.Fatalf("%d holders, want 2", n)
	}
	l.Release() // the caller's call returned
	if len(buf) != 10 {
		t.Fatal("the buffer went back to the pool while a writer still held it")
	}
	l.Release() // the writer wrote the frame
	if len(buf) != 0 {
		t.Fatal("the buffer did not go back to the pool when the last holder let go")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a release more than held did not panic")
		}
	}()
	l.Release()
}
