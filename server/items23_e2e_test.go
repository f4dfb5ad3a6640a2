package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestProviderItemsAcrossProviders: through the gateway, an Anthropic
// answer paused by pause_turn holds its server-tool blocks as provider
// items tagged "anthropic" (unary and streamed, in order with the text);
// sent back to Anthropic they go in the request as they came, so the
// turn resumes; sent to Gemini they are dropped with a warning each and
// never reach it.
func TestProviderItemsAcrossProviders(t *testing.T) {
	t.Parallel()
	claude := providertest.Replay(t, providertest.Load(t, "provider/anthropic/testdata/pause_turn.http"),
		providertest.Load(t, "provider/anthropic/testdata/pause_turn_stream.http"),
		providertest.Load(t, "provider/anthropic/testdata/plain.http"))
	gem := providertest.Replay(t, providertest.Load(t, "provider/gemini/testdata/plain.http"))
	yaml := strings.ReplaceAll(`
providers:
  - {name: claude, type: anthropic, base_url: CLAUDE, api_key: k-claude-000}
  - {name: google, type: gemini, base_url: {{URL}}, api_key: k-google-000}
models:
  - {name: sonnet, provider: claude, upstream_model: claude-sonnet-4-5, capabilities: {chat: {format: anthropic-messages}}}
  - {name: flash, provider: google, upstream_model: gemini-2.5-flash, capabilities: {chat: {format: gemini}}}
`, "CLAUDE", claude.URL)
	c, _ := startWith(t, yaml, gem.URL)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("When was PostgreSQL 18 released?")}
	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "sonnet", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range resp.GetMessage().GetParts() {
		if it := p.GetProviderItem(); it != nil {
			if it.GetProvider() != "anthropic" {
				t.Errorf("item not tagged: %v", it)
			}
			types = append(types, it.GetType())
		}
	}
	if strings.Join(types, " ") != "server_tool_use web_search_tool_result server_tool_use" {
		t.Errorf("unary items %q", types)
	}
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "sonnet", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	var acc fold.Accumulator
	var events []string
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if it := ev.GetProviderItem(); it != nil {
			events = append(events, it.GetType()+"/"+it.GetProvider())
		}
		if err := acc.AddChat(ev); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(events, " ") != "server_tool_use/anthropic web_search_tool_result/anthropic server_tool_use/anthropic" {
		t.Errorf("stream items %q", events)
	}
	parts := acc.Message().GetParts()
	if len(parts) != 5 || parts[0].GetText() == "" || parts[1].GetProviderItem() == nil || parts[3].GetText() == "" || parts[4].GetProviderItem() == nil {
		t.Errorf("folded parts %v", parts)
	}

	// Resumed on Anthropic: the blocks go back as they came.
	next := append(msgs, resp.GetMessage())
	if _, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "sonnet", Messages: next}); err != nil {
		t.Fatal(err)
	}
	body := string(claude.Last(t).Body)
	for _, p := range resp.GetMessage().GetParts() {
		if it := p.GetProviderItem(); it != nil && !strings.Contains(body, it.GetJson()) {
			t.Errorf("item %s not in the request %s", it.GetJson(), body)
		}
	}
	// Sent to Gemini: dropped, with a warning each.
	out, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "flash", Messages: next})
	if err != nil {
		t.Fatal(err)
	}
	if gb := string(gem.Last(t).Body); strings.Contains(gb, "srvtoolu_") {
		t.Errorf("an Anthropic block reached Gemini: %s", gb)
	}
	n := 0
	for _, w := range out.GetMeta().GetWarnings() {
		if strings.Contains(w, "provider item") && strings.Contains(w, "from anthropic dropped for gemini") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("warnings %q", out.GetMeta().GetWarnings())
	}
}
