package server_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestTruncatedToolCallIsLength: a tool call cut by the token limit ends the
// answer with LENGTH, unary and streamed, and its partial arguments are
// flagged invalid. TOOL_CALLS would tell a client to run it.
func TestTruncatedToolCallIsLength(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, recording string
		stream                bool
	}{
		{"openai unary", `
providers:
  - name: oai
    type: openai` + keyYAML + `
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities: {tools: {format: openai-chat}}
`, "openai/testdata/tools_malformed.http", false},
		{"openai stream", `
providers:
  - name: oai
    type: openai` + keyYAML + `
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities: {tools: {format: openai-chat}}
`, "openai/testdata/tools_length_stream.http", true},
		{"anthropic stream", `
providers:
  - name: claude
    type: anthropic` + keyYAML + `
models:
  - name: m
    provider: claude
    upstream_model: claude-sonnet-4-5
    capabilities: {tools: {format: anthropic-messages}}
`, "anthropic/testdata/malformed_args_stream.http", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, providertest.Load(t, "provider/"+tc.recording))
			c, _ := startWith(t, tc.yaml, up.URL)
			ctx := context.Background()
			msgs := []*llmrelayv1.Message{user("Book it")}
			var msg *llmrelayv1.Message
			var meta *llmrelayv1.ResponseMeta
			if tc.stream {
				s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: weatherTools(t)})
				if err != nil {
					t.Fatal(err)
				}
				var acc fold.Accumulator
				for {
					ev, err := s.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if err := acc.AddTools(ev); err != nil {
						t.Fatal(err)
					}
				}
				if acc.End() == nil || acc.End().GetFinishReason() != acc.Meta().GetFinishReason() {
					t.Fatalf("end %v", acc.End())
				}
				msg, meta = acc.Message(), acc.Meta()
			} else {
				resp, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: weatherTools(t)})
				if err != nil {
					t.Fatal(err)
				}
				msg, meta = resp.GetMessage(), resp.GetMeta()
			}
			if meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || meta.GetToolCallCount() != 1 {
				t.Errorf("finish %v with %d calls, want LENGTH with 1", meta.GetFinishReason(), meta.GetToolCallCount())
			}
			var calls []*llmrelayv1.ToolCall
			for _, p := range msg.GetParts() {
				if tc := p.GetToolCall(); tc != nil {
					calls = append(calls, tc)
				}
			}
			if len(calls) != 1 || calls[0].GetArgumentsValid() || calls[0].GetArguments() == "" {
				t.Errorf("the cut call must keep its partial arguments, flagged invalid: %v", calls)
			}
		})
	}
}

// TestCompatibleReasoningEndToEnd: an OpenAI-compatible server's reasoning
// (DeepSeek's reasoning_content) reaches the client as a reasoning part
// before the text, tagged with the provider type, unary and streamed.
func TestCompatibleReasoningEndToEnd(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/deepseek_reasoning.http"),
		providertest.Load(t, "provider/openai/testdata/deepseek_reasoning_stream.http"))
	c, _ := startWith(t, `
providers:
  - name: deepseek
    type: openai`+keyYAML+`
models:
  - name: r1
    provider: deepseek
    upstream_model: deepseek-reasoner
    capabilities: {chat: {format: openai-chat}}
`, up.URL)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("12 squared?")}
	unary, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "r1", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "r1", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	var acc fold.Accumulator
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.AddChat(ev); err != nil {
			t.Fatal(err)
		}
	}
	for name, m := range map[string]*llmrelayv1.Message{"unary": unary.GetMessage(), "stream": acc.Message()} {
		parts := m.GetParts()
		if len(parts) != 2 || parts[0].GetReasoning().GetText() != "The user asks for 12 squared. 12 × 12 = 144. Answer briefly." ||
			parts[0].GetReasoning().GetProvider() != "openai" || parts[1].GetText() != "12² = 144." {
			t.Errorf("%s: parts %v", name, parts)
		}
	}
	if u, s := unary.GetMeta().GetUsage(), acc.Meta().GetUsage(); u.GetReasoningTokens() != 29 || u.GetCachedInputTokens() != 64 || !proto.Equal(u, s) {
		t.Errorf("usage: unary %v, stream %v", u, s)
	}
}
