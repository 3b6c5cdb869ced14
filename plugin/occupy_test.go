package plugin

import (
	"errors"
	"slices"
	"testing"
)

// fakeTable hands out handle values like a handle table: the most recently freed value
// first, else the next unused one.
type fakeTable struct {
	free []int
	next int
	open map[int]bool
}

func (f *fakeTable) dup() (int, error) {
	h := f.next
	if n := len(f.free); n > 0 {
		h, f.free = f.free[n-1], f.free[:n-1]
	} else {
		f.next++
	}
	f.open[h] = true
	return h, nil
}

func (f *fakeTable) close(h int) { delete(f.open, h); f.free = append(f.free, h) }

// The Windows stdout protection keeps the old standard output handle value occupied by a
// duplicate of stderr, so that C code writing to its fd 1 cannot reach another object.
func TestOccupy(t *testing.T) {
	t.Run("freed value reused at once", func(t *testing.T) {
		f := &fakeTable{next: 10, open: map[int]bool{}}
		f.close(4) // the old stdout value
		if !occupy(4, occupyTries, f.dup, f.close) || !f.open[4] || len(f.open) != 1 {
			t.Errorf("occupied %v", f.open)
		}
	})
	t.Run("another thread took the value first, then freed it behind others", func(t *testing.T) {
		f := &fakeTable{next: 10, open: map[int]bool{}}
		f.free = []int{4, 7, 8} // 8 comes first, then 7, then 4
		if !occupy(4, occupyTries, f.dup, f.close) || !f.open[4] || len(f.open) != 1 {
			t.Errorf("occupied %v, free %v", f.open, f.free)
		}
		if !slices.Contains(f.free, 7) || !slices.Contains(f.free, 8) {
			t.Errorf("the extra handles were not closed: free %v", f.free)
		}
	})
	t.Run("value held elsewhere: bounded, nothing leaked", func(t *testing.T) {
		f := &fakeTable{next: 10, open: map[int]bool{}}
		if occupy(4, 5, f.dup, f.close) || len(f.open) != 0 {
			t.Errorf("occupied %v", f.open)
		}
	})
	t.Run("dup fails", func(t *testing.T) {
		closed := 0
		if occupy(4, 5, func() (int, error) { return 0, errors.New("no handles") }, func(int) { closed++ }) || closed != 0 {
			t.Error("occupy with a failing dup")
		}
	})
}
