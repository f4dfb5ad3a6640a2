package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// respUnaryCases are the recorded unary Responses API scenarios.
var respUnaryCases = []string{
	"responses_plain", "responses_tools_parallel", "responses_multiturn", "responses_vision",
	"responses_reasoning", "responses_incomplete", "responses_no_call_id", "responses_azure_v1",
	"responses_reasoning_tools", "responses_reasoning_multiturn",
	// pydantic/pydantic-ai cassettes (see testdata/README.md).
	"real_pyd_openai_responses_model_web_search_tool_with_invalid_region",
	"real_pyd_openai_responses_non_reasoning_model_no_item_ids_1",
}

func TestGenerateResponses(t *testing.T) {
	t.Parallel()
	reqs := responsesRequests(t)
	checks := map[string]func(t *testing.T, res *provider.Result, body []byte){
		// gpt-5 with web search (pydantic-ai cassette): two encrypted
		// reasoning items without summaries around a server-run
		// web_search_call, then the message; most input tokens cached.
		"real_pyd_openai_responses_model_web_search_tool_with_invalid_region": func(t *testing.T, res *provider.Result, _ []byte) {
			parts := r23Parts(t, res.Message, "web_search_call")
			if len(parts) != 3 {
				t.Fatalf("parts %v", parts)
			}
			for i, id := range []string{"rs_0b4f29854724a3120068c4ab0be6a08191b495f9009b885649", "rs_0b4f29854724a3120068c4ab1022f88191b2e3e726df9f635e"} {
				if r := parts[i].GetReasoning(); r.GetId() != id || r.GetText() != "" || !strings.HasPrefix(r.GetSignature(), "gAAAAABoxKsm") || r.GetRedacted() {
					t.Errorf("reasoning %d: %v", i, r)
				}
			}
			if txt := parts[2].GetText(); !strings.HasPrefix(txt, "Here’s the weather in Salvador, Bahia right now (Friday, September 12, 2025):\n- Mostly clear, 26°C.") ||
				!strings.HasSuffix(txt, "rain-risk breakdown for your neighborhood?") {
				t.Errorf("text %q", txt)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			want := &llmrelayv1.Usage{InputTokens: 9939, OutputTokens: 1610, TotalTokens: 11549, CachedInputTokens: 8320, ReasoningTokens: 1344}
			if !proto.Equal(res.Meta.GetUsage(), want) || res.Meta.GetResponseId() != "resp_0b4f29854724a3120068c4ab0b660081919707b95b47552782" {
				t.Errorf("meta %v", res.Meta)
			}
		},
		// gpt-4.1 (pydantic-ai cassette): one function_call without
		// arguments ("{}"), keyed by its call_id, not its fc_ item id.
		"real_pyd_openai_responses_non_reasoning_model_no_item_ids_1": func(t *testing.T, res *provider.Result, _ []byte) {
			parts := res.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_otDUd1BvDW9o3wOIccaWfU5S" || tc.GetName() != "get_meaning_of_life" ||
				tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 36, OutputTokens: 15, TotalTokens: 51}); !proto.Equal(res.Meta.GetUsage(), want) || res.Meta.GetToolCallCount() != 1 {
				t.Errorf("meta %v", res.Meta)
			}
		},
		"responses_plain": func(t *testing.T, res *provider.Result, _ []byte) {
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if len(res.Message.Parts) != 1 || res.Message.Parts[0].GetText() != "The capital of France is Paris." {
				t.Errorf("message %v", res.Message)
			}
			m := res.Meta
			if !strings.HasPrefix(m.ResponseId, "resp_68") || m.ResolvedModel != "gpt-4o-mini-2024-07-18" || m.CreateTime.GetSeconds() != 1760433200 {
				t.Errorf("meta %v", m)
			}
			if !strings.HasPrefix(m.ProviderRequestId, "req_") || m.RateLimit.GetRequestsRemaining() != 9999 {
				t.Errorf("header meta %v", m)
			}
			if u := m.Usage; u.GetInputTokens() != 24 || u.GetOutputTokens() != 8 || u.GetTotalTokens() != 32 {
				t.Errorf("usage %v", u)
			}
			if len(m.Warnings) != 2 { // stop and seed not sent
				t.Errorf("warnings %q", m.Warnings)
			}
		},
		"responses_tools_parallel": func(t *testing.T, res *provider.Result, _ []byte) {
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if res.Meta.ToolCallCount != 2 || len(res.Message.Parts) != 2 {
				t.Fatalf("want 2 tool calls, got %d (%d parts)", res.Meta.ToolCallCount, len(res.Message.Parts))
			}
			for _, p := range res.Message.Parts {
				tc := p.GetToolCall()
				if !tc.GetArgumentsValid() || !strings.HasPrefix(tc.GetCallId(), "call_") || tc.GetName() != "get_weather" {
					t.Errorf("calls must be keyed by call_id (not the fc_ item id): %v", tc)
				}
			}
		},
		"responses_multiturn": func(t *testing.T, res *provider.Result, body []byte) {
			if u := res.Meta.GetUsage(); u.GetInputTokens() != 1536 || u.GetCachedInputTokens() != 1024 || u.GetTotalTokens() != 1557 {
				t.Errorf("usage %v", u)
			}
			m := decodeBody(t, body)
			outputs := map[string]string{}
			var calls []string
			for _, it := range m["input"].([]any) {
				item := it.(map[string]any)
				switch item["type"] {
				case "function_call_output":
					outputs[item["call_id"].(string)] = item["output"].(string)
				case "function_call":
					calls = append(calls, item["call_id"].(string))
					if _, hasID := item["id"]; hasID {
						t.Errorf("stateless input must not reference stored item ids: %v", item)
					}
				}
			}
			if len(calls) != 2 || calls[0] != mtCallParis || calls[1] != mtCallTokyo {
				t.Errorf("function_call items %v", calls)
			}
			if outputs[mtCallParis] != `{"temp_c":18,"sky":"cloudy"}` || outputs[mtCallTokyo] != `{"temp_c":22,"sky":"sunny"}` {
				t.Errorf("tool results keyed wrongly: %v", outputs)
			}
		},
		"responses_vision": func(t *testing.T, _ *provider.Result, body []byte) {
			m := decodeBody(t, body)
			content := m["input"].([]any)[0].(map[string]any)["content"].([]any)
			if len(content) != 4 {
				t.Fatalf("content %v", content)
			}
			for i, want := range []struct{ prefix, detail string }{
				{"https://upload.wikimedia.org/", "high"}, {"data:image/png;base64,iVBORw0KGgo", "low"}, {"data:image/png;base64,", "auto"},
			} {
				part := content[i+1].(map[string]any)
				if part["type"] != "input_image" || !strings.HasPrefix(part["image_url"].(string), want.prefix) || part["detail"] != want.detail {
					t.Errorf("image %d: %v", i, part)
				}
			}
		},
		"responses_reasoning": func(t *testing.T, res *provider.Result, _ []byte) {
			if u := res.Meta.GetUsage(); u.GetReasoningTokens() != 320 || u.GetOutputTokens() != 340 {
				t.Errorf("usage %v", u)
			}
			// An encrypted reasoning item without a summary: a Reasoning
			// part with no text, before the answer.
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[1].GetText() != "17 × 23 = 391." {
				t.Fatalf("message %v", res.Message)
			}
			if r := parts[0].GetReasoning(); !strings.HasPrefix(r.GetId(), "rs_68ee") || r.GetText() != "" ||
				!strings.HasPrefix(r.GetSignature(), "gAAAAABo7hZj") || r.GetRedacted() {
				t.Errorf("reasoning %v", r)
			}
		},
		"responses_reasoning_tools": func(t *testing.T, res *provider.Result, body []byte) {
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[1].GetToolCall().GetCallId() != rtCallParis {
				t.Fatalf("want reasoning then the call, got %v", res.Message)
			}
			r := parts[0].GetReasoning()
			if r.GetId() != rtReasoningID || !strings.HasPrefix(r.GetSignature(), "gAAAAABo7h") ||
				!strings.HasPrefix(r.GetText(), "**Planning the weather lookup**\n\nThe user wants") ||
				!strings.Contains(r.GetText(), "rather than guess.\n\n**Choosing the arguments**\n\n") {
				t.Errorf("reasoning (summaries joined by a blank line) %v", r)
			}
			if len(res.Meta.GetExtended().GetFields()) != 2 { // service tier, processing ms
				t.Errorf("extended %v", res.Meta.GetExtended())
			}
			m := decodeBody(t, body)
			if rs, _ := m["reasoning"].(map[string]any); rs["summary"] != "auto" {
				t.Errorf("reasoning options %v", m["reasoning"])
			}
		},
		"responses_reasoning_multiturn": func(t *testing.T, res *provider.Result, body []byte) {
			if len(res.Message.GetParts()) != 2 || res.Message.GetParts()[0].GetReasoning() == nil {
				t.Errorf("message %v", res.Message)
			}
			if u := res.Meta.GetUsage(); u.GetCachedInputTokens() != 384 || u.GetReasoningTokens() != 64 {
				t.Errorf("usage %v", u)
			}
			first := reasoningFirstTurn(t).GetParts()[0].GetReasoning()
			var types []string
			for _, it := range decodeBody(t, body)["input"].([]any) {
				item := it.(map[string]any)
				types = append(types, item["type"].(string))
				if item["type"] != "reasoning" {
					continue
				}
				summary, _ := item["summary"].([]any)
				// One summary_text entry per summary part (two).
				sp := first.GetSummaryParts()
				if item["id"] != rtReasoningID || item["encrypted_content"] != first.GetSignature() || len(sp) != 2 || len(summary) != len(sp) ||
					summary[0].(map[string]any)["text"] != sp[0] || summary[1].(map[string]any)["text"] != sp[1] {
					t.Errorf("reasoning sent back %v", item)
				}
			}
			if got := strings.Join(types, ","); got != "message,reasoning,function_call,function_call_output" {
				t.Errorf("input items %s: the reasoning item goes back before its call", got)
			}
			if len(res.Meta.Warnings) != 0 {
				t.Errorf("warnings %q", res.Meta.Warnings)
			}
		},
		"responses_incomplete": func(t *testing.T, res *provider.Result, _ []byte) {
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens")
		},
		"responses_no_call_id": func(t *testing.T, res *provider.Result, _ []byte) {
			tc := res.Message.GetParts()[0].GetToolCall()
			if !strings.HasPrefix(tc.GetCallId(), "fc_68") {
				t.Errorf("a call without call_id is keyed by its item id: %v", tc)
			}
			if len(res.Meta.Warnings) != 1 || !strings.Contains(res.Meta.Warnings[0], "has no call_id") {
				t.Errorf("warnings %q", res.Meta.Warnings)
			}
		},
		"responses_azure_v1": func(t *testing.T, res *provider.Result, body []byte) {
			if res.Meta.ProviderRequestId != "f2909160-0317-4f40-a3c0-aebda1000612" {
				t.Errorf("azure request id from apim-request-id: %q", res.Meta.ProviderRequestId)
			}
			if res.Meta.GetExtended().GetFields()[extAzureDeployment].GetStringValue() != "gpt-4.1-mini-prod" {
				t.Errorf("extended %v", res.Meta.GetExtended())
			}
			m := decodeBody(t, body)
			if m["model"] != "gpt-4.1-mini-prod" || m["store"] != true {
				t.Errorf("body %s", body)
			}
		},
	}
	for _, name := range respUnaryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(name+".http"))
			k := kOpenAI
			var opts []Option
			if name == "responses_azure_v1" {
				k = kAzure
				opts = append(opts, WithAzureV1Routes(true))
			}
			p := newTestProvider(t, k, srv.URL, opts...)
			res, err := p.Generate(context.Background(), reqs[name])
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(name+".golden"), renderResult(t, res))
			c := srv.Last(t)
			providertest.Golden(t, td(name+".request.golden"), providertest.RequestGolden(c, authHeaders...))
			wantPath := "/v1/responses"
			if k == kAzure {
				wantPath = "/openai/v1/responses"
			}
			if c.Path != wantPath || c.Query != "" {
				t.Errorf("request went to %s?%s, want %s", c.Path, c.Query, wantPath)
			}
			checks[name](t, res, c.Body)
		})
	}
}

// TestResponsesAzureClassicRoutes: classic deployment routes do not serve
// the Responses API; the adapter says so instead of calling a 404.
func TestResponsesAzureClassicRoutes(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("responses_azure_v1.http"))
	p := newTestProvider(t, kAzure, srv.URL)
	req := responsesRequests(t)["responses_azure_v1"]
	_, err := p.Generate(context.Background(), req)
	pe := providerError(t, err)
	if pe.Kind != provider.KindInvalidRequest || !strings.Contains(pe.Message, "v1 routes") {
		t.Errorf("Generate: %s", renderErr(err))
	}
	_, err = p.Stream(context.Background(), req)
	if pe := providerError(t, err); pe.Kind != provider.KindInvalidRequest {
		t.Errorf("Stream: %s", renderErr(err))
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func responsesSimpleRequest(model string) *provider.Request {
	r := simpleRequest(model)
	r.Format = formatResponses
	return r
}

// TestResponsesErrors: every HTTP error class, through the Responses
// format, unary and streamed. The generic recordings are shared with the
// chat format (the error body format is the same); two are Responses ones.
func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	cases := append([]struct {
		name       string
		kind       kind
		wantKind   provider.Kind
		status     int
		code       string
		param      string
		retryAfter time.Duration
		msg        string
	}{
		{"responses_err_context_length", kOpenAI, provider.KindContextLength, 400, "context_length_exceeded", "input", 0, "exceeds the context window"},
		{"responses_err_400", kOpenAI, provider.KindInvalidRequest, 400, "unsupported_parameter", "temperature", 0, "'temperature' is not supported"},
	}, errorCases...)
	for _, tc := range cases {
		for _, streaming := range []bool{false, true} {
			name := tc.name
			if streaming {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv := providertest.ReplayFile(t, td(tc.name+".http"))
				var opts []Option
				if tc.kind == kAzure {
					opts = append(opts, WithAzureV1Routes(true))
				}
				p := newTestProvider(t, tc.kind, srv.URL, opts...)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), responsesSimpleRequest("gpt-4o-prod"))
					if s != nil {
						s.Close()
						t.Fatal("stream returned for an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), responsesSimpleRequest("gpt-4o-prod"))
				}
				pe := providerError(t, err)
				if pe.Kind != tc.wantKind || pe.HTTPStatus != tc.status || pe.Code != tc.code || pe.Param != tc.param || pe.RetryAfter != tc.retryAfter {
					t.Errorf("got %s param=%q, want kind=%s http=%d code=%q param=%q retry=%s", renderErr(err), pe.Param, tc.wantKind, tc.status, tc.code, tc.param, tc.retryAfter)
				}
				if wantID := p.requestID(providertest.Load(t, td(tc.name+".http")).Header); !strings.Contains(pe.Message, tc.msg) || pe.RequestID != wantID || pe.Provider == "" {
					t.Errorf("got %s", renderErr(err))
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error leaks the key: %v", err)
				}
				if c := srv.Last(t); !strings.HasSuffix(c.Path, "/v1/responses") {
					t.Errorf("path %s", c.Path)
				}
			})
		}
	}
}

// TestParseResponsesShapes: lenient parsing of bodies OpenAI-compatible
// servers produce, and failed responses.
func TestParseResponsesShapes(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body string
		want       string // rendered message parts and finish, or the error
	}{
		{"content as a string, arguments as an object, no ids",
			`{"status":"completed","output":[{"type":"message","content":"hi"},{"type":"function_call","name":"f","arguments":{"b":1,"a":[2]}}]}`,
			`text "hi" | call call_idx0 f {"b":1,"a":[2]} valid=true | TOOL_CALLS/completed | warnings=[function_call 0 has neither call_id nor item id; keyed as call_idx0]`},
		{"refusal and several text parts",
			`{"status":"completed","output":[{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"no"},{"type":"output_text","text":"b"},{"type":"output_image"}]}]}`,
			`text "a" | refusal "no" | text "b" | STOP/completed | warnings=[ignored content part of type "output_image" in message item "msg_1"]`},
		{"text of consecutive items merges; parts in model order",
			`{"status":"completed","output":[{"type":"message","content":"a"},{"type":"message","content":[{"type":"output_text","text":"b"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"message","content":"c"}]}`,
			`text "ab" | call c1 f {} valid=true | text "c" | TOOL_CALLS/completed | warnings=[]`},
		{"reasoning items: summaries joined, empty ones skipped, encrypted content as signature",
			`{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"A"},{"type":"summary_text","text":""},{"type":"summary_text","text":"B"}],"encrypted_content":"gAAAA"},{"type":"message","content":"x"},{"type":"reasoning","id":"rs_2","summary":null}]}`,
			`reasoning rs_1 "A\n\nB" sig=gAAAA | text "x" | reasoning rs_2 "" sig= | STOP/completed | warnings=[]`},
		{"reasoning of odd shapes: summary as a string, part without text, encrypted content not a string",
			`{"status":"completed","output":[{"type":"reasoning","summary":"plain","encrypted_content":{"k":1}},{"type":"reasoning","id":"rs_2","summary":[{"type":"summary_image"}]},{"type":"reasoning","id":"rs_3","summary":7}]}`,
			`reasoning  "plain" sig={"k":1} | reasoning rs_2 "" sig= | reasoning rs_3 "" sig= | STOP/completed | warnings=[ignored summary part of type "summary_image" in reasoning item "rs_2"; reasoning item "rs_3" has a summary of an unrecognized shape; ignored]`},
		{"malformed arguments kept verbatim",
			`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":"}]}`,
			`call call_1 f {"a": valid=false | LENGTH/incomplete/max_output_tokens | warnings=[tool call call_1 was cut by the token limit; its arguments are partial]`},
		{"content filter",
			`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}`,
			`CONTENT_FILTER/incomplete/content_filter | warnings=[response has no output items]`},
		{"unknown item and status",
			`{"status":"cancelled","output":[{"type":"web_search_call","id":"ws_1"}],"usage":{"input_tokens":"5","output_tokens":2.0}}`,
			`item web_search_call {"type":"web_search_call","id":"ws_1"} | OTHER/cancelled | warnings=[]`},
		{"field of the wrong type",
			`{"status":"completed","model":7,"output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}]}`,
			`text "x" | STOP/completed | warnings=[ignored response field "model": unexpected JSON number]`},
		{"failed", `{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"boom"}}`,
			`error provider=openai kind=unavailable http=200 code="server_error" request_id= retry_after=0s message="boom"`},
		{"failed: invalid prompt", `{"status":"failed","error":{"code":"invalid_prompt","message":"bad prompt"}}`,
			`error provider=openai kind=invalid_request http=200 code="invalid_prompt" request_id= retry_after=0s message="bad prompt"`},
		{"failed: image policy", `{"status":"failed","error":{"code":"image_content_policy_violation","message":"no"}}`,
			`error provider=openai kind=content_filter http=200 code="image_content_policy_violation" request_id= retry_after=0s message="no"`},
		{"failed without error", `{"id":"resp_2","status":"failed"}`,
			`error provider=openai kind=unavailable http=200 code="" request_id= retry_after=0s message="response failed without an error object (resp_2)"`},
		{"not JSON", `<html>`, `error provider=openai kind=bad_response http=0 code="" request_id= retry_after=0s message="invalid response JSON: not a JSON object"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := p.parseResponsesResponse([]byte(tc.body), "m")
			var got string
			if err != nil {
				got = renderErr(err)
			} else {
				checkResultInvariants(t, res)
				var parts []string
				for _, pt := range res.Message.GetParts() {
					switch k := pt.GetKind().(type) {
					case *llmrelayv1.Part_Text:
						parts = append(parts, "text "+quote(k.Text))
					case *llmrelayv1.Part_Refusal:
						parts = append(parts, "refusal "+quote(k.Refusal))
					case *llmrelayv1.Part_ToolCall:
						parts = append(parts, "call "+k.ToolCall.CallId+" "+k.ToolCall.Name+" "+k.ToolCall.Arguments+" valid="+boolStr(k.ToolCall.ArgumentsValid))
					case *llmrelayv1.Part_Reasoning:
						parts = append(parts, "reasoning "+k.Reasoning.Id+" "+strconv.Quote(k.Reasoning.Text)+" sig="+k.Reasoning.Signature)
					case *llmrelayv1.Part_ProviderItem:
						parts = append(parts, "item "+k.ProviderItem.Type+" "+k.ProviderItem.Json)
					}
				}
				short := strings.TrimPrefix(res.Meta.FinishReason.String(), "FINISH_REASON_")
				parts = append(parts, short+"/"+res.Meta.ProviderFinishReason, "warnings=["+strings.Join(res.Meta.Warnings, "; ")+"]")
				got = strings.Join(parts, " | ")
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func quote(s string) string { return `"` + s + `"` }

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestResponsesFailedBodyAnnotated: a failed Response in a 200 body is an
// error carrying the request id and status.
func TestResponsesFailedBodyAnnotated(t *testing.T) {
	t.Parallel()
	rec := providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_failed"}},
		Body: []byte(`{"id":"resp_68ee1430","object":"response","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 1.5s."},"output":[]}`)}
	srv := providertest.Replay(t, rec)
	p := newTestProvider(t, kOpenAI, srv.URL)
	_, err := p.Generate(context.Background(), responsesSimpleRequest("gpt-4o-mini"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindRateLimited || pe.RequestID != "req_failed" || pe.HTTPStatus != 200 || pe.RetryAfter != 1500*time.Millisecond {
		t.Errorf("got %s", renderErr(err))
	}
	// The same body on a stream request (a server that ignored "stream").
	_, err = p.Stream(context.Background(), responsesSimpleRequest("gpt-4o-mini"))
	if pe := providerError(t, err); pe.Kind != provider.KindRateLimited || pe.RequestID != "req_failed" {
		t.Errorf("stream: got %s", renderErr(err))
	}
}

// FuzzParseResponsesResponse: no panic on any body; successful results
// hold the invariants and marshal.
func FuzzParseResponsesResponse(f *testing.F) {
	for _, name := range respUnaryCases {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	f.Add([]byte(`{"status":"completed","output":[{"type":"message","content":"hi"},{"type":"function_call","arguments":{"a":1}},{"type":"custom_tool_call","input":"x"}]}`))
	f.Add([]byte(`{"status":"failed","error":"boom"}`))
	f.Add(providertest.Load(f, td("litellm_responses_guardrail_passthrough.http")).Body)
	f.Add([]byte(`{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"},{"text":7}],"encrypted_content":"e"},{"type":"reasoning","summary":"s","encrypted_content":null}]}`))
	f.Add([]byte(`{"output":[{"type":"message","content":[{"text":null,"refusal":"r"}]}],"usage":{"input_tokens":-1,"total_tokens":"x"}}`))
	// Round 25: a completed answer that used its whole (echoed) limit,
	// ending in a call whose arguments parse (Ollama's shape).
	f.Add(providertest.Load(f, td("ollama_responses_length_text.http")).Body)
	f.Add([]byte(`{"status":"completed","max_output_tokens":5,"output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}","status":"completed"}],"usage":{"input_tokens":1,"output_tokens":5,"total_tokens":6}}`))
	p, err := New(testKey)
	if err != nil {
		f.Fatal(err)
	}
	// A compatible server's (not OpenAI's): an answer reported completed
	// that used its whole limit is cut (limitCutHidden).
	compat, err := New(testKey, WithBaseURL("http://127.0.0.1:11434/v1"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pp := p
		if len(body)%2 == 1 {
			pp = compat
		}
		res, err := pp.parseResponsesAnswer(body, "m", int32(len(body)%7))
		if err != nil {
			providerError(t, err)
			return
		}
		checkResultInvariants(t, res)
		calls, reasoning := 0, 0
		for _, pt := range res.Message.GetParts() {
			if pt.GetReasoning() != nil {
				reasoning++
			}
			if tc := pt.GetToolCall(); tc != nil {
				calls++
				if tc.CallId == "" {
					t.Errorf("tool call without id: %v", tc)
				}
				// A call the answer's end cut is not valid, even when its
				// arguments parse, and a warning says so.
				if tc.ArgumentsValid != providertest.IsJSONObject(tc.Arguments) &&
					(tc.ArgumentsValid || !slices.ContainsFunc(res.Meta.GetWarnings(), func(w string) bool {
						return strings.HasPrefix(w, "tool call "+tc.CallId+" was cut by ")
					})) {
					t.Errorf("arguments_valid wrong: %v", tc)
				}
			}
		}
		// TOOL_CALLS replaces only a normal stop: calls with a stop are
		// TOOL_CALLS, calls cut or filtered keep their reason.
		fr := res.Meta.FinishReason
		if int32(calls) != res.Meta.ToolCallCount || (calls > 0 && fr == llmrelayv1.FinishReason_FINISH_REASON_STOP) ||
			(calls == 0 && fr == llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS) {
			t.Errorf("%d calls, meta %v", calls, res.Meta)
		}
		// Every reasoning output item is a part (none dropped).
		var w struct {
			Output []struct {
				Type string `json:"type"`
			} `json:"output"`
		}
		if json.Unmarshal(body, &w) == nil {
			items := 0
			for _, it := range w.Output {
				if it.Type == "reasoning" {
					items++
				}
			}
			if items != reasoning {
				t.Errorf("%d reasoning items, %d reasoning parts", items, reasoning)
			}
		}
	})
}

// TestResponsesFailedKeepsMeta: a unary Response with status "failed" is an
// error whose meta keeps what the provider reported: the response id, the
// resolved model, the usage of what was processed, and the headers'
// request id and rate limits. (Hand-built body, ids of its own.)
func TestResponsesFailedKeepsMeta(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Date", "Tue, 14 Oct 2025 10:26:13 GMT")
	h.Set("X-Request-Id", "req_8a3f1c0b7e6d45c29b1a0f9e8d7c6b5a")
	h.Set("X-Ratelimit-Limit-Requests", "10000")
	h.Set("X-Ratelimit-Remaining-Requests", "9997")
	body := `{"id":"resp_4e1a9c7b2d05f3864e1a9c7b2d05f3864e1a9c7b2d05f386","object":"response","created_at":1760437573,` +
		`"status":"failed","error":{"code":"server_error","message":"The server had an error while processing your request."},` +
		`"model":"gpt-4o-mini-2024-07-18","output":[],"usage":{"input_tokens":42,"input_tokens_details":{"cached_tokens":0},` +
		`"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":42}}`
	srv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: h, Body: []byte(body)})
	p := newTestProvider(t, kOpenAI, srv.URL)
	_, err := p.Generate(context.Background(), responsesSimpleRequest("gpt-4o-mini"))
	pe := providerError(t, err)
	m := pe.Meta
	if pe.Kind != provider.KindUnavailable || m.GetResponseId() != "resp_4e1a9c7b2d05f3864e1a9c7b2d05f3864e1a9c7b2d05f386" ||
		m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" || m.GetUsage().GetInputTokens() != 42 ||
		m.GetProviderRequestId() != "req_8a3f1c0b7e6d45c29b1a0f9e8d7c6b5a" || m.GetRateLimit().GetRequestsRemaining() != 9997 {
		t.Errorf("error %s, meta %v", renderErr(err), m)
	}
}
