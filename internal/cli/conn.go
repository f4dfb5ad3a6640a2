package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	"github.com/llmrelay/llmrelay/client"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// connFlags say which server a client command talks to.
type connFlags struct {
	addr    string
	local   bool
	config  string
	timeout time.Duration
}

func defaultAddr() string {
	for _, name := range []string{"LLMRELAY_ADDR", "LLMRELAY_LISTEN"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return "127.0.0.1:50051"
}

func (c *connFlags) register(fs *flag.FlagSet, timeout time.Duration) {
	fs.StringVar(&c.addr, "addr", defaultAddr(), "server address: host:port or unix:///path/to.sock ($LLMRELAY_ADDR)")
	fs.BoolVar(&c.local, "local", false, "run the embedded default configuration in process instead of calling a server")
	fs.StringVar(&c.config, "config", "", "with --local: run this configuration file instead of the embedded default")
	fs.DurationVar(&c.timeout, "timeout", timeout, "deadline of the call (0: none)")
}

// dial connects to the server, or with --local starts one in process over
// an in-memory listener. The returned function closes both.
func (c *connFlags) dial(ctx context.Context) (context.Context, *client.Client, func(), error) {
	if c.config != "" && !c.local {
		return nil, nil, nil, usageErrorf("--config needs --local (a server reads its own configuration)")
	}
	cancel := func() {}
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	if !c.local {
		cl, err := client.New(c.addr)
		if err != nil {
			cancel()
			return nil, nil, nil, usageErrorf("--addr %q: %v", c.addr, err)
		}
		return ctx, cl, func() { _ = cl.Close(); cancel() }, nil
	}
	cfg, err := loadConfig(c.config)
	if err != nil {
		cancel()
		return nil, nil, nil, &failure{msg: err.Error()}
	}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		return nil, nil, nil, &failure{msg: cfg.Locate(err).Error()}
	}
	lis := bufconn.Listen(1 << 20)
	served := make(chan struct{})
	go func() {
		// Serve returns when the server stops; its error is then only
		// that the listener closed.
		_ = srv.GRPC().Serve(lis)
		close(served)
	}()
	cl, err := client.New("passthrough:///llmrelay-local", client.WithDialOptions(
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) })))
	if err != nil {
		srv.GRPC().Stop()
		cancel()
		return nil, nil, nil, fmt.Errorf("local client: %w", err)
	}
	return ctx, cl, func() {
		_ = cl.Close()
		srv.GRPC().Stop()
		<-served
		cancel()
	}, nil
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default()
	}
	return config.Load(path)
}
