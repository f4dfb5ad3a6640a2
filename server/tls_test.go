package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and key (PEM) signed by the CA.
func (ca *testCA) issue(t *testing.T, cn string, serial int64, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveTLS starts a server on 127.0.0.1:0 with yaml's server.tls and
// returns its address and log.
func serveTLS(t *testing.T, yaml string) (string, *syncBuffer) {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "test")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := srv.Listeners()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done })
	return lis[0].Addr().String(), logs
}

func listModels(addr string, creds credentials.TransportCredentials) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = llmrelayv1.NewGatewayServiceClient(conn).ListModels(ctx, &llmrelayv1.ListModelsRequest{})
	return err
}

func TestTLSAndMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newCA(t)
	certPEM, keyPEM := ca.issue(t, "server-1", 2, x509.ExtKeyUsageServerAuth)
	writeFile(t, filepath.Join(dir, "tls.crt"), certPEM)
	writeFile(t, filepath.Join(dir, "tls.key"), keyPEM)
	writeFile(t, filepath.Join(dir, "ca.crt"), ca.pem)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	base := strings.Replace(string(config.DefaultYAML()), "  listen: 127.0.0.1:50051\n", "  listen: 127.0.0.1:0\n  tls: {cert_file: "+
		filepath.Join(dir, "tls.crt")+", key_file: "+filepath.Join(dir, "tls.key")+"%s}\n", 1)

	t.Run("tls", func(t *testing.T) {
		addr, logs := serveTLS(t, strings.Replace(base, "%s", "", 1))
		if err := listModels(addr, credentials.NewTLS(&tls.Config{RootCAs: roots})); err != nil {
			t.Fatalf("TLS client: %v", err)
		}
		if err := listModels(addr, insecure.NewCredentials()); err == nil {
			t.Error("a plaintext client was served")
		}
		// A rotated certificate is served without a restart.
		certPEM, keyPEM := ca.issue(t, "server-2", 3, x509.ExtKeyUsageServerAuth)
		writeFile(t, filepath.Join(dir, "tls.crt"), certPEM)
		writeFile(t, filepath.Join(dir, "tls.key"), keyPEM)
		later := time.Now().Add(time.Minute)
		for _, f := range []string{"tls.crt", "tls.key"} {
			os.Chtimes(filepath.Join(dir, f), later, later)
		}
		waitFor(t, func() bool {
			c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, NextProtos: []string{"h2"}})
			if err != nil {
				return false
			}
			defer c.Close()
			return c.ConnectionState().PeerCertificates[0].Subject.CommonName == "server-2"
		}, "the rotated certificate")
		if !strings.Contains(logs.String(), "TLS certificate reloaded") {
			t.Errorf("log: %s", logs.String())
		}
		// A broken file keeps the current certificate.
		writeFile(t, filepath.Join(dir, "tls.crt"), []byte("garbage"))
		time.Sleep(1100 * time.Millisecond)
		if err := listModels(addr, credentials.NewTLS(&tls.Config{RootCAs: roots})); err != nil {
			t.Errorf("after a broken rotation: %v", err)
		}
		if !strings.Contains(logs.String(), "serving the previous certificate") {
			t.Errorf("log: %s", logs.String())
		}
		writeFile(t, filepath.Join(dir, "tls.crt"), certPEM) // for the next subtest
	})

	t.Run("mtls", func(t *testing.T) {
		addr, _ := serveTLS(t, strings.Replace(base, "%s", ", client_ca_file: "+filepath.Join(dir, "ca.crt"), 1))
		if err := listModels(addr, credentials.NewTLS(&tls.Config{RootCAs: roots})); err == nil {
			t.Error("a client without a certificate was served")
		}
		cPEM, kPEM := ca.issue(t, "client", 4, x509.ExtKeyUsageClientAuth)
		pair, err := tls.X509KeyPair(cPEM, kPEM)
		if err != nil {
			t.Fatal(err)
		}
		if err := listModels(addr, credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}})); err != nil {
			t.Errorf("client with a certificate: %v", err)
		}
		other := newCA(t)
		oPEM, okPEM := other.issue(t, "stranger", 5, x509.ExtKeyUsageClientAuth)
		opair, _ := tls.X509KeyPair(oPEM, okPEM)
		if err := listModels(addr, credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{opair}})); err == nil {
			t.Error("a client certificate from another CA was accepted")
		}
	})
}

func TestMutualTLSCountsAsAuthForExposure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newCA(t)
	certPEM, keyPEM := ca.issue(t, "server", 2, x509.ExtKeyUsageServerAuth)
	writeFile(t, filepath.Join(dir, "c"), certPEM)
	writeFile(t, filepath.Join(dir, "k"), keyPEM)
	writeFile(t, filepath.Join(dir, "ca"), ca.pem)
	for extra, refused := range map[string]bool{"": true, ", client_ca_file: " + filepath.Join(dir, "ca"): false} {
		y := strings.Replace(string(config.DefaultYAML()), "  listen: 127.0.0.1:50051\n", "  listen: 0.0.0.0:0\n  tls: {cert_file: "+
			filepath.Join(dir, "c")+", key_file: "+filepath.Join(dir, "k")+extra+"}\n", 1)
		cfg, err := config.Parse([]byte(y), "test")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		lis, err := srv.Listeners()
		for _, l := range lis {
			l.Close()
		}
		if (err != nil) != refused {
			t.Errorf("tls%s: err %v", extra, err)
		}
	}
}

// TestClientCertificateCallers: with mutual TLS, a caller can be named by
// its client certificate instead of a token: its name reaches meta.caller
// and its model list applies; a verified certificate that names no caller
// still needs a token, and a token wins over the certificate.
func TestClientCertificateCallers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newCA(t)
	certPEM, keyPEM := ca.issue(t, "server-cc", 2, x509.ExtKeyUsageServerAuth)
	writeFile(t, filepath.Join(dir, "tls.crt"), certPEM)
	writeFile(t, filepath.Join(dir, "tls.key"), keyPEM)
	writeFile(t, filepath.Join(dir, "ca.crt"), ca.pem)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	const token = "cert-test-token-5b1f9e0c7a"
	sum := sha256.Sum256([]byte(token))
	y := strings.Replace(string(config.DefaultYAML()), "  listen: 127.0.0.1:50051\n", "  listen: 127.0.0.1:0\n  tls: {cert_file: "+
		filepath.Join(dir, "tls.crt")+", key_file: "+filepath.Join(dir, "tls.key")+", client_ca_file: "+filepath.Join(dir, "ca.crt")+"}\n", 1) + `
auth:
  tokens:
    - {name: billing-service, client_certificate: billing.internal, models: [builtin/echo]}
    - {name: with-token, sha256: ` + hex.EncodeToString(sum[:]) + `}
`
	addr, _ := serveTLS(t, y)
	dial := func(cn string) llmrelayv1.GatewayServiceClient {
		cPEM, kPEM := ca.issue(t, cn, int64(len(cn)+10), x509.ExtKeyUsageClientAuth)
		pair, err := tls.X509KeyPair(cPEM, kPEM)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}})))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return llmrelayv1.NewGatewayServiceClient(conn)
	}
	req := &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hello")}}
	billing := dial("billing.internal")
	resp, err := billing.Chat(context.Background(), req)
	if err != nil || resp.GetMeta().GetCaller() != "billing-service" {
		t.Fatalf("certificate caller: %v, %v", resp.GetMeta().GetCaller(), err)
	}
	other := proto.Clone(req).(*llmrelayv1.ChatRequest)
	other.Model = "builtin/tools"
	if _, err := billing.Chat(context.Background(), other); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a model outside the caller's list: %v", err)
	}
	stranger := dial("stranger.internal")
	if _, err := stranger.Chat(context.Background(), req); status.Code(err) != codes.Unauthenticated ||
		!strings.Contains(err.Error(), "client certificate") {
		t.Errorf("a certificate naming no caller: %v", err)
	}
	resp, err = stranger.Chat(bearer(token), req)
	if err != nil || resp.GetMeta().GetCaller() != "with-token" {
		t.Errorf("token over a certificate: %v, %v", resp.GetMeta().GetCaller(), err)
	}
	if _, err := billing.Chat(bearer("not-a-configured-token-000"), req); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a wrong token with a known certificate: %v", err)
	}
}
