//go:build !windows && !linux

package platform

import "os"

// stdioPipe creates a pipe for an adapter's standard streams. Go opens both ends
// close-on-exec; the child's end reaches the adapter only as one of its three standard
// descriptors. hostReads (which end is the host's) matters on Windows only.
func stdioPipe(hostReads bool) (r, w *os.File, err error) { return os.Pipe() }
