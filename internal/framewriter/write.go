package framewriter

import (
	"context"
	"time"
)

// writeBatch writes the frames of buf (ending at the offsets ends), with refs spliced
// in at their offsets, in as few Writes as the batch limit allows: a reference is
// written by a Write of its own, from the memory it borrows.
func (w *Writer) writeBatch(ctx context.Context, buf []byte, ends []int, refs []Splice) error {
	if ctx.Done() != nil && w.dw != nil {
		// An ended ctx stops a Write in progress: its deadline becomes now.
		stop := context.AfterFunc(ctx, func() { _ = w.dw.SetWriteDeadline(time.Now()) })
		defer stop()
		w.dlSet = true
	}
	start := 0
	for i := 0; i < len(ends); {
		end := ends[i]
		i++
		for i < len(ends) && ends[i]-start <= w.batchN {
			end = ends[i]
			i++
		}
		for ; len(refs) > 0 && refs[0].At <= end; refs = refs[1:] {
			if err := w.write(ctx, buf[start:refs[0].At]); err != nil {
				return err
			}
			if err := w.write(ctx, refs[0].Data); err != nil {
				return err
			}
			start = refs[0].At
		}
		if err := w.write(ctx, buf[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// write writes p within the writer's bound: with a write deadline when the output has
// one (Timeout from now, or ctx's deadline if earlier), else with the stall timer.
func (w *Writer) write(ctx context.Context, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if w.dw != nil {
		dl, ok := ctx.Deadline()
		if w.timeout > 0 {
			if t := time.Now().Add(w.timeout); !ok || t.Before(dl) {
				dl, ok = t, true
			}
		}
		if ok || w.dlSet {
			// A deadline set for an earlier Write must not outlive it.
			if err := w.dw.SetWriteDeadline(dl); err != nil {
				return err
			}
			w.dlSet = ok
		}
		// After the deadline is set: a ctx that ends from here on sets it to now.
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := w.out.Write(p)
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.stall != nil {
		w.stall.Reset(w.timeout)
		_, err := w.out.Write(p)
		w.stall.Stop()
		return err
	}
	_, err := w.out.Write(p)
	return err
}
