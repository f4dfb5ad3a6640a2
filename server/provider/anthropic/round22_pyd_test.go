package anthropic

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"google.golang.org/protobuf/proto"
)

// Round 22: pydantic-ai cassettes no round had used (testdata/README.md,
// "Round 22"). Every expectation is read off the recording by hand; each
// request is compared whole with the one the live API accepted
// (*.recorded_request.json, the cassette's request body written compact).

// r22Recorded is the recorded request of a fixture, decoded, with what
// the Messages API reads the same way written as ours writes it:
// "stream": false left out (its absence means the same), string message
// contents as the one text block they stand for, "is_error": false on a
// tool result and an empty tool description left out (the defaults).
func r22Recorded(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name + ".recorded_request.json")
	if err != nil {
		t.Fatal(err)
	}
	m := r19bJSON(t, raw)
	if m["stream"] == false {
		delete(m, "stream")
	}
	msgs, _ := m["messages"].([]any)
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		if s, ok := msg["content"].(string); ok {
			msg["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
		blocks, _ := msg["content"].([]any)
		for _, rb := range blocks {
			if b, _ := rb.(map[string]any); b["type"] == "tool_result" && b["is_error"] == false {
				delete(b, "is_error")
			}
		}
	}
	tools, _ := m["tools"].([]any)
	for _, rt := range tools {
		if tool, _ := rt.(map[string]any); tool["description"] == "" {
			delete(tool, "description")
		}
	}
	return m
}

// r22SameRequest checks that the request sent is the recorded one, whole:
// every field, none added. edit, when set, first changes the recorded
// request where ours differs on purpose (each test says why).
func r22SameRequest(t *testing.T, sent []byte, name string, edit func(m map[string]any)) {
	t.Helper()
	want := r22Recorded(t, name)
	if edit != nil {
		edit(want)
	}
	got := r19bJSON(t, sent)
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%s: request\n got %s\nwant %s", name, gb, wb)
	}
}

// r22Unary replays a unary recording.
func r22Unary(t *testing.T, name string, req *provider.Request) (*provider.Result, *providertest.Server) {
	t.Helper()
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: Generate: %v", name, err)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	return res, srv
}

// r22Sig is the signature of the i-th content block of a unary
// recording, read from the file rather than copied into the test.
func r22Sig(t *testing.T, name string, i int) string {
	t.Helper()
	s, _ := r19bBlock(t, r19bBody(t, name), i)["signature"].(string)
	if s == "" {
		t.Fatalf("%s: block %d has no signature", name, i)
	}
	return s
}

// r22System puts a system prompt before a request's messages.
func r22System(req *provider.Request, system string) *provider.Request {
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	return req
}

const r22CodeExecutionTools = `{"tool_choice":{"type":"auto"},"tools":[{"name":"code_execution","type":"code_execution_20260120"}]}`

// TestRound22ShellTool: claude-sonnet-4-6 (March 2026), unary, with
// code_execution_20260120 and a system prompt: a server_tool_use
// bash_code_execution (caller direct, command `python3 -c "print(2 +
// 2)"`), its bash_code_execution_tool_result (stdout "4\n", return code
// 0, no files), then "2 + 2 = **4**". 4627 in, 82 out; the server tool
// counts both zero (nothing to report); inference_geo global; the
// top-level container with its expiry. The request is the recorded one.
func TestRound22ShellTool(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_shell_tool"
	req := r22System(r21Request("claude-sonnet-4-6", "What is 2 + 2? Use python to calculate it.", 4096, 0), "Always use the shell tool. Keep responses brief.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: r22CodeExecutionTools}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("2 + 2 = **4**")},
		responseID: "msg_01ADHu3dgMsjDVUWBzFpAfSV", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(4627, 82, 0, 0, 0),
		extended: map[string]string{
			"container":    `{"expires_at":"2026-03-11T08:04:35.882528Z","id":"container_011CYvsF3eEuthoNQYxnMMYa"}`,
			"service_tier": `"standard"`,
		},
		items: []string{"server_tool_use", "bash_code_execution_tool_result"},
	})
	if res.Meta.GetToolCallCount() != 0 {
		t.Errorf("tool_call_count %d, want 0 (the API ran the command)", res.Meta.GetToolCallCount())
	}
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22ShellToolStream: the same request streamed (claude-sonnet-4-6,
// March 2026): the bash_code_execution call's input in seven
// input_json_delta pieces, the first empty and the fifth ending inside an
// escape (`rint(2 + 2)\\` then `\"\"}`), a ping inside the block, its
// result whole in content_block_start, then the text in eight deltas.
// message_start says 2270 in, message_delta 4627 in (the tool loop's
// second sampling) and 91 out, names the container and repeats the zero
// server tool counts. One text part, a warning per server block, no
// tool-call event. The request is the recorded one.
func TestRound22ShellToolStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_shell_tool_stream"
	req := r22System(r21Request("claude-sonnet-4-6", "What is 2 + 2? Use python to calculate it.", 4096, 0), "Always use the shell tool. Keep responses brief.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: r22CodeExecutionTools}
	evs, f, srv := r21Stream(t, name, req)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The result of **2 + 2 = 4**, as calculated by Python!")},
		responseID: "msg_01CAcVpyAEzKZuodAeKRoBfp", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(4627, 91, 0, 0, 0),
		extended: map[string]string{
			"container":    `{"expires_at":"2026-03-11T08:05:36.000703Z","id":"container_011CYvsKSFQ7yFXaDtpirUvu"}`,
			"service_tier": `"standard"`,
		},
		items: []string{"server_tool_use", "bash_code_execution_tool_result"},
	})
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran the command)", n)
	}
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// r22CountryTools are pydantic-ai's two tools for test_anthropic_tool_output:
// get_user_country (no parameters, an empty description) and final_result
// (its output tool).
func r22CountryTools() []*llmrelayv1.Tool {
	return []*llmrelayv1.Tool{
		{Name: "get_user_country", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`},
		{Name: "final_result", Description: "The final response which ends this conversation",
			Parameters: `{"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"type":"object"}`},
	}
}

// TestRound22ToolOutput: claude-sonnet-4-5-20250929 (September 2025),
// unary, a two-request tool loop with tool_choice any (REQUIRED) and two
// tools. Turn 1: get_user_country with input {} alone (no text), tool_use;
// 711 in, 23 out. Turn 2, after its result "Mexico": final_result
// {"city": "Mexico City", "country": "Mexico"} alone; 762 in, 56 out.
// Both requests are the recorded ones (the second built from the first
// answer as received: the call's id and its {} input sent back).
func TestRound22ToolOutput(t *testing.T) {
	t.Parallel()
	const q = "What is the largest city in the user country?"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-sonnet-4-5", q, 4096, 0)
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = r22CountryTools()
		req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
		return req
	}
	const first, second = "real_pyd_anthropic_tool_output_1", "real_pyd_anthropic_tool_output_2"
	res1, srv1 := r22Unary(t, first, build())
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01ECaF1WRmnTui1BpXZXyBds", "get_user_country", "{}")},
		responseID: "msg_014qNMmxefjUvuPTSkMMHjWE", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(711, 23, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, nil)

	res2, srv2 := r22Unary(t, second, build(res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01ECaF1WRmnTui1BpXZXyBds", "Mexico", false))))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01UKDf4fk894G2BEpiPSwL6s", "final_result", `{"city":"Mexico City","country":"Mexico"}`)},
		responseID: "msg_01M5PoMWEjyV6vzXYve8Vgyw", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(762, 56, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, nil)
}

// r22StreetText is the first answer of test_anthropic_model_thinking_part,
// as the cassette folds it (a double-quoted YAML scalar; an escaped space
// at a line start keeps it).
const r22StreetText = "# How to Cross the Street Safely\n\n1. **Find the right place to cross**\n   - Use marked crosswalks or intersections whenever possible\n" +
	"   - Cross at corners where drivers expect pedestrians\n\n2. **Check for traffic signals**\n   - Follow pedestrian signals (walk/don't walk) if available\n" +
	"   - At traffic lights, wait for the green light in your direction\n   \n3. **Look both ways before crossing**\n   - Look left, right, then left again\n" +
	"   - Continue watching for traffic as you cross\n   \n4. **Make yourself visible**\n   - Make eye contact with drivers to ensure they see you\n" +
	"   - Remove headphones and put away your phone to stay alert\n   \n5. **Cross at a steady pace**\n   - Walk, don't run, across the street\n" +
	"   - Keep watching for vehicles while crossing\n\nRemember, safety should always be your priority when crossing streets!"

const r22StreetThinking = "This is a basic question about street safety. I should provide a clear, step-by-step explanation of how to safely cross a street, " +
	"which is important information for pedestrian safety.\n\nI'll include:\n1. Finding the right place to cross (crosswalks, intersections)\n" +
	"2. Checking for traffic signals\n3. Looking both ways for approaching vehicles\n4. Making eye contact with drivers\n5. Walking (not running) across the street\n" +
	"6. Staying alert while crossing\n\nI'll keep my answer straightforward but comprehensive enough to cover the safety basics."

// TestRound22ThinkingPartTwoTurns: claude-3-7-sonnet-20250219 (asked as
// claude-3-7-sonnet-latest), unary, thinking at budget 1024 with
// max_tokens 2048, two turns. Turn 1: a signed thinking block then the
// answer (42 in, 332 out; the usage has only the four counts). Turn 2
// sends that answer back, the thinking block first with its text and
// signature byte for byte, then the text, with a new question; the API
// accepted it and answered with a thinking block and text (266 in, 479
// out). Both requests are the recorded ones.
func TestRound22ThinkingPartTwoTurns(t *testing.T) {
	t.Parallel()
	const first, second = "real_pyd_anthropic_model_thinking_part_1", "real_pyd_anthropic_model_thinking_part_2"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-3-7-sonnet-latest", "How do I cross the street?", 2048, 1024)
		req.Messages = append(req.Messages, more...)
		return req
	}
	res1, srv1 := r22Unary(t, first, build())
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: r22StreetThinking, Signature: r22Sig(t, first, 0)}),
			text(r22StreetText),
		},
		responseID: "msg_01SvTnQCjTUgQu19E8qiuHPe", model: "claude-3-7-sonnet-20250219",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(42, 332, 0, 0, 0),
	})
	if !strings.HasPrefix(r22Sig(t, first, 0), "ErUBCkYIAhgCIkD6Sf780fvjL4z6") {
		t.Errorf("recorded signature %q", r22Sig(t, first, 0))
	}
	r22SameRequest(t, srv1.Last(t).Body, first, nil)

	res2, srv2 := r22Unary(t, second, build(res1.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("Considering the way to cross the street, analogously, how do I cross the river?"))))
	body2 := r19bBody(t, second)
	thinking2, _ := r19bBlock(t, body2, 0)["thinking"].(string)
	answer2, _ := r19bBlock(t, body2, 1)["text"].(string)
	if !strings.HasPrefix(thinking2, "This question is asking me to apply similar principles") || !strings.HasPrefix(answer2, "# How to Cross a River Safely\n\n1. **Find the right place to cross**\n   - Use bridges") ||
		!strings.HasSuffix(answer2, "it's best to find another route or seek assistance!") {
		t.Fatalf("recorded answer %q / %q", thinking2, answer2)
	}
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinking2, Signature: r22Sig(t, second, 0)}),
			text(answer2),
		},
		responseID: "msg_01W2NZXnzuNgCkVbvyBywWKb", model: "claude-3-7-sonnet-20250219",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(266, 479, 0, 0, 0),
	})
	r22SameRequest(t, srv2.Last(t).Body, second, nil)
}

// r22FinalResult is pydantic-ai's output tool for a city and its country.
func r22FinalResult() *llmrelayv1.Tool {
	return r22CountryTools()[1]
}

// TestRound22AdaptiveThinkingForcedTool: claude-opus-4-6 (April 2026),
// unary, adaptive thinking at effort high with tool_choice any and one
// tool: the live API took it and answered with the forced call alone
// (final_result {"city": "Paris", "country": "France"}, caller direct),
// tool_use, 671 in, 55 out of which 0 thinking. Adaptive thinking is the
// model's choice (it may not think at all), so unlike a fixed budget it
// does not refuse a forced tool. Ours refused reasoning_effort HIGH with
// tool_choice REQUIRED on this model before the call ("anthropic cannot
// force tool use with thinking"): the request pydantic-ai made through its
// unified settings is now sent, and it is the recorded one but for
// display: summarized, which our reasoning_effort always asks for.
func TestRound22AdaptiveThinkingForcedTool(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_opus_46_adaptive_thinking_accepts_tool_output_unified"
	req := r21Request("claude-opus-4-6", "What is the capital of France?", 4096, 0)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{r22FinalResult()}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01Ntv7EChXSFhgkJcMTHdksQ", "final_result", `{"city":"Paris","country":"France"}`)},
		responseID: "msg_011Cdof1KE9dF97gueQXJ39E", model: "claude-opus-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(671, 55, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, func(m map[string]any) {
		m["thinking"].(map[string]any)["display"] = "summarized"
	})

	// A named tool is forced the same way, and the API's rule is the
	// same for it; a fixed budget still refuses both.
	named := proto.Clone(req.Options).(*llmrelayv1.GenerationOptions)
	named.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "final_result"}}
	req2 := *req
	req2.Options = named
	w, _, _, err := build(t, &req2)
	if err != nil {
		t.Fatalf("adaptive thinking with a named tool: %v", err)
	}
	if tc, _ := w["tool_choice"].(map[string]any); tc["type"] != "tool" || tc["name"] != "final_result" {
		t.Errorf("tool_choice %v", w["tool_choice"])
	}
	budget := *req
	budget.Options = proto.Clone(req.Options).(*llmrelayv1.GenerationOptions)
	budget.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
	budget.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](2048)}}}
	if _, _, _, err := build(t, &budget); err == nil || !strings.Contains(err.Error(), "cannot force tool use with thinking") {
		t.Errorf("a thinking budget with a forced tool: %v, want refused", err)
	}
}

// TestRound22AdaptiveThinkingForcedToolExtraBody: the same question
// through pydantic-ai's provider-specific setting, `thinking: {type:
// adaptive}` alone (no effort: the API's default, high), another live
// answer (msg_011Cdof17ibZX3HkNVjoLaKX): the forced call alone, 671 in,
// 55 out, 0 thinking. The thinking object goes through extra_body; the
// request is the recorded one.
func TestRound22AdaptiveThinkingForcedToolExtraBody(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_opus_46_adaptive_thinking_accepts_tool_output_provider_specific"
	req := r21Request("claude-opus-4-6", "What is the capital of France?", 4096, 0)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{r22FinalResult()}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"thinking":{"type":"adaptive"}}`}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01BSJtCi3w4Ke7QAbf9o6KP1", "final_result", `{"city":"Paris","country":"France"}`)},
		responseID: "msg_011Cdof17ibZX3HkNVjoLaKX", model: "claude-opus-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(671, 55, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22EffortWithoutThinking: claude-opus-4-6 (February 2026),
// unary, output_config.effort low with no thinking field (pydantic-ai's
// effort setting; ours has no field for an effort without thinking, so it
// goes through extra_body): "4", 14 in, 5 out, no stop_details field. The
// request is the recorded one.
func TestRound22EffortWithoutThinking(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_opus_46_features_effort"
	req := r21Request("claude-opus-4-6", "What is 2+2?", 4096, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"output_config":{"effort":"low"}}`}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("4")},
		responseID: "msg_012jbPfE2ZkTSAfpSi6zq15a", model: "claude-opus-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(14, 5, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22WebToolsOfferedNotUsed: claude-sonnet-4-5-20250929 (May
// 2026), unary, web_search_20250305 and web_fetch_20250910 offered with
// their unset options as nulls (through extra_body) and not used: "ok",
// 2743 in (the tools' own prompt), 4 out; no server_tool_use object, no
// warning. The request is the recorded one.
func TestRound22WebToolsOfferedNotUsed(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_unsupported_model_uses_previous_web_tools"
	req := r21Request("claude-sonnet-4-5", "Reply with exactly: ok", 4096, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[` +
		`{"allowed_domains":null,"blocked_domains":null,"max_uses":null,"name":"web_search","type":"web_search_20250305","user_location":null},` +
		`{"allowed_domains":null,"blocked_domains":null,"citations":null,"max_content_tokens":null,"max_uses":null,"name":"web_fetch","type":"web_fetch_20250910"}]}`}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("ok")},
		responseID: "msg_01T7kP6r4z49EEf1GCnnc76a", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2743, 4, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22FableStaleThinkingUnary: claude-fable-5-1 (September 2026),
// unary, thinking with block_binding prefix_mismatch_behavior drop_block
// (through extra_body) and a system prompt, two turns. Turn 1: a thinking
// block with empty text and only a signature, then "17 × 23 = … =
// **391**."; input_transformations empty (nothing to keep); 41 in, 67 out of which 30
// thinking. Turn 2 sends that answer back (the empty thinking block with
// its signature, then the text) with "And times two?" under a changed
// system prompt; the API dropped the block (input_transformations: one
// thinking_dropped at messages.1.content.0, prefix_binding_mismatch) and
// answered "391 × 2 = **782**." (95 in, 13 out, 0 thinking). Both
// requests are the recorded ones but for the system prompt, which
// pydantic-ai sent as one text block and ours as the string.
func TestRound22FableStaleThinkingUnary(t *testing.T) {
	t.Parallel()
	const first, second = "real_pyd_anthropic_fable_5_1_drops_a_stale_thinking_block_1", "real_pyd_anthropic_fable_5_1_drops_a_stale_thinking_block_2"
	const binding = `{"thinking":{"block_binding":{"prefix_mismatch_behavior":"drop_block"}}}`
	systemString := func(m map[string]any) {
		blocks, _ := m["system"].([]any)
		b, _ := blocks[0].(map[string]any)
		m["system"] = b["text"]
	}
	build := func(system string, more ...*llmrelayv1.Message) *provider.Request {
		req := r22System(r21Request("claude-fable-5-1", "Think about it, then say what 17*23 is.", 4096, 0), system)
		req.Messages = append(req.Messages, more...)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: binding}
		return req
	}
	res1, srv1 := r22Unary(t, first, build("You are a helpful assistant. Answer briefly."))
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Signature: r22Sig(t, first, 0)}),
			text("17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = **391**."),
		},
		responseID: "msg_011CedWoxKFPZrwPCYGh2Gp4", model: "claude-fable-5-1",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(41, 67, 0, 0, 30),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
	})
	if _, ok := res1.Meta.GetExtended().GetFields()["input_transformations"]; ok {
		t.Errorf("%s: an empty input_transformations kept (nothing was transformed)", first)
	}
	r22SameRequest(t, srv1.Last(t).Body, first, systemString)

	res2, srv2 := r22Unary(t, second, build("You are a helpful assistant. Answer briefly. Today is 2026-09-01.",
		res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("And times two?"))))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("391 × 2 = **782**.")},
		responseID: "msg_011CedWpEETcSYartcDBTmSE", model: "claude-fable-5-1",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(95, 13, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			"input_transformations":  `[{"path":"messages.1.content.0","reason":"prefix_binding_mismatch","type":"thinking_dropped"}]`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, systemString)
}

// TestRound22DownloadFileStream: claude-sonnet-4-20250514 (asked as
// claude-sonnet-4-0, April 2026), streamed, thinking at budget 3000 with
// code_execution_20250522: a signed thinking block (five thinking_delta
// events, a ping inside), a text, a server_tool_use code_execution whose
// Python arrives in six input_json_delta pieces (the first empty), its
// code_execution_tool_result with the file it wrote
// (file_011CZyeGS48WveNXDNAjTNEV, named in the result's warning), then the
// answer with "²" in five deltas. message_start says 791 in,
// message_delta 2006 in and 523 out, the zero server tool counts and the
// container. Two text parts (the answer follows a server block); the
// request is the recorded one. The cassette's two later interactions are
// Files API downloads, not Messages API answers, and are not used.
func TestRound22DownloadFileStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_download_file_stream_1"
	req := r21Request("claude-sonnet-4-0", "Create a CSV file with the numbers 1 to 5 and their squares", 4096, 3000)
	req.ProviderOptions.ExtraBody = `{"tool_choice":{"type":"auto"},"tools":[{"name":"code_execution","type":"code_execution_20250522"}]}`
	evs, f, srv := r21Stream(t, name, req)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "The user wants me to create a CSV file with numbers 1 to 5 and their squares. This is a simple task that involves:\n" +
					"1. Creating data with numbers 1-5 and their corresponding squares\n2. Writing this data to a CSV file\n\n" +
					"I should use the code_execution tool for this since they want me to generate a file as output. " +
					"The CSV should have two columns - one for the number and one for its square.",
				Signature: "EskECmIIDBgCKkCNMfpdkMhcqe6TMnTa0axxVgnmGYVn+ltX++HHrH9gdVTtqwHf97RRHQ68d4TR/uJzAhCX9vbhLsVjeNCNG8BAMhhjbGF1ZGUtc29ubmV0LTQtMjAyNTA1MTQ4ABIMhd71CKHQu6WLEDf0Ggy0/dc09FEEm1uDIvUiMK/RPSvUCviHsHW9toV1IVtVC4pmfTKrWNTFmdr3AlDjRSzYBYfLdOT5UvL2Rj08bCqUA+/Ui1AZEbhgdj4Ii5IyKhajSuTUpfX/dyhwcv1on4Ph3NbEUCkWdW7V2wZNEbvDRUlJlgMEGruAiCkUDvPAF7lvYQ2hddIw/5ZhvTdwXLVXtLG9xsdKRc2qKczDk45BuUoRs7YGMOV5MRLJGQWwGRaJKmcoeVVcaTs8q7wdRotNvrPv+vKOoV8Ak6Ypt7+H77zc7hNE+7xhYPPzcr2LCvEXiRHj82CL0cjhzkTKr9DThiW/l3DBjR4vloawBCC0WZhjRuoHrTvsOAIfvBJY/kmCJaGz1+079mWigk7ZbJrKYZqdG4dkG/kHQxTjbqwvFvDc90TRGeRjHkjENhUTnpVE/TqvmXhw1AgKRAZ9uPt6ffUHPFGuD2DQDMwemB/UhrfxP1xsBRL6iiEzkcg2vCGZ058ZyGutRYsNqhabF4/NeFQ0Troi1DJ0ekxFDxscPYWejpcnrG0can5jlUN1h07pbLyhF0nVOvjR7P0VxtdYXFzV8Ndqb4AUuMOyKjDFQEVFdVU/zu/IPPg9gZNlkzgkQ2uUGAE=",
			}),
			text("I'll create a CSV file with the numbers 1 to 5 and their squares for you."),
			text("Perfect! I've created a CSV file called \"numbers_and_squares.csv\" with the numbers 1 to 5 in the first column and their corresponding squares in the second column. " +
				"The file includes:\n\n- A header row with \"Number\" and \"Square\"\n- 5 data rows showing:\n  - 1, 1 (1²)\n  - 2, 4 (2²)\n  - 3, 9 (3²)\n  - 4, 16 (4²)\n  - 5, 25 (5²)\n\n" +
				"The CSV file has been saved and is ready for download."),
		},
		responseID: "msg_016jw5hDEqMaCtnGR43MQf3R", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2006, 523, 0, 0, 0),
		extended: map[string]string{
			"container":              `{"expires_at":"2026-04-12T10:30:37.955097Z","id":"container_011CZyeFrqrfMkLKLS8nUqH6"}`,
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
		warnings: []string{
			`content block 3: type "code_execution_tool_result" (result of srvtoolu_01MKtbi9tRAhEC5r93WcQYx5, a tool the provider ran itself, which wrote the file "file_011CZyeGS48WveNXDNAjTNEV")`,
		},
	})
	if w := f.meta.GetWarnings(); len(w) == 2 && !strings.Contains(w[1], "file_011CZyeGS48WveNXDNAjTNEV") {
		t.Errorf("the result's warning %q does not name the file it wrote", w[1])
	}
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran the code)", n)
	}
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// r22ShellNamed writes the recorded history's tool_use blocks with the name
// the API gave them: pydantic-ai sent its own tool's name ("shell") for
// calls the API had named "bash" (the API took both); ours sends the
// calls back as received.
func r22ShellNamed(m map[string]any) {
	msgs, _ := m["messages"].([]any)
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, rb := range blocks {
			if b, _ := rb.(map[string]any); b["type"] == "tool_use" && b["name"] == "shell" {
				b["name"] = "bash"
			}
		}
	}
}

// TestRound22LocalShellToolset: claude-sonnet-4-6 (March 2026), unary, the
// client-run bash tool (bash_20250124, through extra_body) with a system
// prompt, two tool loops of the same question. Loop 1: a bash call
// (caller direct, `python3 -c "print(2 + 2)"`, 774 in, 65 out), then after
// a result with a login shell's noise "The result of **2 + 2 is 4**! 🎉"
// (953 in, 22 out). Loop 2: the same call with another id, its result
// {"output": "4\n", "exit_code": 0}, the call again (866 in, 64 out),
// the same result, then the answer (957 in, 22 out). Every request is the
// recorded one, built from the answers as received, but for the calls'
// name (r22ShellNamed).
func TestRound22LocalShellToolset(t *testing.T) {
	t.Parallel()
	const q = "What is 2 + 2? Use python to calculate it."
	const args = `{"command":"python3 -c \"print(2 + 2)\""}`
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r22System(r21Request("claude-sonnet-4-6", q, 4096, 0), "Always use the shell tool. Keep responses brief.")
		req.Messages = append(req.Messages, more...)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tool_choice":{"type":"auto"},"tools":[{"name":"bash","type":"bash_20250124"}]}`}
		return req
	}
	result := func(id, out string) *llmrelayv1.Message {
		return msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(id, out, false))
	}
	call := func(name string, res *provider.Result, id, msgID string, in, out int32) {
		t.Helper()
		checkLLMWant(t, name, res.Message, res.Meta, llmWant{
			parts:      []*llmrelayv1.Part{toolCallValid(id, "bash", args)},
			responseID: msgID, model: "claude-sonnet-4-6",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage: usageOf(in, out, 0, 0, 0),
			extended: map[string]string{
				"service_tier":           `"standard"`,
				provider.ExtUsageDetails: `{"inference_geo":"global"}`,
			},
		})
	}
	answer := func(name string, res *provider.Result, s, msgID string, in, out int32) {
		t.Helper()
		checkLLMWant(t, name, res.Message, res.Meta, llmWant{
			parts:      []*llmrelayv1.Part{text(s)},
			responseID: msgID, model: "claude-sonnet-4-6",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage: usageOf(in, out, 0, 0, 0),
			extended: map[string]string{
				"service_tier":           `"standard"`,
				provider.ExtUsageDetails: `{"inference_geo":"global"}`,
			},
		})
	}
	const p = "real_pyd_anthropic_local_shell_toolset_"
	const noisy = `{"output": "bash: no job control in this shell\n\nThe default interactive shell is now zsh.\nTo update your account to use zsh, please run ` +
		"`chsh -s /bin/zsh`" + `.\nFor more details, please visit https://support.apple.com/kb/HT208050.\nbash-3.2$ 4\nbash-3.2$ bash-3.2$ ", "exit_code": 0}`
	const plain = `{"output": "4\n", "exit_code": 0}`

	res1, srv := r22Unary(t, p+"1", build())
	call(p+"1", res1, "toolu_016EHVaf6tCPBWQSjkredb5c", "msg_01XHMT9Qb389yy3bPgZuugz1", 774, 65)
	r22SameRequest(t, srv.Last(t).Body, p+"1", r22ShellNamed)
	res2, srv := r22Unary(t, p+"2", build(res1.Message, result("toolu_016EHVaf6tCPBWQSjkredb5c", noisy)))
	answer(p+"2", res2, "The result of **2 + 2 is 4**! 🎉", "msg_01YDLfT9HyYBeaKP57V4kUwS", 953, 22)
	r22SameRequest(t, srv.Last(t).Body, p+"2", r22ShellNamed)

	res3, srv := r22Unary(t, p+"3", build())
	call(p+"3", res3, "toolu_0144zkSmZeUPbngX6BzdV4YM", "msg_011odHqoE71qRi4WCsP9gwWB", 774, 65)
	r22SameRequest(t, srv.Last(t).Body, p+"3", r22ShellNamed)
	loop := []*llmrelayv1.Message{res3.Message, result("toolu_0144zkSmZeUPbngX6BzdV4YM", plain)}
	res4, srv := r22Unary(t, p+"4", build(loop...))
	call(p+"4", res4, "toolu_017JxhPYQ3zux4W4Q4so9THn", "msg_0118PBv3r8KFkrjy4GFX9UUq", 866, 64)
	r22SameRequest(t, srv.Last(t).Body, p+"4", r22ShellNamed)
	res5, srv := r22Unary(t, p+"5", build(append(loop, res4.Message, result("toolu_017JxhPYQ3zux4W4Q4so9THn", plain))...))
	answer(p+"5", res5, "The result of **2 + 2 = 4**, as calculated by Python!", "msg_016ThDfNKs8pjS14xua1x2oR", 957, 22)
	r22SameRequest(t, srv.Last(t).Body, p+"5", r22ShellNamed)
}

// TestRound22ModelInstructions: claude-3-opus-20240229 asked as
// claude-3-opus-latest (March 2026, the cassette's compact bodies at their
// recorded lengths, 206 and 433), unary, a system prompt ending in two line
// breaks: "The capital of France is Paris.", 20 in, 10 out. The request
// is the recorded one, the system prompt's line breaks kept.
func TestRound22ModelInstructions(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_model_instructions"
	res, srv := r22Unary(t, name, r22System(r21Request("claude-3-opus-latest", "What is the capital of France?", 4096, 0), "You are a helpful assistant.\n\n"))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The capital of France is Paris.")},
		responseID: "msg_01Fg1JVgvCYUHWsxrj9GkpEv", model: "claude-3-opus-20240229",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(20, 10, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22AutomaticCaching: claude-sonnet-4-5-20250929 (March 2026),
// unary, automatic prompt caching (a top-level cache_control {type:
// ephemeral, ttl: 5m}, through extra_body: the contract has no cache
// breakpoint) over a system prompt and a 5,400-character question, two
// turns. Turn 1 writes 1111 tokens to the 5-minute cache (3 uncached, 397
// out; cache_creation ephemeral_5m 1111); turn 2, the answer sent back with
// a follow-up, reads those 1111 and writes 409 (3 uncached, 33 out). Input
// tokens are the three summed, the cache reads and writes in their fields;
// inference_geo not_available. Both requests are the recorded ones.
func TestRound22AutomaticCaching(t *testing.T) {
	t.Parallel()
	const first, second = "real_pyd_anthropic_automatic_caching_real_api_1", "real_pyd_anthropic_automatic_caching_real_api_2"
	q := strings.Repeat("Please explain what Python is and its main use cases. ", 100)
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r22System(r21Request("claude-sonnet-4-5", q, 4096, 0), "You are a helpful assistant.")
		req.Messages = append(req.Messages, more...)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"cache_control":{"ttl":"5m","type":"ephemeral"}}`}
		return req
	}
	answer, _ := r19bBlock(t, r19bBody(t, first), 0)["text"].(string)
	if !strings.HasPrefix(answer, "# Python: Overview and Main Use Cases\n\n## What is Python?") || !strings.HasSuffix(answer, "one of the most popular programming languages today.") {
		t.Fatalf("recorded answer %q", answer)
	}
	res1, srv1 := r22Unary(t, first, build())
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_01QiANzojEZgtQiM7BEeQFMw", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(3, 397, 0, 1111, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"cache_creation.ephemeral_5m_input_tokens":1111,"inference_geo":"not_available"}`,
		},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, nil)

	res2, srv2 := r22Unary(t, second, build(res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Can you summarize that in one sentence?"))))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("Python is a beginner-friendly, versatile programming language widely used for web development, data science, " +
			"machine learning, automation, and scientific computing.")},
		responseID: "msg_01KUAdYMQuHzftbxxLWcSMhu", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(3, 33, 1111, 409, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"cache_creation.ephemeral_5m_input_tokens":409,"inference_geo":"not_available"}`,
		},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, nil)
}

// TestRound22HistoryFromGemini: claude-sonnet-4-20250514 (asked as
// claude-sonnet-4-0, January 2026), unary, code_execution_20250522,
// continuing a conversation Gemini answered: its answer (three texts, each
// ending in a line break, around code runs that stay with Gemini) is the
// assistant turn, sent as three text blocks in order, line breaks kept;
// then "Multiplied by 12390". The answer: a text (with a space before its
// blank line), a server_tool_use code_execution, its result (stdout, no
// files, no abort_reason field), a text; 2050 in, 253 out; server_tool_use
// has web_search_requests 0 only; the top-level container. Two text parts
// (the second follows the server blocks), two warnings. The request is the
// recorded one (the cassette's second interaction; its first is Gemini's).
func TestRound22HistoryFromGemini(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_server_tool_receive_history_from_another_provider_2"
	req := r21Request("claude-sonnet-4-0", "How much is 3 * 12390?", 4096, 0)
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
			text("I apologize, I seem to have encountered an error in the previous attempt to use the tool. I will try a different approach.\n"),
			text("I apologize for the repeated errors. It seems I'm having trouble using the tool correctly. I will try once more, making sure the syntax is correct.\n"),
			text("I apologize for the continued errors. I seem to be having difficulty with the tool. I will resort to manual calculation.\n\n"+
				"3 * 12390 = 3 * (12000 + 390) = 36000 + 1170 = 37170\n\nTherefore, 3 * 12390 = 37170\n")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Multiplied by 12390")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tool_choice":{"type":"auto"},"tools":[{"name":"code_execution","type":"code_execution_20250522"}]}`}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I need to clarify what you'd like me to multiply by 12390. From our previous conversation, we calculated that 3 * 12390 = 37170. \n\n" +
				"Are you asking me to multiply 37170 by 12390? Or would you like me to multiply some other number by 12390?"),
			text("If you meant 37170 * 12390, the answer is **460,536,300**.\n\nIf you meant something else, please let me know what specific number you'd like me to multiply by 12390!"),
		},
		responseID: "msg_01CYKmWkNrkAgsa8NgQ7Jrcv", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2050, 253, 0, 0, 0),
		extended: map[string]string{
			"container":    `{"expires_at":"2026-01-30T05:41:12.047957Z","id":"container_011CXcwwxdgeF1wgj3MaVHK3"}`,
			"service_tier": `"standard"`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
	})
	if _, ok := res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails]; ok {
		t.Errorf("usage_details %v, want none (no inference_geo, no server tool request)", res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails])
	}
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22TextOutputFunction: claude-sonnet-4-5-20250929 (March 2026),
// unary, a tool of no parameters and tool_choice auto, two turns: a text
// then get_user_country {} (383 in, 65 out); after "Mexico" the answer
// with "México" (460 in, 91 out). Both requests are the recorded ones,
// the second built from the first answer as received (the text and the
// call in one assistant turn).
func TestRound22TextOutputFunction(t *testing.T) {
	t.Parallel()
	const first, second = "real_pyd_anthropic_text_output_function_1", "real_pyd_anthropic_text_output_function_2"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-sonnet-4-5", "What is the largest city in the user country? Use the get_user_country tool and then your own world knowledge.", 4096, 0)
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = r22CountryTools()[:1]
		req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
		return req
	}
	res1, srv1 := r22Unary(t, first, build())
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll help find the largest city in your country. Let me first check your country using the get_user_country tool."),
			toolCallValid("toolu_01JJ8TequDsrEU2pv1QFRWAK", "get_user_country", "{}"),
		},
		responseID: "msg_01MsqUB7ZyhjGkvepS1tCXp3", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(383, 65, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, nil)
	res2, srv2 := r22Unary(t, second, build(res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01JJ8TequDsrEU2pv1QFRWAK", "Mexico", false))))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("Based on the result, you are located in Mexico. The largest city in Mexico is Mexico City (Ciudad de México), " +
			"which is both the capital and the most populous city in the country. With a population of approximately 9.2 million people in the city proper " +
			"and over 21 million people in its metropolitan area, Mexico City is not only the largest city in Mexico but also one of the largest cities in the world.")},
		responseID: "msg_0142umg4diSckrDtV9vAmmPL", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(460, 91, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, nil)
}

// TestRound22PromptedOutputMultiple: claude-sonnet-4-5-20250929 (March
// 2026), unary, pydantic-ai's prompted output: the JSON schema of a union
// in the system prompt, which ends in two line breaks; the answer is the
// JSON alone as text (265 in, 31 out). The request is the recorded one,
// the system prompt whole.
func TestRound22PromptedOutputMultiple(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_prompted_output_multiple"
	system, _ := r22Recorded(t, name)["system"].(string)
	if !strings.HasPrefix(system, "Always respond with a JSON object that's compatible with this schema:\n\n{\"type\": \"object\"") ||
		!strings.HasSuffix(system, "}\n\nDon't include any text or Markdown fencing before or after.\n\n") {
		t.Fatalf("recorded system prompt %q", system)
	}
	res, srv := r22Unary(t, name, r22System(r21Request("claude-sonnet-4-5", "What is the largest city in Mexico?", 4096, 0), system))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(`{"result": {"kind": "CityLocation", "data": {"city": "Mexico City", "country": "Mexico"}}}`)},
		responseID: "msg_01N2PwwVQo2aBtt6UFhMDtEX", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(265, 31, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22DynamicFilteringToolsOffered: claude-sonnet-4-6 (April
// 2026), unary, the dynamic-filtering web tools (web_search_20260209,
// web_fetch_20260209) beside code_execution_20260120, offered through
// extra_body and not used: "ok", 4786 in (the tools' own prompt), 4 out,
// stop_details null, no server_tool_use object, no warning. The request is
// the recorded one.
func TestRound22DynamicFilteringToolsOffered(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_dynamic_filtering_explicit_true"
	req := r21Request("claude-sonnet-4-6", "Reply with exactly: ok", 4096, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[` +
		`{"allowed_domains":null,"blocked_domains":null,"max_uses":null,"name":"web_search","type":"web_search_20260209","user_location":null},` +
		`{"allowed_domains":null,"blocked_domains":null,"citations":null,"max_content_tokens":null,"max_uses":null,"name":"web_fetch","type":"web_fetch_20260209"},` +
		`{"name":"code_execution","type":"code_execution_20260120"}]}`}
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("ok")},
		responseID: "msg_01Qii2uwMmFAgu7Ey2wD7NA7", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(4786, 4, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}

// TestRound22DownloadFileUnary: the same request as
// TestRound22DownloadFileStream, unary, another live answer
// (claude-sonnet-4-20250514, April 2026): a signed thinking block, a
// text, a server_tool_use code_execution, its result with the file it
// wrote (file_011CZyeFHAKGd2xor7gAFyrL, named in the warning; abort_reason
// null), the answer. 2055 in, 508 out, zero server tool counts, the
// container. Thinking, two text parts; the request is the recorded one.
func TestRound22DownloadFileUnary(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_download_file_1"
	req := r21Request("claude-sonnet-4-0", "Create a CSV file with the numbers 1 to 5 and their squares", 4096, 3000)
	req.ProviderOptions.ExtraBody = `{"tool_choice":{"type":"auto"},"tools":[{"name":"code_execution","type":"code_execution_20250522"}]}`
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "The user wants me to create a CSV file with numbers 1 to 5 and their squares. This involves creating a file, so I should use the code_execution tool to generate this CSV file.\n\n" +
					"I need to:\n1. Create data with numbers 1-5 and their squares\n2. Write this data to a CSV file\n3. Save it to the OUTPUT_DIR so the user can access it\n\nLet me write Python code to do this.",
				Signature: r22Sig(t, name, 0),
			}),
			text("I'll create a CSV file with numbers 1 to 5 and their squares for you."),
			text("Perfect! I've created a CSV file called `numbers_and_squares.csv` that contains:\n\n- Column 1: Numbers from 1 to 5\n" +
				"- Column 2: Their corresponding squares (1, 4, 9, 16, 25)\n\nThe file has been saved with proper headers (\"Number\" and \"Square\") and is ready for download. " +
				"Each row contains a number and its square value, making it easy to use for data analysis or other applications."),
		},
		responseID: "msg_0174wvdk9Yf7pYeBCVYFsS4v", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2055, 508, 0, 0, 0),
		extended: map[string]string{
			"container":              `{"expires_at":"2026-04-12T10:30:22.309037Z","id":"container_011CZyeEeVBWseWqDHShnnsu"}`,
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
		warnings: []string{
			`content[3]: content block type "code_execution_tool_result" (result of srvtoolu_01G3T21DgbvyAtkymRpDt2S9, a tool the provider ran itself, which wrote the file "file_011CZyeFHAKGd2xor7gAFyrL")`,
		},
	})
	if w := res.Meta.GetWarnings(); len(w) == 2 && !strings.Contains(w[1], "file_011CZyeFHAKGd2xor7gAFyrL") {
		t.Errorf("the result's warning %q does not name the file it wrote", w[1])
	}
	if !strings.HasPrefix(r22Sig(t, name, 0), "ErAECmIIDBgCKkAcuVrxk6PQ") {
		t.Errorf("recorded signature %q", r22Sig(t, name, 0))
	}
	r22SameRequest(t, srv.Last(t).Body, name, nil)
}
