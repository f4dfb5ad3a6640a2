package gemini

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 24: llmrb/llm's VCR cassettes (testdata/README.md, "Round 24:
// llmrb/llm"). The expectations are read off the recordings by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_llmrb_chat_stream_tool_1", "real_llmrb_chat_stream_tool_2",
		"real_llmrb_empty_function_call_2", "real_llmrb_unauthorized")
}

var r24SystemTool = &llmrelayv1.Tool{Name: "system", Description: "Runs system commands",
	Parameters: `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`}

// TestRound24LlmrbStreamTool: gemini-2.5-flash (September 2025) streamed,
// one event (spaced JSON, CRLF framing): the call system({"command":
// "date"}) without an id, carrying a 266-byte signature (three whole
// protobuf fields), STOP; 53 in, 13 + 42 thought tokens (108). Then the
// answer after the result in two events, " `date` command was executed."
// after "The", the prompt count 78 on both. The call is TOOL_CALLS with
// its signature; the second answer's usage is its last event's.
func TestRound24LlmrbStreamTool(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Hey, run the 'date' command"))}, Tools: []*llmrelayv1.Tool{r24SystemTool}}
	evs, _ := r20Stream(t, "real_llmrb_chat_stream_tool_1", req)
	f := foldEvents(evs)
	if len(f.calls) != 1 || f.calls[0].GetName() != "system" || f.calls[0].GetArguments() != `{"command":"date"}` ||
		len(f.calls[0].GetSignature()) != 356 || f.calls[0].GetSignature()[:8] != "CikB0e2K" || f.text != "" {
		t.Fatalf("calls %v, text %q", f.calls, f.text)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 53, OutputTokens: 55, TotalTokens: 108, ReasoningTokens: 42}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if m := f.meta; m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetResponseId() != "48bFaJWfA6LXz7IP3tq9yQc" || m.GetResolvedModel() != "gemini-2.5-flash" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	evs, _ = r20Stream(t, "real_llmrb_chat_stream_tool_2", req)
	f = foldEvents(evs)
	if f.text != "The `date` command was executed." || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 78, OutputTokens: 8, TotalTokens: 86}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if m := f.meta; m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetResponseId() != "5MbFaN2lI-LUz7IPkNinyQk" {
		t.Errorf("meta %v", m)
	}
}

// TestRound24LlmrbEmptyAnswer: gemini-1.5-flash (May 2025), unary, asked
// again after its own greeting: one empty text part, STOP, no
// candidatesTokenCount (45 in, 45 total), no responseId. The answer is
// empty (no part), its finish STOP, 0 out; the gateway warns of it.
func TestRound24LlmrbEmptyAnswer(t *testing.T) {
	t.Parallel()
	res, _ := r21Unary(t, "real_llmrb_empty_function_call_2", r21User("gemini-1.5-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("Hello! Nice to meet you"))))
	if len(res.Message.GetParts()) != 0 {
		t.Errorf("parts %v, want none", res.Message.GetParts())
	}
	m := res.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetResolvedModel() != "gemini-1.5-flash" || m.GetResponseId() != "" {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 45, TotalTokens: 45}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}

// TestRound24LlmrbUnauthorized: a 400 INVALID_ARGUMENT "API key not
// valid" whose ErrorInfo says API_KEY_INVALID, beside a LocalizedMessage
// detail: an authentication failure, the reason in the code.
func TestRound24LlmrbUnauthorized(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_llmrb_unauthorized")
	_, err := p.Generate(context.Background(), r20Hello("gemini-1.5-flash"))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 400 ||
		pe.Code != "INVALID_ARGUMENT/API_KEY_INVALID" || pe.Message != "API key not valid. Please pass a valid API key." {
		t.Errorf("err %#v", err)
	}
}
