package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
)

// startPprof serves the net/http/pprof handlers on addr (empty: off), on a
// mux of its own so that nothing else is exposed. It is meant for
// benchmarks and diagnosis on a loopback address, and says so at start-up
// when addr is not one; the listener lives as long as the process. (With
// metrics on, telemetry.metrics.pprof serves the same handlers on the
// metrics endpoint instead.)
func startPprof(addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if !config.IsLoopback(addr) {
		log.Warn("pprof on a non-loopback address: anyone who can reach it can profile the process", slog.String("addr", lis.Addr().String()))
	}
	log.Info("pprof listening", slog.String("addr", lis.Addr().String()))
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof server stopped", slog.String("error", err.Error()))
		}
	}()
	return nil
}
