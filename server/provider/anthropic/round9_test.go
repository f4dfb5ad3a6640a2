package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 9: real failure answers from sources not replayed before (see
// testdata/README.md, "Round 9"): the Vercel AI SDK's error fixtures and a
// unary answer in which a tool the provider ran itself failed.

// TestRound9Errors: real 400 invalid_request_error bodies. No request-id
// header: the body's request_id is the only one. The message is the API's
// whole text (quotes, backticks, a path into the request), the kind is an
// invalid request (not retried, no retry-after, the provider said nothing
// about retrying) and not a context-length or content-filter failure,
// unary and streamed (an error status returns no stream).
func TestRound9Errors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, requestID, message string
	}{
		{"real_fallback_replay_without_beta_error", "req_011CffsirYGiLLcYcNXyb8wu",
			"messages.1.content.0: Input tag 'fallback' found using 'type' does not match any of the expected tags: " +
				"'bash_code_execution_tool_result', 'code_execution_tool_result', 'connector_text', 'container_upload', " +
				"'document', 'image', 'mid_conv_system', 'redacted_thinking', 'search_result', 'server_tool_use', 'text', " +
				"'text_editor_code_execution_tool_result', 'thinking', 'tool_result', 'tool_search_tool_result', 'tool_use', " +
				"'web_fetch_tool_result', 'web_search_tool_result'"},
		{"real_root_union_tool_schema_error", "req_011CfKWrFbXEEXnGHy3m6XDe",
			"tools.0.custom.input_schema.type: Field required"},
		{"real_tool_choice_none_tool_search_history_error", "req_011CfrvEkff81JwQM2B2HR77",
			"Tool reference 'lookup_documents' not found in available tools"},
		{"real_issue_21832_unexpected_tool_use_id_error", "req_011CfZv936tpvzgHtZ9ffjrD",
			"messages.0.content.1: unexpected `tool_use_id` found in `tool_result` blocks: T1. " +
				"Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"real_issue_12504_orphaned_caller_error", "req_011CfWCd1Y1RHapeWbHJBybY",
			"source tool `srvtoolu_01Issue12504Source` not found for tool use block `toolu_01Issue12504Lookup`"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			for _, streaming := range []bool{false, true} {
				srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
				p := newTestProvider(t, srv.URL)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), plainRequest())
					if s != nil {
						t.Fatal("Stream returned a stream with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), plainRequest())
				}
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("stream=%v: error %T %v is not a *provider.Error", streaming, err, err)
				}
				if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "invalid_request_error" ||
					pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryUnsaid || pe.RequestID != tc.requestID ||
					pe.Provider != "anthropic" || pe.Message != tc.message {
					t.Errorf("stream=%v: got kind=%v status=%d code=%q retry=%v should=%v rid=%q msg=%q", streaming,
						pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter, pe.ShouldRetry, pe.RequestID, pe.Message)
				}
				if pe.Meta.GetRateLimit() != nil {
					t.Errorf("stream=%v: rate limit %v, want none (no headers)", streaming, pe.Meta.GetRateLimit())
				}
				if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("stream=%v: error text %q lost the provider's message", streaming, err)
				}
			}
		})
	}
}

// TestRound9ServerToolFailure: claude-sonnet-4 ran web_fetch itself and it
// failed (a web_fetch_tool_result whose content is a
// web_fetch_tool_result_error with error_code "unavailable"); the model then
// says so in text (with literal backslash-n pairs, as it wrote them). The
// two texts are the message; the call and its result have no place in the
// contract and are warned about. Before, the result's warning said only
// "result of srvtoolu_…": the failure and its code were dropped without a
// word. It now names them.
func TestRound9ServerToolFailure(t *testing.T) {
	t.Parallel()
	const name = "real_web_fetch_tool_error"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), plainRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll fetch the PDF document from the URL you provided to see what it says about AI."),
			text(`I'm unable to access the PDF document at that URL as the web_fetch tool is currently unavailable. ` +
				`To help you understand what the document says about AI, I would need the tool to be working or you could:\n\n` +
				`1. Try the URL again later when the tool might be available\n2. Share the content of the PDF directly if you have access to it\n` +
				`3. Provide a different accessible URL where the same content might be hosted\n\n` +
				`Is there another way you'd like to proceed, or would you like to try again later?`),
		},
		responseID: "msg_01MT4gZLLHg1yg5d6eo41LJe", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(1902, 214, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"server_tool_use.web_fetch_requests":1}`},
		items:    []string{"server_tool_use", "web_fetch_tool_result"},
		warnings: []string{
			`content[2]: content block type "web_fetch_tool_result" (result of srvtoolu_013gia34XNKyTfwHxaPCKEVd, a tool the provider ran itself, which failed: web_fetch_tool_result_error "unavailable")`,
		},
	})
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	providertest.Golden(t, "testdata/"+name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
}

// TestServerToolFailureWarnings: the failure a server tool's result
// reports, streamed or not: an `*_error` content object names its type and
// error_code (a code execution error with no code only its type), an MCP
// result says is_error with its first text (round 26); a result that did not fail is warned about as
// before. Hand-built blocks in the shapes the API documents.
func TestServerToolFailureWarnings(t *testing.T) {
	t.Parallel()
	cases := []struct{ block, want string }{
		{`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_9Kq","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}`,
			`type "web_search_tool_result" (result of srvtoolu_9Kq, a tool the provider ran itself, which failed: web_search_tool_result_error "max_uses_exceeded"); kept as a provider item`},
		{`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_2Lp","content":{"type":"code_execution_tool_result_error"}}`,
			`type "code_execution_tool_result" (result of srvtoolu_2Lp, a tool the provider ran itself, which failed: code_execution_tool_result_error); kept as a provider item`},
		{`{"type":"mcp_tool_result","tool_use_id":"mcptoolu_7Xc","is_error":true,"content":[{"type":"text","text":"boom"}]}`,
			`type "mcp_tool_result" (result of mcptoolu_7Xc, a tool the provider ran itself, which failed: is_error ("boom")); kept as a provider item`},
		{`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_4Tn","content":[{"type":"web_search_result","url":"https://example.com","title":"x","encrypted_content":"Eq"}]}`,
			""},
	}
	for _, tc := range cases {
		// Unary.
		body := `{"id":"msg_01Rn9","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` + tc.block +
			`,{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`
		res, err := parseResponse([]byte(body), nil)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if w := res.Meta.GetWarnings(); (tc.want == "" && len(w) != 0) || (tc.want != "" && (len(w) != 1 || w[0] != "content[0]: content block "+tc.want)) {
			t.Errorf("unary warnings %q, want %q", w, tc.want)
		}
		// The block is kept as sent, before the text.
		if it := res.Message.GetParts()[0].GetProviderItem(); it.GetJson() != tc.block {
			t.Errorf("unary parts %v, want the block first as sent", res.Message.GetParts())
		}
		// Streamed.
		sse := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01Rn9\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":3}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":" + tc.block + "}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		evs, err := collect(streamFromBody([]byte(sse)))
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		f := foldEvents(t, evs)
		if w := f.meta.GetWarnings(); (tc.want == "" && len(w) != 0) || (tc.want != "" && (len(w) != 1 || w[0] != "content block 0: "+tc.want)) {
			t.Errorf("stream warnings %q, want %q", w, tc.want)
		}
		if it := f.message.GetParts()[0].GetProviderItem(); it.GetJson() != tc.block {
			t.Errorf("stream parts %v, want the block as sent", f.message.GetParts())
		}
	}
}
