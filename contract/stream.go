package contract

import "github.com/adapterkit/adapterkit/internal/proto"

// Upload is a method that takes a byte stream from the host, beside its params P, and
// returns one result R: the host sends an io.Reader with registry.Upload, the adapter's
// handler reads it as an io.Reader (plugin.ImplementUpload). The stream travels as an
// ordered sequence of calls of the method, each carrying one chunk of at most about
// 3 MiB (base64 in a JSON string), so that no frame exceeds the frame limit; the
// chunks' wire form is in docs/contracts.md.
type Upload[P, R any] struct {
	svc  *Service
	name string
}

// NewUpload adds the upload method svc.ID()+"."+name to svc and returns its
// description. P and R are checked as [NewMethod] checks them.
func NewUpload[P, R any](svc *Service, name string) *Upload[P, R] {
	m := NewMethod[proto.UploadChunk[P], proto.UploadReply[R]](svc, name)
	return &Upload[P, R]{svc: svc, name: m.Name()}
}

// Name returns the method's full name.
func (u *Upload[P, R]) Name() string { return u.name }

// Service returns the service the method belongs to.
func (u *Upload[P, R]) Service() *Service { return u.svc }

// Download is a method that gives the host a byte stream, chosen by its params P: the
// adapter's handler writes it to an io.Writer (plugin.ImplementDownload), the host
// reads it as an io.Reader (registry.Download). The stream travels as waiting reads
// (the convention of registry.Stream) of the method, each returning a chunk of at most
// about 3 MiB; the wire form is in docs/contracts.md.
type Download[P any] struct {
	svc  *Service
	name string
}

// NewDownload adds the download method svc.ID()+"."+name to svc and returns its
// description. P is checked as [NewMethod] checks it.
func NewDownload[P any](svc *Service, name string) *Download[P] {
	m := NewMethod[proto.DownloadRead[P], proto.DownloadChunk](svc, name)
	return &Download[P]{svc: svc, name: m.Name()}
}

// Name returns the method's full name.
func (d *Download[P]) Name() string { return d.name }

// Service returns the service the method belongs to.
func (d *Download[P]) Service() *Service { return d.svc }
