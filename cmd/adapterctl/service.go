package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/adapterkit/adapterkit/cmd/adapterctl/internal/systemd"
	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/prommetrics"
	"github.com/adapterkit/adapterkit/lifecycle"
)

const serveServiceHelp = `
With --metrics HOST:PORT the daemon serves Prometheus metrics at http://HOST:PORT/metrics
on a listener of its own (never the control plane's): calls by adapter, method and
code, call durations, each adapter's memory, CPU time, restarts and state, and the
daemon's clients, unverified cleanups and sweep. See docs/operations.md. The same
listener answers probes: /healthz 200 while the daemon's state can be read (also
while it starts and stops), /readyz 200 only while it serves, an adapter is
discoverable in its DIRs and the control socket (if any) answers a ping; 503 and
the reason otherwise. See docs/kubernetes.md.

Under systemd (see contrib/systemd): sockets passed by socket activation
($LISTEN_FDS) are served, a Unix stream socket as the control socket (then --socket
is not needed) and a TCP one as the --listen endpoint (its TLS flags are still
needed), or as the metrics endpoint if its FileDescriptorName= is "metrics". With
$NOTIFY_SOCKET the daemon reports READY=1 once it serves (after the sweep),
STOPPING=1 when it is told to stop, and on SIGHUP RELOADING=1 and READY=1 around
the reload (Type=notify-reload). These variables and the passed descriptors are
never handed to the adapters.
`

// metricsName is the FileDescriptorName= of a passed socket served as --metrics.
const metricsName = "metrics"

// service is serve's integration with how daemons are run: the metrics endpoint
// and systemd's socket activation and readiness notification.
type service struct {
	metricsAddr string

	notify    *systemd.Notifier
	notifyErr error        // why $NOTIFY_SOCKET could not be used (logged; the daemon runs on)
	log       hclog.Logger // the daemon's, once configured
	unix      net.Listener // passed control socket, or nil
	tcp       net.Listener // passed --listen socket, or nil
	metrics   net.Listener // the metrics listener, or nil
	monitor   controlplane.Monitor
	http      *http.Server
	served    chan struct{} // closed when the metrics server's goroutine returns

	stopping  func() bool   // stops the STOPPING=1 notification from being sent
	stopped   chan struct{} // closed once it was sent
	dirs      []string
	socket    string             // the control socket served, "" without one (the readiness probe pings it)
	serving   atomic.Bool        // set once the daemon serves (readiness)
	scanOpts  *discovery.Options // how dirs are scanned
	listening string             // the metrics address, for the ready line
}

func (s *service) register(f *flags) {
	f.StringVar(&s.metricsAddr, "metrics", "", "serve Prometheus metrics at http://`HOST:PORT`/metrics (its own listener)")
}

// activate takes what systemd passed (sockets, notification socket) and removes its
// variables from the environment, before anything can hand them to an adapter. A
// passed TCP socket stands for --listen: its address fills ro.listen when not given.
func (s *service) activate(ro *serveRemoteOpts) error {
	lns, err := systemd.Listeners()
	if err != nil {
		return fmt.Errorf("%w: socket activation: %w", controlplane.ErrSocket, err)
	}
	// A notification socket that cannot be used does not keep the daemon from
	// serving (sd_notify's callers go on too); it is logged once a logger exists.
	s.notify, s.notifyErr = systemd.NewNotifier()
	for _, l := range lns {
		switch {
		case l.Unix && s.unix == nil:
			s.unix = l.Listener
		case !l.Unix && l.Name == metricsName && s.metrics == nil:
			s.metrics = l.Listener
		case !l.Unix && s.tcp == nil:
			s.tcp = l.Listener
		default:
			s.closeListeners(lns)
			return fmt.Errorf("%w: systemd passed more sockets than serve uses (%d): one Unix stream socket, one TCP socket and one TCP socket named %q at most",
				controlplane.ErrSocket, len(lns), metricsName)
		}
	}
	if s.tcp != nil && ro.listen == "" {
		ro.listen = s.tcp.Addr().String()
	}
	return nil
}

func (s *service) closeListeners(lns []systemd.Listener) {
	for _, l := range lns {
		_ = l.Close()
	}
	s.unix, s.tcp, s.metrics = nil, nil, nil
}

// configure hands the passed sockets to the daemon's configuration and starts the
// metrics endpoint. A passed TCP socket without the TLS flags is a usage error: there
// is no plain TCP.
func (s *service) configure(cfg *controlplane.ServerConfig, log hclog.Logger) error {
	s.dirs, s.log, s.socket = cfg.Dirs, log, cfg.Socket
	if s.socket == "" && s.unix != nil {
		s.socket = s.unix.Addr().String()
	}
	s.scanOpts = &discovery.Options{AllowGroupWritable: cfg.AllowGroupWritable}
	if s.notifyErr != nil {
		log.Warn("not notifying the service manager", "error", s.notifyErr)
	}
	if s.unix != nil {
		cfg.Listener = s.unix
	}
	if s.tcp != nil {
		if cfg.Remote == nil {
			return usagef("systemd passed a TCP socket: serving it needs --tls-cert, --tls-key, --client-ca and --allow (there is no plain TCP)")
		}
		cfg.Remote.Listener = s.tcp
	}
	cfg.Monitor = &s.monitor
	if s.metricsAddr == "" && s.metrics == nil {
		return nil
	}
	if s.metrics == nil {
		ln, err := net.Listen("tcp", s.metricsAddr)
		if err != nil {
			return fmt.Errorf("%w: --metrics %s: %w", controlplane.ErrSocket, s.metricsAddr, err)
		}
		s.metrics = ln
	}
	s.listening = s.metrics.Addr().String()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prommetrics.New(s.snapshot))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: hclogPrinter{log}}))
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/readyz", s.readyz)
	s.http = newMetricsServer(mux, defaultMetricsLimits, log)
	s.served = make(chan struct{})
	ln := s.metrics
	go func() {
		defer close(s.served)
		if err := serveMetrics(s.http, ln, defaultMetricsLimits); err != nil {
			log.Error("metrics endpoint stopped", "error", err)
		}
	}()
	return nil
}

// hclogPrinter lets promhttp log through the daemon's logger.
type hclogPrinter struct{ log hclog.Logger }

func (p hclogPrinter) Println(v ...any) { p.log.Error(strings.TrimSpace(fmt.Sprintln(v...))) }

// snapshot is what one scrape reports, read from the running daemon.
func (s *service) snapshot() prommetrics.Snapshot {
	var snap prommetrics.Snapshot
	for _, a := range s.monitor.Adapters() {
		snap.Adapters = append(snap.Adapters, prommetrics.Adapter{Name: a.Name, Version: a.Version, Up: a.Running,
			Methods: a.Methods, Figures: figures(&a.Stats)})
	}
	st := s.monitor.Status()
	if st == nil {
		return snap
	}
	d := &prommetrics.Daemon{Version: buildVersion(), Clients: st.Clients, UnverifiedCleanups: st.UnverifiedCleanups,
		Exits: st.Exits, Swept: len(st.Sweep.Swept), SweepFailed: len(st.Sweep.Failed), SweepError: st.Sweep.Error != "",
		StateSaveFailures: st.RefusedSaveFailures, StateUnsaved: st.RefusedNotSaved != "",
		Refused: map[string]uint64{"unix": st.RefusedClients}, Dropped: map[string]uint64{"unix": st.DroppedClients}}
	if r := st.Remote; r != nil {
		// The daemon's totals count the TCP listener's clients too.
		d.Refused["unix"] -= min(r.RefusedClients, d.Refused["unix"])
		d.Dropped["unix"] -= min(r.DroppedClients, d.Dropped["unix"])
		d.Refused["tcp"], d.Dropped["tcp"] = r.RefusedClients, r.DroppedClients
		d.CertNotAfter, d.CertReloads = r.CertNotAfter, r.Reloads
	}
	snap.Daemon = d
	return snap
}

// figures copies what the collector reads of st.
func figures(st *lifecycle.Stats) prommetrics.Figures {
	f := prommetrics.Figures{InFlight: st.InFlight, Restarts: st.Restarts, Violations: st.Violations, LimitHits: st.LimitHits,
		Starts: st.Backoff.Starts, FailedStarts: st.Backoff.Failed, StartFailures: st.Backoff.Failures, Abandoned: st.Abandoned,
		Running: st.Pid != 0, MemoryBytes: st.Usage.MemoryBytes, CPU: st.Usage.CPU, HasMemory: st.Usage.HasMemory, HasCPU: st.Usage.HasCPU}
	for i := range st.Methods {
		ms := &st.Methods[i]
		f.Methods = append(f.Methods, prommetrics.MethodFigures{Method: ms.Method, Calls: ms.Calls, Errors: ms.Errors,
			CallerErrors: ms.CallerErrors, Uncertain: ms.Uncertain, Count: ms.Latency.Count, Sum: ms.Latency.Sum, Latency: &ms.Latency})
	}
	return f
}

// ready tells systemd the daemon serves: called from the daemon's OnReady, once the
// sweep is done and its listeners accept connections.
func (s *service) ready(adapters int) {
	s.serving.Store(true)
	s.send("READY=1\n" + s.status(adapters))
}

// send sends a state to the service manager, if there is one; a failure is logged.
func (s *service) send(state string) {
	if err := s.notify.Notify(state); err != nil && s.log != nil {
		s.log.Warn("notifying the service manager failed", "state", state, "error", err)
	}
}

func (s *service) status(adapters int) string {
	return fmt.Sprintf("STATUS=serving %s from %s", count(adapters, "adapter", "adapters"), strings.Join(s.dirs, ", "))
}

// watchStop sends STOPPING=1 as soon as ctx ends (SIGTERM), before the daemon
// closes its adapters, which may take a while.
func (s *service) watchStop(ctx context.Context) {
	if s.notify == nil {
		return
	}
	s.stopped = make(chan struct{})
	s.stopping = context.AfterFunc(ctx, func() {
		defer close(s.stopped)
		s.send("STOPPING=1\nSTATUS=stopping: closing every adapter")
	})
}

// reloadOnHUP handles SIGHUP: the certificate files are re-read when the daemon
// serves on TCP, and under systemd the reload is announced (RELOADING=1 with
// MONOTONIC_USEC, then READY=1 once done, as Type=notify-reload expects). Without
// either, SIGHUP keeps its default action. It returns a function releasing the signal.
func (s *service) reloadOnHUP(ctx context.Context, remote *controlplane.RemoteConfig, log hclog.Logger) func() {
	if s.notify == nil {
		if remote == nil {
			return func() {}
		}
		reload, release := reloadOnHUP(ctx)
		remote.Reload = reload
		return release
	}
	var reload chan struct{}
	var reloaded chan error
	if remote != nil {
		reload, reloaded = make(chan struct{}), make(chan error, 1)
		remote.Reload = reload
		remote.OnReload = func(err error) { reloaded <- err }
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			s.send(systemd.Reloading())
			if reload != nil {
				select {
				case reload <- struct{}{}:
				case <-ctx.Done():
					return
				}
				select {
				case err := <-reloaded:
					if err != nil {
						log.Warn("reload: certificates not reloaded", "error", err)
					}
				case <-ctx.Done():
					return
				}
			}
			n := 0
			if found, err := discovery.Scan(ctx, s.scanOpts, s.dirs...); err == nil {
				n = len(found.Adapters)
			}
			s.send("READY=1\n" + s.status(n))
		}
	})
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}

// close stops the metrics endpoint, waits for STOPPING=1 to be sent if it is being
// sent, and closes the notification socket.
func (s *service) close() {
	if s.http != nil {
		// Shut down before its listener is closed: the server then knows it is a stop.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.http.Shutdown(ctx)
		cancel()
		_ = s.http.Close()
		<-s.served
	}
	for _, ln := range []net.Listener{s.unix, s.tcp, s.metrics} {
		if ln != nil {
			_ = ln.Close() // the daemon closed those it served; closing again is harmless
		}
	}
	if s.stopping != nil && !s.stopping() {
		<-s.stopped // ctx ended: the notification is under way or sent
	}
	_ = s.notify.Close()
}
