package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestOpenRouterReasoningReplay: Claude (signed thinking) and Gemini 3
// (thought signatures) behind OpenRouter need their reasoning blocks back
// on the tool-call turn: OpenRouter documents reasoning_details as what to
// send back, unchanged. The recordings are charmbracelet/fantasy's: the
// first answer of each cassette, whose follow-up request (the answer's
// details sent back) the live API accepted. The turn we build from our
// answer carries the answer's reasoning_details again, entry for entry:
// type, text or data, signature, id, format and index.
func TestOpenRouterReasoningReplay(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"real_fantasy_openrouter_claude_sig_thinking", "real_fantasy_openrouter_gemini_3_pro_thinking"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, td(name+".golden"), renderResult(t, res))
			var call *llmrelayv1.ToolCall
			for _, p := range res.Message.GetParts() {
				if r := p.GetReasoning(); r != nil {
					if r.GetFormat() == "" {
						t.Errorf("reasoning part without its format: %v", r)
					}
					r.Provider = "openai" // as the gateway sets it
				}
				if c := p.GetToolCall(); c != nil {
					call = c
				}
			}
			if call == nil {
				t.Fatal("no tool call in the answer")
			}
			msgs := []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Florence, Italy?")),
				res.Message,
				msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: call.GetCallId(), Content: "40 C"}}}),
			}
			var answer struct {
				Choices []struct {
					Message struct {
						ReasoningDetails []map[string]any `json:"reasoning_details"`
					} `json:"message"`
				} `json:"choices"`
			}
			raw := providertest.Load(t, td(name+".http")).Body
			if err := json.Unmarshal(raw, &answer); err != nil {
				t.Fatal(err)
			}
			want := answer.Choices[0].Message.ReasoningDetails

			for _, tc := range []struct {
				base string
				sent bool
			}{{"https://openrouter.ai/api/v1", true}, {"https://api.openai.com/v1", false}} {
				p, err := New(testKey, WithBaseURL(tc.base))
				if err != nil {
					t.Fatal(err)
				}
				body, warnings, err := p.buildChatRequest(&provider.Request{Model: "m", Messages: msgs, Options: &llmrelayv1.GenerationOptions{}}, false)
				if err != nil {
					t.Fatal(err)
				}
				var req struct {
					Messages []struct {
						Role             string           `json:"role"`
						ReasoningDetails []map[string]any `json:"reasoning_details"`
					} `json:"messages"`
				}
				if err := json.Unmarshal(body, &req); err != nil {
					t.Fatal(err)
				}
				got := req.Messages[1].ReasoningDetails
				if !tc.sent {
					if got != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning part") {
						t.Errorf("%s: details %v, warnings %q", tc.base, got, warnings)
					}
					continue
				}
				if len(warnings) != 0 {
					t.Errorf("%s: warnings %q", tc.base, warnings)
				}
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Errorf("%s: reasoning_details sent back\n%s\nwant (as received)\n%s", tc.base, g, w)
				}
			}
		})
	}
}

// TestOpenRouterReasoningReplayStream: the streamed Gemini 3 answer gives
// its thought text and its signature (with the call's id) at one index;
// folded as the server relays it, the turn sent back carries both, as
// reasoning.text and reasoning.encrypted at that index, with the format.
func TestOpenRouterReasoningReplayStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_fantasy_openrouter_gemini_3_pro_thinking_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	msg := accFold(t, evs).Message
	var callID string
	for _, p := range msg.GetParts() {
		if r := p.GetReasoning(); r != nil {
			r.Provider = "openai"
		}
		if c := p.GetToolCall(); c != nil {
			callID = c.GetCallId()
		}
	}
	p, err := New(testKey, WithBaseURL("https://openrouter.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := p.buildChatRequest(&provider.Request{Model: "m", Messages: []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Florence, Italy?")),
		msg,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: callID, Content: "40 C"}}}),
	}, Options: &llmrelayv1.GenerationOptions{}}, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	var req struct {
		Messages []struct {
			ReasoningDetails []outDetail `json:"reasoning_details"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	d := req.Messages[1].ReasoningDetails
	if len(d) != 2 || d[0].Type != detailText || d[0].Text == "" || d[0].Index != 0 || d[0].Format != formatGemini ||
		d[1].Type != detailEncrypted || d[1].Data == "" || d[1].ID != callID || d[1].Index != 0 || d[1].Format != formatGemini {
		t.Errorf("reasoning_details %+v", d)
	}
}
