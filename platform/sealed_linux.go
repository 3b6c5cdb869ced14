package platform

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/digest"
)

// A pinned start executes a sealed in-memory copy of the hashed bytes (a memfd with
// F_SEAL_WRITE, F_SEAL_GROW, F_SEAL_SHRINK and F_SEAL_SEAL), as runc does against
// CVE-2019-5736: nothing, not even the file's owner, can change those bytes between
// the hash and the exec, or while a script's interpreter reads them. Executing the
// file's own descriptor is not enough: it names the inode, which its owner may still
// write in place (and reset the modification time after).
//
// A copy is kept per digest, not made per start: later starts of the same pin share
// it (each start executes its own descriptor of it).

// sealedCacheMax bounds the digests whose sealed copy is kept; the oldest is let go
// beyond it (starts under way hold descriptors of their own).
const sealedCacheMax = 16

// sealedSeals are the seals of a copy: no write, no size change, no further seal.
const sealedSeals = unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL

var sealedCache = struct {
	mu    sync.Mutex
	m     map[string]*os.File
	order []string // digests, oldest first
}{m: make(map[string]*os.File)}

// sealedCopy returns a close-on-exec descriptor of a sealed copy of f, whose contents
// hash to sum, numbered 10 or above (the numbers os.StartProcess moves descriptors
// to in the child are below); the caller closes it. The copy is made from f and hashed
// once sealed: if f changed since it was hashed, the copy does not match and the
// start fails with a *digest.MismatchError.
func sealedCopy(ctx context.Context, f *os.File, sum string) (*os.File, error) {
	sealedCache.mu.Lock()
	defer sealedCache.mu.Unlock() // one copy per digest, even for concurrent starts
	m, ok := sealedCache.m[sum]
	if !ok {
		var err error
		if m, err = newSealed(ctx, f, sum); err != nil {
			return nil, err
		}
		sealedCache.m[sum] = m
		sealedCache.order = append(sealedCache.order, sum)
		if len(sealedCache.order) > sealedCacheMax {
			old := sealedCache.order[0]
			sealedCache.order = sealedCache.order[1:]
			_ = sealedCache.m[old].Close()
			delete(sealedCache.m, old)
		}
	}
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 10)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fd), m.Name()), nil
}

// newSealed copies f into a new memfd, seals it and checks its digest.
func newSealed(ctx context.Context, f *os.File, sum string) (*os.File, error) {
	name := "adapterkit-pinned-" + sum[:16]
	flags := unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate(name, flags) // before Linux 6.3, no MFD_EXEC
	}
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	m := os.NewFile(uintptr(fd), "/memfd:"+name)
	fail := func(err error) (*os.File, error) {
		_ = m.Close()
		return nil, err
	}
	if _, err := io.Copy(m, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return fail(err)
	}
	if _, err := unix.FcntlInt(m.Fd(), unix.F_ADD_SEALS, sealedSeals); err != nil {
		return fail(os.NewSyscallError("fcntl F_ADD_SEALS", err))
	}
	got, err := digest.File(ctx, m)
	if err != nil {
		return fail(err)
	}
	if got != sum {
		return fail(&digest.MismatchError{Path: f.Name(), Want: sum, Got: got})
	}
	return m, nil
}
