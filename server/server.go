// Package server is the llmrelay gRPC server: the gateway service, health,
// reflection, the interceptor chain, and graceful shutdown.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"reflect"
	"runtime"
	"time"

	"golang.org/x/net/netutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/extract"
	"github.com/llmrelay/llmrelay/server/interceptor"
	"github.com/llmrelay/llmrelay/server/mcp"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// Server is a configured llmrelay server.
type Server struct {
	cfg     *config.Config
	log     *slog.Logger
	grpc    *grpc.Server
	health  *health.Server
	gateway *gateway
	tel     *telemetry.Telemetry
	// exposed: a TCP listener is on a non-loopback address.
	exposed bool
	// listenOverride: server.listen came from outside the file
	// (WithListenOverride).
	listenOverride bool
	admission      *admission
	// live are the calls endable linked to the end of the grace period:
	// ended with errShuttingDown then, every call still running ends with
	// a status saying so.
	live callSet
}

// Option adjusts New.
type Option func(*options)

type options struct {
	telemetry      []telemetry.Option
	clock          pipeline.Clock
	listenOverride bool
}

// WithListenOverride says the configuration's server.listen was set from
// outside the file (serve's -listen or LLMRELAY_LISTEN): a reload then
// does not compare the file's listen, which never applies while the
// override stands, with the running one.
func WithListenOverride() Option {
	return func(opts *options) { opts.listenOverride = true }
}

// WithTelemetryOptions passes options to the telemetry set-up (tests: an
// in-memory span recorder).
func WithTelemetryOptions(o ...telemetry.Option) Option {
	return func(opts *options) { opts.telemetry = append(opts.telemetry, o...) }
}

// WithRetryClock replaces the clock the retry policy reads and sleeps on
// (tests: a clock whose Sleep returns at once and records the delay, so a
// provider's Retry-After of seconds is checked without waiting it out).
// The deadline checks still compare its Now with the calls' deadlines.
func WithRetryClock(c pipeline.Clock) Option {
	return func(opts *options) { opts.clock = c }
}

// errShuttingDown ends the calls still running when the grace period is
// over (server/errors.go maps it).
var errShuttingDown = errors.New("the server is shutting down and the grace period is over; retry the call (on another replica)")

// endCallsWait is how long calls ended at the end of the grace period get
// to send their status before the connections close.
const endCallsWait = 2 * time.Second

// endable returns ctx cancelled with errShuttingDown when the grace period
// ends; release(cancel, slot) frees the link (no closure per call).
func (s *Server) endable(ctx context.Context) (context.Context, context.CancelCauseFunc, callSlot) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, cancel, s.live.add(cancel)
}

// release ends what endable set up.
func release(cancel context.CancelCauseFunc, slot callSlot) {
	slot.remove()
	cancel(nil)
}

// New builds the server from a validated configuration.
func New(cfg *config.Config, log *slog.Logger, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tel, err := telemetry.New(context.Background(), cfg.Telemetry, os.Getenv, o.telemetry...)
	if err != nil {
		return nil, err
	}
	limits := cfg.Limits.WithDefaults()
	if o.clock == nil {
		o.clock = pipeline.RealClock{}
	}
	g := &gateway{log: log, now: time.Now, tel: tel, drain: make(chan struct{}), limits: limits, pool: provider.NewPool(limits.MaxBufferedBytes),
		retryClock: o.clock}
	st, err := buildState(cfg, tel, nil, log, o.clock)
	if err != nil {
		return nil, err
	}
	g.state.Store(st)
	s := &Server{cfg: cfg, log: log, gateway: g, health: health.NewServer(), tel: tel, admission: &admission{limits: limits}, listenOverride: o.listenOverride}
	authStream := s.authStreamInterceptor()
	limitUnary, limitStream := s.limitInterceptors()
	// Telemetry first: its metrics interceptors are the outermost.
	s.grpc = grpc.NewServer(append(tel.ServerOptions(),
		// Timing, request id, logging, recovery, auth and limits, in this
		// order, fused (one frame and no closures per call).
		grpc.ChainUnaryInterceptor(interceptor.Unary(time.Now, log, s.authUnary(limitUnary))),
		grpc.ChainStreamInterceptor(
			interceptor.TimingStream(time.Now),
			interceptor.RequestIDStream(),
			interceptor.LoggingStream(log),
			interceptor.RecoveryStream(log),
			authStream,
			limitStream,
		),
		grpc.MaxRecvMsgSize(limits.MaxRecvMessageBytes),
		// Metadata too: grpc's default lets one request's headers take 16 MiB.
		// (int64: math.MaxUint32 overflows a 32-bit int, which failed
		// GOARCH=386 and arm builds.)
		grpc.MaxHeaderListSize(uint32(min(int64(limits.MaxHeaderListBytes), math.MaxUint32))),
		// A backstop: fitResponse already keeps responses within the limit.
		grpc.MaxSendMsgSize(limits.MaxSendMessageBytes),
		grpc.StatsHandler(recvLimitLog{log: log, max: limits.MaxRecvMessageBytes}),
		// TLS is terminated by the TCP listener; this hands its state
		// (the client certificate) to the handlers.
		grpc.Creds(listenerTLS{}),
		// Long idle streams (a slow first token) stay up; dead peers are
		// found by pings.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		// Reuse handler goroutines instead of one new goroutine per call,
		// whose stack grows anew each time (8-10% of unary CPU in the
		// benchmark profiles); with GODEBUG=gcshrinkstackoff=1 (set in the
		// Dockerfile) their grown stacks are kept.
		grpc.NumStreamWorkers(uint32(64*runtime.GOMAXPROCS(0))),
		// Responses encoded by the generated vtprotobuf marshalers
		// (codec.go).
		grpc.ForceServerCodecV2(newCodec()),
	)...)
	s.register()
	tel.Registered(s.grpc)
	return s, nil
}

// Telemetry is the server's tracing and metrics; nil when both are off.
func (s *Server) Telemetry() *telemetry.Telemetry { return s.tel }

// buildState builds what calls use from a configuration; prev is the state
// it replaces (nil at start), whose callers' rate limits carry over.
func buildState(cfg *config.Config, tel *telemetry.Telemetry, prev *state, log *slog.Logger, clock pipeline.Clock) (*state, error) {
	providers, secrets, clients, err := buildProviders(cfg, tel, clock)
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Build(cfg, providers)
	if err != nil {
		return nil, err
	}
	servers, mcpSecrets, err := buildMCP(cfg)
	if err != nil {
		return nil, err
	}
	var prevAuth *auth.Store
	if prev != nil {
		prevAuth = prev.auth
	}
	callers, err := auth.New(cfg.Auth, prevAuth, log)
	if err != nil {
		return nil, err
	}
	if log != nil {
		for _, w := range cfg.SpendWarnings() {
			log.Warn(w)
		}
	}
	return &state{catalog: cat, redact: pipeline.NewRedactor(append(secrets, mcpSecrets...)...), auth: callers, clients: clients,
		mcp: servers, allowMCPURLs: cfg.Agent.AllowRequestMCPURLs, callBound: cfg.Defaults.CallBound(),
		maxToolTimeout: cfg.Agent.ToolTimeoutBound(), keepRecentToolMedia: cfg.Agent.RecentToolMedia()}, nil
}

// buildMCP resolves the configured MCP servers' headers; their values are
// secrets for the redactor.
func buildMCP(cfg *config.Config) (map[string]configuredMCP, []string, error) {
	out := map[string]configuredMCP{}
	var secrets []string
	for _, c := range cfg.MCPServers {
		s := mcp.Server{Name: c.Name, URL: c.URL, Transport: c.Transport, AllowedTools: c.AllowedTools}
		for k, h := range c.Headers {
			v, err := h.Resolve()
			if err != nil {
				return nil, nil, fmt.Errorf("mcp server %s: header %s: %w", c.Name, k, err)
			}
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[k] = v
			if h.Value == "" && len(v) >= 8 {
				secrets = append(secrets, v)
			}
		}
		out[c.Name] = configuredMCP{server: s, hosted: c.Hosted}
	}
	return out, secrets, nil
}

// register adds the gateway, health and reflection services.
func (s *Server) register() {
	// What the codec cannot decode is InvalidArgument (decode.go).
	s.grpc.RegisterService(s.decodeErrors(&llmrelayv1.GatewayService_ServiceDesc), s.gateway)
	s.grpc.RegisterService(s.decodeErrors(&llmrelayv1.ExtractService_ServiceDesc), &extractServer{inner: extract.NewService(), g: s.gateway})
	s.grpc.RegisterService(s.decodeErrors(&healthpb.Health_ServiceDesc), s.health)
	reflection.Register(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(llmrelayv1.GatewayService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(llmrelayv1.ExtractService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
}

// GRPC exposes the grpc.Server (for in-process tests over bufconn).
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Listeners opens the configured TCP address and unix socket.
func (s *Server) Listeners() ([]net.Listener, error) {
	var lis []net.Listener
	addr := "127.0.0.1:50051"
	if s.cfg.Server.Listen != nil {
		addr = *s.cfg.Server.Listen
	}
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		if err := s.checkExposure(l, addr); err != nil {
			_ = l.Close() // refusing to start
			return nil, err
		}
		l = netutil.LimitListener(l, s.admission.limits.MaxConnections)
		if t := s.cfg.Server.TLS; t.Enabled() {
			r, err := newCertReloader(t, s.log)
			if err != nil {
				_ = l.Close() // refusing to start
				return nil, err
			}
			l = tls.NewListener(l, r.config())
		}
		lis = append(lis, l)
	}
	if p := s.cfg.Server.UnixSocket; p != "" {
		// A socket left by an earlier run is replaced; anything else at
		// that path is not ours to delete.
		if fi, err := os.Lstat(p); err == nil {
			if fi.Mode().Type() != os.ModeSocket {
				closeAll(lis)
				return nil, fmt.Errorf("unix_socket %s: the path exists and is not a socket", p)
			}
			if err := os.Remove(p); err != nil {
				closeAll(lis)
				return nil, fmt.Errorf("remove stale socket %s: %w", p, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			closeAll(lis)
			return nil, fmt.Errorf("unix_socket %s: %w", p, err)
		}
		l, err := net.Listen("unix", p)
		if err != nil {
			closeAll(lis)
			return nil, fmt.Errorf("listen unix %s: %w", p, err)
		}
		lis = append(lis, netutil.LimitListener(l, s.admission.limits.MaxConnections))
		// Who may connect is who may write the socket.
		if err := os.Chmod(p, s.cfg.Server.SocketMode()); err != nil {
			closeAll(lis)
			return nil, fmt.Errorf("unix_socket %s: set mode: %w", p, err)
		}
	}
	if len(lis) == 0 {
		return nil, errors.New("no listener: set server.listen or server.unix_socket")
	}
	return lis, nil
}

func closeAll(lis []net.Listener) {
	for _, l := range lis {
		_ = l.Close() // best effort while failing start-up
	}
}

// Serve serves on the listeners until ctx is done, then drains: health goes
// NOT_SERVING, in-flight calls and streams get the grace period to finish,
// then the server stops.
func (s *Server) Serve(ctx context.Context, lis []net.Listener) error {
	stopTelemetry, err := s.serveTelemetry()
	if err != nil {
		closeAll(lis)
		return err
	}
	defer stopTelemetry()
	// Stopped: the pooled upstream connections go too.
	defer func() {
		st := s.gateway.state.Load()
		st.closeIdle()
		if err := st.auth.Close(nil); err != nil {
			s.log.Warn("closing the rate-limit store", slog.String("error", err.Error()))
		}
	}()
	errc := make(chan error, len(lis))
	for _, l := range lis {
		s.log.Info("listening", slog.String("addr", l.Addr().String()), slog.String("network", l.Addr().Network()))
		go func(l net.Listener) { errc <- s.grpc.Serve(l) }(l)
	}
	select {
	case err := <-errc:
		s.grpc.Stop()
		return err
	case <-ctx.Done():
	}
	grace := s.cfg.Server.ShutdownGrace.Duration
	if grace <= 0 {
		grace = 15 * time.Second
	}
	s.log.Info("draining", slog.Duration("grace", grace))
	// Agent runs go away at their next round; before health changes, so
	// whoever sees NOT_SERVING also sees the drain.
	s.gateway.startDrain()
	s.health.Shutdown()
	if d := min(s.cfg.Server.DrainDelay.Duration, grace); d > 0 {
		// Still serving new calls while probes see NOT_SERVING.
		time.Sleep(d)
		grace -= d
	}
	done := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
		s.log.Info("stopped")
	case <-time.After(grace):
		s.log.Warn("grace period over, ending the remaining calls with Unavailable (shutting down)",
			slog.Int64("calls", s.admission.calls.Load()), slog.Int64("streams", s.admission.streams.Load()))
		s.live.end(errShuttingDown)
		select {
		case <-done:
		case <-time.After(endCallsWait):
			s.log.Warn("calls still running after they were ended; closing the connections")
			s.grpc.Stop()
			<-done
		}
		s.log.Info("stopped")
	}
	return nil
}

// CheckConfig validates a configuration file as the server would at
// start-up, without listening: syntax, unknown keys, references, formats
// and options. Credentials are not required to be set.
func CheckConfig(path string) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	var errs []error
	providers := map[string]*catalog.Provider{}
	for i, p := range cfg.Providers {
		// The adapter checks its own settings (base URL, Azure routes),
		// with a placeholder key: credentials need not be set here.
		if _, err := newProvider(p, "placeholder-key", http.DefaultClient); err != nil {
			errs = append(errs, fmt.Errorf("providers[%d] (%s): %w", i, p.Name, err))
		}
		providers[p.Name] = &catalog.Provider{Name: p.Name, Type: p.Type}
	}
	if _, err := catalog.Build(cfg, providers); err != nil {
		errs = append(errs, err)
	}
	// Each error at its line and column in the file.
	return cfg.Locate(errors.Join(errs...))
}

// Reload swaps in the providers and models of a new configuration for new
// calls; calls in flight finish on the state they started with. An invalid
// configuration is rejected and the current one stays. The server section
// (listeners, logging), limits and telemetry are read only at start; a
// change to one is logged as a warning.
func (s *Server) Reload(cfg *config.Config) error {
	if s.exposed && !cfg.Auth.Enabled() && !s.cfg.Server.AllowUnauthenticated && !s.cfg.Server.TLS.MutualTLS() {
		return fmt.Errorf("reload rejected, keeping the current configuration: it has no auth.tokens, and the server listens on a non-loopback address without server.allow_unauthenticated")
	}
	st, err := buildState(cfg, s.tel, s.gateway.state.Load(), s.log, s.gateway.retryClock)
	if err != nil {
		return fmt.Errorf("reload rejected, keeping the current configuration: %w", err)
	}
	for _, section := range startOnlyChanges(s.cfg, cfg, s.listenOverride) {
		s.log.Warn("reload: " + section + " changed, but it is read at start only: restart to apply it")
	}
	old := s.gateway.state.Swap(st)
	old.closeIdle() // calls still running on it keep their connections
	if err := old.auth.Close(st.auth); err != nil {
		s.log.Warn("closing the previous rate-limit store", slog.String("error", err.Error()))
	}
	s.log.Info("configuration reloaded", slog.Int("models", len(st.catalog.Names())))
	return nil
}

// startOnlyChanges names the sections read only at start (server, limits,
// telemetry) that differ between the configuration the server started
// with and next: a reload keeps them, and an operator who edited one must
// be told, not left to think it applied.
func startOnlyChanges(started, next *config.Config, listenOverride bool) []string {
	var out []string
	nextServer := next.Server
	if listenOverride {
		nextServer.Listen = started.Server.Listen // the override stands over the file's
	}
	if !reflect.DeepEqual(started.Server, nextServer) {
		out = append(out, "server")
	}
	if !reflect.DeepEqual(started.Limits, next.Limits) {
		out = append(out, "limits")
	}
	if !reflect.DeepEqual(started.Telemetry, next.Telemetry) {
		out = append(out, "telemetry")
	}
	return out
}

// ReloadOnSignal reloads the configuration file at path whenever a value
// arrives on sig, until ctx is done. Errors are logged; the server keeps
// serving on the configuration it has.
func (s *Server) ReloadOnSignal(ctx context.Context, sig <-chan os.Signal, path string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			if path == "" {
				s.log.Warn("reload requested, but the server runs on the embedded default (no file to reload)")
				continue
			}
			cfg, err := config.Load(path)
			if err == nil {
				// As at start: every unreadable key, token and MCP
				// header at its line, and each unset variable said.
				err = cfg.CredentialErrors()
			}
			if err == nil {
				for _, w := range cfg.UnsetVariables() {
					s.log.Warn(w)
				}
				err = s.Reload(cfg)
			}
			if err != nil {
				s.log.Error("configuration reload failed", slog.String("error", err.Error()))
			}
		}
	}
}
