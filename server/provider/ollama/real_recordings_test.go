package ollama

import (
	"context"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Real /api/chat answers published by attogram/ollama-bash-lib's demos
// (testdata/README.md, "Real recordings"): gpt-oss thinking, then one tool
// call, with done but no done_reason and only three of the counters. The
// expectations are read off the recordings by hand.
func TestAttogramToolAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, model, thinking, call, args string
		total, in, out                    float64
	}{
		{"real_attogram_tools_simple", "gpt-oss:20b",
			"The user asks current date and time. We have to use the datetime function.",
			"datetime", `{}`, 518799606, 126, 35},
		{"real_attogram_tools_with_args", "gpt-oss:120b",
			"The user wants to search for 'ollama bash lib'. Use the search function.",
			"search", `{"query":"ollama bash lib"}`, 621045148, 129, 47},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			built, err := buildChatRequest(thinkingToolsRequest(t), false)
			if err != nil {
				t.Fatal(err)
			}
			res, err := newTestProvider(t, srv).Generate(context.Background(), thinkingToolsRequest(t))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != tc.thinking {
				t.Fatalf("parts %v, want the thinking then one call", parts)
			}
			call := parts[1].GetToolCall()
			if call.GetName() != tc.call || call.GetArguments() != tc.args || !call.GetArgumentsValid() ||
				call.GetCallId() != callID(built.salt, tc.model, 0, tc.call) {
				t.Errorf("call %v, want %s(%s)", call, tc.call, tc.args)
			}
			m := res.Meta
			if m.GetResolvedModel() != tc.model {
				t.Errorf("model %q", m.GetResolvedModel())
			}
			// done without done_reason: a normal finish, after a call.
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "" || m.GetToolCallCount() != 1 {
				t.Errorf("finish %v / %q, %d calls", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount())
			}
			u := m.GetUsage()
			if float64(u.GetInputTokens()) != tc.in || float64(u.GetOutputTokens()) != tc.out || float64(u.GetTotalTokens()) != tc.in+tc.out {
				t.Errorf("usage %v", u)
			}
			ext := m.GetExtended().AsMap()
			if ext[extTotalDuration] != tc.total || ext[extPromptEvalCount] != tc.in || ext[extEvalCount] != tc.out {
				t.Errorf("extended %v", ext)
			}
			for _, k := range []string{extLoadDuration, extPromptEvalDuration, extEvalDuration} {
				if _, ok := ext[k]; ok {
					t.Errorf("extended has %s, which the answer does not", k)
				}
			}
			if m.GetCreateTime() == nil || len(m.GetWarnings()) != 0 {
				t.Errorf("create time %v, warnings %q", m.GetCreateTime(), m.GetWarnings())
			}
		})
	}
}

// TestTDXLlama3SignedStream: a real NDJSON stream of llama3 answering
// "Reply the result of 1+1", published by tolak/tdx-llama3 (testdata/README.md).
// It came through a proxy that appends a {"signature": ...} line after the
// done line; the answer is the Ollama lines', and the line after done does
// not change it or fail the stream.
func TestTDXLlama3SignedStream(t *testing.T) {
	t.Parallel()
	const name = "real_tdx_llama3_stream_signed"
	srv := providertest.ReplayFile(t, td(name+".http"))
	st, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatalf("stream ended with %v", err)
	}
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, err))
	f := foldEvents(t, evs)
	parts := f.msg.GetParts()
	if len(parts) != 1 || parts[0].GetText() != "The answer is: 2" {
		t.Fatalf("parts %v, want the text \"The answer is: 2\"", parts)
	}
	m := f.meta
	if m.GetResolvedModel() != "llama3" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" {
		t.Errorf("model %q finish %v / %q", m.GetResolvedModel(), m.GetFinishReason(), m.GetProviderFinishReason())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 18 || u.GetOutputTokens() != 7 || u.GetTotalTokens() != 25 {
		t.Errorf("usage %v", u)
	}
	ext := m.GetExtended().AsMap()
	for k, v := range map[string]float64{extTotalDuration: 36682074829, extLoadDuration: 8402298769, extPromptEvalCount: 18,
		extPromptEvalDuration: 4548739000, extEvalCount: 7, extEvalDuration: 23725236000} {
		if ext[k] != v {
			t.Errorf("extended %s = %v, want %v", k, ext[k], v)
		}
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}
