package auth

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/llmrelay/llmrelay/internal/config"
)

func hashOf(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

func withToken(tok string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
}

func kindOf(t *testing.T, err error) Kind {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *auth.Error", err)
	}
	return e.Kind
}

func TestAuthenticateEverySource(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(file, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LLMRELAY_TEST_TOKEN", "env-token-0123456789")
	s, err := New(config.Auth{Tokens: []config.Token{
		{Name: "hashed", SHA256: hashOf("hashed-token-0123456789")},
		{Name: "file", TokenFile: file},
		{Name: "env", TokenEnv: "LLMRELAY_TEST_TOKEN"},
	}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{"hashed-token-0123456789": "hashed", "file-token-0123456789": "file", "env-token-0123456789": "env"} {
		c, err := s.Authenticate(withToken(tok))
		if err != nil || c.Name != want {
			t.Errorf("token of %s: caller %v, err %v", want, c, err)
		}
	}
	for name, ctx := range map[string]context.Context{
		"no metadata": context.Background(),
		"wrong token": withToken("hashed-token-0123456780"),
		"hash itself": withToken(hashOf("hashed-token-0123456789")),
		"basic":       metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Basic eA==")),
	} {
		_, err := s.Authenticate(ctx)
		if kindOf(t, err) != Unauthenticated {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewRejectsBadTokens(t *testing.T) {
	t.Setenv("LLMRELAY_SHORT", "short")
	for name, tok := range map[string]config.Token{
		"unset env": {Name: "a", TokenEnv: "LLMRELAY_UNSET_FOR_TEST"},
		"short":     {Name: "a", TokenEnv: "LLMRELAY_SHORT"},
		"no file":   {Name: "a", TokenFile: filepath.Join(t.TempDir(), "missing")},
	} {
		if _, err := New(config.Auth{Tokens: []config.Token{tok}}, nil, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	same := hashOf("same-token-0123456789")
	if _, err := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: same}, {Name: "b", SHA256: same}}}, nil, nil); err == nil {
		t.Error("two callers with one token accepted")
	}
}

func TestAllows(t *testing.T) {
	c := &Caller{Name: "x", models: []string{"builtin/echo", "openai/*"}}
	for model, want := range map[string]bool{"builtin/echo": true, "builtin/embed": false, "openai/gpt-4o": true, "openai": false, "builtin/echo2": false} {
		if got := c.Allows(model); got != want {
			t.Errorf("Allows(%s) = %v", model, got)
		}
	}
	if kindOf(t, c.CheckModel("builtin/embed")) != PermissionDenied {
		t.Error("CheckModel kind")
	}
	if !(&Caller{}).Allows("anything") {
		t.Error("no model list must allow every model")
	}
}

func TestRequestRate(t *testing.T) {
	s, err := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: hashOf("x"), RequestsPerMinute: 2}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.callers[0]
	now := time.Unix(1000, 0)
	for i := range 2 {
		if err := c.AdmitRequest(now); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	err = c.AdmitRequest(now)
	var e *Error
	if !errors.As(err, &e) || e.Kind != RateLimited || e.Limit != "requests_per_minute" || e.RetryAfter != 30*time.Second {
		t.Fatalf("third request: %+v", err)
	}
	if err := c.AdmitRequest(now.Add(30 * time.Second)); err != nil {
		t.Errorf("after the refill: %v", err)
	}
	// A reload with the same limit keeps the state; another limit starts afresh.
	s2, _ := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: hashOf("x"), RequestsPerMinute: 2}}}, s, nil)
	if err := s2.callers[0].AdmitRequest(now.Add(30 * time.Second)); err == nil {
		t.Error("reload refilled the bucket")
	}
	s3, _ := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: hashOf("x"), RequestsPerMinute: 5}}}, s, nil)
	if err := s3.callers[0].AdmitRequest(now.Add(30 * time.Second)); err != nil {
		t.Errorf("new limit: %v", err)
	}
}

func TestTokenBudget(t *testing.T) {
	s, err := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: hashOf("x"), TokensPerMinute: 600}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.callers[0]
	now := time.Unix(1000, 0)
	if err := c.AdmitTokens(now); err != nil {
		t.Fatal(err)
	}
	c.Spend(700, nil, now) // one call may overdraw: its size is known at its end
	err = c.AdmitTokens(now)
	var e *Error
	if !errors.As(err, &e) || e.Limit != "tokens_per_minute" || e.RetryAfter < 10*time.Second || e.RetryAfter > 11*time.Second {
		t.Fatalf("over budget: %+v", err)
	}
	if err := c.AdmitTokens(now.Add(11 * time.Second)); err != nil {
		t.Errorf("after the refill: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	s, err := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: hashOf("x"), MaxConcurrentCalls: 2}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.callers[0]
	for i := range 2 {
		if err := c.Enter(); err != nil {
			t.Fatalf("call %d refused: %v", i, err)
		}
	}
	var e *Error
	if err := c.Enter(); !errors.As(err, &e) || e.Kind != RateLimited || e.Limit != "max_concurrent_calls" {
		t.Fatalf("third call: %v", err)
	}
	// The count is shared with the caller of a reloaded configuration.
	s2, _ := New(config.Auth{Tokens: []config.Token{{Name: "a", SHA256: hashOf("x"), MaxConcurrentCalls: 2}}}, s, nil)
	if s2.callers[0].Enter() == nil {
		t.Error("reload reset the calls in flight")
	}
	c.Leave()
	if err := s2.callers[0].Enter(); err != nil {
		t.Errorf("after one left: %v", err)
	}
}

// certCtx is the context of an RPC over a connection whose verified (or,
// with verified false, merely presented) client certificate is leaf.
func certCtx(leaf *x509.Certificate, verified bool) context.Context {
	st := tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
	if verified {
		st.VerifiedChains = [][]*x509.Certificate{{leaf}}
	}
	return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: st}})
}

func TestAuthenticateClientCertificate(t *testing.T) {
	spiffe, _ := url.Parse("spiffe://corp.example/ns/billing/sa/api")
	s, err := New(config.Auth{Tokens: []config.Token{
		{Name: "by-uri", ClientCertificate: spiffe.String()},
		{Name: "by-dns", ClientCertificate: "reports.corp.example"},
		{Name: "by-cn", ClientCertificate: "batch-job"},
	}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for want, leaf := range map[string]*x509.Certificate{
		// The URI SAN names the caller even when the CN names another.
		"by-uri": {URIs: []*url.URL{spiffe}, DNSNames: []string{"reports.corp.example"}, Subject: pkix.Name{CommonName: "batch-job"}},
		"by-dns": {DNSNames: []string{"other.corp.example", "reports.corp.example"}, Subject: pkix.Name{CommonName: "batch-job"}},
		"by-cn":  {DNSNames: []string{"other.corp.example"}, Subject: pkix.Name{CommonName: "batch-job"}},
	} {
		c, err := s.Authenticate(certCtx(leaf, true))
		if err != nil || c.Name != want {
			t.Errorf("%s: caller %v, err %v", want, c, err)
		}
	}
	for name, ctx := range map[string]context.Context{
		"unverified":   certCtx(&x509.Certificate{Subject: pkix.Name{CommonName: "batch-job"}}, false),
		"unknown":      certCtx(&x509.Certificate{Subject: pkix.Name{CommonName: "someone-else"}}, true),
		"no tls":       peer.NewContext(context.Background(), &peer.Peer{}),
		"no peer":      context.Background(),
		"wrong bearer": metadata.NewIncomingContext(certCtx(&x509.Certificate{Subject: pkix.Name{CommonName: "batch-job"}}, true), metadata.Pairs("authorization", "Bearer not-a-token-0123456789")),
	} {
		if _, err := s.Authenticate(ctx); kindOf(t, err) != Unauthenticated {
			t.Errorf("%s: %v", name, err)
		}
	}
}
