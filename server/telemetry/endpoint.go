package telemetry

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmrelay/llmrelay/internal/config"
)

// Handler is the metrics endpoint: /metrics, and /debug/pprof/ when pprof
// is on.
func (m *Metrics) Handler(withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	if withPprof {
		RegisterPprof(mux)
	}
	return mux
}

// RegisterPprof adds the net/http/pprof handlers to mux.
func RegisterPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}

// ListenMetrics opens the metrics endpoint's listener (nil, nil, nil when
// metrics are off); pprof is served there with metrics.pprof. A
// non-loopback address is allowed but said out loud at start-up.
func (t *Telemetry) ListenMetrics(log *slog.Logger) (*http.Server, net.Listener, error) {
	m := t.Metrics()
	if m == nil {
		return nil, nil, nil
	}
	addr := t.cfg.MetricsListen()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics listen %s: %w", addr, err)
	}
	withPprof := t.cfg.Pprof
	if !config.IsLoopback(addr) {
		msg := "metrics endpoint on a non-loopback address: anyone who can reach it can read the metrics"
		if withPprof {
			msg = "metrics endpoint with pprof on a non-loopback address: anyone who can reach it can read the metrics and profile the process"
		}
		log.Warn(msg, slog.String("addr", lis.Addr().String()))
	}
	log.Info("metrics listening", slog.String("addr", lis.Addr().String()), slog.Bool("pprof", withPprof))
	return &http.Server{Handler: m.Handler(withPprof), ReadHeaderTimeout: 10 * time.Second}, lis, nil
}

// ServeHTTP serves srv on lis until it is shut down; errors are logged.
func ServeHTTP(srv *http.Server, lis net.Listener, log *slog.Logger) {
	if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics endpoint stopped", slog.String("error", err.Error()))
	}
}
