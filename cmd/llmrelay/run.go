package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

const usage = `usage:
  llmrelay serve [-config FILE] [-listen ADDR]   run the server (default command)
  llmrelay health [-addr ADDR]                   exit 0 if the server reports SERVING
  llmrelay config check FILE...                  validate configuration files
  llmrelay config default                        print the embedded default configuration
  llmrelay agent [-addr ADDR] [-model M] [-tools FILE] [-exec CMD] [-mcp NAMES] PROMPT
                                                 run an agent loop, tools answered by the file or a command

environment: LLMRELAY_CONFIG (config file), LLMRELAY_LISTEN (listen address)`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stderr)
	case "health":
		return healthCheck(ctx, args)
	case "config":
		return configCmd(args, stdout)
	case "agent":
		return agentCmd(ctx, args, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default()
	}
	return config.Load(path)
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfgPath := fs.String("config", os.Getenv("LLMRELAY_CONFIG"), "configuration file (YAML or JSON); empty: the embedded default")
	listen := fs.String("listen", os.Getenv("LLMRELAY_LISTEN"), "TCP listen address, overrides server.listen")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060); empty: off")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Server.Listen = listen
	}
	log := newLogger(cfg, stderr)
	if err := startPprof(*pprofAddr, log); err != nil {
		return err
	}
	srv, err := server.New(cfg, log)
	if err != nil {
		return err
	}
	lis, err := srv.Listeners()
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

func healthCheck(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	addr := fs.String("addr", envOr("LLMRELAY_LISTEN", "127.0.0.1:50051"), "server address (host:port or unix:///path)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health: %s", resp.GetStatus())
	}
	return nil
}

func configCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("config: want 'check FILE...' or 'default'")
	}
	switch args[0] {
	case "default":
		_, err := stdout.Write(config.DefaultYAML())
		return err
	case "check":
		if len(args) < 2 {
			return errors.New("config check: name at least one file")
		}
		var errs []error
		for _, path := range args[1:] {
			if err := server.CheckConfig(path); err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(stdout, "%s: ok\n", path)
		}
		return errors.Join(errs...)
	default:
		return fmt.Errorf("config: unknown subcommand %q", args[0])
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
