package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/adapterkit/adapterkit/controlplane"
)

// socketEnv names the directory of the default socket ($XDG_RUNTIME_DIR: private to
// the user, made by the login manager).
const socketEnv = "XDG_RUNTIME_DIR"

// defaultSocketName is the default socket's name in its directory.
const defaultSocketName = "adapterkit.sock"

// defaultSocket returns the socket used when --socket is not given:
// $XDG_RUNTIME_DIR/adapterkit.sock, or, without that variable, adapterkit.sock in
// a per-user directory of the temporary directory (adapterkit-UID, 0700). A shared
// directory such as /tmp is never the default: another user could bind the path
// first.
func defaultSocket() string {
	if dir := os.Getenv(socketEnv); filepath.IsAbs(dir) {
		return filepath.Join(dir, defaultSocketName)
	}
	return filepath.Join(os.TempDir(), "adapterkit-"+strconv.Itoa(os.Getuid()), defaultSocketName)
}

// prepareSocketDir makes the per-user directory of the default socket, when socket
// is in one, refusing one that another user owns or others may enter.
func prepareSocketDir(socket string) error {
	dir := filepath.Dir(socket)
	if dir != filepath.Dir(filepath.Join(os.TempDir(), "adapterkit-"+strconv.Itoa(os.Getuid()), defaultSocketName)) {
		return nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ownedBySelf(fi) {
		return fmt.Errorf("%s is not a directory of this user with mode 0700: refusing to serve there (another user may have made it)", dir)
	}
	return nil
}

// dialSocket connects to the daemon at o's socket.
func (o *daemonOpts) dialSocket(ctx context.Context) (*controlplane.Client, error) {
	return controlplane.Dial(ctx, o.socket)
}
