package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

const serveSummary = `Run the server until SIGINT or SIGTERM (then drain). SIGHUP reloads the
configuration file. Environment: LLMRELAY_CONFIG (file), LLMRELAY_LISTEN (address).`

func serve(ctx context.Context, e *env, args []string) error {
	fs := newFlags("serve")
	cfgPath := fs.String("config", os.Getenv("LLMRELAY_CONFIG"), "configuration `FILE` (YAML or JSON); empty: the embedded default")
	listen := fs.String("listen", os.Getenv("LLMRELAY_LISTEN"), "TCP listen address, overrides server.listen")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060); empty: off")
	pos, err := parse(e, fs, "", serveSummary, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	// A value from the environment is named as such when it is wrong: the
	// variable may have been exported long ago, or by someone else.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		if !set["config"] && *cfgPath != "" && strings.HasPrefix(err.Error(), "config: ") {
			return &failure{msg: "LLMRELAY_CONFIG=" + *cfgPath + ": " + strings.TrimPrefix(err.Error(), "config: ")}
		}
		return &failure{msg: err.Error()}
	}
	if *listen != "" {
		if _, _, err := net.SplitHostPort(*listen); err != nil {
			from := "-listen"
			if !set["listen"] {
				from = "LLMRELAY_LISTEN"
			}
			return &failure{msg: fmt.Sprintf("%s: %q is not host:port (e.g. 127.0.0.1:50051)", from, *listen)}
		}
		cfg.Server.Listen = listen
	}
	log := newLogger(cfg, e.stderr)
	for _, w := range cfg.UnsetVariables() {
		log.Warn(w)
	}
	if err := startPprof(*pprofAddr, log); err != nil {
		return err
	}
	var opts []server.Option
	if *listen != "" {
		opts = append(opts, server.WithListenOverride())
	}
	srv, err := server.New(cfg, log, opts...)
	if err != nil {
		// Model and provider errors at their line and column.
		return &failure{msg: cfg.Locate(err).Error()}
	}
	source := *cfgPath
	if source == "" {
		source = "the embedded default (llmrelay config default)"
	}
	log.Info("configuration", slog.String("file", source), slog.Int("models", len(cfg.Models)))
	lis, err := srv.Listeners()
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w (another server on it? choose another address with -listen or LLMRELAY_LISTEN)", err)
	}
	if err != nil && strings.HasPrefix(err.Error(), "server.") {
		return &failure{msg: cfg.Locate(err).Error()} // server.tls: at its line
	}
	if err != nil {
		return err
	}
	// SIGHUP reloads the configuration file for new calls.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go srv.ReloadOnSignal(ctx, hup, *cfgPath)
	return srv.Serve(ctx, lis)
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch cfg.Server.LogLevel {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Server.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
