package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 21: server tools, citations and stop reasons in real recordings
// the adapter had not seen (testdata/README.md, "Round 21"). Every
// expectation is read off the recording by hand.

// r21Request is a user turn of one text to model, with thinking at budget
// (0: none) and max_tokens.
func r21Request(model, prompt string, maxTokens, budget int32) *provider.Request {
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(prompt))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr(maxTokens)},
	}
	if budget > 0 {
		req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr(budget),
		}}}
	}
	return req
}

// r21Stream replays a streamed recording and returns its events folded,
// after checking that the gateway's accumulator folds them the same way.
func r21Stream(t *testing.T, name string, req *provider.Request) ([]*provider.Event, folded, *providertest.Server) {
	t.Helper()
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	return evs, f, srv
}

// TestRound21CodeExecutionStream: claude-sonnet-4-6 (April 2026) with
// code_execution_20260120: a signed thinking block, a text block, a
// server_tool_use bash_code_execution whose input streams in nine
// input_json_delta pieces (an escaped quote split across two), its
// bash_code_execution_tool_result (stdout "-428330955.97745\n"), then the
// answer with emoji keycaps (1️⃣ split between two deltas), "—" and "×".
// message_delta raises input_tokens from 2293 to 4714 (the tool loop's
// second sampling), 304 out, and names the container.
func TestRound21CodeExecutionStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_tool_stream"
	_, f, srv := r21Stream(t, name, r21Request("claude-sonnet-4-6", "what is 65465-6544 * 65464-6+1.02255", 4096, 3000))
	const answer = "Following the standard **order of operations (PEMDAS/BODMAS)** — multiplication is performed before addition and subtraction — here's the breakdown:\n\n" +
		"| Step | Operation | Result |\n|------|-----------|--------|\n| 1️⃣ | `6544 × 65464` | `428,394,416` |\n| 2️⃣ | `65465 - 428,394,416` | `-428,328,951` |\n" +
		"| 3️⃣ | `-428,328,951 - 6` | `-428,328,957` |\n| 4️⃣ | `-428,328,957 + 1.02255` | **`-428,328,955.97745`** |\n\n### ✅ Final Answer: **-428,330,955.97745**"
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "Let me calculate this mathematical expression.",
				Signature: "EusBClsIDRgCKkBpzetW9oKOZtFP6IeFJJr3gnQBXqdZrYcRnwTLcVuC/mkNQXFCRtvXzgnEVf7l5fFR7h3ot66yltYQokOJgU0XMhFjbGF1ZGUtc29ubmV0LTQtNjgAEgx4VA49Y9x4euFn/C8aDLaPUE1i8unro8wUZyIwTVsbnme/ZlJjB/k0sJpLe/6Hhr1hiJBEwIautRYb9wRO69nCOmte8rf2JIlb3WN2Kj5V5cgiQPXU7/dckGIBOjC3LbVg4fl1yJKZ6A9eiNDAfvI1a3el8ptl54928QUlCPHT6QRNK5dDomrp4RcinBgB"}),
			text("I'll calculate that expression for you right away!"), text(answer),
		},
		responseID: "msg_01Js8aWE7YbmiaUPneGiCskE", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(4714, 304, 0, 0, 0),
		extended: map[string]string{
			"container":    `{"expires_at":"2026-04-24T11:13:36.730129Z","id":"container_011CaNRFAbjdPf4rmBarZzqQ"}`,
			"service_tier": `"standard"`,
		},
		items: []string{"server_tool_use", "bash_code_execution_tool_result"},
	})
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-6","max_tokens":4096,"stream":true,"thinking":{"type":"enabled","budget_tokens":3000},`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"what is 65465-6544 * 65464-6+1.02255"}]}]}`)
}

// TestRound21TextEditorCodeExecutionStream: claude-sonnet-4-6 (April 2026)
// with code_execution_20260120 and a system prompt: text, then two
// server_tool_use text_editor_code_execution blocks (create, view; their
// inputs in 14 and 8 input_json_delta pieces), their two
// text_editor_code_execution_tool_result blocks (a create_result, a
// view_result holding "Hello, world!"), then the answer. One warning per
// server block, in order; message_delta raises input_tokens from 2307 to
// 4874, 245 out, the container. The request's system prompt and question
// are the recorded ones (pydantic-ai sent the system prompt as one text
// block, we send it as the string the block stands for).
func TestRound21TextEditorCodeExecutionStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_text_editor_code_execution_tool_stream"
	const question = "Use the text editor to create /tmp/hello.txt with the text: Hello, world! Then use the text editor to view the file and tell me what it contains."
	const system = "Use only the text editor `create` and `view` commands from the code execution sandbox. Do not run any shell commands."
	req := r21Request("claude-sonnet-4-6", question, 4096, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	_, f, srv := r21Stream(t, name, req)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		// Two parts: the server-tool blocks between the texts are not
		// parts, and the stream marks the second text's start
		// (BeginsPart), as the unary answer splits them.
		parts: []*llmrelayv1.Part{text("Sure! I'll do both steps simultaneously — creating the file and viewing it at the same time!"), text(
			"Both steps are done! Here's a summary of what happened:\n\n1. **Created** `/tmp/hello.txt` — The file was created successfully.\n" +
				"2. **Viewed** `/tmp/hello.txt` — The file contains exactly:\n\n> Hello, world!")},
		responseID: "msg_015xnpK7ozxkSwddWbk4JeBM", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(4874, 245, 0, 0, 0),
		extended: map[string]string{
			"container":    `{"expires_at":"2026-04-20T08:29:23.354467Z","id":"container_011CaEdV252tiP3cJ2RRX4tQ"}`,
			"service_tier": `"standard"`,
		},
		items: []string{"server_tool_use", "server_tool_use", "text_editor_code_execution_tool_result", "text_editor_code_execution_tool_result"},
	})
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-6","max_tokens":4096,"stream":true,"system":"`+system+
		`","messages":[{"role":"user","content":[{"type":"text","text":"`+question+`"}]}]}`)
}

// TestRound21CodeExecution: claude-sonnet-4-0 (September 2025), unary,
// code_execution_20250825 and thinking (budget 3000): a signed thinking
// block, a server_tool_use code_execution with its Python code, its
// code_execution_tool_result (stdout "3 * 12390 = 37170\n", return code
// 0), then the text. The top-level container (id, expires_at) is kept,
// usage 1771 in, 171 out, server_tool_use counts zero (not repeated),
// service_tier standard. The request (system prompt, thinking, question)
// is the recorded one.
func TestRound21CodeExecution(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_tool_1"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-sonnet-4-0", "How much is 3 * 12390?", 4096, 3000)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Always use the code execution tool for math."))}, req.Messages...)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := r19bBody(t, name)
	th := r19bBlock(t, body, 0)
	if !strings.HasPrefix(th["thinking"].(string), "The user is asking for a simple multiplication: 3 * 12390.") || !strings.HasSuffix(th["thinking"].(string), "I should use the code execution tool for math.") {
		t.Fatalf("recorded thinking %q", th["thinking"])
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: th["thinking"].(string), Signature: th["signature"].(string)}),
			text("3 * 12390 = 37170"),
		},
		responseID: "msg_018bVTPr9khzuds31rFDuqW4", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(1771, 171, 0, 0, 0),
		extended: map[string]string{
			"container":    `{"expires_at":"2025-09-17T00:24:43.124581Z","id":"container_011CTCwceSoRxi8Pf16Fb7Tn"}`,
			"service_tier": `"standard"`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
	})
	if !strings.HasPrefix(th["signature"].(string), "EvsDCkYIBxgCKkCSFDXO") {
		t.Errorf("signature %q", th["signature"])
	}
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-0","max_tokens":4096,"system":"Always use the code execution tool for math.",`+
		`"thinking":{"type":"enabled","budget_tokens":3000},"messages":[{"role":"user","content":[{"type":"text","text":"How much is 3 * 12390?"}]}]}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21CodeExecutionFileOutputs: claude-sonnet-4-6 (March 2026),
// unary, code_execution_20250522: a server_tool_use (with caller direct)
// whose Python writes output.csv, its code_execution_tool_result whose
// content lists the file the sandbox produced (code_execution_output,
// file_011CZ7Pqy5uTyY2Kj86yXfCK) beside the stdout and abort_reason null,
// then the text. The file id has no place in the contract, and the file is
// reachable only through the Files API: the result's warning names it (it
// used to say only that the result was ignored, and the caller lost the
// file it asked for). Usage 2170 in, 262 out; the container.
func TestRound21CodeExecutionFileOutputs(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_file_outputs"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	const prompt = "Create a CSV file with 3 rows of sample data (name, age) and save it as output.csv"
	const system = "Always use code execution. Create a small CSV file and save it. Keep responses brief."
	req := r21Request("claude-sonnet-4-6", prompt, 4096, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := r19bBody(t, name)
	result, _ := r19bBlock(t, body, 1)["content"].(map[string]any)
	if files, _ := result["content"].([]any); len(files) != 1 || files[0].(map[string]any)["file_id"] != "file_011CZ7Pqy5uTyY2Kj86yXfCK" {
		t.Fatalf("recorded result %v", result)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("The file **output.csv** has been created and saved! Here's a summary of its contents:\n\n| name    | age |\n|---------|-----|\n" +
			"| Alice   | 28  |\n| Bob     | 34  |\n| Charlie | 22  |\n\nThe CSV includes:\n- **2 columns:** `name` and `age`\n- **3 rows** of sample data")},
		responseID: "msg_01NsMuQXDt1YrY5HcJT15FRH", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2170, 262, 0, 0, 0),
		extended: map[string]string{
			"container":     `{"expires_at":"2026-03-16T21:31:48.115351Z","id":"container_011CZ7PqUnZg5WnavEVpYfJh"}`,
			"service_tier":  `"standard"`,
			"usage_details": `{"inference_geo":"global"}`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
		warnings: []string{
			`content[1]: content block type "code_execution_tool_result" (result of srvtoolu_01MPynSy3MSoN6WDASu5FAod, a tool the provider ran itself, which wrote the file "file_011CZ7Pqy5uTyY2Kj86yXfCK")`,
		},
	})
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-6","max_tokens":4096,"system":"`+system+`",`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]}]}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21CodeExecutionFileOutputsStream: the same request streamed
// (March 2026): a server_tool_use code_execution (caller direct) whose
// code streams in 29 input_json_delta pieces (escaped quotes and "\\n"
// split across them), the code_execution_tool_result whose content names
// the file written (file_011CZ7SgG7RLgvurLjs8GEpV), then 30 text deltas.
// The result's warning names the file, as the unary answer's does;
// message_delta raises input_tokens 971 → 2171, 265 out, the container.
func TestRound21CodeExecutionFileOutputsStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_file_outputs_stream"
	const prompt = "Create a CSV file with 3 rows of sample data (name, age) and save it as output.csv"
	const system = "Always use code execution. Create a small CSV file and save it. Keep responses brief."
	req := r21Request("claude-sonnet-4-6", prompt, 4096, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	_, f, srv := r21Stream(t, name, req)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{text("The file **output.csv** has been created and saved! Here's a summary of its contents:\n\n| name    | age |\n|---------|-----|\n" +
			"| Alice   | 28  |\n| Bob     | 34  |\n| Charlie | 22  |\n\nIt contains 2 columns (`name`, `age`) and 3 rows of sample data. Let me know if you'd like any changes!")},
		responseID: "msg_0167SfmgddVUyTt2fCxnSm3s", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2171, 265, 0, 0, 0),
		extended: map[string]string{
			"container":     `{"expires_at":"2026-03-16T22:08:56.908049Z","id":"container_011CZ7Sfnq618zZMP4X843ky"}`,
			"service_tier":  `"standard"`,
			"usage_details": `{"inference_geo":"global"}`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
		warnings: []string{
			`content block 1: type "code_execution_tool_result" (result of srvtoolu_01Saqbt8742cmRao9JJZoSWW, a tool the provider ran itself, which wrote the file "file_011CZ7SgG7RLgvurLjs8GEpV")`,
		},
	})
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-6","max_tokens":4096,"stream":true,"system":"`+system+`",`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]}]}`)
}

// TestRound21ServerToolFiles: the files a code-execution result names,
// as its warning lists them: none, one, several, and past the bound.
func TestRound21ServerToolFiles(t *testing.T) {
	t.Parallel()
	many := make([]string, maxNamedFiles+2)
	for i := range many {
		many[i] = fmt.Sprintf(`{"type":"bash_code_execution_output","file_id":"file_%02d"}`, i)
	}
	for _, tc := range []struct{ content, want string }{
		{`{"type":"code_execution_result","stdout":"","content":[]}`, ""},
		{`[{"type":"web_search_result","url":"https://example.com"}]`, ""},
		{`{"type":"web_fetch_tool_result_error","error_code":"unavailable"}`, ""},
		{`{"type":"code_execution_result","content":[{"type":"code_execution_output","file_id":"file_a"}]}`, `the file "file_a"`},
		{`{"type":"bash_code_execution_result","content":[{"type":"bash_code_execution_output","file_id":"file_a"},{"type":"bash_code_execution_output","file_id":"file_b"}]}`,
			`the files "file_a", "file_b"`},
		{`{"content":[` + strings.Join(many, ",") + `]}`, `the files "file_00", "file_01", "file_02", "file_03", "file_04", "file_05", "file_06", "file_07", ` +
			`"file_08", "file_09", "file_10", "file_11", "file_12", "file_13", "file_14", "file_15" and 2 more`},
	} {
		if got := serverToolFiles(&contentBlock{Type: "code_execution_tool_result", Content: json.RawMessage(tc.content)}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.content, got, tc.want)
		}
	}
}

// TestRound21Opus5AdaptiveXHigh: claude-opus-5 (2026), unary, adaptive
// thinking with display summarized at effort xhigh: a signed summarized
// thinking block and the answer; 13 in, 44 out of which 33 thinking
// tokens (output_tokens_details), inference_geo global. The contract's
// reasoning_effort stops at HIGH: xhigh goes through extra_body, which
// replaces the output_config the gateway built (with the warning that
// says so), and the request is then the recorded one.
func TestRound21Opus5AdaptiveXHigh(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_opus_5_features"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-opus-5", "What is 2+2?", 4096, 0)
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"output_config":{"effort":"xhigh"}}`}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	th := r19bBlock(t, r19bBody(t, name), 0)
	if !strings.HasPrefix(th["signature"].(string), "CAISzQIKhwEIEBgCKkA6UEt5") {
		t.Fatalf("recorded signature %q", th["signature"])
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "This is a straightforward arithmetic problem, so I'll just provide the answer directly.", Signature: th["signature"].(string)}),
			text("2 + 2 = 4"),
		},
		responseID: "msg_011CdMGQkaWBowzKjDD9nzPh", model: "claude-opus-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(13, 44, 0, 0, 33),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`},
		warnings: []string{"extra_body.output_config replaced the value the gateway built from the request"},
	})
	const recorded = `{"max_tokens":4096,"messages":[{"content":[{"text":"What is 2+2?","type":"text"}],"role":"user"}],"model":"claude-opus-5",` +
		`"output_config":{"effort":"xhigh"},"thinking":{"display":"summarized","type":"adaptive"}}`
	if !sameJSON(t, string(srv.Last(t).Body), recorded) {
		t.Errorf("request %s, recorded %s", srv.Last(t).Body, recorded)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21AdvisorTool: claude-sonnet-5 (2026), unary, with the advisor
// tool (claude-opus-4-8): a thinking block with an empty text and only a
// signature (kept: it goes back with the turn), a text, the
// server_tool_use advisor and its advisor_tool_result (the advisor's
// "4. ..." answer; warned about), then the answer text. usage.iterations
// has two message samplings (1128 + 1262 = 2390 in, 110 + 11 = 121 out,
// the top-level counts) and the advisor's own (2518 in, 22 out, another
// model): the usage is the top level, the iterations stay in
// usage_details; 28 thinking tokens.
func TestRound21AdvisorTool(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_advisor_tool"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	const tools = `[{"max_tokens":1024,"model":"claude-opus-4-8","name":"advisor","type":"advisor_20260301"}]`
	req := r21Request("claude-sonnet-5", "What's 2+2? Consult your advisor first.", 4096, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":` + tools + `}`}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	th := r19bBlock(t, r19bBody(t, name), 0)
	if th["thinking"] != "" || !strings.HasPrefix(th["signature"].(string), "EsECCokBCA8YAipA9szu") {
		t.Fatalf("recorded thinking %v", th)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Signature: th["signature"].(string)}),
			text("Task: answer \"What's 2+2?\" and I'm told to consult advisor first. My initial read: this is trivially 4, but instructions require calling advisor before answering."),
			text("2 + 2 = 4"),
		},
		responseID: "msg_011CdD8kCHePDwkWhKt6aCDv", model: "claude-sonnet-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(2390, 121, 0, 0, 28),
		extended: map[string]string{"service_tier": `"standard"`},
		items:    []string{"server_tool_use", "advisor_tool_result"},
	})
	details, _ := res.Meta.GetExtended().AsMap()["usage_details"].(map[string]any)
	if its, _ := details["iterations"].([]any); len(its) != 3 || its[1].(map[string]any)["model"] != "claude-opus-4-8" || its[1].(map[string]any)["input_tokens"] != float64(2518) {
		t.Errorf("usage details %v", details)
	}
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-5","max_tokens":4096,"tools":`+tools+`,`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"What's 2+2? Consult your advisor first."}]}]}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21PydanticGateway: claude-3-5-sonnet-latest through the
// Pydantic AI Gateway (a proxy in front of the Messages API), unary: the
// answer as Anthropic sent it, with a usage object the proxy added
// (pydantic_ai_gateway.cost_estimate) and its price header
// (pydantic-ai-gateway-price-estimate: 0.0002USD, not a field of ours).
// The proxy's usage field is kept in usage_details as sent, the counts
// are Anthropic's (14 in, 10 out), the resolved model the dated one.
func TestRound21PydanticGateway(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_gateway_provider_with_anthropic"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), r21Request("claude-3-5-sonnet-latest", "What is the capital of France?", 4096, 0))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The capital of France is Paris.")},
		responseID: "msg_014JDheu3y78eUkXc8faaVUx", model: "claude-3-5-sonnet-20241022",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(14, 10, 0, 0, 0),
		extended: map[string]string{
			"service_tier":  `"standard"`,
			"usage_details": `{"pydantic_ai_gateway.cost_estimate":0.00019199999999999998}`,
		},
	})
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-3-5-sonnet-latest","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"What is the capital of France?"}]}]}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}
