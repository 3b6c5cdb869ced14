package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/certgen"
)

const certsHelp = `
Creates, in DIR, the certificates to try a daemon's TCP listener ('serve --listen')
with: a certificate authority (ca.pem, ca.key), the daemon's certificate for each
--host (server.pem, server.key; default 127.0.0.1, ::1 and localhost), and a client
certificate for each --client NAME (client-NAME.pem, client-NAME.key) whose subject
common name is NAME, the identity an 'serve --allow NAME=ROLE' names. Keys are ECDSA
P-256, written owner-only (0600). The one CA signs both the daemon's and the clients'
certificates, so it is at once --client-ca of serve and --tls-ca of the clients.

Run again on the same DIR, it reuses the CA found there (to add clients, or a daemon
certificate after server.pem was removed) and keeps every certificate already there:
it never overwrites a file. Each new certificate is printed with its SPKI pin (for
--allow spki:sha256/...).

These are certificates for trying remote access out; for production use your own CA
(any PEM certificates with the same key usages work: serverAuth for the daemon,
clientAuth for clients) and keep ca.key off the daemon's machine.
`

// certsExitHelp documents certs' exit statuses, which end its help.
const certsExitHelp = `Exit status:
  0  the certificates asked for are in DIR
  1  they could not be made: DIR or a file in it cannot be read or written, or the CA
     found there cannot be used
  2  usage error (bad flags or arguments)
`

func runCerts(_ context.Context, e *env, args []string) int {
	var (
		dir            string
		hosts, clients stringList
		valid          time.Duration
	)
	f := newFlags(e, "certs", "--dir DIR [--host HOST]... [--client NAME]... [flags]", certsHelp)
	f.StringVar(&dir, "dir", "", "`DIR` to write the certificates in (created if missing; required)")
	f.Var(&hosts, "host", "`HOST` (IP address or DNS name) the daemon's certificate is valid for (repeatable)")
	f.Var(&clients, "client", "create a client certificate with common name `NAME` (repeatable)")
	f.DurationVar(&valid, "valid", certgen.DefaultValid, "how long the new certificates are valid")
	pos, done, status := f.parse(args)
	switch {
	case done:
		return status
	case len(pos) > 0:
		return fail(e, "certs", false, usagef("no arguments expected, got %q", pos), nil)
	case dir == "":
		return fail(e, "certs", false, usagef("--dir DIR is required"), nil)
	case valid <= 0:
		return fail(e, "certs", false, usagef("--valid must be positive"), nil)
	}
	for _, c := range clients {
		if c == "" || strings.ContainsAny(c, `/\`+"\x00") || c == "." || c == ".." {
			return fail(e, "certs", false, usagef("--client %q: a NAME usable in a file name is needed", c), nil)
		}
	}
	if len(hosts) == 0 {
		hosts = stringList{"127.0.0.1", "::1", "localhost"}
	}
	if err := makeCerts(e, dir, hosts, clients, valid); err != nil {
		return fail(e, "certs", false, err, nil)
	}
	return ExitOK
}

// makeCerts writes the CA (or reuses DIR's), the server certificate when DIR has
// none, and the client certificates.
func makeCerts(e *env, dir string, hosts, clients []string, valid time.Duration) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	ca, err := loadCA(path("ca.pem"), path("ca.key"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ca, err = certgen.NewCA("adapterctl certs CA", valid); err != nil {
			return err
		}
		if err := writeNew(path("ca.pem"), certgen.CertPEM(ca.Cert)); err != nil {
			return err
		}
		if err := writeNew(path("ca.key"), certgen.KeyPEM(ca.Key)); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "ca       %s\n", path("ca.pem"))
	case err != nil:
		return err
	default:
		fmt.Fprintf(e.stdout, "ca       %s (reused)\n", path("ca.pem"))
	}
	issue := func(label, base string, s certgen.Spec) error {
		if _, err := os.Lstat(path(base + ".pem")); err == nil {
			fmt.Fprintf(e.stdout, "%-8s %s (exists, kept)\n", label, path(base+".pem"))
			return nil
		}
		s.Valid = valid
		c, err := ca.Issue(s)
		if err != nil {
			return err
		}
		if err := writeNew(path(base+".key"), certgen.KeyPEM(c.Key)); err != nil {
			return err
		}
		if err := writeNew(path(base+".pem"), certgen.CertPEM(c.Cert)); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%-8s %s  %s\n", label, path(base+".pem"), controlplane.SPKIPin(c.Cert))
		return nil
	}
	if err := issue("server", "server", certgen.Spec{CommonName: "adapterctl serve", Server: true, Hosts: hosts}); err != nil {
		return err
	}
	for _, name := range clients {
		if err := issue("client", "client-"+name, certgen.Spec{CommonName: name}); err != nil {
			return err
		}
	}
	return nil
}

// loadCA reads a CA certificate and its key written by certs.
func loadCA(certFile, keyFile string) (*certgen.Authority, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		if _, serr := os.Stat(certFile); errors.Is(serr, fs.ErrNotExist) {
			return nil, serr
		}
		return nil, fmt.Errorf("the CA in %s cannot be used: %w", filepath.Dir(certFile), err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || pair.Leaf == nil || !pair.Leaf.IsCA {
		return nil, fmt.Errorf("%s is not a CA made by adapterctl certs (ECDSA)", certFile)
	}
	return &certgen.Authority{Cert: pair.Leaf, Key: key}, nil
}

// writeNew writes a new owner-only file; an existing one is an error.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
