package anthropic

import (
	"errors"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22: maruel/genai's go-vcr recordings of the live Messages API
// (testdata/README.md, "Round 22: maruel/genai"). Every expectation is
// read off the recording by hand; where the cassette kept the request the
// API answered, ours is compared with it whole (r22SameRequest).

// rmgSquareRoot is maruel/genai's square_root tool.
func rmgSquareRoot() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: "square_root", Description: "Calculates and return the square root of a number",
		Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}`}
}

const rmgSqrtQuestion = "Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."

// rmgSqrtRequest is maruel/genai's SquareRoot scenario: max_tokens 64000,
// one tool, the given tool choice, and more messages after the question.
func rmgSqrtRequest(model string, mode llmrelayv1.ToolChoiceMode, more ...*llmrelayv1.Message) *provider.Request {
	req := r21Request(model, rmgSqrtQuestion, 64000, 0)
	req.Messages = append(req.Messages, more...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{rmgSquareRoot()}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: mode}}
	return req
}

// rmgSame writes the recorded request as ours writes what the API reads
// the same way: maruel/genai sends "thinking": {"type": "disabled"} when
// it asks for none (ours leaves the field out) and a tool result as one
// text block (ours as the string it stands for).
func rmgSame(m map[string]any) {
	if th, _ := m["thinking"].(map[string]any); th["type"] == "disabled" {
		delete(m, "thinking")
	}
	msgs, _ := m["messages"].([]any)
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, rb := range blocks {
			b, _ := rb.(map[string]any)
			if c, _ := b["content"].([]any); b["type"] == "tool_result" && len(c) == 1 {
				if tb, _ := c[0].(map[string]any); tb["type"] == "text" && len(tb) == 2 {
					b["content"] = tb["text"]
				}
			}
		}
	}
}

// rmgReset is the reset time of the rate-limit headers recorded together.
func rmgReset(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestRound22MaruelSquareRoot: claude-haiku-4-5-20251001 (February 2026),
// unary, a call required (tool_choice any). Turn 1: square_root
// {"number":132413} alone, tool_use; 712 in, 39 out; no rate-limit
// header kept. Turn 2, after the result "363.89" with tool_choice none:
// "363.89", end_turn; 690 in, 6 out; the twelve anthropic-ratelimit-*
// headers (requests 4000, tokens 4800000, all resetting at 14:39:14Z).
// Both requests are the recorded ones (rmgSame).
func TestRound22MaruelSquareRoot(t *testing.T) {
	t.Parallel()
	const first, second = "real_maruel_haiku45_sqrt_1", "real_maruel_haiku45_sqrt_2"
	const model = "claude-haiku-4-5-20251001"
	res1, srv1 := r22Unary(t, first, rmgSqrtRequest(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_013rHbV5NvhikKNLZxxcEw8T", "square_root", `{"number":132413}`)},
		responseID: "msg_018dBaa2GQa5C9s1wrstmzMA", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(712, 39, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, rmgSame)

	res2, srv2 := r22Unary(t, second, rmgSqrtRequest(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
		res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_013rHbV5NvhikKNLZxxcEw8T", "363.89", false))))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("363.89")},
		responseID: "msg_01EnEJjbeAZKL9T929Se8PZy", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(690, 6, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 4800000, tokensReset: rmgReset(t, "2026-02-07T14:39:14Z"),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, rmgSame)
}

// rmgRecordedBlock is the i-th block of the j-th message of a recorded
// request.
func rmgRecordedBlock(t *testing.T, name string, j, i int) map[string]any {
	t.Helper()
	msgs, _ := r22Recorded(t, name)["messages"].([]any)
	if j >= len(msgs) {
		t.Fatalf("%s: message %d of %d", name, j, len(msgs))
	}
	m, _ := msgs[j].(map[string]any)
	blocks, _ := m["content"].([]any)
	if i >= len(blocks) {
		t.Fatalf("%s: block %d of %d", name, i, len(blocks))
	}
	b, _ := blocks[i].(map[string]any)
	return b
}

// TestRound22MaruelThinkingSquareRootStream: claude-sonnet-4-5-20250929
// (February 2026) streamed with thinking at 1024. maruel/genai first asked
// for a forced call, which the API refuses with thinking on (the -1
// cassette, a 400 ours refuses before sending); it then asked with
// tool_choice auto (the -1-any cassette, our turn 1): a thinking block in
// ten deltas (the last empty) and its signature in one signature_delta,
// then square_root with its input in four input_json_delta pieces (the
// first empty, `{"number": ` keeping its space); tool_use; 650 in, 109
// out (message_start's output_tokens 6 is provisional). Turn 2 sends the
// thinking block back with its signature byte for byte, the call and its
// result, tool_choice none: "363" ".89", end_turn, 774 in, 6 out. Both
// requests are the recorded ones (rmgSame).
func TestRound22MaruelThinkingSquareRootStream(t *testing.T) {
	t.Parallel()
	const first, second = "real_maruel_sonnet45_thinking_sqrt_stream_1", "real_maruel_sonnet45_thinking_sqrt_stream_2"
	const model = "claude-sonnet-4-5-20250929"
	build := func(mode llmrelayv1.ToolChoiceMode, more ...*llmrelayv1.Message) *provider.Request {
		req := rmgSqrtRequest(model, mode, more...)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](1024)}}}
		return req
	}
	// maruel/genai's first try, a forced call with thinking on: the API
	// refused it (the -1 cassette: 400 invalid_request_error "Thinking may
	// not be enabled when tool_choice forces tool use."); ours refuses it
	// before sending.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	var pe *provider.Error
	if _, _, _, err := p.buildRequest(build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), true); !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest {
		t.Errorf("forced call with thinking: err %v, want our invalid request", err)
	}
	sent := rmgRecordedBlock(t, second, 1, 0)
	thinking, _ := sent["thinking"].(string)
	sig, _ := sent["signature"].(string)
	if thinking != "The user wants me to calculate the square root of 132413 using the square_root tool and reply with only the result, no explanation.\n\nI need to call the square_root function with the number 132413." ||
		!strings.HasPrefix(sig, "Eu0CCkYICxgCKkAlhKt/") || len(sig) != 496 {
		t.Fatalf("recorded thinking %q, signature %q (%d)", thinking, sig, len(sig))
	}
	_, f1, srv1 := r21Stream(t, first, build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO))
	checkLLMWant(t, first, f1.message, f1.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinking, Signature: sig}),
			toolCallValid("toolu_01K4crPgaBKSPAcj9yC8cL5f", "square_root", `{"number": 132413}`),
		},
		responseID: "msg_01THqbAF5YoP1bY6ouEd34J9", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(650, 109, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:24:38Z"),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, rmgSame)

	_, f2, srv2 := r21Stream(t, second, build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
		f1.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01K4crPgaBKSPAcj9yC8cL5f", "363.89", false))))
	checkLLMWant(t, second, f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("363.89")},
		responseID: "msg_016ubnC3dN6vJaCiZXx7dxPr", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(774, 6, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:24:40Z"),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, rmgSame)
}

// TestRound22MaruelStopSequence: claude-haiku-4-5-20251001 (February
// 2026) with stop_sequences ["is"], asked to start with "Canada is".
// Unary: "#" then the stop, stop_reason stop_sequence with the matched
// "is"; 19 in, 3 out. Streamed (another answer): no content block at all,
// message_delta alone says stop_sequence "is"; 19 in, 3 out; an empty
// message. Both requests are the recorded ones (rmgSame).
func TestRound22MaruelStopSequence(t *testing.T) {
	t.Parallel()
	const model = "claude-haiku-4-5-20251001"
	build := func() *provider.Request {
		req := r21Request(model, "Talk about Canada in great details. Start with: Canada is", 64000, 0)
		req.Options.Stop = []string{"is"}
		return req
	}
	const unary, stream = "real_maruel_haiku45_stop", "real_maruel_haiku45_stop_stream"
	res, srv := r22Unary(t, unary, build())
	checkLLMWant(t, unary, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("#")},
		responseID: "msg_01RVJbv3HjdbMKo7PJHAy1qt", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "stop_sequence",
		usage:         usageOf(19, 3, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 4800000, tokensReset: rmgReset(t, "2026-02-07T14:39:10Z"),
		extended: map[string]string{"service_tier": `"standard"`, "stop_sequence": `"is"`},
	})
	r22SameRequest(t, srv.Last(t).Body, unary, rmgSame)

	_, f, srv2 := r21Stream(t, stream, build())
	checkLLMWant(t, stream, f.message, f.meta, llmWant{
		responseID: "msg_0133bWdCkPUStNM4o54bAoUj", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "stop_sequence",
		usage:         usageOf(19, 3, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 4800000, tokensReset: rmgReset(t, "2026-02-07T14:39:10Z"),
		extended: map[string]string{"service_tier": `"standard"`, "stop_sequence": `"is"`},
	})
	r22SameRequest(t, srv2.Last(t).Body, stream, rmgSame)
}

// TestRound22MaruelNoArgsStream: claude-haiku-4-5-20251001 (October
// 2026) streamed, a tool of no parameters and tool_choice auto. Turn 1:
// get_hostname (caller direct) whose input is one empty input_json_delta:
// arguments {}; tool_use; 596 in, 37 out; the workspace id header (not
// kept). Turn 2, after "genai-smoke": "gen" "ai-smoke", end_turn, 649 in,
// 7 out. Both requests are the recorded ones (rmgSame): the call goes
// back with input {}.
func TestRound22MaruelNoArgsStream(t *testing.T) {
	t.Parallel()
	const model = "claude-haiku-4-5-20251001"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request(model, "Use the get_hostname tool to get the machine's hostname and reply with only the hostname. Do not give an explanation.", 64000, 0)
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{{Name: "get_hostname", Description: "Returns the machine's hostname",
			Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}`}}
		req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
		return req
	}
	const first, second = "real_maruel_haiku45_noargs_stream_1", "real_maruel_haiku45_noargs_stream_2"
	reset := rmgReset(t, "2026-10-03T14:10:31Z")
	_, f1, srv1 := r21Stream(t, first, build())
	checkLLMWant(t, first, f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01ALU5YJANnVeTwt8XSWz4kE", "get_hostname", "{}")},
		responseID: "msg_011CffSMgDAcf3XPAEwqHz31", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(596, 37, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 12000000, tokensReset: reset,
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, rmgSame)

	_, f2, srv2 := r21Stream(t, second, build(f1.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01ALU5YJANnVeTwt8XSWz4kE", "genai-smoke", false))))
	checkLLMWant(t, second, f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("genai-smoke")},
		responseID: "msg_011CffSMj6nrXAsrQ6YvcKtU", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(649, 7, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 12000000, tokensReset: reset,
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, rmgSame)
}

// rmgTaskTool is maruel/genai's OutOfOrder tool.
func rmgTaskTool() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: "task_status", Description: "Read a task's current status and reference; does not change anything.",
		Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"task_id":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["task_id"]}`}
}

// rmgSystemString: maruel/genai sends the system prompt as one text block;
// ours as the string it stands for. It also sends two user messages in a
// row as two messages, which the API joins into one turn: ours sends the
// turn as one message of their blocks in order.
func rmgSystemString(m map[string]any) {
	rmgSame(m)
	if sys, _ := m["system"].([]any); len(sys) == 1 {
		if b, _ := sys[0].(map[string]any); b["type"] == "text" && len(b) == 2 {
			m["system"] = b["text"]
		}
	}
	msgs, _ := m["messages"].([]any)
	var joined []any
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		if n := len(joined); n > 0 {
			if prev, _ := joined[n-1].(map[string]any); prev["role"] == msg["role"] {
				pc, _ := prev["content"].([]any)
				mc, _ := msg["content"].([]any)
				prev["content"] = append(append([]any{}, pc...), mc...)
				continue
			}
		}
		joined = append(joined, msg)
	}
	m["messages"] = joined
}

// TestRound22MaruelOutOfOrder: claude-haiku-4-5-20251001 (October 2026),
// unary, a system prompt and two user messages asking for three checks:
// three task_status calls in one answer (caller direct), tool_use; 653 in,
// 132 out; the requests limit resets a second before the tokens limit
// (18:46:13Z against :14Z). The request is the recorded one
// (rmgSystemString). maruel/genai then sent the calls back with no
// result and two more user messages: the API refused it, 400
// invalid_request_error naming the three ids. Ours refuses that
// conversation before sending it, an invalid request naming the first
// call: nothing a live call would have answered is lost.
func TestRound22MaruelOutOfOrder(t *testing.T) {
	t.Parallel()
	const first, refused = "real_maruel_haiku45_out_of_order_1", "real_maruel_haiku45_out_of_order_2_error"
	const model = "claude-haiku-4-5-20251001"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r22System(r21Request(model, "Check the status and reference of tasks 3, 7 and 11.", 64000, 0),
			"You are a terse voice assistant. Speak naturally. Follow the latest request. Never claim a task's state or reference without its tool result.")
		req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_USER, text("Start the checks together if possible.")))
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{rmgTaskTool()}
		req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
		return req
	}
	res, srv := r22Unary(t, first, build())
	reset := rmgReset(t, "2026-10-05T18:46:14Z")
	checkLLMWant(t, first, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			toolCallValid("toolu_01GY9vC2b3pXY2AXJmwi1MUK", "task_status", `{"task_id":3}`),
			toolCallValid("toolu_01BBFY67ApNrrkps3NNeaGAB", "task_status", `{"task_id":7}`),
			toolCallValid("toolu_01LvVPsyBviYKEh7nA3FTijU", "task_status", `{"task_id":11}`),
		},
		responseID: "msg_011CfjazwyvLanR3NMBXEVHN", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(653, 132, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 12000000, tokensReset: reset,
		extended: map[string]string{"service_tier": `"standard"`},
	})
	if got := res.Meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(reset.Add(-time.Second)) {
		t.Errorf("requests reset %v, want 18:46:13Z", got)
	}
	if res.Meta.GetToolCallCount() != 3 {
		t.Errorf("tool_call_count %d", res.Meta.GetToolCallCount())
	}
	r22SameRequest(t, srv.Last(t).Body, first, rmgSystemString)

	// The conversation maruel/genai sent next; the API's answer to it (the
	// -2 cassette, not kept as a recording: its message repeats the three
	// call ids of the first) was 400 invalid_request_error "messages.2:
	// `tool_use` ids were found without `tool_result` blocks immediately
	// after: toolu_01BBFY67ApNrrkps3NNeaGAB, toolu_01GY9vC2b3pXY2AXJmwi1MUK,
	// toolu_01LvVPsyBviYKEh7nA3FTijU. ...".
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = p.buildRequest(build(res.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("Actually, I only need task 7's reference. The other checks can finish in the background.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Do you have task 7's reference yet? If not, just let me know you're still waiting. Don't give me the other tasks' references."))), false)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "messages[3].parts[0].tool_call.call_id" ||
		!strings.Contains(pe.Message, `"toolu_01GY9vC2b3pXY2AXJmwi1MUK" has no tool_result`) {
		t.Errorf("err %v, want our invalid request before sending", err)
	}
}

// TestRound22MaruelCitationsStream: claude-haiku-4-5-20251001 (February
// 2026) streamed, a plain-text document then the question. The text block
// opens with "citations": [] and gets one citations_delta before its text
// (char_location, cited_text "The capital of Quackiland is Quack. " with
// its trailing space, document 0, document_title null, chars [0, 36)),
// then "The capital" " of Quackiland is" " Quack."; 595 in, 32 out. The
// request differs from the recorded one where the contract has no place:
// maruel/genai's document asked for citations ("citations": {"enabled":
// true}) and a cache breakpoint (cache_control ephemeral), which a File
// part cannot say; ours sends the document as a plain text source.
func TestRound22MaruelCitationsStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_haiku45_citations_stream"
	const model = "claude-haiku-4-5-20251001"
	req := r21Request(model, "", 64000, 0)
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("The capital of Quackiland is Quack. The Big Canard Statue is located in Quack.")}, MimeType: "text/plain"}}},
		text("What is the capital of Quackiland?"))}
	_, f, srv := r21Stream(t, name, req)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The capital of Quackiland is Quack.")},
		responseID: "msg_01TaKE8u3fdJwXo5XQsP9gJA", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(595, 32, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 4800000, tokensReset: rmgReset(t, "2026-02-07T14:39:17Z"),
		extended: map[string]string{"service_tier": `"standard"`,
			"citations": `[{"citations":[{"cited_text":"The capital of Quackiland is Quack. ","document_index":0,"document_title":null,"end_char_index":36,"start_char_index":0,"type":"char_location"}],"text":"The capital of Quackiland is Quack."}]`},
		cited: []citedWant{{"The capital of Quackiland is Quack.", []citeWant{{"char_location", "The capital of Quackiland is Quack. ", ""}}}},
	})
	r22SameRequest(t, srv.Last(t).Body, name, func(m map[string]any) {
		rmgSame(m)
		doc := rmgRecordedBlock(t, name, 0, 0)
		delete(doc, "citations")
		delete(doc, "cache_control")
		msgs, _ := m["messages"].([]any)
		msgs[0].(map[string]any)["content"].([]any)[0] = doc
	})
}

// TestRound22MaruelMaxTokensStream: claude-haiku-4-5-20251001 (February
// 2026) streamed with max_tokens 16: "# The" " Theory of Relativity: A"
// " Comprehensive" " Explanation\n\n## Overview", stop_reason max_tokens (a
// LENGTH finish); 18 in, 16 out (message_start's 2 provisional); the
// requests limit resets at 14:39:10Z, a second after the tokens limit.
// The request is the recorded one (rmgSame).
func TestRound22MaruelMaxTokensStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_haiku45_max_tokens_stream"
	const model = "claude-haiku-4-5-20251001"
	_, f, srv := r21Stream(t, name, r21Request(model, "Explain the theory of relativity in great details.", 16, 0))
	reset := rmgReset(t, "2026-02-07T14:39:09Z")
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("# The Theory of Relativity: A Comprehensive Explanation\n\n## Overview")},
		responseID: "msg_01HbjDuA1Hg61tvJ44dQTZzK", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:         usageOf(18, 16, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 4800000, tokensReset: reset,
		extended: map[string]string{"service_tier": `"standard"`},
	})
	if got := f.meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(reset.Add(time.Second)) {
		t.Errorf("requests reset %v, want 14:39:10Z", got)
	}
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22MaruelThinkingJSONSchema: claude-sonnet-4-5-20250929
// (February 2026), unary, thinking at 1024 with max_tokens 32000 and a
// JSON schema (output_config.format json_schema): a signed thinking block
// (its apostrophe doubled in the cassette, a YAML quote; a space before a blank line),
// then the text {"is_fruit":true}; 223 in, 131 out; the four limits reset
// at three different times (requests 02:53:13Z, input and total tokens
// :15Z, output tokens :17Z: the last kept in extended). With the model
// configured structured_output: native, the request is the recorded one
// (rmgSame); without, ours refuses a forced answer tool beside thinking.
func TestRound22MaruelThinkingJSONSchema(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_sonnet45_thinking_json_schema"
	const model = "claude-sonnet-4-5-20250929"
	req := r21Request(model, "Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON.", 32000, 1024)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`}
	// The model's structured_output: native (the forced-tool way refuses
	// thinking, as the API does).
	req.NativeStructuredOutput = true
	res, srv := r22Unary(t, name, req)
	thinking, _ := r19bBlock(t, r19bBody(t, name), 0)["thinking"].(string)
	if !strings.HasPrefix(thinking, "The user is asking if a banana is a fruit. A banana is indeed a fruit - it's a berry that grows on a herbaceous plant. \n\n") {
		t.Fatalf("recorded thinking %q", thinking)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinking, Signature: r22Sig(t, name, 0)}),
			text(`{"is_fruit":true}`),
		},
		responseID: "msg_011LRbQeRADdEQnfNzy6TiL7", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(223, 131, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T02:53:15Z"),
		extended: map[string]string{"service_tier": `"standard"`, "ratelimit_output_tokens_reset": `"2026-02-07T02:53:17Z"`},
	})
	if got := res.Meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(rmgReset(t, "2026-02-07T02:53:13Z")) {
		t.Errorf("requests reset %v", got)
	}
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22MaruelCitationsUnary: claude-3-5-haiku-20241022 (July 2025),
// unary, the same document and question: four text blocks, the first and
// third cited (char_location [0, 36) and [36, 78), document_title null),
// ". " and "." between them uncited; 595 in, 64 out; no inference_geo yet.
// The answer's text is the four blocks' in order; the citations name their
// two blocks. The request is the recorded one but for the document's
// citations and cache_control (see TestRound22MaruelCitationsStream).
func TestRound22MaruelCitationsUnary(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_haiku35_citations"
	const model = "claude-3-5-haiku-20241022"
	req := r21Request(model, "", 8192, 0)
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("The capital of Quackiland is Quack. The Big Canard Statue is located in Quack.")}, MimeType: "text/plain"}}},
		text("What is the capital of Quackiland?"))}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The capital of Quackiland is Quack. Quack is also home to the Big Canard Statue.")},
		responseID: "msg_01YBowsJyYJQzkcQYPgpeVDw", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(595, 64, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 480000, tokensReset: rmgReset(t, "2025-07-24T22:19:27Z"),
		extended: map[string]string{"service_tier": `"standard"`},
		cited: []citedWant{
			{"The capital of Quackiland is Quack", []citeWant{{"char_location", "The capital of Quackiland is Quack. ", ""}}},
			{"Quack is also home to the Big Canard Statue", []citeWant{{"char_location", "The Big Canard Statue is located in Quack.", ""}}},
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, func(m map[string]any) {
		rmgSame(m)
		doc := rmgRecordedBlock(t, name, 0, 0)
		delete(doc, "citations")
		delete(doc, "cache_control")
		msgs, _ := m["messages"].([]any)
		msgs[0].(map[string]any)["content"].([]any)[0] = doc
	})
}
