package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/adapterkit/adapterkit/internal/digest"
)

// pinned is the executable of a pinned start ([Config.Digest]): opened once, hashed
// through that descriptor, and (where the system allows) executed through it too, so
// that what runs is what was hashed.
type pinned struct {
	f      *os.File    // the opened executable, hashed
	before os.FileInfo // f's state when hashing began
	exec   string      // the path to execute: the descriptor's, or Path where none exists
	child  *os.File    // passed to the adapter as fd 3 (a script's interpreter reads it), or nil
	extra  *os.File    // another descriptor to close after the start, or nil
}

// pinHook, when set (tests only), runs between hashing and executing: the window a swap
// of the file would have to hit.
var pinHook func(path string)

// openPinned opens cfg.Path, checks it against cfg.Digest and prepares its execution.
func openPinned(ctx context.Context, cfg *Config) (*pinned, error) {
	want, err := digest.Parse(cfg.Digest)
	if err != nil {
		return nil, err
	}
	f, err := openExe(cfg.Path)
	if err != nil {
		return nil, errors.Join(ErrStart, err)
	}
	p := &pinned{f: f, exec: cfg.Path}
	if p.before, err = f.Stat(); err != nil {
		p.close()
		return nil, errors.Join(ErrStart, err)
	}
	got, err := digest.File(ctx, f)
	if err != nil {
		p.close()
		return nil, errors.Join(ErrStart, err)
	}
	if got != want {
		p.close()
		return nil, &digest.MismatchError{Path: cfg.Path, Want: want, Got: got}
	}
	if err := p.prepare(); err != nil {
		p.close()
		return nil, errors.Join(ErrStart, err)
	}
	if pinHook != nil {
		pinHook(cfg.Path)
	}
	return p, nil
}

// changed reports the file written in place (the same file, new contents) since it was
// hashed: its size or modification time differ. A replacement of the file (a rename
// over it) is not a change of this file: the descriptor still holds the hashed one (the
// change time is not compared: unlinking the old file moves it). The modification time
// is as fine as the file system keeps it: on kernels without fine-grained timestamps a
// same-size rewrite within one clock tick of the hash is not seen.
func (p *pinned) changed() bool {
	now, err := p.f.Stat()
	if err != nil {
		return true
	}
	return now.Size() != p.before.Size() || !now.ModTime().Equal(p.before.ModTime())
}

func (p *pinned) close() {
	for _, f := range []*os.File{p.f, p.extra} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// errChangedWhileStarting is the cause of a pinned start whose file was written in
// place between hashing and executing: the tree was killed before it was handed out.
var errChangedWhileStarting = errors.New("the pinned file was written while it was being started")

// pinnedChanged is the error of such a start: errors.As finds an error matching discovery.ErrDigestMismatch
// with the contents hashed again (they may be the pinned ones again by then).
func pinnedChanged(cfg *Config) error {
	want, _ := digest.Parse(cfg.Digest)
	got, err := digest.File(context.Background(), cfg.pin.f)
	if err != nil {
		got = "unknown (" + err.Error() + ")"
	}
	return fmt.Errorf("%w: %w", errChangedWhileStarting, &digest.MismatchError{Path: cfg.Path, Want: want, Got: got})
}

// killStarted ends a tree that must not be handed out, verified within a bound.
func killStarted(t *Tree) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.Kill(ctx)
	_ = t.Verify(ctx)
	_ = t.Close()
}
