package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 14: Messages API fixtures from microsoft/semantic-kernel's .NET
// Anthropic connector tests (dotnet/src/Connectors/Connectors.Anthropic.
// UnitTests/TestData), written by hand by the SDK's authors (readable ids
// such as msg_01TextBeforeToolCall, round counts): sk_*, see
// testdata/README.md, "Round 14". The expectations are read off the
// fixtures.

// TestRound14SKToolLoop: a tool loop as SK's tests run it. The unary
// answer is a text block then a tool_use (MyPlugin-GetWeather with
// {"location":"Seattle"}, id toolu_01Weather123), stop_reason tool_use,
// 100 in, 50 out. Given back with the result, the assistant turn is the
// two blocks as received and the result names the call's id. The streamed
// answer to that (sk_stream_final_after_tool_call) is text in two pieces
// with a non-ASCII character (U+00B0), end_turn; message_start says 150
// in and 1 out, message_delta corrects the output to 30.
func TestRound14SKToolLoop(t *testing.T) {
	t.Parallel()
	const first, final = "sk_text_before_tool_call", "sk_stream_final_after_tool_call"
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-sonnet-4-20250514",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Seattle?"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](1024)},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("Let me check the weather for you."),
			toolCallValid("toolu_01Weather123", "MyPlugin-GetWeather", `{"location":"Seattle"}`)},
		responseID: "msg_01TextBeforeToolCall", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(100, 50, 0, 0, 0),
	})
	if res.Meta.GetToolCallCount() != 1 || res.Meta.GetStopSequence() != "" {
		t.Errorf("meta %v", res.Meta)
	}
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res))

	req.Messages = append(req.Messages, res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Weather123", "sunny, 72°F", false)))
	next := providertest.ReplayFile(t, "testdata/"+final+".http")
	s, err := newTestProvider(t, next.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	var sent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(next.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	const (
		wantAssistant = `{"role":"assistant","content":[{"type":"text","text":"Let me check the weather for you."},` +
			`{"type":"tool_use","id":"toolu_01Weather123","name":"MyPlugin-GetWeather","input":{"location":"Seattle"}}]}`
		wantResult = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Weather123","content":"sunny, 72°F"}]}`
	)
	if len(sent.Messages) != 3 || compactJSON(t, sent.Messages[1]) != wantAssistant || compactJSON(t, sent.Messages[2]) != wantResult {
		t.Errorf("follow-up messages %s\nwant the assistant turn %s\nand the result %s", sent.Messages, wantAssistant, wantResult)
	}

	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	checkLLMWant(t, "stream", f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Based on the weather data, it's currently sunny and 72°F in Seattle.")},
		responseID: "msg_01FinalResponse", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(150, 30, 0, 0, 0),
	})
	var pieces []string
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			pieces = append(pieces, ev.Text)
		}
	}
	if len(pieces) != 2 || pieces[0] != "Based on the weather data, " || pieces[1] != "it's currently sunny and 72°F in Seattle." {
		t.Errorf("text pieces %q", pieces)
	}
	providertest.Golden(t, "testdata/"+final+".golden", renderEvents(t, evs, nil))
}

// Round 14, second part: stop reasons, errors and server tools. Where no
// real recording shows an answer (pause_turn, model_context_window_exceeded,
// a refusal or an error event inside a tool call; see testdata/README.md,
// "Round 14: stop reasons and errors no real recording shows") the fixture
// is hand-built from the API reference, with ids of its own; real
// recordings where they exist (real_mcp, pydantic-ai's redacted thinking
// stream). The expectations are what the contract asks for.

// r14Stream replays a streamed fixture and returns its events and how the
// stream ended.
func r14Stream(t *testing.T, name string, req *provider.Request) ([]*provider.Event, error) {
	t.Helper()
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return collect(s)
}

// r14Generate replays a unary fixture.
func r14Generate(t *testing.T, name string, req *provider.Request) *provider.Result {
	t.Helper()
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return res
}

// TestRound14PauseTurn: the API paused a server tool loop (web search) at
// its iteration limit, stop_reason pause_turn, with a server_tool_use whose
// result has not come yet. The answer is unfinished and is not a tool-call
// answer: no server block may become a client tool call (the caller would
// run a tool it does not have), each one is warned about, and the finish
// reason is OTHER with pause_turn as the provider's word, never STOP (a
// caller would take the partial text for the whole answer). The cited text
// is kept, and its citations in meta.extended.citations.
func TestRound14PauseTurn(t *testing.T) {
	t.Parallel()
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		const name = "pause_turn_stream"
		evs, err := r14Stream(t, name, plainRequest())
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		for _, ev := range evs {
			if ev.Kind == provider.EventToolCall || ev.Kind == provider.EventToolCallEnd {
				t.Errorf("server tool block became a client tool call: %+v", ev.ToolCall)
			}
		}
		f := foldEvents(t, evs)
		if got := accumulate(t, evs); !proto.Equal(got, f.message) {
			t.Errorf("accumulated %v, folded %v", got, f.message)
		}
		checkLLMWant(t, "stream", f.message, f.meta, llmWant{
			parts:      []*llmrelayv1.Part{text("I'll look up the current release notes."), text("Go 1.25 came out in August 2025.")},
			responseID: "msg_01T9N7yz9BN1uJrzxsyMcylx", model: "claude-sonnet-4-5-20250929", requestID: "req_01AshMHVNAKJ1W3SBWbFQ4io",
			finish: llmrelayv1.FinishReason_FINISH_REASON_OTHER, providerStop: "pause_turn",
			// message_delta raises the input from 2417 to 5903 (the search
			// results read back), output 118.
			usage:         usageOf(5903, 118, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 21, 7, 0, time.UTC),
			extended: map[string]string{"service_tier": `"standard"`},
			items:    []string{"server_tool_use", "web_search_tool_result", "server_tool_use"},
			// Block 3: citations [] on start, one citations_delta, then its text.
			cited: []citedWant{{"Go 1.25 came out in August 2025.", []citeWant{{"web_search_result_location",
				"Go 1.25 is released in August 2025, six months after Go 1.24.", "https://go.dev/doc/go1.25"}}}},
		})
		if got := valueJSON(t, f.meta.GetExtended().GetFields()["usage_details"]); !strings.Contains(got, `"server_tool_use.web_search_requests":1`) {
			t.Errorf("usage_details %s, want server_tool_use.web_search_requests 1", got)
		}
		providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	})
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		const name = "pause_turn"
		res := r14Generate(t, name, plainRequest())
		checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
			parts:      []*llmrelayv1.Part{text("PostgreSQL 18 was released on September 25, 2025.")},
			responseID: "msg_01PgOW54ZJZIlDTjMV7c8O7a", model: "claude-sonnet-4-5-20250929", requestID: "req_01unor7xnnSAZKIc20b2Ha6B",
			finish: llmrelayv1.FinishReason_FINISH_REASON_OTHER, providerStop: "pause_turn",
			usage:         usageOf(6121, 97, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 22, 41, 0, time.UTC),
			extended: map[string]string{"service_tier": `"standard"`},
			items:    []string{"server_tool_use", "web_search_tool_result", "server_tool_use"},
			cited: []citedWant{{"PostgreSQL 18 was released on September 25, 2025.", []citeWant{{"web_search_result_location",
				"The PostgreSQL Global Development Group today announced the release of PostgreSQL 18", "https://www.postgresql.org/about/news/postgresql-18-released-3142/"}}}},
		})
		if res.Meta.GetToolCallCount() != 0 {
			t.Errorf("tool_call_count %d, want 0 (server tools are not the caller's)", res.Meta.GetToolCallCount())
		}
		providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	})
}

// TestRound14ContextWindowExceeded: stop_reason
// model_context_window_exceeded (the input plus the answer reached the
// model's context window, Claude 4.5 and later) is a cut answer like
// max_tokens: FINISH_REASON_LENGTH. Unary, the tool_use last in the answer
// is the call being written when the window filled: its input parses
// ({"path":"summary.md"}) but is not the whole call, so it is flagged
// invalid with a warning and the answer is not TOOL_CALLS. Streamed, the
// text written so far is kept exactly.
func TestRound14ContextWindowExceeded(t *testing.T) {
	t.Parallel()
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		const name = "context_window_exceeded"
		res := r14Generate(t, name, toolsRequest(t))
		checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
			parts: []*llmrelayv1.Part{text("I'll write the summary to a file."),
				{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: "toolu_01cL03uq3kpfBB1e86IpM4MS", Name: "write_file", Arguments: `{"path":"summary.md"}`,
				}}}},
			responseID: "msg_01KlYgpQKJi5V15grgejbOGI", model: "claude-sonnet-4-5-20250929", requestID: "req_01wzL3ywI33aXHYDwQQf734I",
			finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "model_context_window_exceeded",
			usage:         usageOf(195688, 4312, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 24, 2, 0, time.UTC),
			warnings: []string{"tool call toolu_01cL03uq3kpfBB1e86IpM4MS was cut by the context window; its arguments are partial"},
		})
		providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		const name = "context_window_exceeded_stream"
		evs, err := r14Stream(t, name, plainRequest())
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		f := foldEvents(t, evs)
		checkLLMWant(t, "stream", f.message, f.meta, llmWant{
			parts:      []*llmrelayv1.Part{text("The log shows three failures: the first at 02:14 UTC, when the")},
			responseID: "msg_01hut3E75ipyrtMuvDP7toy6", model: "claude-sonnet-4-5-20250929", requestID: "req_01jNKWfEs6jwQah9EuiSstLz",
			finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "model_context_window_exceeded",
			usage:         usageOf(198402, 1598, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 25, 13, 0, time.UTC),
		})
		providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	})
}

// TestRound14ErrorInToolCall: an `error` event in a 200 stream while a tool
// call's arguments are being written, after a finished text block. The
// shape of the event is the one a LiteLLM issue quotes from a live stream
// (BerriAI/litellm#4562: `{"details":null,"type":"api_error","message":
// "Internal server error"}`), with the request id the API adds. The stream
// ends with that error, transient (KindUnavailable, code api_error, the
// provider's message and request id), and everything before it was
// delivered: the text, the call's id and name and the arguments written so
// far; the call is never ended, so no caller can take it for a whole call.
func TestRound14ErrorInToolCall(t *testing.T) {
	t.Parallel()
	const name = "stream_api_error_in_tool_call"
	evs, err := r14Stream(t, name, toolsRequest(t))
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("stream ended with %v, want the error event", err)
	}
	if pe.Kind != provider.KindUnavailable || pe.Code != "api_error" || pe.Message != "Internal server error" ||
		pe.RequestID != "req_01UXF3owRsQdcMVRe2yhpBGz" {
		t.Errorf("error %+v", pe)
	}
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd {
			t.Errorf("the interrupted call was ended: %+v", ev.ToolCall)
		}
	}
	f := foldEvents(t, evs)
	want := []*llmrelayv1.Part{text("Let me check the forecast."), {Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
		CallId: "toolu_01yIoCXznBMAUskYhUOQetpa", Name: "get_weather", Arguments: `{"location": "Par`,
	}}}}
	if !proto.Equal(f.message, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: want}) {
		t.Errorf("delivered before the error: %v", f.message)
	}
	if f.meta.GetResponseId() != "msg_01bcBDPjeqHqB51eBrF1nXiP" || f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		t.Errorf("meta %v", f.meta)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, err))
}

// TestRound14RedactedStreamRoundTrip: redacted thinking received in a
// stream must go back unchanged. pydantic-ai's recording
// (testdata/real_pyd_anthropic_model_thinking_part_redacted_stream.http)
// streams two redacted_thinking blocks, each whole in its
// content_block_start, then text. The gateway's accumulator builds the
// assistant message from the events; given back in the next request, it is
// the two redacted_thinking blocks with their data byte for byte, in order,
// then the text: what the live API requires (langchaingo's unary recording,
// checked in TestLangchaingoRedactedRoundTrip, shows it accepted).
func TestRound14RedactedStreamRoundTrip(t *testing.T) {
	t.Parallel()
	const name = "testdata/real_pyd_anthropic_model_thinking_part_redacted_stream.http"
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded blocks, read from the recording itself.
	var want []string
	for _, line := range strings.Split(string(raw), "\n") {
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			ContentBlock struct {
				Type string `json:"type"`
				Data string `json:"data"`
			} `json:"content_block"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("recording: %v", err)
		}
		if ev.Type == "content_block_start" && ev.ContentBlock.Type == "redacted_thinking" {
			want = append(want, ev.ContentBlock.Data)
		}
	}
	if len(want) != 2 {
		t.Fatalf("recording has %d redacted_thinking blocks, want 2", len(want))
	}

	req := thinkingRequest(t)
	evs, err := r14Stream(t, "real_pyd_anthropic_model_thinking_part_redacted_stream", req)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	answer := accumulate(t, evs)
	req.Messages = append(req.Messages, answer, msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks. And tomorrow?")))
	body, _, _, err := newTestProvider(t, "http://unused.invalid").buildRequest(req, false)
	if err != nil {
		t.Fatalf("buildRequest: %v", err)
	}
	var sent struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string  `json:"type"`
				Data *string `json:"data"`
				Text string  `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 3 || sent.Messages[1].Role != "assistant" {
		t.Fatalf("messages %s", body)
	}
	blocks := sent.Messages[1].Content
	if len(blocks) != 3 || blocks[2].Type != "text" || blocks[2].Text == "" {
		t.Fatalf("assistant turn %+v, want two redacted_thinking blocks then the text", blocks)
	}
	for i, w := range want {
		if blocks[i].Type != "redacted_thinking" || blocks[i].Data == nil || *blocks[i].Data != w {
			t.Errorf("block %d: %s %v, want redacted_thinking with the recorded data (%d bytes)", i, blocks[i].Type, blocks[i].Data, len(w))
		}
	}
}

// TestRound14MCPUnary: a real unary answer with an MCP server's tool (the
// Vercel AI SDK's anthropic-mcp.1.json, testdata/real_mcp.http): an
// mcp_tool_use (echo, {"message":"hello world"}, server "echo"), its
// mcp_tool_result (is_error false: not a failure) and the answer's text,
// end_turn, 1250 in, 88 out, server_tool_use and cache counts at 0. The API ran the
// tool: neither block becomes a client tool call (a caller would run a
// tool it does not have, and the answer would read TOOL_CALLS), each is
// warned about, naming the call; the text is kept exactly (escaped quotes,
// a blank line); zero counts add no usage_details.
func TestRound14MCPUnary(t *testing.T) {
	t.Parallel()
	const name = "real_mcp"
	res := r14Generate(t, name, plainRequest())
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("The echo tool responded back with: **\"hello world\"**\n\n" +
			"As expected, it simply echoes back the exact message that was sent to it!")},
		responseID: "msg_01P81KJc28LkYyoDAYG1bWVb", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(1250, 88, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
		items:    []string{"mcp_tool_use", "mcp_tool_result"},
	})
	if res.Meta.GetToolCallCount() != 0 {
		t.Errorf("tool_call_count %d, want 0", res.Meta.GetToolCallCount())
	}
	// Zero counts are nothing to report (provider.ReadUsageDetails).
	if ud, ok := res.Meta.GetExtended().GetFields()["usage_details"]; ok {
		t.Errorf("usage_details %v, want none (every count is 0)", ud)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound14RefusalInToolCall: a streaming classifier stopped the answer
// while a tool call was being written (stop_reason refusal, stop_details
// with category cyber and an explanation, the text written before it kept,
// as the API reference's "streaming refusals" page shows with text). The
// answer is CONTENT_FILTER, never TOOL_CALLS, and the call is not one to
// run: unary, the API reports the input parsed so far ({"path":"scan.py"}),
// which parses, so it was given as valid until this fix; it is now flagged
// invalid with a warning, as for max_tokens. Streamed, the cut JSON text
// does not parse, and the call's end is EventToolCallCut with the same
// warning. stop_details is kept in meta.extended either way.
func TestRound14RefusalInToolCall(t *testing.T) {
	t.Parallel()
	const details = `{"category":"cyber","explanation":"This request was declined because it could enable cyber harm.","type":"refusal"}`
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		const name = "refusal_in_tool_call"
		res := r14Generate(t, name, toolsRequest(t))
		checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
			parts: []*llmrelayv1.Part{text("I'll save the scanner to a file."),
				{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: "toolu_015iHC8e7pDcgOhri17KcO4e", Name: "write_file", Arguments: `{"path":"scan.py"}`,
				}}}},
			responseID: "msg_01FxYzxrrqFUchyM4Zl1JALo", model: "claude-sonnet-4-5-20250929", requestID: "req_01NHaJ7kmgAfh3Ios3p3JA6c",
			finish: llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, providerStop: "refusal",
			usage:         usageOf(731, 64, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 31, 12, 0, time.UTC),
			extended: map[string]string{"stop_details": details},
			warnings: []string{"tool call toolu_015iHC8e7pDcgOhri17KcO4e was cut by a refusal; its arguments are partial"},
		})
		providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		const name = "refusal_in_tool_call_stream"
		evs, err := r14Stream(t, name, toolsRequest(t))
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		f := foldEvents(t, evs)
		if got := accumulate(t, evs); !proto.Equal(got, f.message) {
			t.Errorf("accumulated %v, folded %v", got, f.message)
		}
		checkLLMWant(t, "stream", f.message, f.meta, llmWant{
			parts: []*llmrelayv1.Part{text("I'll save the scanner to a file."),
				{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: "toolu_01W4IrSOp9YxeOGFVbqL7AFr", Name: "write_file", Arguments: `{"path": "scan.py", "cont`,
				}}}},
			responseID: "msg_01UGSRMnbW0IWqv1YwKgCs9o", model: "claude-sonnet-4-5-20250929", requestID: "req_01CVGWy3OqaCvupMFbZ38s0x",
			finish: llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, providerStop: "refusal",
			usage:         usageOf(731, 58, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 32, 5, 0, time.UTC),
			extended: map[string]string{"stop_details": details},
			warnings: []string{"tool call toolu_01W4IrSOp9YxeOGFVbqL7AFr was cut by a refusal; its arguments are partial"},
		})
		if n := countKind(evs, provider.EventToolCallCut); n != 1 || countKind(evs, provider.EventToolCallEnd) != 0 {
			t.Errorf("%d cut and %d ended calls, want the one call cut", n, countKind(evs, provider.EventToolCallEnd))
		}
		providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	})
}

func countKind(evs []*provider.Event, k provider.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// TestRound14CutCallStream: a streamed answer whose last tool call's
// arguments parse ({"path": "report.md"}) although max_tokens stopped the
// answer inside it. Without eager input streaming the API buffers each
// tool parameter until it is complete, so a value cut by max_tokens never
// reaches the stream (anthropics/anthropic-sdk-python#794): the stream
// can hold only the parameters before the cut, as the unary answer's input
// does (TestRound14ContextWindowExceeded). The stream ended the call at
// its content_block_stop, before the stop reason, so the gateway reported
// it valid, unlike the same answer unary: the end is now held until the
// next block or the stop reason, and a stop reason that cuts the answer
// (max_tokens, model_context_window_exceeded, refusal) makes it
// EventToolCallCut (arguments_valid false) with the unary warning. A call
// followed by another block was whole: its end is released as before.
func TestRound14CutCallStream(t *testing.T) {
	t.Parallel()
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		const name = "max_tokens_whole_args_stream"
		evs, err := r14Stream(t, name, toolsRequest(t))
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		f := foldEvents(t, evs)
		if got := accumulate(t, evs); !proto.Equal(got, f.message) {
			t.Errorf("accumulated %v, folded %v", got, f.message)
		}
		checkLLMWant(t, "stream", f.message, f.meta, llmWant{
			parts: []*llmrelayv1.Part{text("Here is the report."),
				{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: "toolu_01dNGue8zgJs4JzOiRyzvCaB", Name: "write_file", Arguments: `{"path": "report.md"}`,
				}}}},
			responseID: "msg_019xfGRcSZUnInC6sHnCNtxq", model: "claude-sonnet-4-5-20250929", requestID: "req_012rP3wtpPxePoU1aq78B7c8",
			finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
			usage:         usageOf(388, 256, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 11, 24, 8, 34, 40, 0, time.UTC),
			extended: map[string]string{"service_tier": `"standard"`},
			warnings: []string{"tool call toolu_01dNGue8zgJs4JzOiRyzvCaB was cut by the token limit; its arguments are partial"},
		})
		if countKind(evs, provider.EventToolCallCut) != 1 || countKind(evs, provider.EventToolCallEnd) != 0 {
			t.Errorf("events %s", renderEvents(t, evs, nil))
		}
		providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	})
	t.Run("followed", func(t *testing.T) {
		t.Parallel()
		body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01FollowedCallQm7Rt2Vx\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01FollowedCallWk3Jd8\",\"name\":\"f\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"and th\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		evs, err := collect(streamFromBody([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		if countKind(evs, provider.EventToolCallEnd) != 1 || countKind(evs, provider.EventToolCallCut) != 0 {
			t.Errorf("the call followed by text was not ended whole: %s", renderEvents(t, evs, nil))
		}
		f := foldEvents(t, evs)
		if tc := f.message.GetParts()[0].GetToolCall(); !tc.GetArgumentsValid() || len(f.meta.GetWarnings()) != 0 {
			t.Errorf("call %v, warnings %q", tc, f.meta.GetWarnings())
		}
	})
}

// TestRound14CodeExecutionUnary: a real unary answer with the code
// execution tool (code_execution_20250825; the Vercel AI SDK's
// anthropic-code-execution-20250825.1.json, testdata/
// real_code_execution_20250825.http): text, a text_editor_code_execution
// call writing a script and its result, text, a bash_code_execution call
// running it and its result (stdout, return_code 0), the answer's text;
// the container it ran in; end_turn, 7881 in, 608 out. The API ran both
// tools: no client tool call (STOP, tool_call_count 0), a warning per
// server block naming the call; the three text blocks are three text parts
// in order, exactly as sent (the last one with a space before a blank line
// and markdown); the container is kept for the next request to reuse.
func TestRound14CodeExecutionUnary(t *testing.T) {
	t.Parallel()
	const name = "real_code_execution_20250825"
	res := r14Generate(t, name, plainRequest())
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll create a Python script to calculate Fibonacci numbers and then execute it to find the 10th Fibonacci number."),
			text("Now let me execute the script:"),
			text("Perfect! The script has been created and executed successfully. \n\n**Result: The 10th Fibonacci number is 55**\n\n" +
				"The script uses an iterative approach to calculate Fibonacci numbers efficiently, which is better than a recursive approach " +
				"for larger values of n (avoiding exponential time complexity). The Fibonacci sequence shown is: 1, 1, 2, 3, 5, 8, 13, 21, 34, 55..."),
		},
		responseID: "msg_01Wx5dv3Qisv7pjTdanFgc9Q", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(7881, 608, 0, 0, 0),
		extended: map[string]string{
			"service_tier": `"standard"`,
			"container":    `{"expires_at":"2025-10-14T10:28:40.590791Z","id":"container_011CU6rVteVhydYXRyNs6G1M"}`,
		},
		items: []string{"server_tool_use", "text_editor_code_execution_tool_result", "server_tool_use", "bash_code_execution_tool_result"},
	})
	if res.Meta.GetToolCallCount() != 0 {
		t.Errorf("tool_call_count %d, want 0", res.Meta.GetToolCallCount())
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}
