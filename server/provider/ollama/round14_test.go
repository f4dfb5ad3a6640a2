package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 14: the /api/chat response fixtures of microsoft/semantic-kernel's
// .NET Ollama connector (dotnet/src/Connectors/Connectors.Ollama.UnitTests/
// TestData; testdata/README.md, "Round 14"). Two are captures of a local
// Ollama (real_sk_*); the others were written or edited by the SDK's
// authors (sk_*). Every expectation is read off the fixture by hand.

func skRequest(model string, protocol llmrelayv1.Protocol) *provider.Request {
	return &provider.Request{Protocol: protocol, Model: model,
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the weather like in Boston?"))}}
}

// skCalls checks a unary answer of only tool calls: their names and
// arguments as the fixture has them, in order, each with an id of its own
// (Ollama sent none), and the follow-up built from the answer: the calls
// given back with their ids, positions and arguments, one tool message per
// result naming its call (tool_name, tool_call_id), in the calls' order.
func skCalls(t *testing.T, name string, want [][2]string, wantSentArgs []string) *provider.Result {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := skRequest("llama3.2", llmrelayv1.Protocol_PROTOCOL_TOOLS)
	res, err := newTestProvider(t, srv).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	parts := res.Message.GetParts()
	if len(parts) != len(want) {
		t.Fatalf("parts %v, want %d calls", parts, len(want))
	}
	ids := map[string]bool{}
	for i, p := range parts {
		c := p.GetToolCall()
		if c == nil || c.GetName() != want[i][0] || c.GetArguments() != want[i][1] || !c.GetArgumentsValid() || c.GetCallId() == "" || c.GetSignature() != "" {
			t.Errorf("part %d %v, want call %s(%s)", i, p, want[i][0], want[i][1])
		}
		ids[c.GetCallId()] = true
	}
	if len(ids) != len(want) {
		t.Errorf("call ids %v are not distinct", ids)
	}

	req.Messages = append(req.Messages, res.Message)
	for _, p := range parts {
		req.Messages = append(req.Messages, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: p.GetToolCall().GetCallId(), Content: "ok"}}}}})
	}
	srv2 := providertest.ReplayFile(t, td("sk_chat_text.http"))
	if _, err := newTestProvider(t, srv2).Generate(context.Background(), req); err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	var sent struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolName   string `json:"tool_name"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Index     *int            `json:"index"`
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	body := srv2.Last(t).Body
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 2+len(want) || sent.Messages[1].Role != "assistant" || sent.Messages[1].Content != "" ||
		len(sent.Messages[1].ToolCalls) != len(want) {
		t.Fatalf("follow-up %s", body)
	}
	for i, c := range sent.Messages[1].ToolCalls {
		id := parts[i].GetToolCall().GetCallId()
		if c.ID != id || c.Function.Index == nil || *c.Function.Index != i || c.Function.Name != want[i][0] ||
			string(c.Function.Arguments) != wantSentArgs[i] {
			t.Errorf("call %d sent back %+v, want id %s, index %d, %s(%s)", i, c, id, i, want[i][0], wantSentArgs[i])
		}
		m := sent.Messages[2+i]
		if m.Role != "tool" || m.Content != "ok" || m.ToolName != want[i][0] || m.ToolCallID != id {
			t.Errorf("tool message %d %+v, want tool_name %s, tool_call_id %s", i, m, want[i][0], id)
		}
	}
	return res
}

// skLlamaMeta checks the done line the two llama3.2 call fixtures share
// (the same counters and time: the second is the first edited).
func skLlamaMeta(t *testing.T, m *llmrelayv1.ResponseMeta, calls int32) {
	t.Helper()
	if m.GetResolvedModel() != "llama3.2" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS ||
		m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != calls || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	checkUsage(t, m.GetUsage(), 152, 22)
	checkCounters(t, m, map[string]float64{extTotalDuration: 456177688, extLoadDuration: 56756331, extPromptEvalCount: 152,
		extPromptEvalDuration: 108231000, extEvalCount: 22, extEvalDuration: 240925000})
	checkCreateTime(t, m, time.Date(2024, 10, 16, 11, 30, 29, 493808378, time.UTC))
}

// TestRound14SKFunctionCall: llama3.2 (a capture whose call SK's authors
// renamed): one call TestPlugin-TestFunction({"testInput":"fake-text"}),
// empty content, done_reason stop: a tool-call finish; 152 in, 22 out.
func TestRound14SKFunctionCall(t *testing.T) {
	t.Parallel()
	const name = "sk_chat_function_call"
	res := skCalls(t, name, [][2]string{{"TestPlugin-TestFunction", `{"testInput":"fake-text"}`}},
		[]string{`{"testInput":"fake-text"}`})
	skLlamaMeta(t, res.Meta, 1)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
}

// TestRound14SKMultipleFunctionCalls: five calls written by hand: two with
// a space after the colon in their arguments (`{"location": "Boston, MA"}`:
// the arguments are kept compact, key order and values as sent, which
// Ollama's own encoder writes anyway), one without `arguments` at all (its
// arguments are `{}`, valid, sent back as `{}`), one with a number as a
// string (kept a string).
func TestRound14SKMultipleFunctionCalls(t *testing.T) {
	t.Parallel()
	const name = "sk_chat_multiple_function_calls"
	want := [][2]string{
		{"MyPlugin_GetCurrentWeather", `{"location":"Boston, MA"}`},
		{"MyPlugin_FunctionWithException", `{"argument":"value"}`},
		{"MyPlugin_NonExistentFunction", `{"argument":"value"}`},
		{"MyPlugin_InvalidArguments", `{}`},
		{"MyPlugin_IntArguments", `{"age":"36"}`},
	}
	res := skCalls(t, name, want, []string{want[0][1], want[1][1], want[2][1], want[3][1], want[4][1]})
	skLlamaMeta(t, res.Meta, 5)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
}

// TestRound14SKText: llama3.2's done line with its text replaced by SK's
// authors ("This is test completion response"): 38 in, 45 out, stop.
func TestRound14SKText(t *testing.T) {
	t.Parallel()
	const name = "sk_chat_text"
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, srv).Generate(context.Background(), skRequest("llama3.2", llmrelayv1.Protocol_PROTOCOL_CHAT))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("This is test completion response")); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	if m.GetResolvedModel() != "llama3.2" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != 0 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	checkUsage(t, m.GetUsage(), 38, 45)
	checkCounters(t, m, map[string]float64{extTotalDuration: 740574544, extLoadDuration: 54994250, extPromptEvalCount: 38,
		extPromptEvalDuration: 69055000, extEvalCount: 45, extEvalDuration: 455657000})
	checkCreateTime(t, m, time.Date(2024, 10, 16, 11, 8, 38, 603421870, time.UTC))
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
}

// TestRound14SKLlama2Sky: llama2 on a local Ollama (July 2024, a capture
// SK's authors pretty-printed): no done_reason (Ollama then sent none), so
// the finish is STOP with no provider reason; the text opens with a line
// break, kept; 26 in, 277 out; a load of 168 s kept as load_duration.
func TestRound14SKLlama2Sky(t *testing.T) {
	t.Parallel()
	const name = "real_sk_chat_llama2_sky"
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, srv).Generate(context.Background(), skRequest("llama2", llmrelayv1.Protocol_PROTOCOL_CHAT))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	content, thinking := recordedMessage(t, name)
	if thinking != "" || len(content) != 1167 || !strings.HasPrefix(content, "\nThe sky appears blue because") || !strings.HasSuffix(content, "by atmospheric particles.") {
		t.Fatalf("recorded content (%d bytes) %q", len(content), content)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(content)); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	if m.GetResolvedModel() != "llama2" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		m.GetProviderFinishReason() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	checkUsage(t, m.GetUsage(), 26, 277)
	checkCounters(t, m, map[string]float64{extTotalDuration: 171492135390, extLoadDuration: 167891394048, extPromptEvalCount: 26,
		extPromptEvalDuration: 197005000, extEvalCount: 277, extEvalDuration: 3402761000})
	checkCreateTime(t, m, time.Date(2024, 7, 1, 11, 16, 36, 555533084, time.UTC))
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
}

// TestRound14SKPhi3StreamExcerpt: phi3 streamed from a local Ollama (July
// 2024), the last five content lines of the answer as SK kept them and the
// done line: the pieces in order, then the finish (stop), the six counters
// and the usage (10 in, 239 out: the whole answer's, not the excerpt's).
func TestRound14SKPhi3StreamExcerpt(t *testing.T) {
	t.Parallel()
	const name = "real_sk_stream_phi3_excerpt"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, srv).Stream(context.Background(), skRequest("phi3", llmrelayv1.Protocol_PROTOCOL_CHAT))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := collect(s)
	if end != nil {
		t.Fatalf("stream ended with %v", end)
	}
	var texts []string
	var usage *llmrelayv1.Usage
	meta := &llmrelayv1.ResponseMeta{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			texts = append(texts, ev.Text)
		case provider.EventUsage:
			usage = ev.Usage
		case provider.EventMeta:
			proto.Merge(meta, ev.Meta)
		default:
			t.Errorf("unexpected event kind %v", ev.Kind)
		}
	}
	if b, _ := json.Marshal(texts); string(b) != `[" these"," times"," of"," day","."]` {
		t.Errorf("texts %s", b)
	}
	checkUsage(t, usage, 10, 239)
	if meta.GetResolvedModel() != "phi3" || meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		meta.GetProviderFinishReason() != "stop" || len(meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", meta)
	}
	checkCounters(t, meta, map[string]float64{extTotalDuration: 58123571935, extLoadDuration: 55561676662, extPromptEvalCount: 10,
		extPromptEvalDuration: 34847000, extEvalCount: 239, extEvalDuration: 2381751000})
	checkCreateTime(t, meta, time.Date(2024, 7, 2, 11, 45, 16, 265598822, time.UTC))
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, end))
}

// TestRound14SKThinkingStream: SK's hand-written thinking stream: one line
// with both thinking and content, then a done line with empty strings, no
// created_at, no done_reason and no counter. The thinking comes before the
// text; the finish is STOP; no usage is reported (none was sent: not
// zeros).
func TestRound14SKThinkingStream(t *testing.T) {
	t.Parallel()
	const name = "sk_stream_thinking"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, srv).Stream(context.Background(), skRequest("qwen3:0.6b", llmrelayv1.Protocol_PROTOCOL_CHAT))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := collect(s)
	if end != nil {
		t.Fatalf("stream ended with %v", end)
	}
	got := accumulate(t, evs)
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: "This is reasoning content"}}},
		text("Final answer"))
	if !proto.Equal(got, want) {
		t.Errorf("message\n got %v\nwant %v", got, want)
	}
	meta := &llmrelayv1.ResponseMeta{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventUsage:
			t.Errorf("usage %v reported; the done line has no counter", ev.Usage)
		case provider.EventMeta:
			proto.Merge(meta, ev.Meta)
		}
	}
	if meta.GetResolvedModel() != "qwen3:0.6b" || meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		meta.GetProviderFinishReason() != "" || meta.GetCreateTime() != nil || len(meta.GetExtended().AsMap()) != 0 {
		t.Errorf("meta %v", meta)
	}
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, end))
}

// TestRound14SKLegacyEmbeddings: SK's embeddings fixture is the old
// /api/embeddings answer ({"embedding": [...]}, one vector, "fake-model"),
// written by hand. Served where /api/embed's answer belongs (as a proxy
// or an old server might), it is a bad response, not an empty vector.
func TestRound14SKLegacyEmbeddings(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("sk_embeddings_legacy.http"))
	res, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "fake-model", Inputs: []string{"test"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
		t.Fatalf("Embed: %v, %v; want a bad response", res, err)
	}
	if c := srv.Last(t); c.Path != "/api/embed" {
		t.Errorf("request to %s", c.Path)
	}
}
