package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestNewValidation(t *testing.T) {
	t.Parallel()
	tok := func(context.Context) (string, error) { return "t", nil }
	cases := []struct {
		name  string
		build func() (*Provider, error)
		ok    bool
	}{
		{"openai defaults", func() (*Provider, error) { return New(testKey) }, true},
		{"openai no key (local server)", func() (*Provider, error) { return New("", WithBaseURL("http://localhost:11434/v1")) }, true},
		{"bad scheme", func() (*Provider, error) { return New(testKey, WithBaseURL("ftp://example.com")) }, false},
		{"no host", func() (*Provider, error) { return New(testKey, WithBaseURL("https://")) }, false},
		{"unparseable", func() (*Provider, error) { return New(testKey, WithBaseURL("http://[::1")) }, false},
		{"query", func() (*Provider, error) { return New(testKey, WithBaseURL("https://api.example.com/v1?x=1")) }, false},
		{"user info", func() (*Provider, error) { return New(testKey, WithBaseURL("https://u:p@api.example.com/v1")) }, false},
		{"nil client", func() (*Provider, error) { return New(testKey, WithHTTPClient(nil)) }, false},
		{"azure option on openai", func() (*Provider, error) { return New(testKey, WithAzureV1Routes(true)) }, false},
		{"azure ok", func() (*Provider, error) { return NewAzure(testKey, WithBaseURL("https://r.openai.azure.com")) }, true},
		{"azure no endpoint", func() (*Provider, error) { return NewAzure(testKey) }, false},
		{"azure key and entra", func() (*Provider, error) {
			return NewAzure(testKey, WithBaseURL("https://r.openai.azure.com"), WithEntraToken(tok))
		}, false},
		{"azure neither", func() (*Provider, error) { return NewAzure("", WithBaseURL("https://r.openai.azure.com")) }, false},
		{"azure entra", func() (*Provider, error) {
			return NewAzure("", WithBaseURL("https://r.openai.azure.com"), WithEntraToken(tok))
		}, true},
		{"azure empty api version", func() (*Provider, error) {
			return NewAzure(testKey, WithBaseURL("https://r.openai.azure.com"), WithAzureAPIVersion(" "))
		}, false},
		{"azure with org", func() (*Provider, error) {
			return NewAzure(testKey, WithBaseURL("https://r.openai.azure.com"), WithOrganization("org"))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := tc.build()
			if (err == nil) != tc.ok || (err == nil) != (p != nil) {
				t.Errorf("got %v, %v; want ok=%v", p, err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("error contains the key: %v", err)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	t.Parallel()
	mk := func(azure bool, opts ...Option) *Provider {
		var (
			p   *Provider
			err error
		)
		if azure {
			p, err = NewAzure(testKey, append([]Option{WithBaseURL("https://r.openai.azure.com/")}, opts...)...)
		} else {
			p, err = New(testKey, opts...)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		p         *Provider
		op, model string
		want      string
	}{
		{mk(false), "chat/completions", "gpt-4o", "https://api.openai.com/v1/chat/completions"},
		{mk(false, WithBaseURL("https://openrouter.ai/api/v1/")), "embeddings", "x", "https://openrouter.ai/api/v1/embeddings"},
		{mk(true), "chat/completions", "gpt-4o-prod", "https://r.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21"},
		{mk(true, WithAzureAPIVersion("2025-04-01-preview")), "embeddings", "my emb/1", "https://r.openai.azure.com/openai/deployments/my%20emb%2F1/embeddings?api-version=2025-04-01-preview"},
		{mk(true, WithAzureV1Routes(true)), "chat/completions", "gpt-4o-prod", "https://r.openai.azure.com/openai/v1/chat/completions"},
		{mk(true, WithAzureV1Routes(true), WithAzureAPIVersion("preview")), "chat/completions", "d", "https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview"},
	}
	for _, tc := range cases {
		if got := tc.p.endpoint(tc.op, tc.model); got != tc.want {
			t.Errorf("endpoint = %s, want %s", got, tc.want)
		}
	}
}

// TestAPIKeyNeverInErrors runs every failure path with a distinctive key
// and checks no error text contains it.
func TestAPIKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-test-SECRET-0123456789"
	var errs []error
	// Every recorded error, unary and streamed, with a server that echoes
	// the key in its message.
	entries, err := filepath.Glob(td("*err_*.http"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no error recordings: %v", err)
	}
	for _, path := range entries {
		rec := providertest.Load(t, path)
		rec.Body = []byte(strings.ReplaceAll(string(rec.Body), testKey, key))
		srv := providertest.Replay(t, rec)
		for _, mk := range []func() (*Provider, error){
			func() (*Provider, error) { return New(key, WithBaseURL(srv.URL)) },
			func() (*Provider, error) { return NewAzure(key, WithBaseURL(srv.URL)) },
		} {
			p, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Generate(context.Background(), simpleRequest("m"))
			errs = append(errs, err)
			_, err = p.Stream(context.Background(), simpleRequest("m"))
			errs = append(errs, err)
			_, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "m", Inputs: []string{"x"}})
			errs = append(errs, err)
		}
	}
	// Transport failure: a closed server.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	p, err := New(key, WithBaseURL(dead.URL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(context.Background(), simpleRequest("m"))
	if pe := providerError(t, err); pe.Kind != provider.KindConnection {
		t.Errorf("closed server: kind %s", pe.Kind)
	}
	errs = append(errs, err)
	// An Entra token function that fails and mentions the token.
	pa, err := NewAzure("", WithBaseURL(dead.URL), WithEntraToken(func(context.Context) (string, error) {
		return "", errors.New("refresh failed for " + key)
	}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = pa.Generate(context.Background(), simpleRequest("m"))
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("error %d: nil", i)
			continue
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("error %d leaks the key: %v", i, err)
		}
		if pe := providerError(t, err); strings.Contains(pe.Message+pe.Param+pe.Code, key) {
			t.Errorf("error %d fields leak the key: %+v", i, pe)
		}
	}
}

func TestCancellationReachesProvider(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		close(started)
		waitDone(r)
	}))
	defer srv.Close()
	p, err := New(testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err = p.Generate(ctx, simpleRequest("m"))
	if pe := providerError(t, err); pe.Kind != provider.KindCanceled {
		t.Errorf("kind %s, want canceled", pe.Kind)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		waitDone(r)
	}))
	defer srv2.Close()
	p2, err := New(testKey, WithBaseURL(srv2.URL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p2.Stream(ctx2, simpleRequest("m"))
	if pe := providerError(t, err); pe.Kind != provider.KindTimeout {
		t.Errorf("kind %s, want timeout", pe.Kind)
	}
}

// TestStreamCanceledMidway: cancelling the context while reading a stream
// gives a canceled error, not EOF.
func TestStreamCanceledMidway(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		waitDone(r)
	}))
	defer srv.Close()
	p, err := New(testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, simpleRequest("m"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == provider.EventText {
			break
		}
	}
	cancel()
	_, err = s.Recv()
	if pe := providerError(t, err); pe.Kind != provider.KindCanceled {
		t.Errorf("kind %s, want canceled", pe.Kind)
	}
}

// waitDone blocks a test handler until the client goes away (bounded, so
// that a broken test cannot hang the server's Close).
func waitDone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// TestRedirectFollowed: a provider answering 307 or 308 (a moved
// deployment) is followed with the same POST and body, as net/http's
// Client.Do did before the adapter called the transport itself; a 302 is
// followed as a GET (whose answer here is an error).
func TestRedirectFollowed(t *testing.T) {
	t.Parallel()
	answer := providertest.Load(t, td("chat_plain.http"))
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+strconv.Itoa(len(body))+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/chat"):
			w.Header().Set("Location", "/moved/v1/chat/completions")
			w.WriteHeader(map[bool]int{true: http.StatusTemporaryRedirect, false: http.StatusFound}[r.Header.Get("X-Redirect") == "307"])
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			w.Write(answer.Body)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(srv.Close)
	p := newTestProvider(t, kOpenAI, srv.URL, WithHTTPClient(srv.Client()), WithHeaders(http.Header{"X-Redirect": {"307"}}))
	res, err := p.Generate(context.Background(), benchRequest())
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		t.Fatal("no result")
	}
	mu.Lock()
	if len(got) != 2 || !strings.HasPrefix(got[1], "POST /moved/v1/chat/completions ") || strings.Fields(got[0])[2] != strings.Fields(got[1])[2] ||
		!strings.HasSuffix(got[1], "Bearer "+testKey) {
		t.Errorf("server saw %q", got)
	}
	got = nil
	mu.Unlock()
	p = newTestProvider(t, kOpenAI, srv.URL, WithHTTPClient(srv.Client()))
	_, err = p.Generate(context.Background(), benchRequest())
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.HTTPStatus != http.StatusMethodNotAllowed {
		t.Errorf("302: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !strings.HasPrefix(got[1], "GET /moved/") {
		t.Errorf("302: server saw %q", got)
	}
}

// TestRequestIDHeaders: the provider request id is x-request-id (Azure:
// apim-request-id first), else Mistral's mistral-correlation-id, else
// Cerebras's inference-id, else DeepSeek's x-ds-trace-id, on answers and
// on errors alike.
func TestRequestIDHeaders(t *testing.T) {
	t.Parallel()
	oa := newTestProvider(t, kOpenAI, "http://127.0.0.1")
	az := newTestProvider(t, kAzure, "http://127.0.0.1")
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cases := []struct {
		p    *Provider
		h    http.Header
		want string
	}{
		{oa, h("x-request-id", "req_a", "mistral-correlation-id", "m-1", "inference-id", "i-1"), "req_a"},
		{oa, h("mistral-correlation-id", "m-1", "inference-id", "i-1"), "m-1"},
		{oa, h("inference-id", "i-1"), "i-1"},
		{oa, h("x-request-id", "", "inference-id", "i-1"), "i-1"},
		{oa, h("x-ds-trace-id", "t-1"), "t-1"},
		{oa, h("x-request-id", "req_b", "x-ds-trace-id", "t-1"), "req_b"},
		{oa, h("cf-ray", "9f7526f32c3c0044-ORD"), ""},
		{az, h("apim-request-id", "apim-1", "x-request-id", "req_a"), "apim-1"},
		{az, h("x-request-id", "req_a"), "req_a"},
	}
	for i, tc := range cases {
		if got := tc.p.requestID(tc.h); got != tc.want {
			t.Errorf("case %d (%v): %q, want %q", i, tc.h, got, tc.want)
		}
	}

	// An error from a Mistral-like server carries its correlation id.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("mistral-correlation-id", "019ef358-0000-7000-8000-errorcorrid1")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"detail":"Unauthorized"}`))
	}))
	defer srv.Close()
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
	if pe := providerError(t, err); pe.RequestID != "019ef358-0000-7000-8000-errorcorrid1" || pe.Kind != provider.KindUnauthenticated {
		t.Errorf("got %s", renderErr(err))
	}
}
