package anthropic

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// charmbracelet/fantasy's go-vcr cassettes (testdata/README.md, "Real
// recordings from charmbracelet/fantasy's cassettes"): answers of the live
// API to fantasy's provider tests. The cassettes keep only the
// Content-Type response header: no request id, no rate-limit headers.
// Every expectation below is read off the recording by hand.

// fantasySig and fantasyUnarySig are the recorded thinking signatures.
const (
	fantasyStreamSig = "EsQDCkYICBgCKkBr9+FTcKs+la0OlmRVB4HF/bTERKj+hr9pp9uxwdet2/P99iNZh/vwxm7Cd5wrZD0FnPkUz3DEqXv+ZoIL2fAoEgxOEzQepAptMFJiFJcaDM2L2wJzGec9170N1SIwHhl0DW0hXYbwHTRAR6w9biU0HwUh00oLghjeBusiv40ctsJB4tO/WyOR2f0iH7pZKqsC3UTE2b7nqQUmYP8dEDfnfNdbr24zEaWiZ2QMbwv9ZrwtUy0Wo/ot3n9JMpocHUSwtyKzB4GsMsgr/xtGEl9541AMSFhR1G8y3Ffn22e6pXV7dakwU/vxcBTvdwfBplrBxxJ1zT/ieuQUrdemKCRZS4QVmaVijUpYQMaQF7iCJJPKYI+wBhxT0y0yOoVqORKg2AuRmbkTpMfKZJ5xRBLAeydMhloeKfYswDDisWIChmJlclIro0Jr80OhpohTcQGayY4fjn0A/ir+9PYzLzjGitR3a+/lfHvuTmPC9AnWv3Sp87mddUuJ10jqO9QWXNTnAVdehLiN/heJVjOMkXCstWLVUycEgnfwXEqlNMMFuRAfOwTte0Ls9qHkl3Fzo8ompJiqxF879rSwcSEYAQ=="
	fantasyUnarySig  = "EvIDCkYICBgCKkB3OXkd+Z/weJsi/KkBdtuRG6KOJp06/IzU7Jk57DreAI4FgyT9Xqef8INOF0ENXD//orE8oncMe+M72OyRG7FQEgxPaEO4DRV1o5sFWXAaDNTMb6U1NI1BcmYAPCIwzkufbx9sEOQQxPyBOcNFCs/SugbLyRr2IlXwdFmYoDeaOm1DkRFknTct6f6A6EzxKtkCVGlLUEl4LBJeAuluxJbq3PlzewMXa7EEvsi+M4T71uUci/d0RIK2Z5NxNpgTbVqM7shsDImrqR/0gJ/6BxwEptGq1G626mA5DgyfjR0QJ0etDk8kT7iJ33H6BRMGA8DnehmhOUYGTiajWdjgD3/H0S8mVT06swDddMKynOg4sRlr8PvQBDcyDlHTVQUo5SmrOPm8JsOtLfN8nDKTdhU0NofnVVNklOKblM83YuT97HhM269IQEf6rbqKknBZSvKVJOoHkOwTCn60uQj7b1wpVTjI4KRCVnlhRBpVrVyTmveM5kZXNdL/6sHUHboPCUYPbU24aYf/BTPswY2NsbdtpIRS3uHnSyIZ0gOMZA/5pWQbNJYjL5iksP8waiwCgOPkadqo02yQvqDY6XCfVd9LkRdaUQIZOt9IaSDE+9mvGnH025qCd4/sGBy+QRd9T/uNAFmkjeG9wL4oGAE="
)

func TestFantasyGenerate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
		want llmWant
	}{
		// claude-sonnet-4, unary: a signed thinking block (escaped quotes,
		// a blank line), then a tool_use; stop_reason tool_use; no
		// thinking_tokens detail, so no reasoning count.
		{"real_fantasy_anthropic_thinking_1", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "The user is asking for weather information for Florence, Italy. I have access to a weather function that takes a location parameter. " +
						"The user has provided the location as \"Florence, Italy\" which is specific enough for the weather function.\n\n" +
						"I should call the weather function with the location parameter set to \"Florence, Italy\".",
					Signature: fantasyUnarySig,
				}),
				toolCallValid("toolu_018GcaTNHipGG9yeZ3srYF9d", "weather", `{"location":"Florence, Italy"}`),
			},
			responseID: "msg_0161zGUJcy7n6Gtc3W2yEfEi", model: "claude-sonnet-4-20250514",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:    usageOf(423, 126, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}},
		// claude-sonnet-4 with cache_control (nothing cached: all cache
		// counts 0), "model" before "id": text then two parallel tool_use
		// blocks.
		{"real_fantasy_anthropic_cache_control_multi_tool_1", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts: []*llmrelayv1.Part{
				text("I'll add and multiply the numbers 2 and 3 for you."),
				toolCallValid("toolu_01R4MgGUzmDFt4FVjLhPom7k", "add", `{"a":2,"b":3}`),
				toolCallValid("toolu_011jyywbY4Fv6JjWSS6cpVYp", "multiply", `{"a":2,"b":3}`),
			},
			responseID: "msg_01SznaDwXbs3XRxBLMr2X7T3", model: "claude-sonnet-4-20250514",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:    usageOf(507, 137, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkLLMWant(t, "unary", res.Message, res.Meta, tc.want)
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

func TestFantasyStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
		want llmWant
		// deltas is how many argument deltas each call gets, in order
		// (the recorded input_json_delta events, the empty ones left out).
		deltas []int
	}{
		// claude-sonnet-4 with thinking: padded JSON (spaces before the
		// closing brace), a ping inside the thinking block, thinking with
		// escaped quotes in five deltas, one signature_delta; then a
		// tool_use whose arguments come in six pieces after an empty one.
		{"real_fantasy_anthropic_thinking_streaming_1", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "The user is asking for weather information for Florence, Italy. I have access to a weather function that takes a \"location\" parameter. " +
						"The user has provided the location as \"Florence, Italy\" which is clear and specific. I have all the required parameters to make this function call.",
					Signature: fantasyStreamSig,
				}),
				toolCallValid("toolu_0171KFcBwn1Z64XzvQfz3sZS", "weather", `{"location": "Florence, Italy"}`),
			},
			responseID: "msg_01WBeG2NaYQ8w99747S3n8MZ", model: "claude-sonnet-4-20250514",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:    usageOf(423, 119, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}, []int{6}},
		// claude-sonnet-4 with cache_control on the system prompt and the
		// user turn (the prompt is under the minimum, nothing is cached:
		// every cache count is 0). message_start has "model" before "id".
		// Text, then two parallel tool_use blocks, each with an empty
		// input_json_delta and four pieces.
		{"real_fantasy_anthropic_cache_control_multi_tool_streaming_1", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts: []*llmrelayv1.Part{
				text("I'll add and multiply the numbers 2 and 3 for you."),
				toolCallValid("toolu_014EzUJ1TCJvs3dR7mZZgoyd", "add", `{"a": 2, "b": 3}`),
				toolCallValid("toolu_01GYivdvVTotPKuatZiCkQvv", "multiply", `{"a": 2, "b": 3}`),
			},
			responseID: "msg_01Ps4SquTmAkLoZixSEW4SrN", model: "claude-sonnet-4-20250514",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:    usageOf(502, 137, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}, []int{4, 4}},
		// claude-3-7-sonnet through Vertex AI (streamRawPredict): msg_vrtx_
		// and toolu_vrtx_ ids, a ping before the first block, no
		// service_tier and no cache_creation object, a message_delta with
		// only output_tokens (the input stays message_start's 394).
		{"real_fantasy_vertex_claude_tool_streaming_1", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts: []*llmrelayv1.Part{
				text("I'll check the current weather in Florence, Italy for you."),
				toolCallValid("toolu_vrtx_01HCzehdpw6xDu3CDVXSFHFh", "weather", `{"location": "Florence,Italy"}`),
			},
			responseID: "msg_vrtx_015uS6fGm1egYvRuSAr5jmF8", model: "claude-3-7-sonnet-20250219",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage: usageOf(394, 67, 0, 0, 0),
		}, []int{6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			s, err := newTestProvider(t, srv.URL).Stream(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			f := foldEvents(t, evs)
			checkLLMWant(t, "streamed", f.message, f.meta, tc.want)
			if _, ok := f.meta.GetExtended().GetFields()["service_tier"]; ok != (tc.want.extended["service_tier"] != "") {
				t.Errorf("extended service_tier present %v, want %v", ok, !ok)
			}
			if got := accumulate(t, evs); !proto.Equal(got, f.message) {
				t.Errorf("accumulator message\n got %v\nwant %v", got, f.message)
			}
			var deltas []int
			for _, ev := range evs {
				if ev.Kind != provider.EventToolCall || ev.ToolCall.Arguments == "" {
					continue
				}
				i := ev.ToolCall.Index
				for len(deltas) <= i {
					deltas = append(deltas, 0)
				}
				deltas[i]++
			}
			if !equalInts(deltas, tc.deltas) {
				t.Errorf("argument deltas per call %v, want %v", deltas, tc.deltas)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, err))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFantasyRoundTrip: the answer of real_fantasy_anthropic_thinking_streaming_1,
// sent back with the tool's result, must go out as fantasy's second request
// of the same cassette did (the live API accepted it): the assistant turn
// holds the thinking block with its text and signature unchanged, then the
// tool_use with the parsed arguments, and a user turn with the tool_result.
func TestFantasyRoundTrip(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_fantasy_anthropic_thinking_streaming_1.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), thinkingRequest(t))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	answer := foldEvents(t, evs).message

	next := providertest.ReplayFile(t, "testdata/real_fantasy_anthropic_thinking_1.http")
	req := thinkingRequest(t)
	req.Messages = []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Florence, Italy?")),
		answer,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_0171KFcBwn1Z64XzvQfz3sZS", "40 C", false)),
	}
	if _, err := newTestProvider(t, next.URL).Generate(context.Background(), req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var sent struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(next.Last(t).Body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if len(sent.Messages) != 3 || sent.Messages[1].Role != "assistant" || sent.Messages[2].Role != "user" {
		t.Fatalf("messages %+v, want user, assistant, user", sent.Messages)
	}
	// As recorded in fantasy's second request (its keys in another order).
	recorded := []string{
		`{"signature":"` + fantasyStreamSig + `","thinking":"The user is asking for weather information for Florence, Italy. I have access to a weather function that takes a \"location\" parameter. The user has provided the location as \"Florence, Italy\" which is clear and specific. I have all the required parameters to make this function call.","type":"thinking"}`,
		`{"id":"toolu_0171KFcBwn1Z64XzvQfz3sZS","input":{"location":"Florence, Italy"},"name":"weather","type":"tool_use"}`,
	}
	got := sent.Messages[1].Content
	if len(got) != len(recorded) {
		t.Fatalf("assistant content %s, want %d blocks", got, len(recorded))
	}
	for i, w := range recorded {
		var a, b any
		if err := json.Unmarshal(got[i], &a); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if err := json.Unmarshal([]byte(w), &b); err != nil {
			t.Fatalf("recorded block %d: %v", i, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("assistant block %d\n got %s\nwant %s", i, got[i], w)
		}
	}
	var result struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
	}
	if len(sent.Messages[2].Content) != 1 || json.Unmarshal(sent.Messages[2].Content[0], &result) != nil ||
		result.Type != "tool_result" || result.ToolUseID != "toolu_0171KFcBwn1Z64XzvQfz3sZS" ||
		!strings.Contains(string(sent.Messages[2].Content[0]), `40 C`) {
		t.Errorf("tool result turn %s", sent.Messages[2].Content)
	}
}
