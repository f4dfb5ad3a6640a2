package openai

import (
	"strconv"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// TestRound23OllamaResponsesTextThenCall: Ollama's /v1/responses stream
// for a model that thinks, says a sentence, then calls a tool, as
// ollama/ollama's ResponsesStreamConverter writes it (testdata/README.md):
// reasoning summary deltas with no summary_part events and the thinking
// again as encrypted_content; the message item and then the call item
// both at output_index 1 (the converter does not advance the index after
// text); no output_text.done nor output_item.done for the message, and a
// response.completed whose output has the reasoning and the call but not
// the message. The streamed sentence is the answer's all the same, before
// the call, and the call is whole and complete (no warning: nothing of
// the answer is in doubt).
func TestRound23OllamaResponsesTextThenCall(t *testing.T) {
	t.Parallel()
	req := r21Request("qwen3:8b", "What is the weather in Paris?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "ollama_responses_text_then_call_stream", req)
	const thought = "Okay, the user wants the weather in Paris. I should call get_weather."
	p := f.Message.GetParts()
	if len(p) != 3 {
		t.Fatalf("parts %v", p)
	}
	if r := p[0].GetReasoning(); r.GetText() != thought || r.GetSignature() != thought || r.GetId() != "rs_618402" {
		t.Errorf("reasoning %v", r)
	}
	if p[1].GetText() != "I'll check the weather in Paris for you." || p[1].GetItemId() != "msg_205917" {
		t.Errorf("text %v", p[1])
	}
	if c := p[2].GetToolCall(); c.GetCallId() != "call_q7wz3k1m" || c.GetName() != "get_weather" || c.GetArguments() != `{"city":"Paris"}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 164, OutputTokens: 58, TotalTokens: 222}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_731846" || m.GetResolvedModel() != "qwen3:8b" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound23VLLMWholeCalls: vLLM's /v1/responses stream for a tool
// parser that gives a call's name and whole arguments in one delta (two
// parallel calls; testdata/README.md): each call's output_item.added
// carries the arguments and the first function_call_arguments.delta
// repeats them. The arguments are the call's once, valid JSON, not twice
// (they were {"city": "Paris"}{"city": "Paris"}). response.completed
// names the calls anew (fc_ item ids, other call ids, as vLLM builds the
// final output afresh): the streamed call ids stay, the renaming said.
func TestRound23VLLMWholeCalls(t *testing.T) {
	t.Parallel()
	req := r21Request("meta-llama/Llama-4-Scout-17B-16E-Instruct", "What is the weather in Paris and in Tokyo?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "vllm_responses_whole_calls_stream", req)
	p := f.Message.GetParts()
	want := []struct{ id, args string }{{"call_9e1d7c4b2a5f4e8d9c0b1a2f3e4d5c6b", `{"city": "Paris"}`}, {"call_2f4a6c8e0b1d4a3c9e5f7b2d4c6a8e0f", `{"city": "Tokyo"}`}}
	if len(p) != len(want) {
		t.Fatalf("parts %v", p)
	}
	for i, w := range want {
		if c := p[i].GetToolCall(); c.GetCallId() != w.id || c.GetName() != "get_weather" || c.GetArguments() != w.args || !c.GetArgumentsValid() {
			t.Errorf("call %d: %v", i, c)
		}
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 212, OutputTokens: 23, TotalTokens: 235}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if w := m.GetWarnings(); len(w) != 2 || !strings.Contains(w[0], "names call_id call_7c9e1a3b5d7f4b9a8c2e4d6f8a0b2c4e") ||
		!strings.Contains(w[1], "names call_id call_1e3a5c7e9b1d4f6a8c0e2b4d6f8a1c3e") {
		t.Errorf("warnings %q", w)
	}
}

// TestRound23AddedArguments: arguments an output_item.added carries are
// the call's once, whatever follows: a delta that continues them, a
// delta that restates them (vLLM), no delta but the complete text, no
// delta and no complete text, and the stream's failure (relayed before
// the error, which ends the call as it ends any call open then).
func TestRound23AddedArguments(t *testing.T) {
	t.Parallel()
	added := func(args string) string {
		return sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_r23a","call_id":"call_r23a","name":"f","arguments":`+strconv.Quote(args)+`}}`)
	}
	delta := func(d string) string {
		return sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_r23a","delta":`+strconv.Quote(d)+`}`)
	}
	done := func(args string) string {
		return sseEvent("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","output_index":0,"item_id":"fc_r23a","arguments":`+strconv.Quote(args)+`}`)
	}
	completed := sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_r23a","status":"completed","output":[{"type":"function_call","id":"fc_r23a","call_id":"call_r23a","name":"f","arguments":"{\"a\":1}","status":"completed"}]}}`)
	bare := sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_r23a","status":"completed","output":[]}}`)
	failed := sseEvent("error", `{"type":"error","code":"server_error","message":"The server had an error.","param":null}`)
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body, args string
		cut              bool
	}{
		{"continued", added(`{"a":`) + delta(`1}`) + completed, `{"a":1}`, false},
		{"restated", added(`{"a":`) + delta(`{"a":`) + delta(`1}`) + completed, `{"a":1}`, false},
		{"restated whole", added(`{"a":1}`) + delta(`{"a":1}`) + done(`{"a":1}`) + completed, `{"a":1}`, false},
		{"no delta", added(`{"a":1}`) + done(`{"a":1}`) + completed, `{"a":1}`, false},
		{"nothing after", added(`{"a":1}`) + bare, `{"a":1}`, false},
		{"failure", added(`{"a":1}`) + failed, `{"a":1}`, true},
	} {
		s := respStreamFrom(p, tc.body)
		evs, _, err := providertest.Drain(t, s, 100)
		s.Close()
		if tc.cut != (err != nil) {
			t.Errorf("%s: error %v", tc.name, err)
		}
		var args strings.Builder
		ends := 0
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventToolCall:
				args.WriteString(ev.ToolCall.Arguments)
			case provider.EventToolCallEnd, provider.EventToolCallCut:
				ends++
			}
		}
		if wantEnds := map[bool]int{false: 1, true: 0}[tc.cut]; args.String() != tc.args || ends != wantEnds {
			t.Errorf("%s: arguments %q, %d ends; want %q", tc.name, args.String(), ends, tc.args)
		}
	}
}

// TestRound23VLLMReasoningText: vLLM's /v1/responses stream for a model
// with a reasoning parser (Qwen3): the thinking as reasoning_text deltas
// of a reasoning item whose summary is empty, then the text; bare UUID
// item ids in the stream and rs_/msg_ ids in response.completed, whose
// items vLLM builds afresh. Each is the answer's once, under the id the
// stream gave it, with no warning.
func TestRound23VLLMReasoningText(t *testing.T) {
	t.Parallel()
	req := r21Request("Qwen/Qwen3-8B", "What is 17 times 23?")
	req.Reasoning = true
	f := r21Stream(t, "vllm_responses_reasoning_text_stream", req)
	p := f.Message.GetParts()
	if len(p) != 2 {
		t.Fatalf("parts %v", p)
	}
	if r := p[0].GetReasoning(); r.GetText() != "Okay, the user asks for 17 times 23. 17*23 = 391." || r.GetId() != "d1e3f5a7b9c14d2e8f0a2b4c6d8e0f1a" || r.GetSignature() != "" {
		t.Errorf("reasoning %v", r)
	}
	if p[1].GetText() != "17 × 23 = 391." || p[1].GetItemId() != "7a9c1e3b5d7f4a2c8e0b2d4f6a8c0e2b" {
		t.Errorf("text %v", p[1])
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 96, TotalTokens: 114}); !proto.Equal(m.GetUsage(), want) || len(m.GetWarnings()) != 0 {
		t.Errorf("usage %v, want %v; warnings %q", m.GetUsage(), want, m.GetWarnings())
	}
}

// TestRound23LlamaCppCalls: llama.cpp's /v1/responses stream (thinking,
// a sentence, two calls; testdata/README.md): no sequence numbers and no
// output indexes at all, call items without an id (the call_id, fc_<id>,
// is what the argument deltas give as their item_id), and every item's
// output_item.done at the end, after the last call's deltas. Each done
// event ends the call its call_id names: the first call's done event was
// taken for the second call's (the open call of that kind), which it
// ended with false warnings ("a later item event names call_id …",
// "complete arguments do not continue the streamed ones").
func TestRound23LlamaCppCalls(t *testing.T) {
	t.Parallel()
	req := r21Request("qwen3-8b", "What is the weather in Paris and in Tokyo?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "llamacpp_responses_calls_stream", req)
	p := f.Message.GetParts()
	if len(p) != 4 {
		t.Fatalf("parts %v", p)
	}
	if r := p[0].GetReasoning(); r.GetText() != "The user wants the weather in Paris and Tokyo. I'll call get_weather twice." || r.GetId() != "rs_Vb2Nm8Kq4Xw6Zt1Lp9Rc3Hj7Df5Gs0Ae" {
		t.Errorf("reasoning %v", r)
	}
	if p[1].GetText() != "Let me check both cities." {
		t.Errorf("text %v", p[1])
	}
	for i, w := range []struct{ id, args string }{{"fc_Hx4Kd9Zq2Wm7Lc1Vt6Np3Rb8Jf5Gs0Ua", `{"city":"Paris"}`}, {"fc_Pq8Lm3Zx6Wt1Kc9Vd4Nb2Rh7Jf5Gs0Ei", `{"city":"Tokyo"}`}} {
		if c := p[2+i].GetToolCall(); c.GetCallId() != w.id || c.GetArguments() != w.args || !c.GetArgumentsValid() {
			t.Errorf("call %d: %v", i, c)
		}
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 301, OutputTokens: 88, TotalTokens: 389}); !proto.Equal(m.GetUsage(), want) || len(m.GetWarnings()) != 0 {
		t.Errorf("usage %v, want %v; warnings %q", m.GetUsage(), want, m.GetWarnings())
	}
}
