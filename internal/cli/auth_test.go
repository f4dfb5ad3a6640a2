package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// serveConfig serves a configuration text on its TCP listener.
func serveConfig(t *testing.T, text string) string {
	t.Helper()
	cfg, err := config.Parse([]byte(text), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
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
	return lis[0].Addr().String()
}

const builtinModels = `
providers: [{name: builtin, type: builtin}]
models: [{name: builtin/echo, provider: builtin, upstream_model: echo, capabilities: {chat: {format: builtin}}}]
`

func TestCallerToken(t *testing.T) {
	t.Parallel()
	token := "cli-test-token-0123456789abcdef"
	sum := sha256.Sum256([]byte(token))
	addr := serveConfig(t, fmt.Sprintf("server: {listen: \"127.0.0.1:0\"}\nauth: {tokens: [{name: cli, sha256: %s}]}\n%s", hex.EncodeToString(sum[:]), builtinModels))
	r := runCLI(t, "", "chat", "--addr", addr, "-m", "builtin/echo", "hi")
	if r.code != ExitInvalidRequest || !strings.Contains(r.stderr, "Unauthenticated: ") || !strings.Contains(r.stderr, "reason: UNAUTHENTICATED") ||
		!strings.Contains(r.stderr, "\n  the server wants a caller token: --token TOKEN or $LLMRELAY_TOKEN\n") {
		t.Errorf("without a token: %+v", r)
	}
	// A wrong token says the same way out.
	if r := runCLI(t, "", "models", "--addr", addr, "--token", "wrong"); r.code != ExitInvalidRequest || !strings.Contains(r.stderr, "--token TOKEN or $LLMRELAY_TOKEN") {
		t.Errorf("a wrong token: %+v", r)
	}
	r = runCLI(t, "", "chat", "--addr", addr, "--token", token, "-m", "builtin/echo", "hi")
	if r.code != ExitOK || r.stdout != "You said: hi\n" {
		t.Errorf("with the token: %+v", r)
	}
	if r := runCLI(t, "", "health", "--addr", addr); r.code != ExitOK {
		t.Errorf("health needs no token: %+v", r)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, cert, key := writeSelfSigned(t, dir)
	addr := serveConfig(t, fmt.Sprintf("server: {listen: \"127.0.0.1:0\", tls: {cert_file: %q, key_file: %q}}\n%s", cert, key, builtinModels))
	r := runCLI(t, "", "chat", "--addr", addr, "--ca", ca, "-m", "builtin/echo", "hi")
	if r.code != ExitOK || r.stdout != "You said: hi\n" {
		t.Errorf("with --ca: %+v", r)
	}
	if r := runCLI(t, "", "chat", "--addr", addr, "--timeout", "2s", "-m", "builtin/echo", "hi"); r.code != ExitUnavailable {
		t.Errorf("plaintext against TLS: %+v", r)
	}
	if r := runCLI(t, "", "chat", "--addr", addr, "--cert", cert, "-m", "builtin/echo", "hi"); r.code != ExitUsage || !strings.Contains(r.stderr, "--cert and --key go together") {
		t.Errorf("--cert without --key: %+v", r)
	}
	if r := runCLI(t, "", "chat", "--addr", addr, "--ca", key, "-m", "builtin/echo", "hi"); r.code != ExitUsage || !strings.Contains(r.stderr, "no PEM certificate") {
		t.Errorf("--ca of a key: %+v", r)
	}
}

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 (its own
// CA) and its key.
func writeSelfSigned(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "llmrelay test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, cert, key
}
