package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/test/bufconn"

	"github.com/llmrelay/llmrelay/client"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// connFlags say which server a client command talks to, and how.
type connFlags struct {
	addr     string
	local    bool
	config   string
	timeout  time.Duration
	token    string
	tls      bool
	caFile   string
	certFile string
	keyFile  string
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
	fs.StringVar(&c.addr, "addr", defaultAddr(), "server address: host:port or unix:///path/to.sock ($LLMRELAY_ADDR, else $LLMRELAY_LISTEN)")
	fs.BoolVar(&c.local, "local", false, "run the embedded default configuration in process instead of calling a server")
	fs.StringVar(&c.config, "config", "", "with --local: run this configuration file instead of the embedded default")
	fs.DurationVar(&c.timeout, "timeout", timeout, "deadline of the call (0: none)")
	fs.StringVar(&c.token, "token", os.Getenv("LLMRELAY_TOKEN"), "caller token, sent as authorization: Bearer ($LLMRELAY_TOKEN)")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS (system roots unless --ca)")
	fs.StringVar(&c.caFile, "ca", "", "TLS: the server's CA certificate `FILE` (implies --tls)")
	fs.StringVar(&c.certFile, "cert", "", "mutual TLS: the client certificate `FILE` (with --key; implies --tls)")
	fs.StringVar(&c.keyFile, "key", "", "mutual TLS: the client key `FILE`")
}

// bearer sends the caller token with every call. It does not require
// transport security: a sidecar is called over loopback or a unix socket.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

// clientOptions are the credentials of the flags.
func (c *connFlags) clientOptions() ([]client.Option, error) {
	var opts []client.Option
	if c.token != "" {
		opts = append(opts, client.WithDialOptions(grpc.WithPerRPCCredentials(bearer(c.token))))
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return nil, usageErrorf("--cert and --key go together")
	}
	if !c.tls && c.caFile == "" && c.certFile == "" {
		return opts, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caFile != "" {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, usageErrorf("--ca: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usageErrorf("--ca %s: no PEM certificate in it", c.caFile)
		}
	}
	if c.certFile != "" {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, usageErrorf("--cert/--key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return append(opts, client.WithTransportSecurity(), client.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(cfg)))), nil
}

// checkAddr refuses the --addr values that grpc would dial somewhere else
// than meant: a URL (http://host:port: "too many colons"), or a host
// without a port (dialled on 443). unix: targets and grpc's own resolver
// schemes (dns:///, passthrough:///) pass.
func checkAddr(addr string) error {
	if strings.HasPrefix(addr, "unix:") {
		return nil
	}
	if scheme, rest, ok := strings.Cut(addr, "://"); ok {
		switch scheme {
		case "http", "https", "grpc", "grpcs", "tcp":
			hint := ""
			if scheme == "https" || scheme == "grpcs" {
				hint = ", with --tls"
			}
			return usageErrorf("--addr %q: want host:port or unix:///path/to.sock, not a URL (--addr %s%s)", addr, strings.TrimSuffix(rest, "/"), hint)
		}
		return nil
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return usageErrorf("--addr %q: want host:port (the server listens on 127.0.0.1:50051 by default) or unix:///path/to.sock", addr)
	}
	return nil
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
		if err := checkAddr(c.addr); err != nil {
			cancel()
			return nil, nil, nil, err
		}
		opts, err := c.clientOptions()
		if err != nil {
			cancel()
			return nil, nil, nil, err
		}
		cl, err := client.New(c.addr, opts...)
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

// loadConfig reads the configuration a server (serve, or --local) runs,
// with every provider key it cannot read named at its line.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default()
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.CredentialErrors(); err != nil {
		return nil, err
	}
	return cfg, nil
}
