package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/protobuf/proto"
)

// TestRound22FollowUpPairing: the next turn built from every real
// Responses answer in testdata (unary bodies and the final response of
// streams; the calls answered, else a user turn), stored or not, pairs
// each reasoning item sent with the item that follows it as OpenAI
// requires: an assistant message or a function_call, never another
// reasoning item, a tool output, a user message or nothing; and a
// reasoning item sent with its id is followed by a message sent with its
// id (or a call), never by one without.
func TestRound22FollowUpPairing(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(td("real_*.http"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		body := string(raw)
		final := respFinalObject(body)
		if final == nil {
			i := strings.Index(body, "\n\n")
			if i < 0 {
				continue
			}
			b := strings.TrimSpace(body[i:])
			if !strings.Contains(b, `"output"`) || !strings.HasPrefix(b, "{") {
				continue
			}
			final = json.RawMessage(b)
		}
		res, err := p.parseResponsesResponse(final, "m")
		if err != nil || len(res.Message.GetParts()) == 0 {
			continue
		}
		n++
		for _, store := range []bool{false, true} {
			req := r21Request("m", "q")
			req.Reasoning = true
			req.Messages = append(req.Messages, res.Message)
			var results []*llmrelayv1.Part
			for _, part := range res.Message.GetParts() {
				if c := part.GetToolCall(); c != nil {
					results = append(results, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: c.GetCallId(), Content: "ok"}}})
				}
			}
			if len(results) > 0 {
				req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_TOOL, results...))
			} else {
				req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_USER, text("next")))
			}
			if store {
				req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}
			}
			b, _, err := p.buildResponsesRequest(req, false)
			if err != nil {
				t.Errorf("%s store=%v: %v", f, store, err)
				continue
			}
			var in struct {
				Input []map[string]any `json:"input"`
			}
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
			for i, it := range in.Input {
				if it["type"] == "reasoning" {
					if i+1 >= len(in.Input) {
						t.Errorf("%s store=%v: reasoning last", f, store)
						continue
					}
					nx := in.Input[i+1]
					// A call, the assistant's message, or the hosted item
					// that followed it in the answer, sent back as a
					// provider item (round 23).
					hosted := nx["type"] != "message" && nx["type"] != "reasoning" && nx["type"] != "function_call_output" && nx["role"] == nil
					if !(nx["type"] == "function_call" || (nx["type"] == "message" && nx["role"] == "assistant") || hosted) {
						t.Errorf("%s store=%v: reasoning followed by %v", f, store, nx["type"])
					}
					if it["id"] != nil && nx["type"] == "message" && nx["id"] == nil {
						t.Errorf("%s store=%v: reasoning with id before message without id", f, store)
					}
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("%d answers: the recordings moved", n)
	}
}
