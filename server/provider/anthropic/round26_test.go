package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26ToolSearchErrorLoop: the Vercel AI SDK's live recording of a
// failed tool search (claude-sonnet-5-5, unary, two steps). Step 1: a
// server_tool_use tool_search_tool_regex with the invalid pattern "[" and,
// beside it, a client tool_use continue_tool (caller direct), stop_reason
// tool_use, no result for the server call yet. Step 2, after the client
// tool's result: the tool_search_tool_result comes first, an error
// (invalid_tool_input) whose error_message says why ("Invalid regular
// expression pattern: missing ]: ["), then the text. The server call goes
// back verbatim before the client call; the failure's warning names the
// error_message (it was dropped: the warning said only the code).
func TestRound26ToolSearchErrorLoop(t *testing.T) {
	t.Parallel()
	const first, second = "real_vercel_tool_search_error_1", "real_vercel_tool_search_error_2"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-sonnet-5-5", `Call tool_search_tool_regex with the pattern "[" and call continue_tool.`, 1024, 0)
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{{Name: "continue_tool", Description: "Continue.", Parameters: `{"type":"object","properties":{}}`}}
		return req
	}
	res1 := r14Generate(t, first, build())
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res1))
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01NzvD554s3u5Bv4HX1yLXZK", "continue_tool", "{}")},
		responseID: "msg_011Cfrp7w75DsC831cxGybvQ", model: "claude-sonnet-5-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(843, 81, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
		items: []string{"server_tool_use"},
	})

	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _, warnings, err := p.buildRequest(build(res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01NzvD554s3u5Bv4HX1yLXZK", `{"continued":true}`, false))), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("request warnings %q", warnings)
	}
	msgs, _ := json.Marshal(r19bJSON(t, body)["messages"])
	want := `[{"content":[{"text":"Call tool_search_tool_regex with the pattern \"[\" and call continue_tool.","type":"text"}],"role":"user"},` +
		`{"content":[{"id":"srvtoolu_018yKDHFpyBNErTrzqbP8etq","input":{"pattern":"["},"name":"tool_search_tool_regex","type":"server_tool_use"},` +
		`{"id":"toolu_01NzvD554s3u5Bv4HX1yLXZK","input":{},"name":"continue_tool","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"{\"continued\":true}","tool_use_id":"toolu_01NzvD554s3u5Bv4HX1yLXZK","type":"tool_result"}],"role":"user"}]`
	if !sameJSON(t, string(msgs), want) {
		t.Errorf("the follow-up's messages\n got %s\nwant %s", msgs, want)
	}

	res2 := r14Generate(t, second, build(res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01NzvD554s3u5Bv4HX1yLXZK", `{"continued":true}`, false))))
	providertest.Golden(t, "testdata/"+second+".golden", renderResult(t, res2))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("I made both calls.\n\n1. `tool_search_tool_regex` with the pattern `\"[\"`, unchanged. It returned the error \"Invalid tool input for tool_search_tool_regex\". " +
			"That's expected, because `[` isn't a valid regex.\n2. `continue_tool` with no arguments. It succeeded and returned `{\"continued\":true}`.")},
		responseID: "msg_011Cfrp84EwJZxKdUZbhJCgf", model: "claude-sonnet-5-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(1014, 115, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"global"}`,
		},
		items: []string{"tool_search_tool_result"},
		warnings: []string{
			`content[0]: content block type "tool_search_tool_result" (result of srvtoolu_018yKDHFpyBNErTrzqbP8etq, a tool the provider ran itself, which failed: ` +
				`tool_search_tool_result_error "invalid_tool_input" ("Invalid regular expression pattern: missing ]: [")); kept as a provider item`,
		},
	})
}

// TestRound26ServerToolErrorMessage: the error_message of a server tool's
// failure reaches the warning, streamed as unary, shortened when long and
// made valid UTF-8; a failure without one reads as before.
func TestRound26ServerToolErrorMessage(t *testing.T) {
	t.Parallel()
	long := make([]byte, 0, 700)
	for len(long) < 700 {
		long = append(long, "é"...)
	}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"text editor", `{"type":"text_editor_code_execution_tool_result_error","error_code":"unavailable","error_message":"File not found: /tmp/x.py"}`,
			`text_editor_code_execution_tool_result_error "unavailable" ("File not found: /tmp/x.py")`},
		{"no message", `{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}`, `web_search_tool_result_error "max_uses_exceeded"`},
		{"null message", `{"type":"tool_search_tool_result_error","error_code":"unavailable","error_message":null}`, `tool_search_tool_result_error "unavailable"`},
		{"invalid UTF-8", "{\"type\":\"tool_search_tool_result_error\",\"error_code\":\"invalid_tool_input\",\"error_message\":\"bad \xff pattern\"}",
			`tool_search_tool_result_error "invalid_tool_input" ("bad ` + "\uFFFD" + ` pattern")`},
		{"long", `{"type":"tool_search_tool_result_error","error_code":"invalid_tool_input","error_message":"` + string(long) + `"}`,
			`tool_search_tool_result_error "invalid_tool_input" ("` + provider.Shorten(string(long), maxFailureMessage) + `")`},
	} {
		b := &contentBlock{Type: "tool_search_tool_result", Content: json.RawMessage(tc.content)}
		if got := serverToolFailure(b); got != tc.want {
			t.Errorf("%s: got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// An MCP call that failed (is_error) says why in its content, a list
	// of text blocks or a string (Anthropic's MCP connector page); the
	// warning repeats the first text.
	for _, tc := range []struct {
		name, content, want string
	}{
		{"blocks", `[{"type":"text","text":"Error: repository not found"},{"type":"text","text":"second"}]`, `is_error ("Error: repository not found")`},
		{"string", `"rate limited by the MCP server"`, `is_error ("rate limited by the MCP server")`},
		{"no text", `[]`, `is_error`},
	} {
		b := &contentBlock{Type: "mcp_tool_result", IsError: true, Content: json.RawMessage(tc.content)}
		if got := serverToolFailure(b); got != tc.want {
			t.Errorf("mcp %s: got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	b := &contentBlock{Type: "mcp_tool_result", Content: json.RawMessage(`[{"type":"text","text":"fine"}]`)}
	if got := serverToolFailure(b); got != "" {
		t.Errorf("a result that did not fail: %q", got)
	}
}

// TestRound26AdvisorStopReason: an advisor result carries its
// sub-inference's stop_reason ("max_tokens indicates the advisor's output
// was truncated at the tool's max_tokens value or the advisor model's
// policy cap", Anthropic's SDK reference for BetaAdvisorResultBlock;
// recorded results say end_turn, real_pyd_anthropic_advisor_tool_stream).
// **Bug:** a cut advice was kept as a provider item with no word: the
// caller could not tell that the answer rests on truncated advice. Now the
// result's warning says where it stopped, unary and streamed; a whole
// advice (end_turn, or no stop_reason) adds nothing. Hand-built bodies in
// the shape of the Vercel AI SDK's anthropic-advisor-stop-reasons fixtures
// (vercel/ai packages/anthropic/src/__fixtures__/anthropic-advisor-stop-reasons.chunks.txt
// @ 31a4be49ec016645d3f36820d59da88c9b90d62d), ids of our own.
func TestRound26AdvisorStopReason(t *testing.T) {
	t.Parallel()
	const (
		cut   = `{"type":"advisor_result","text":"Check the index first, then","stop_reason":"max_tokens"}`
		whole = `{"type":"advisor_redacted_result","encrypted_content":"EoQBCkYIBhgCKkAadv26WholeAdvice","stop_reason":"end_turn"}`
		bare  = `{"type":"advisor_result","text":"Ship it."}`
	)
	block := func(i int, content string) string {
		return fmt.Sprintf(`{"type":"server_tool_use","id":"srvtoolu_01Adv26Call%dQxKp","name":"advisor","input":{}},{"type":"advisor_tool_result","tool_use_id":"srvtoolu_01Adv26Call%dQxKp","content":%s}`, i, i, content)
	}
	unary := `{"id":"msg_01Adv26StopReasonsUnary","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[` +
		block(1, cut) + `,` + block(2, whole) + `,` + block(3, bare) + `,{"type":"text","text":"Done."}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":20}}`
	wantWarning := `content[1]: content block type "advisor_tool_result" (result of srvtoolu_01Adv26Call1QxKp, a tool the provider ran itself, whose own answer stopped at "max_tokens": it may be incomplete, and the answer after it rests on it); kept as a provider item`
	rec := providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(unary)}
	res, err := newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), plainRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Meta.GetWarnings(); !slices.Equal(got, []string{wantWarning}) {
		t.Errorf("unary warnings %q, want only %q", got, wantWarning)
	}

	// Streamed: each result whole in its content_block_start.
	var sse strings.Builder
	ev := func(typ, data string) { fmt.Fprintf(&sse, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_01Adv26StopReasonsStream","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	for i, c := range []string{cut, whole, bare} {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"server_tool_use","id":"srvtoolu_01Adv26Strm%dQxKp","name":"advisor","input":{}}}`, 2*i, i))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, 2*i))
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"advisor_tool_result","tool_use_id":"srvtoolu_01Adv26Strm%dQxKp","content":%s}}`, 2*i+1, i, c))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, 2*i+1))
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	rec = providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: []byte(sse.String())}
	s, err := newTestProvider(t, providertest.Replay(t, rec).URL).Stream(context.Background(), plainRequest())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	items := 0
	for _, e := range evs {
		switch e.Kind {
		case provider.EventMeta:
			warnings = append(warnings, e.Meta.GetWarnings()...)
		case provider.EventProviderItem:
			items++
		}
	}
	wantStream := `content block 1: type "advisor_tool_result" (result of srvtoolu_01Adv26Strm0QxKp, a tool the provider ran itself, whose own answer stopped at "max_tokens": it may be incomplete, and the answer after it rests on it); kept as a provider item`
	if !slices.Equal(warnings, []string{wantStream}) || items != 6 {
		t.Errorf("stream warnings %q and %d items, want only %q and 6 items", warnings, items, wantStream)
	}
}

// TestRound26WebFetchFromCode: the Vercel AI SDK's live recording of
// web_fetch_20260209 (claude-sonnet-4-6, unary): the fetch runs inside code
// execution (dynamic filtering), so the answer holds the code's
// server_tool_use (caller direct), the web_fetch server_tool_use and its
// result whose caller is code_execution_20260120 naming the code's call,
// then the code's result and the text; the container; one fetch counted.
// The four server blocks are provider items in their order and go back
// verbatim, callers included; no client call; no warning. No bug.
func TestRound26WebFetchFromCode(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_web_fetch_20260209"
	req := r21Request("claude-sonnet-4-6", "What is on example.com?", 1024, 0)
	res := r14Generate(t, name, req)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The page at **example.com** is a simple placeholder page for the \"Example Domain,\" which is reserved for use in documentation and illustrative examples without requiring prior permission.")},
		responseID: "msg_012HMyuvZLN3vLPPuRYVnQff", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(7204, 162, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			"container":              `{"expires_at":"2026-03-03T19:37:31.023014Z","id":"container_011CYgdc3J4LpgHCdaYF6kB6"}`,
			provider.ExtUsageDetails: `{"inference_geo":"global","server_tool_use.web_fetch_requests":1}`,
		},
		items: []string{"server_tool_use", "server_tool_use", "web_fetch_tool_result", "code_execution_tool_result"},
	})
	recorded := recordedBlocks(t, name, false)
	sent := resumeRequest(t, res.Message)
	if len(sent) != len(recorded) {
		t.Fatalf("sent %d blocks, recorded %d", len(sent), len(recorded))
	}
	for i := range recorded[:4] {
		g, _ := json.Marshal(sent[i])
		w, _ := json.Marshal(recorded[i])
		if string(g) != string(w) {
			t.Errorf("block %d:\n sent %s\n recorded %s", i, g, w)
		}
	}
}

// TestRound26VertexErrorBodies: Vertex AI answers errors for Claude with
// Google's error object, bare or as a one-element array, the status name
// beside the numeric code. Bodies as users quote them: the array form of a
// 429 (cline/cline#651), the object form (anthropics/claude-code#1440), and
// a 400 array (yym68686/uni-api#41, its Python repr written back as JSON,
// the masked project as quoted). **Bug:** the array form lost its message
// (the error said "Too Many Requests" / "Bad Request") and the object form
// was coded "429"; now each keeps the provider's message and its status name
// as the code. The kinds stay the statuses': a 429 is rate limited, a 400 an
// invalid request.
func TestRound26VertexErrorBodies(t *testing.T) {
	t.Parallel()
	const (
		quotaV2    = "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude-3-5-sonnet-v2. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai."
		quotaOpus  = "Quota exceeded for aiplatform.googleapis.com/online_prediction_input_tokens_per_minute_per_base_model with base model: anthropic-claude-opus-4. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai."
		notAllowed = "Project `*********` is not allowed to use Publisher Model `projects/*****-*****-********-m8/locations/asia-southeast1/publishers/anthropic/models/claude-3-sonnet@20240229`"
	)
	for _, tc := range []struct {
		name   string
		status int
		body   string
		kind   provider.Kind
		code   string
		msg    string
	}{
		{"array 429", 429, `[{"error":{"code":429,"message":"` + quotaV2 + `","status":"RESOURCE_EXHAUSTED"}}]`, provider.KindRateLimited, "RESOURCE_EXHAUSTED", quotaV2},
		{"object 429", 429, `{"error":{"code":429,"message":"` + quotaOpus + `","status":"RESOURCE_EXHAUSTED"}}`, provider.KindRateLimited, "RESOURCE_EXHAUSTED", quotaOpus},
		{"array 400", 400, "[{\"error\": {\"code\": 400, \"message\": \"" + notAllowed + "\", \"status\": \"FAILED_PRECONDITION\"}}]\n", provider.KindPermissionDenied, "FAILED_PRECONDITION", notAllowed},
		// Not Vertex's: a list of two objects is no error object; the
		// status's text stands.
		{"two objects", 500, `[{"error":{"message":"a"}},{"error":{"message":"b"}}]`, provider.KindUnavailable, "", "Internal Server Error"},
	} {
		rec := providertest.Recording{Status: tc.status, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: []byte(tc.body)}
		_, err := newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), plainRequest())
		var e *provider.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a provider error", tc.name, err)
		}
		if e.Kind != tc.kind || e.Code != tc.code || e.Message != tc.msg || e.HTTPStatus != tc.status {
			t.Errorf("%s: kind %v code %q message %q status %d, want %v %q %q %d", tc.name, e.Kind, e.Code, e.Message, e.HTTPStatus, tc.kind, tc.code, tc.msg, tc.status)
		}
	}
}

// TestRound26BedrockInputTooLong: Amazon Bedrock's answer to a Claude
// prompt over the window, a 400 ValidationException whose body is
// {"message":"Input is too long for requested model."} (the words
// continuedev/continue#9592 quotes from Bedrock's Claude Opus 4.5; the
// body as clients' tests code it), bare or relayed by a gateway inside
// Anthropic's shape. **Bug:** both were invalid requests, so a route did not
// fall back to a larger window and the caller could not tell; now a
// context-length error with Bedrock's words. A bare {"message"} with other
// words stays an invalid request.
func TestRound26BedrockInputTooLong(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		head http.Header
		body string
		kind provider.Kind
		msg  string
	}{
		{"bedrock", http.Header{"Content-Type": {"application/json"}, "X-Amzn-Errortype": {"ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}},
			`{"message":"Input is too long for requested model."}`, provider.KindContextLength, "Input is too long for requested model."},
		{"gateway", http.Header{"Content-Type": {"application/json"}},
			`{"type":"error","error":{"message":"Input is too long for requested model.","type":"invalid_request_error"}}`, provider.KindContextLength, "Input is too long for requested model."},
		{"other words", http.Header{"Content-Type": {"application/json"}},
			`{"message":"Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again."}`, provider.KindInvalidRequest,
			"Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again."},
	} {
		rec := providertest.Recording{Status: 400, Header: tc.head, Body: []byte(tc.body)}
		_, err := newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), plainRequest())
		var e *provider.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a provider error", tc.name, err)
		}
		if e.Kind != tc.kind || e.Message != tc.msg {
			t.Errorf("%s: kind %v message %q, want %v %q", tc.name, e.Kind, e.Message, tc.kind, tc.msg)
		}
	}
}

// TestRound26OpenRouterRelayedError: OpenRouter's Messages endpoint answers
// an upstream's failure with its own generic error and the upstream's
// answer in error.metadata.raw, as its chat endpoint does. Bodies as quoted:
// Xiaomi's OpenAI-shaped refusal through Claude Code pointed at OpenRouter
// (farion1231/cc-switch#464; the terminal's line wraps joined with a
// space), and the raw bodies charmbracelet/crush#910 quotes from Google
// Vertex (Anthropic's shape, a req_vrtx_ request id) and Amazon Bedrock
// (a bare message), and Bedrock's context overflow in the same envelope
// (as a client's test records it, September 2026). **Bug:** the error said
// "Provider returned error", coded 400: the upstream's words, field and
// type were lost, and Bedrock's overflow was an invalid request. Now the
// upstream's message, its type as the code, its field as the param, the
// provider's name in the error's details, and the kind refined by the
// upstream's words.
func TestRound26OpenRouterRelayedError(t *testing.T) {
	t.Parallel()
	envelope := func(raw, name string) string {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "Provider returned error", "code": 400,
			"metadata": map[string]any{"raw": raw, "provider_name": name}}})
		return string(b)
	}
	for _, tc := range []struct {
		name, body            string
		kind                  provider.Kind
		code, msg, param, who string
	}{
		{"xiaomi", envelope(`{"error":{"code":"400","message":"Param Incorrect","param":"messages[2] assistant content must contain at least one part","type":""}}`, "Xiaomi"),
			provider.KindInvalidRequest, "400", "Param Incorrect", "messages[2] assistant content must contain at least one part", "Xiaomi"},
		{"vertex", envelope(`{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.text.text: Input should be a valid string"},"request_id":"req_vrtx_011CSYucjVXi3fWhZvBi6Dra"}`, "Google"),
			provider.KindInvalidRequest, "invalid_request_error", "messages.1.content.0.text.text: Input should be a valid string", "messages.1.content.0.text.text", "Google"},
		{"bedrock", envelope(`{"message":"messages.1.content.0.text.text: Input should be a valid string"}`, "Amazon Bedrock"),
			provider.KindInvalidRequest, "400", "messages.1.content.0.text.text: Input should be a valid string", "messages.1.content.0.text.text", "Amazon Bedrock"},
		{"bedrock overflow", envelope(`{"message":"Input is too long for requested model."}`, "Amazon Bedrock"),
			provider.KindContextLength, "400", "Input is too long for requested model.", "", "Amazon Bedrock"},
		// No metadata: the router's words stand.
		{"no raw", `{"error":{"message":"Provider returned error","code":400}}`, provider.KindInvalidRequest, "400", "Provider returned error", "", ""},
	} {
		rec := providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.body)}
		_, err := newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), plainRequest())
		var e *provider.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a provider error", tc.name, err)
		}
		who, _ := e.Extended[extUpstreamProvider].(string)
		if e.Kind != tc.kind || e.Code != tc.code || e.Message != tc.msg || e.Param != tc.param || who != tc.who {
			t.Errorf("%s: kind %v code %q message %q param %q provider %q,\nwant %v %q %q %q %q", tc.name, e.Kind, e.Code, e.Message, e.Param, who, tc.kind, tc.code, tc.msg, tc.param, tc.who)
		}
	}
}
