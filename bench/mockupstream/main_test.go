package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/anthropic"
	"github.com/llmrelay/llmrelay/server/provider/gemini"
	"github.com/llmrelay/llmrelay/server/provider/ollama"
	"github.com/llmrelay/llmrelay/server/provider/openai"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestFormatsThroughAdapters streams every format the mock serves through
// llmrelay's own adapter for it: each must end with the format's final
// event (an adapter reports a stream cut otherwise) and carry the
// configured number of text chunks.
func TestFormatsThroughAdapters(t *testing.T) {
	cfg.chunks = 7
	srv := httptest.NewServer(http.HandlerFunc(route))
	t.Cleanup(srv.Close)
	cases := []struct {
		name, format string
		new          func() (provider.Provider, error)
	}{
		{"openai-chat", "openai-chat", func() (provider.Provider, error) {
			return openai.New("k", openai.WithBaseURL(srv.URL+"/v1"))
		}},
		{"openai-responses", "openai-responses", func() (provider.Provider, error) {
			return openai.New("k", openai.WithBaseURL(srv.URL+"/v1"))
		}},
		{"anthropic", "anthropic-messages", func() (provider.Provider, error) { return anthropic.New("k", anthropic.WithBaseURL(srv.URL)) }},
		{"gemini", "gemini", func() (provider.Provider, error) { return gemini.New("k", gemini.WithBaseURL(srv.URL+"/v1beta")) }},
		{"ollama", "ollama", func() (provider.Provider, error) { return ollama.New("", ollama.WithBaseURL(srv.URL)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.new()
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.Stream(context.Background(), providertest.BenchRequest("mock-model", c.format))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var text strings.Builder
			chunks := 0
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("after %d chunks: %v", chunks, err)
				}
				if ev.Kind == provider.EventText && ev.Text != "" {
					chunks++
					text.WriteString(ev.Text)
				}
			}
			if want := strings.Join(words[:7], " ") + " "; chunks != 7 || text.String() != want {
				t.Errorf("%d chunks %q, want 7 %q", chunks, text.String(), want)
			}
		})
	}
	t.Run("openai-chat unary", func(t *testing.T) {
		p, err := openai.New("k", openai.WithBaseURL(srv.URL+"/v1"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Generate(context.Background(), providertest.BenchRequest("mock-model", "openai-chat"))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Message.GetParts()) == 0 {
			t.Error("empty message")
		}
	})
}
