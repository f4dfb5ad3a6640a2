package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"google.golang.org/grpc/credentials"
)

// certCheckEvery is how often a handshake looks at the files for a change.
const certCheckEvery = time.Second

// certReloader serves the certificate (and client CAs) of its files,
// re-reading them when their modification time or size changes, so that a
// rotated certificate (cert-manager, a mounted secret) is used without a
// restart. A file that fails to load keeps the previous one, with an error
// in the log.
type certReloader struct {
	cfg config.TLS
	log *slog.Logger
	now func() time.Time

	mu        sync.Mutex
	cert      *tls.Certificate
	clientCAs *x509.CertPool
	stamps    []fileStamp
	checked   time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func newCertReloader(cfg config.TLS, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{cfg: cfg, log: log, now: time.Now}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) files() []string {
	f := []string{r.cfg.CertFile, r.cfg.KeyFile}
	if r.cfg.ClientCAFile != "" {
		f = append(f, r.cfg.ClientCAFile)
	}
	return f
}

func (r *certReloader) stat() ([]fileStamp, error) {
	var out []fileStamp
	for _, f := range r.files() {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		out = append(out, fileStamp{fi.ModTime(), fi.Size()})
	}
	return out, nil
}

// load reads the files; the caller holds mu (or has the only reference).
func (r *certReloader) load() error {
	stamps, err := r.stat()
	if err != nil {
		return fmt.Errorf("server.tls: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.cfg.CertFile, r.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("server.tls: %w", err)
	}
	var pool *x509.CertPool
	if r.cfg.ClientCAFile != "" {
		pem, err := os.ReadFile(r.cfg.ClientCAFile)
		if err != nil {
			return fmt.Errorf("server.tls.client_ca_file: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return errors.New("server.tls.client_ca_file: no PEM certificate in " + r.cfg.ClientCAFile)
		}
	}
	r.cert, r.clientCAs, r.stamps = &cert, pool, stamps
	return nil
}

// current returns the certificate and client CAs, reloaded first when the
// files changed since the last look (at most once per certCheckEvery).
func (r *certReloader) current() (*tls.Certificate, *x509.CertPool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.checked) >= certCheckEvery {
		r.checked = now
		if stamps, err := r.stat(); err != nil || !sameStamps(stamps, r.stamps) {
			if err == nil {
				err = r.load()
			}
			if err != nil {
				r.log.Error("TLS files could not be reloaded; serving the previous certificate", slog.String("error", err.Error()))
			} else {
				r.log.Info("TLS certificate reloaded", slog.String("cert_file", r.cfg.CertFile))
			}
		}
	}
	return r.cert, r.clientCAs
}

func sameStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].mod.Equal(b[i].mod) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

// config is the listener's TLS configuration: HTTP/2 by ALPN (gRPC), TLS
// 1.2 at least, and with client CAs, verified client certificates.
func (r *certReloader) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, cas := r.current()
			c := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}, Certificates: []tls.Certificate{*cert}}
			if cas != nil {
				c.ClientCAs, c.ClientAuth = cas, tls.RequireAndVerifyClientCert
			}
			return c, nil
		},
	}
}

// listenerTLS lets gRPC see the TLS state of the connections our TCP
// listener terminates (tls.NewListener: TLS there, so the unix socket
// beside it stays plaintext on the same grpc.Server). It finishes the
// handshake on gRPC's handshake goroutine, under its connection timeout,
// and hands the state on as credentials.TLSInfo, which is where a verified
// client certificate names its caller (auth.tokens[].client_certificate).
// Plaintext connections pass through with no AuthInfo, as without
// credentials.
type listenerTLS struct{}

func (listenerTLS) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return c, nil, nil
	}
	if err := tc.Handshake(); err != nil {
		return nil, nil, err
	}
	return c, credentials.TLSInfo{State: tc.ConnectionState(),
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (listenerTLS) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("llmrelay: server-side credentials only")
}

func (listenerTLS) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}

func (l listenerTLS) Clone() credentials.TransportCredentials { return l }

func (listenerTLS) OverrideServerName(string) error { return nil }
