package ollama

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// Round 22: maruel/genai's go-vcr recordings of a local Ollama's /api/chat
// (testdata/README.md, "Round 22: maruel/genai"). Every expectation is
// read off the recording by hand; where the cassette kept the request
// Ollama answered, ours is compared with it whole (rmgSameRequest).

// rmgSquareRoot is maruel/genai's square_root tool.
func rmgSquareRoot() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: "square_root", Description: "Calculates and return the square root of a number",
		Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}`}
}

const rmgSqrtQuestion = "Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."

// rmgSameRequest checks that the request sent is the recorded one
// (testdata/<name>.recorded_request.json), whole; edit first changes the
// recorded one where ours differs on purpose (each test says why).
func rmgSameRequest(t *testing.T, srv *providertest.Server, name string, edit func(m map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(td(name + ".recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(srv.Last(t).Body, &got); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(want)
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%s: request\n got %s\nwant %s", name, gb, wb)
	}
}

// rmgOurs writes the recorded request as ours writes it on purpose:
// "truncate" and "shift" false (noSilentCut), an assistant message's
// content always present ("" beside calls, as Ollama itself answers), and
// each call's function.index (Ollama's own field, its position).
func rmgOurs(m map[string]any) {
	m["truncate"], m["shift"] = false, false
	msgs, _ := m["messages"].([]any)
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		if msg["role"] != "assistant" {
			continue
		}
		if _, ok := msg["content"]; !ok {
			msg["content"] = ""
		}
		calls, _ := msg["tool_calls"].([]any)
		for i, rc := range calls {
			c, _ := rc.(map[string]any)
			if f, _ := c["function"].(map[string]any); f != nil {
				f["index"] = float64(i)
			}
		}
	}
}

// rmgUnary replays a unary recording and checks its golden.
func rmgUnary(t *testing.T, name string, req *provider.Request) (*provider.Result, *providertest.Server) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, srv).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: Generate: %v", name, err)
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	return res, srv
}

func rmgTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// rmgLocal are the six counters of a local Ollama's done line.
func rmgLocal(total, load, in, inDur, out, outDur float64) map[string]float64 {
	return map[string]float64{extTotalDuration: total, extLoadDuration: load, extPromptEvalCount: in,
		extPromptEvalDuration: inDur, extEvalCount: out, extEvalDuration: outDur}
}

// TestRound22MaruelThinkingSquareRoot: gemma4:e2b on a local Ollama (May
// 2026), unary, thinking by default (no "think" sent), the tool offered
// (maruel/genai's "any" case: Ollama cannot force a call, our warning
// says so). Turn 1: a 999-byte thinking (an escaped `$\\sqrt{132413}$`, its
// apostrophes doubled in the cassette, a YAML quote), empty content and one
// call square_root({"number":132413}) with Ollama's id call_9doztm4t;
// done_reason stop, which a call makes a tool-call finish; 95 in, 292
// out. Turn 2 sends the call back with its id and the result with
// tool_call_id and tool_name, without the thinking (as maruel/genai did):
// "363.89", 131 in, 7 out. Both requests are the recorded ones
// (rmgOurs).
func TestRound22MaruelThinkingSquareRoot(t *testing.T) {
	t.Parallel()
	const first, second = "real_maruel_gemma4_e2b_thinking_sqrt_1", "real_maruel_gemma4_e2b_thinking_sqrt_2"
	build := func(mode llmrelayv1.ToolChoiceMode, more ...*llmrelayv1.Message) *provider.Request {
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemma4:e2b",
			Messages: append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(rmgSqrtQuestion))}, more...),
			Tools:    []*llmrelayv1.Tool{rmgSquareRoot()},
			Options:  &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: mode}}}}
	}
	res1, srv1 := rmgUnary(t, first, build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	content, thinking, _ := r22Recorded(t, first, false)
	if content != "" || len(thinking) != 999 {
		t.Fatalf("recorded content %q, thinking %d bytes %q", content, len(thinking), thinking)
	}
	wantCall := &llmrelayv1.ToolCall{CallId: "call_9doztm4t", Name: "square_root", Arguments: `{"number":132413}`, ArgumentsValid: true}
	parts := res1.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != thinking || !proto.Equal(parts[1].GetToolCall(), wantCall) {
		t.Fatalf("parts %v", parts)
	}
	m := res1.Meta
	if m.GetResolvedModel() != "gemma4:e2b" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS ||
		m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != 1 {
		t.Errorf("model %q finish %v / %q calls %d", m.GetResolvedModel(), m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount())
	}
	checkUsage(t, m.GetUsage(), 95, 292)
	checkCounters(t, m, rmgLocal(3067193667, 94864083, 95, 73948792, 292, 2758205252))
	checkCreateTime(t, m, rmgTime(t, "2026-05-04T22:49:02.502627Z"))
	if w := m.GetWarnings(); len(w) != 1 || w[0] != "tool_choice required is not supported by Ollama; the model may answer without a tool call" {
		t.Errorf("warnings %q", w)
	}
	rmgSameRequest(t, srv1, first, rmgOurs)

	res2, srv2 := rmgUnary(t, second, build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO,
		&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts[1:]},
		msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_9doztm4t", Name: "square_root", Content: "363.89"}}})))
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "363.89" {
		t.Errorf("parts %v", p)
	}
	m = res2.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" || len(m.GetWarnings()) != 0 {
		t.Errorf("finish %v / %q, warnings %q", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetWarnings())
	}
	checkUsage(t, m.GetUsage(), 131, 7)
	checkCounters(t, m, rmgLocal(2807237958, 105799333, 131, 59270708, 7, 57566834))
	checkCreateTime(t, m, rmgTime(t, "2026-05-04T22:49:05.31052Z"))
	rmgSameRequest(t, srv2, second, rmgOurs)
}

// rmgLogprobs is the logprobs list both logprobs recordings carry (two
// tokens, each with its two top candidates), as Ollama sent it.
const rmgLogprobs = `[{"token":"Hello","logprob":-2.5476916221123247e-7,"bytes":[72,101,108,108,111],"top_logprobs":[{"token":"Hello","logprob":-2.5476916221123247e-7,"bytes":[72,101,108,108,111]},{"token":"Hola","logprob":-15.213885307312012,"bytes":[72,111,108,97]}]},` +
	`{"token":".","logprob":-0.00833772961050272,"bytes":[46],"top_logprobs":[{"token":".","logprob":-0.00833772961050272,"bytes":[46]},{"token":"<turn|>","logprob":-4.791256427764893,"bytes":[60,116,117,114,110,124,62]}]}]`

// TestRound22MaruelLogprobs: gemma4:e2b (May 2026) with think false and
// {"logprobs": true, "top_logprobs": 2} (extra_body), "Say hello. Use
// only one word.". Unary: "Hello." with two logprob entries (Hello /
// Hola, then "." / the model's `<turn|>` end token written as \u003c
// escapes); 17 in, 3 out. Streamed: "Hello" and "." each with its entry
// on its own line, the done line without any: the two entries joined in
// order are the unary list. Both requests are the recorded ones
// (rmgOurs).
func TestRound22MaruelLogprobs(t *testing.T) {
	t.Parallel()
	build := func() *provider.Request {
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word."))},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"logprobs":true,"top_logprobs":2}`,
				Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: ptr(false)}}}}
	}
	var want any
	if err := json.Unmarshal([]byte(rmgLogprobs), &want); err != nil {
		t.Fatal(err)
	}
	check := func(name string, parts []*llmrelayv1.Part, m *llmrelayv1.ResponseMeta, counters map[string]float64, created string) {
		t.Helper()
		if len(parts) != 1 || parts[0].GetText() != "Hello." {
			t.Errorf("%s: parts %v", name, parts)
		}
		if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" || len(m.GetWarnings()) != 0 {
			t.Errorf("%s: finish %v / %q, warnings %q", name, m.GetFinishReason(), m.GetProviderFinishReason(), m.GetWarnings())
		}
		checkUsage(t, m.GetUsage(), 17, 3)
		if got := m.GetExtended().AsMap()[extLogprobs]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: logprobs %v\nwant %v", name, got, want)
		}
		m = proto.Clone(m).(*llmrelayv1.ResponseMeta)
		delete(m.Extended.Fields, extLogprobs)
		checkCounters(t, m, counters)
		checkCreateTime(t, m, rmgTime(t, created))
	}
	const unary, stream = "real_maruel_gemma4_e2b_logprobs", "real_maruel_gemma4_e2b_logprobs_stream"
	res, srv := rmgUnary(t, unary, build())
	check(unary, res.Message.GetParts(), res.Meta, rmgLocal(194243333, 98412875, 17, 10265875, 3, 20098667), "2026-05-04T22:48:30.616035Z")
	rmgSameRequest(t, srv, unary, rmgOurs)

	srv2 := providertest.ReplayFile(t, td(stream+".http"))
	st, err := newTestProvider(t, srv2).Stream(context.Background(), build())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td(stream+".golden"), renderEvents(t, evs, err))
	f := foldEvents(t, evs)
	check(stream, f.msg.GetParts(), f.meta, rmgLocal(259405125, 100513500, 17, 19412042, 3, 20084084), "2026-05-04T22:48:30.722604Z")
	rmgSameRequest(t, srv2, stream, rmgOurs)
}

// TestRound22MaruelThinkingNoArgs: gemma4:e2b (October 2026), unary,
// thinking by default, a tool of no parameters. Turn 1: thinking (its
// apostrophes doubled in the cassette, a YAML quote), empty content and
// get_hostname with arguments {} and Ollama's id call_qw5y3pwu; 69 in
// (prompt_eval_cached_count 0), 122 out. Turn 2 after "genai-smoke":
// thinking and "genai-smoke"; 97 in of which 64 read from the cache
// (prompt_eval_cached_count, the cached input tokens), 63 out. Both
// requests are the recorded ones (rmgOurs): the call goes back with
// arguments {}.
func TestRound22MaruelThinkingNoArgs(t *testing.T) {
	t.Parallel()
	const first, second = "real_maruel_gemma4_e2b_thinking_noargs_1", "real_maruel_gemma4_e2b_thinking_noargs_2"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemma4:e2b",
			Messages: append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Use the get_hostname tool to get the machine's hostname and reply with only the hostname. Do not give an explanation."))}, more...),
			Tools: []*llmrelayv1.Tool{{Name: "get_hostname", Description: "Returns the machine's hostname",
				Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}`}}}
	}
	res1, srv1 := rmgUnary(t, first, build())
	_, thinking1, _ := r22Recorded(t, first, false)
	parts := res1.Message.GetParts()
	wantCall := &llmrelayv1.ToolCall{CallId: "call_qw5y3pwu", Name: "get_hostname", Arguments: "{}", ArgumentsValid: true}
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != thinking1 || !strings.HasPrefix(thinking1, "The user wants to get the machine's hostname") ||
		!proto.Equal(parts[1].GetToolCall(), wantCall) {
		t.Fatalf("parts %v", parts)
	}
	m := res1.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("finish %v / %q calls %d warnings %q", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount(), m.GetWarnings())
	}
	checkUsage(t, m.GetUsage(), 69, 122)
	c := rmgLocal(8554304854, 5936848014, 69, 388181000, 122, 2223774000)
	c[extPromptEvalCachedCount] = 0
	checkCounters(t, m, c)
	checkCreateTime(t, m, rmgTime(t, "2026-10-03T14:30:04.526906755Z"))
	rmgSameRequest(t, srv1, first, rmgOurs)

	res2, srv2 := rmgUnary(t, second, build(&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts[1:]},
		msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_qw5y3pwu", Name: "get_hostname", Content: "genai-smoke"}}})))
	_, thinking2, _ := r22Recorded(t, second, false)
	if p := res2.Message.GetParts(); len(p) != 2 || p[0].GetReasoning().GetText() != thinking2 || p[1].GetText() != "genai-smoke" ||
		thinking2 != "The user wants me to use the `get_hostname` tool to retrieve the machine's hostname and reply *only* with the hostname.\nThe tool has been called and returned the value \"genai-smoke\".\nI need to output just \"genai-smoke\"." {
		t.Errorf("parts %v", p)
	}
	m = res2.Meta
	u := m.GetUsage()
	if u.GetInputTokens() != 97 || u.GetCachedInputTokens() != 64 || u.GetOutputTokens() != 63 || u.GetTotalTokens() != 160 {
		t.Errorf("usage %v, want 97 in (64 cached), 63 out", u)
	}
	c = rmgLocal(3770629556, 4191507, 97, 244151000, 63, 1167104000)
	c[extPromptEvalCachedCount] = 64
	checkCounters(t, m, c)
	checkCreateTime(t, m, rmgTime(t, "2026-10-03T14:30:08.299587574Z"))
	rmgSameRequest(t, srv2, second, rmgOurs)
}

// rmgCheck checks a unary answer of a local Ollama: its parts (the first
// the recorded thinking when thinking is set), a tool-call finish when it
// has calls, the usage with its cached part, no warning.
func rmgCheck(t *testing.T, name string, res *provider.Result, thinking bool, parts []*llmrelayv1.Part, in, cached, out int32) {
	t.Helper()
	got := res.Message.GetParts()
	if thinking {
		_, th, _ := r22Recorded(t, name, false)
		if len(got) == 0 || th == "" || got[0].GetReasoning().GetText() != th {
			t.Errorf("%s: thinking %v, recorded %q", name, got, th)
			return
		}
		got = got[1:]
	}
	if !proto.Equal(&llmrelayv1.Message{Parts: got}, &llmrelayv1.Message{Parts: parts}) {
		t.Errorf("%s: parts %v\nwant %v", name, got, parts)
	}
	m := res.Meta
	finish, calls := llmrelayv1.FinishReason_FINISH_REASON_STOP, int32(0)
	for _, p := range parts {
		if p.GetToolCall() != nil {
			finish, calls = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, calls+1
		}
	}
	if m.GetFinishReason() != finish || m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != calls || len(m.GetWarnings()) != 0 {
		t.Errorf("%s: finish %v / %q calls %d warnings %q", name, m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount(), m.GetWarnings())
	}
	if u := m.GetUsage(); u.GetInputTokens() != in || u.GetCachedInputTokens() != cached || u.GetOutputTokens() != out || u.GetTotalTokens() != in+out {
		t.Errorf("%s: usage %v, want %d in (%d cached), %d out", name, u, in, cached, out)
	}
}

func rmgCall(id, name, args string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: name, Arguments: args, ArgumentsValid: true}}}
}

// TestRound22MaruelOutOfOrder: gemma4:e2b (October 2026), unary, thinking
// by default, a system prompt, two user messages and task_status. Turn 1:
// thinking and three calls (Ollama's ids call_flz27r88, call_zhslq93b,
// call_vg07p5co; tasks 3, 7, 11); 130 in (125 cached), 194 out. Turn 2
// sends the calls back with no result yet and two more user messages
// (which Ollama takes, unlike Anthropic): thinking and "Waiting for task
// 7's reference."; 243 in (238 cached), 533 out. Turn 3 adds that answer,
// then the three results late and out of order (11, 7, 3), after the
// assistant's text, and the question again: thinking and one more call
// task_status(7) (call_ywt8dbyt); 297 in (292 cached), 331 out. Each
// request is the recorded one (rmgOurs): messages kept where and as the
// caller put them, the results in the order given.
func TestRound22MaruelOutOfOrder(t *testing.T) {
	t.Parallel()
	tool := &llmrelayv1.Tool{Name: "task_status", Description: "Read a task's current status and reference; does not change anything.",
		Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"task_id":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["task_id"]}`}
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemma4:e2b",
			Messages: append([]*llmrelayv1.Message{
				msg(llmrelayv1.Role_ROLE_SYSTEM, text("You are a terse voice assistant. Speak naturally. Follow the latest request. Never claim a task's state or reference without its tool result.")),
				msg(llmrelayv1.Role_ROLE_USER, text("Check the status and reference of tasks 3, 7 and 11.")),
				msg(llmrelayv1.Role_ROLE_USER, text("Start the checks together if possible.")),
			}, more...),
			Tools: []*llmrelayv1.Tool{tool}}
	}
	const first, second, third = "real_maruel_gemma4_e2b_thinking_out_of_order_1", "real_maruel_gemma4_e2b_thinking_out_of_order_2", "real_maruel_gemma4_e2b_thinking_out_of_order_3"
	res1, srv1 := rmgUnary(t, first, build())
	rmgCheck(t, first, res1, true, []*llmrelayv1.Part{
		rmgCall("call_flz27r88", "task_status", `{"task_id":3}`), rmgCall("call_zhslq93b", "task_status", `{"task_id":7}`), rmgCall("call_vg07p5co", "task_status", `{"task_id":11}`),
	}, 130, 125, 194)
	rmgSameRequest(t, srv1, first, rmgOurs)

	calls := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: res1.Message.GetParts()[1:]}
	q2 := msg(llmrelayv1.Role_ROLE_USER, text("Actually, I only need task 7's reference. The other checks can finish in the background."))
	q3 := msg(llmrelayv1.Role_ROLE_USER, text("Do you have task 7's reference yet? If not, just let me know you're still waiting. Don't give me the other tasks' references."))
	res2, srv2 := rmgUnary(t, second, build(calls, q2, q3))
	rmgCheck(t, second, res2, true, []*llmrelayv1.Part{text("Waiting for task 7's reference.")}, 243, 238, 533)
	rmgSameRequest(t, srv2, second, rmgOurs)

	result := func(id, c string) *llmrelayv1.Message {
		return msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Name: "task_status", Content: c}}})
	}
	res3, srv3 := rmgUnary(t, third, build(calls, q2, q3, msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Waiting for task 7's reference.")),
		result("call_vg07p5co", `{"id":11,"status":"paused","reference":"cyan"}`), result("call_zhslq93b", `{"id":7,"status":"waiting","reference":"violet"}`),
		result("call_flz27r88", `{"id":3,"status":"running","reference":"amber"}`), q3))
	rmgCheck(t, third, res3, true, []*llmrelayv1.Part{rmgCall("call_ywt8dbyt", "task_status", `{"task_id":7}`)}, 297, 292, 331)
	rmgSameRequest(t, srv3, third, rmgOurs)
}

// TestRound22MaruelThinkingCut: gemma4:e2b (May 2026), unary, thinking
// by default, two answers cut inside the thinking with no content at all.
// num_predict 16: the thinking "Here's a thinking process that leads to
// the detailed explanation of" and done_reason length (a LENGTH finish);
// 25 in, 16 out, all of them thinking, which Ollama does not count apart
// (no reasoning tokens). stop ["is"]: Ollama applies the stop sequence to
// the thinking too, which ends "The user wants a detailed d" (before
// "discussion"), done_reason stop, empty content: a STOP finish with the
// thinking alone, as Ollama said it; 28 in, 21 out. Each has a streamed
// twin, another answer with the same thinking: 13 thinking lines (16
// tokens) then the done line; 16 lines for the stop, whose done line
// still counts 21 tokens (those Ollama held back while matching the
// stop). All four requests are the recorded ones (rmgOurs).
func TestRound22MaruelThinkingCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, prompt, thinking string
		opts                   *llmrelayv1.GenerationOptions
		finish                 llmrelayv1.FinishReason
		reason                 string
		in, out                int32
		counters               map[string]float64
		streamCounters         map[string]float64
	}{
		{"real_maruel_gemma4_e2b_thinking_max_tokens", "Explain the theory of relativity in great details.",
			"Here's a thinking process that leads to the detailed explanation of", &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(16))},
			llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length", 25, 16, rmgLocal(5756256583, 92459083, 25, 49465125, 16, 153117417),
			rmgLocal(376763584, 94744625, 25, 19278000, 16, 147166500)},
		{"real_maruel_gemma4_e2b_thinking_stop", "Talk about Canada in great details. Start with: Canada is",
			"Thinking Process:\n\n1.  **Analyze the Request:** The user wants a detailed d", &llmrelayv1.GenerationOptions{Stop: []string{"is"}},
			llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop", 28, 21, rmgLocal(415057667, 106027000, 28, 44733083, 21, 193651370),
			rmgLocal(463059084, 93713209, 28, 19590750, 21, 193519121)},
	} {
		req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(tc.prompt))}, Options: tc.opts}
		check := func(name string, message *llmrelayv1.Message, m *llmrelayv1.ResponseMeta, counters map[string]float64) {
			t.Helper()
			want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: tc.thinking}}}}}
			if !proto.Equal(message, want) {
				t.Errorf("%s: message %v", name, message)
			}
			if m.GetFinishReason() != tc.finish || m.GetProviderFinishReason() != tc.reason || len(m.GetWarnings()) != 0 {
				t.Errorf("%s: finish %v / %q warnings %q", name, m.GetFinishReason(), m.GetProviderFinishReason(), m.GetWarnings())
			}
			checkUsage(t, m.GetUsage(), tc.in, tc.out)
			checkCounters(t, m, counters)
		}
		res, srv := rmgUnary(t, tc.name, req)
		check(tc.name, res.Message, res.Meta, tc.counters)
		rmgSameRequest(t, srv, tc.name, rmgOurs)

		// The streamed twin (another answer, the same text): one thinking
		// piece a line, the done line with the counters.
		name := tc.name + "_stream"
		srv2 := providertest.ReplayFile(t, td(name+".http"))
		st, err := newTestProvider(t, srv2).Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := collect(st)
		if err != nil {
			t.Fatal(err)
		}
		providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, err))
		f := foldEvents(t, evs)
		check(name, f.msg, f.meta, tc.streamCounters)
		rmgSameRequest(t, srv2, name, rmgOurs)
	}
}

// TestRound22MaruelThinkingLogprobs: gemma4:e2b (May 2026), unary,
// thinking by default with {"logprobs": true, "top_logprobs": 2}: a
// 416-byte thinking and "Hello", and 104 logprob entries (105 tokens
// generated) whose tokens spell "<|channel>thought\n", the whole
// thinking, "<channel|>" and then "Hello": every generated token, the
// answer's being the last one. **Bug:** the list went out as the answer's
// logprobs (extended.logprobs, the key the OpenAI adapter gives a
// choice's content logprobs) with nothing saying that all but one of its
// entries are the thinking's and its markers'; a warning now says so,
// unary and streamed (the list itself is kept as Ollama sent it). The
// request is the recorded one (rmgOurs).
func TestRound22MaruelThinkingLogprobs(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma4_e2b_thinking_logprobs"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
		Messages:        []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word."))},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"logprobs":true,"top_logprobs":2}`}}
	res, srv := rmgUnary(t, name, req)
	_, thinking, _ := r22Recorded(t, name, false)
	if len(thinking) != 416 || !strings.HasPrefix(thinking, "Thinking Process:\n1.  **Analyze the Request:**") {
		t.Fatalf("recorded thinking %d bytes %q", len(thinking), thinking)
	}
	want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: thinking}}}, text("Hello")}}
	if !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" {
		t.Errorf("finish %v / %q", m.GetFinishReason(), m.GetProviderFinishReason())
	}
	if w := m.GetWarnings(); len(w) != 1 || w[0] != logprobsCoverThinking {
		t.Errorf("warnings %q, want the logprobs one", w)
	}
	checkUsage(t, m.GetUsage(), 24, 105)
	entries, _ := m.GetExtended().AsMap()[extLogprobs].([]any)
	var spelled strings.Builder
	for _, e := range entries {
		tok, _ := e.(map[string]any)["token"].(string)
		spelled.WriteString(tok)
	}
	if len(entries) != 104 || spelled.String() != "<|channel>thought\n"+thinking+"<channel|>Hello" {
		t.Errorf("%d logprob entries spelling %q", len(entries), spelled.String())
	}
	c := m.GetExtended().AsMap()
	delete(c, extLogprobs)
	if !reflect.DeepEqual(c, map[string]any{extTotalDuration: 6505530125.0, extLoadDuration: 105431750.0, extPromptEvalCount: 24.0,
		extPromptEvalDuration: 18733542.0, extEvalCount: 105.0, extEvalDuration: 1427027501.0}) {
		t.Errorf("counters %v", c)
	}
	rmgSameRequest(t, srv, name, rmgOurs)

	// Streamed: the same answer as Ollama streams it, the thinking and its
	// entries on one line, "Hello" and its entry on the next (built from
	// this recording's entries), then the done line. The joined list and
	// the warning come with the finish.
	line := func(field, piece string, lp []any) string {
		b, err := json.Marshal(map[string]any{"model": "gemma4:e2b", "created_at": "2026-05-04T22:48:46.118668Z",
			"message": map[string]any{"role": "assistant", "content": "", field: piece}, "done": false, "logprobs": lp})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	body := line("thinking", thinking, entries[:103]) + line("content", "Hello", entries[103:]) +
		`{"model":"gemma4:e2b","created_at":"2026-05-04T22:48:46.118668Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":24,"eval_count":105}` + "\n"
	srv2 := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(body)})
	st, err := newTestProvider(t, srv2).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if !proto.Equal(f.msg, want) {
		t.Errorf("streamed message %v", f.msg)
	}
	if w := f.meta.GetWarnings(); len(w) != 1 || w[0] != logprobsCoverThinking {
		t.Errorf("streamed warnings %q, want the logprobs one", w)
	}
	if got, _ := f.meta.GetExtended().AsMap()[extLogprobs].([]any); !reflect.DeepEqual(got, entries) {
		t.Errorf("streamed logprobs: %d entries, want the unary list", len(got))
	}
}

// TestRound22MaruelThinkingJSONSchema: gemma4:e2b (May 2026), unary,
// thinking by default with a JSON schema as format: an 817-byte thinking,
// then the content "{\n\"is_fruit\": true\n}" (the schema constrains the
// content, not the thinking); 38 in and, as Ollama counted them, 11 out:
// eval_count (and eval_duration, 97 ms of 3.96 s) cannot include the
// thinking, whose 817 bytes alone are many more than 11 tokens. Nothing in
// the answer says how many tokens the thinking took, so the usage is kept
// as counted, with a warning since round 23 (Ollama's two runs under a
// format: window.formatCountWarning, round23_format_count_test.go). The
// request is the recorded one (rmgOurs).
func TestRound22MaruelThinkingJSONSchema(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma4_e2b_thinking_json_schema"
	res, srv := rmgUnary(t, name, &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`}}})
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "eval_count 11 leaves out the thinking") {
		t.Errorf("warnings %q, want the one that eval_count leaves out the thinking", w)
	}
	res.Meta.Warnings = nil // the warning checked, rmgCheck wants none
	rmgCheck(t, name, res, true, []*llmrelayv1.Part{text("{\n\"is_fruit\": true\n}")}, 38, 0, 11)
	if _, th, _ := r22Recorded(t, name, false); len(th) != 817 {
		t.Errorf("recorded thinking %d bytes", len(th))
	}
	checkCounters(t, res.Meta, rmgLocal(3959293875, 94523083, 38, 14595042, 11, 96651126))
	rmgSameRequest(t, srv, name, rmgOurs)
}
