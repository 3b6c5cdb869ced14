package main

import (
	"context"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/cpconst"
	"github.com/adapterkit/adapterkit/internal/grant"
)

// Environment variables standing for the client commands' remote flags.
const (
	remoteEnv  = "ADAPTERKIT_REMOTE"
	tlsCAEnv   = "ADAPTERKIT_TLS_CA"
	tlsCertEnv = "ADAPTERKIT_TLS_CERT"
	tlsKeyEnv  = "ADAPTERKIT_TLS_KEY"
)

const remoteClientHelp = `
Instead of --socket, a daemon serving on TCP ('adapterctl serve --listen') is reached
with --remote HOST:PORT --tls-ca FILE --tls-cert FILE --tls-key FILE (or $` + remoteEnv + `,
$` + tlsCAEnv + `, $` + tlsCertEnv + `, $` + tlsKeyEnv + `; a flag wins over its variable, and
$` + remoteEnv + ` is ignored when --socket is given): mutual TLS 1.3, the daemon's
certificate verified against --tls-ca for HOST, this client's certificate and key
presented. A daemon that refuses the certificate (not from its client CA, expired,
not named by its --allow) ends the connection: exit 3; why is in the daemon's log, on
the stderr of its 'adapterctl serve' (at its default --log warn). A
method this client's role may not call is answered permission_denied (exit 3).
See docs/remote.md.
`

const serveRemoteHelp = `
With --listen HOST:PORT the daemon also serves on TCP (with or without --socket), with
mutual TLS 1.3 only: --tls-cert and --tls-key are its certificate and key, and a
client must present a certificate chaining to --client-ca whose identity an --allow
NAME=ROLE names (NAME: cn:CN or a bare CN, the certificate's subject common name, or
spki:sha256/BASE64, the SHA-256 of its public key; the two never match each other, a
malformed NAME is refused at start-up; ROLE: read may Ping, Version, Capabilities, Discover
and Status (without the adapters' log tails), logs may also read the log tails, call
may do everything, Send included). Any other client is refused during the handshake;
a method its role may not call is answered permission_denied. The ready line then
says "on SOCKET and tls://ADDRESS" (the address bound: port 0 takes a free port), and
with --json has "listen". SIGHUP re-reads --tls-cert, --tls-key and --client-ca for new
connections; connected clients stay. A handshake must end within --handshake-timeout;
a remote client idle for --idle-timeout is closed. 'adapterctl certs' makes
certificates to try it with. See docs/remote.md; the socket's clients keep every
permission.
`

// remoteOpts are the flags that reach a daemon over TCP with mutual TLS.
type remoteOpts struct {
	addr, ca, cert, key string
}

func (r *remoteOpts) register(f *flags) {
	f.StringVar(&r.addr, "remote", "", "`HOST:PORT` of a daemon serving on TCP with mutual TLS, instead of --socket (default $"+remoteEnv+")")
	f.StringVar(&r.ca, "tls-ca", "", "with --remote: PEM `FILE` of the CA that signed the daemon's certificate (default $"+tlsCAEnv+")")
	f.StringVar(&r.cert, "tls-cert", "", "with --remote: PEM `FILE` of this client's certificate (default $"+tlsCertEnv+")")
	f.StringVar(&r.key, "tls-key", "", "with --remote: PEM `FILE` of this client's private key (default $"+tlsKeyEnv+")")
}

// resolve completes the flags from the environment and checks them: it returns
// whether the daemon is remote. socketGiven tells whether --socket was given (then
// $ADAPTERKIT_REMOTE is ignored, and --remote is an error).
func (r *remoteOpts) resolve(f *flags, socketGiven bool) (bool, error) {
	fromEnv := func(v *string, flag, env string) {
		if !isSet(f, flag) {
			*v = os.Getenv(env)
		}
	}
	if socketGiven {
		if isSet(f, "remote") {
			return false, usagef("--socket and --remote cannot both be given")
		}
		r.addr = ""
	} else {
		fromEnv(&r.addr, "remote", remoteEnv)
	}
	if r.addr == "" {
		for _, n := range []string{"tls-ca", "tls-cert", "tls-key"} {
			if isSet(f, n) {
				return false, usagef("--%s is for --remote", n)
			}
		}
		return false, nil
	}
	fromEnv(&r.ca, "tls-ca", tlsCAEnv)
	fromEnv(&r.cert, "tls-cert", tlsCertEnv)
	fromEnv(&r.key, "tls-key", tlsKeyEnv)
	if _, _, err := net.SplitHostPort(r.addr); err != nil {
		return false, usagef("--remote %q is not HOST:PORT", r.addr)
	}
	var missing []string
	for _, m := range []struct{ v, flag, env string }{{r.ca, "--tls-ca", tlsCAEnv}, {r.cert, "--tls-cert", tlsCertEnv}, {r.key, "--tls-key", tlsKeyEnv}} {
		if m.v == "" {
			missing = append(missing, m.flag+" ($"+m.env+")")
		}
	}
	if len(missing) > 0 {
		return false, usagef("--remote needs %s", strings.Join(missing, ", "))
	}
	return true, nil
}

// dial connects to the remote daemon.
func (r *remoteOpts) dial(ctx context.Context) (*controlplane.Client, error) {
	cfg, err := controlplane.ClientTLSConfig(r.ca, r.cert, r.key)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return controlplane.DialTLS(ctx, r.addr, cfg)
}

// refusedByDaemon reports a connection the daemon ended with a TLS alert: it
// refused this client's certificate. crypto/tls gives a received alert no exported
// type, hence the text.
func refusedByDaemon(err error) bool {
	return err != nil && strings.Contains(err.Error(), "remote error: tls:")
}

// serveRemoteOpts are serve's flags for a TCP listener with mutual TLS.
type serveRemoteOpts struct {
	listen, cert, key, clientCA string
	allow                       stringList
	handshake, idle             time.Duration
}

func (o *serveRemoteOpts) register(f *flags) {
	f.StringVar(&o.listen, "listen", "", "also serve on TCP at `HOST:PORT`, with mutual TLS 1.3 only (needs --tls-cert, --tls-key, --client-ca, --allow)")
	f.StringVar(&o.cert, "tls-cert", "", "with --listen: PEM `FILE` of the daemon's certificate (chain); re-read on SIGHUP")
	f.StringVar(&o.key, "tls-key", "", "with --listen: PEM `FILE` of the daemon's private key; re-read on SIGHUP")
	f.StringVar(&o.clientCA, "client-ca", "", "with --listen: PEM `FILE` of the CA(s) client certificates must chain to; re-read on SIGHUP")
	f.Var(&o.allow, "allow", "with --listen: `NAME=ROLE` lets the client whose certificate has common name NAME (cn:NAME or a bare NAME) or\nwhose public key has the pin NAME (spki:sha256/BASE64) connect with ROLE read, logs or call (repeatable)")
	f.DurationVar(&o.handshake, "handshake-timeout", cpconst.HandshakeTimeout, "with --listen: a client's TLS handshake must complete within this")
	f.DurationVar(&o.idle, "idle-timeout", cpconst.IdleTimeout, "with --listen: close a remote client idle this long")
}

// config returns the remote listener's configuration, nil without --listen.
func (o *serveRemoteOpts) config(f *flags) (*controlplane.RemoteConfig, error) {
	if o.listen == "" {
		for _, n := range []string{"tls-cert", "tls-key", "client-ca", "allow", "handshake-timeout", "idle-timeout"} {
			if isSet(f, n) {
				return nil, usagef("--%s is for --listen", n)
			}
		}
		return nil, nil
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return nil, usagef("--listen %q is not HOST:PORT", o.listen)
	}
	switch {
	case o.cert == "" || o.key == "" || o.clientCA == "":
		return nil, usagef("--listen needs --tls-cert, --tls-key and --client-ca (there is no plain TCP)")
	case len(o.allow) == 0:
		return nil, usagef("--listen needs at least one --allow NAME=ROLE (a client no --allow names is refused)")
	case o.handshake <= 0 || o.idle <= 0:
		return nil, usagef("--handshake-timeout and --idle-timeout must be positive")
	}
	rc := &controlplane.RemoteConfig{Listen: o.listen, CertFile: o.cert, KeyFile: o.key, ClientCAFile: o.clientCA,
		Allow: make(map[string]controlplane.Role), HandshakeTimeout: o.handshake, IdleTimeout: o.idle}
	for _, a := range o.allow {
		name, r, err := grant.Parse(a)
		role := controlplane.Role(r)
		if err != nil {
			return nil, usagef("--allow %q: %v (want NAME=ROLE, NAME cn:COMMON-NAME, a bare common name, or spki:sha256/BASE64; ROLE read, logs or call)", a, err)
		}
		if prev, dup := rc.Allow[name]; dup && prev != role {
			return nil, usagef("--allow names %q twice, with roles %s and %s", name, prev, role)
		}
		rc.Allow[name] = role
	}
	return rc, nil
}

// describeTarget names the daemon in messages: its socket or "tls://HOST:PORT".
func describeTarget(socket string, r remoteOpts) string {
	if r.addr != "" {
		return "tls://" + r.addr
	}
	return socket
}

// reloadOnHUP returns a channel that delivers on every SIGHUP until ctx ends (the
// daemon then re-reads its certificate files), and a function releasing the signal.
func reloadOnHUP(ctx context.Context) (<-chan struct{}, func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reload := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				select {
				case reload <- struct{}{}:
				default: // a reload is pending already: it will read the newest files
				}
			}
		}
	}()
	return reload, func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}
