package openai

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// r24NextTurn builds the turn after answer (its calls answered "ok") with
// p, and returns the body's input items and the warnings.
func r24NextTurn(t *testing.T, p *Provider, answer *llmrelayv1.Message) ([]map[string]any, []string) {
	t.Helper()
	req := r21Request("m", "What is the weather?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object"}`}}
	req.Messages = append(req.Messages, answer)
	var results []*llmrelayv1.Part
	for _, part := range answer.GetParts() {
		if c := part.GetToolCall(); c != nil {
			results = append(results, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: c.GetCallId(), Content: "ok"}}})
		}
	}
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_TOOL, results...))
	b, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in.Input, warnings
}

// r24RawReasoning checks that item is a reasoning item as llama.cpp's
// server_chat_convert_responses_to_chatcmpl takes it (a summary array, a
// non-empty content array whose first entry has text) and as vercel/ai
// sends DeepSeek's: an empty summary, the text as one reasoning_text
// content part, and the id wantID ("" for none).
func r24RawReasoning(t *testing.T, item map[string]any, wantID, wantText string) {
	t.Helper()
	want := map[string]any{"type": "reasoning", "summary": []any{},
		"content": []any{map[string]any{"type": "reasoning_text", "text": wantText}}}
	if wantID != "" {
		want["id"] = wantID
	}
	got, _ := json.Marshal(item)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("reasoning item\n got %s\nwant %s", got, exp)
	}
}

// TestRound24LlamaCppReasoningBack: the turn after llama.cpp's answer
// (testdata/llamacpp_responses_calls_stream.http: reasoning_text, a
// sentence, two calls; no encrypted content, as llama.cpp has none) to a
// server configured to take reasoning back (WithReasoningReplay
// "reasoning_content", as on Chat Completions). llama.cpp's converter
// reads a reasoning item's content[0].text as the turn's
// reasoning_content and refuses one without content ("item['content'] is
// not an array": tools/server/server-chat.cpp @
// 03eb25f39343f1c9ecc6f85ca4f9796a6ab7b230). The reasoning was left out
// ("reasoning without encrypted content (signature) was not sent"): the
// model lost the thinking that led to its calls. It goes back as its
// reasoning_text now, with its id, before the message that followed it
// (sent with its own id: pairReasoning's rule holds). Without the
// option (an unknown host, as OpenAI's own rule), it is left out as
// before.
func TestRound24LlamaCppReasoningBack(t *testing.T) {
	t.Parallel()
	req := r21Request("qwen3-8b", "What is the weather in Paris and in Tokyo?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "llamacpp_responses_calls_stream", req)
	const thought = "The user wants the weather in Paris and Tokyo. I'll call get_weather twice."

	p, err := New("", WithBaseURL("http://127.0.0.1:8080/v1"), WithReasoningReplay("reasoning_content"))
	if err != nil {
		t.Fatal(err)
	}
	items, warnings := r24NextTurn(t, p, f.Message)
	if len(items) != 7 || len(warnings) != 0 {
		t.Fatalf("items %v, warnings %q", items, warnings)
	}
	r24RawReasoning(t, items[1], "rs_Vb2Nm8Kq4Xw6Zt1Lp9Rc3Hj7Df5Gs0Ae", thought)
	if items[2]["type"] != "message" || items[2]["role"] != "assistant" || items[2]["id"] == nil || items[3]["call_id"] != "fc_Hx4Kd9Zq2Wm7Lc1Vt6Np3Rb8Jf5Gs0Ua" || items[4]["call_id"] != "fc_Pq8Lm3Zx6Wt1Kc9Vd4Nb2Rh7Jf5Gs0Ei" {
		t.Errorf("items %v", items)
	}

	// A history whose message lost its item id: the reasoning goes
	// without its id (its content carries it, as encrypted content
	// would), not left out.
	noIDs := proto.Clone(f.Message).(*llmrelayv1.Message)
	for _, part := range noIDs.GetParts() {
		part.ItemId = ""
	}
	items, warnings = r24NextTurn(t, p, noIDs)
	if len(items) != 7 || len(warnings) != 0 || items[2]["id"] != nil {
		t.Fatalf("without message id: items %v, warnings %q", items, warnings)
	}
	r24RawReasoning(t, items[1], "", thought)

	def, err := New("", WithBaseURL("http://127.0.0.1:8080/v1"))
	if err != nil {
		t.Fatal(err)
	}
	items, warnings = r24NextTurn(t, def, f.Message)
	if len(items) != 6 || items[1]["type"] != "message" || len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning without encrypted content (signature) was not sent") {
		t.Errorf("default: items %v, warnings %q", items, warnings)
	}
}

// TestRound24DeepSeekReasoningBack: the turn after DeepSeek's Responses
// answer (testdata/real_deepseek_responses_tool_call_stream.http: a
// reasoning_text item with a bare UUID id and an empty summary, then a
// call) to api.deepseek.com, where reasoning goes back by default as on
// Chat Completions. It goes as vercel/ai's DeepSeek Responses provider
// sends it (convert-to-deepseek-responses-input.ts @
// 420bc75df91e48dc03a1b4f048d112e311154dfd: {type: "reasoning", id,
// summary: [], content: [{type: "reasoning_text", text}]}, which DeepSeek
// merges into the assistant turn), its id kept before its call; it was
// left out. OpenAI's own host never gets it, whatever the option says:
// OpenAI resolves reasoning by encrypted content or a stored id alone.
func TestRound24DeepSeekReasoningBack(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(td("real_deepseek_responses_tool_call_stream.http"))
	if err != nil {
		t.Fatal(err)
	}
	final := respFinalObject(string(raw))
	if final == nil {
		t.Fatal("no final response in the recording")
	}
	p, err := New(testKey, WithBaseURL("https://api.deepseek.com"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseResponsesResponse(final, "deepseek-v4-flash")
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetSignature() != "" || parts[0].GetReasoning().GetId() == "" {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	items, warnings := r24NextTurn(t, p, res.Message)
	if len(items) != 4 || len(warnings) != 0 {
		t.Fatalf("items %v, warnings %q", items, warnings)
	}
	r24RawReasoning(t, items[1], r.GetId(), "The user asks about weather in San Francisco. I have a weather tool. Let me call it.")
	if items[2]["type"] != "function_call" || items[2]["call_id"] != "call_00_N9BNUr3rAx4twPOHpyRN4076" || items[3]["type"] != "function_call_output" {
		t.Errorf("items %v", items)
	}

	oa, err := New(testKey, WithReasoningReplay("reasoning_content"))
	if err != nil {
		t.Fatal(err)
	}
	items, warnings = r24NextTurn(t, oa, res.Message)
	if len(items) != 3 || items[1]["type"] != "function_call" || len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning without encrypted content") {
		t.Errorf("OpenAI: items %v, warnings %q", items, warnings)
	}
}

// TestRound24LiteLLMBareErrorObject: LiteLLM's proxy relaying a
// /v1/responses stream whose upstream call failed mid-way
// (testdata/litellm_responses_stream_error_object.http): the events as
// `data:` lines without event names, then its bare error object
// `data: {"error": {"message", "type": "None", "param": "None", "code":
// "429"}}` (proxy_server.py's async_data_generator, which the Responses
// route streams through). The object was ignored and the stream failed
// as a bad response ("stream ended before response.completed"): the rate
// limit and its message were lost, and the retry policy read a protocol
// break. Now it is the stream's error: rate limited, the provider's
// message, the text before it relayed.
func TestRound24LiteLLMBareErrorObject(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("litellm_responses_stream_error_object.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), r21Request("gpt-4.1-mini", "What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td("litellm_responses_stream_error_object.golden"), rendered)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindRateLimited || !strings.HasPrefix(pe.Message, "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for gpt-4.1-mini") {
		t.Fatalf("error %v", err)
	}
	var text strings.Builder
	for _, ev := range evs {
		text.WriteString(ev.Text)
	}
	if text.String() != "The capital of France" {
		t.Errorf("text %q", text.String())
	}
}

// TestRound24LiteLLMReasoningAtOneIndex: LiteLLM's proxy serving
// /v1/responses for a model it reaches through Chat Completions (a
// thinking Claude; testdata/litellm_responses_reasoning_text_stream.http,
// built as its LiteLLMCompletionStreamingIterator writes it): every item
// at output_index 0, the reasoning item added, the message never added,
// and the message's output_item.done numbered sequence_number 1 after 7.
// The message's events were read as naming the reasoning item (the first
// id at that index, as for Copilot's rotating ids): its text went out
// under the reasoning item's id and again whole at its output_item.done
// (the answer's text twice), and the numbering was reported as lost
// events. The text is the message's, once, with its id; no warning.
func TestRound24LiteLLMReasoningAtOneIndex(t *testing.T) {
	t.Parallel()
	req := r21Request("claude-sonnet-4-5", "What is the capital of Australia?")
	req.Reasoning = true
	f := r21Stream(t, "litellm_responses_reasoning_text_stream", req)
	p := f.Message.GetParts()
	if len(p) != 2 {
		t.Fatalf("parts %v", p)
	}
	if r := p[0].GetReasoning(); r.GetId() != "rs_3f8a1c6e-2b7d-4e90-a5c3-9d1e6b4f7a20" ||
		r.GetText() != "The user asks for the capital of Australia. Many people guess Sydney, but it is Canberra." {
		t.Errorf("reasoning %v", r)
	}
	if p[1].GetText() != "The capital of Australia is Canberra, not Sydney." || p[1].GetItemId() != "msg_c7d2e9a4-6f1b-4c38-8e5a-2b9f0d3c6e71" {
		t.Errorf("text %v", p[1])
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 61, TotalTokens: 79, ReasoningTokens: 38}); !proto.Equal(m.GetUsage(), want) || len(m.GetWarnings()) != 0 {
		t.Errorf("usage %v, want %v; warnings %q", m.GetUsage(), want, m.GetWarnings())
	}
}

// TestRound24LiteLLMGuardrailPassthrough: LiteLLM's proxy answering a
// /v1/responses request its guardrail blocked in passthrough mode
// (testdata/litellm_responses_guardrail_passthrough.http; endpoints.py's
// ModifyResponseException branch): status completed, the violation
// message as the only output item, {"content": [{"type": "text", ...}]}
// with no type, and a usage of zeros. The item was ignored ("ignored
// output item of type \"\"") and the answer was empty: the caller never
// saw why. It is the answer's text now, said to have been read so.
func TestRound24LiteLLMGuardrailPassthrough(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "litellm_responses_guardrail_passthrough", r21Request("gpt-4.1-mini", "How do I pick a lock?"))
	p := res.Message.GetParts()
	if len(p) != 1 || p[0].GetText() != "This request was blocked by the content policy of your organization's AI gateway." {
		t.Fatalf("parts %v", p)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	w := res.Meta.GetWarnings()
	if len(w) == 0 || w[0] != "an output item without a type was read as a message (it has content)" {
		t.Errorf("warnings %q", w)
	}
}
