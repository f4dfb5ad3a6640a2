package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26FilterCutsOpenCall: a content_filter finish while a tool call
// is being written stops the generation there, as the token limit does:
// the call's arguments may parse ({"city": "Oslo"} of a longer object) but
// the model never finished it, so it ends cut (arguments_valid false, the
// cut warning), streamed and unary alike, and the folded stream equals the
// unary answer (its parts). Azure's asynchronous filter blocking the answer after the
// model's own tool_calls finish (the annotation with filtered true after
// the finish, as in testdata/real_svir_azure_async_flagged_stream.http) is
// no cut: the model finished the call, the finish is content_filter.
// Hand-built from the documented shapes: OpenAI's finish_reason
// "content_filter" ("if content was omitted due to a flag from our content
// filters", Chat Completions reference) and Azure's per-choice
// content_filter_results.
func TestRound26FilterCutsOpenCall(t *testing.T) {
	t.Parallel()
	const head = `data: {"id":"chatcmpl-r26fc%s","object":"chat.completion.chunk","created":1790950001,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_r26fc_%s","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-r26fc%s","object":"chat.completion.chunk","created":1790950001,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Oslo\"}"}}]},"finish_reason":null}]}` + "\n\n"
	chunk := func(id, rest string) string {
		return `data: {"id":"chatcmpl-r26fc` + id + `","object":"chat.completion.chunk","created":1790950001,"model":"gpt-4o-mini","choices":[{"index":0,` + rest + `}]}` + "\n\n"
	}
	unary := func(id, finish, filter string) string {
		return `{"id":"chatcmpl-r26fc` + id + `u","object":"chat.completion","created":1790950002,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_r26fc_` + id + `u","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Oslo\"}"}}]},` + filter + `"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}`
	}
	for _, tc := range []struct {
		name, id, tail, unary string
		valid                 bool
		raw                   string
	}{
		{"content_filter in the call", "a", chunk("a", `"delta":{},"finish_reason":"content_filter"`), unary("a", "content_filter", ""), false, "content_filter"},
		{"Azure blocks after the model's finish", "b",
			chunk("b", `"delta":{},"finish_reason":"tool_calls"`) +
				chunk("b", `"delta":{},"content_filter_results":{"violence":{"filtered":true,"severity":"medium"}},"finish_reason":null`),
			// The unary twin: the model's finish, whole (a unary answer
			// has no verdict after its finish).
			unary("b", "tool_calls", ""), true, "tool_calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := strings.ReplaceAll(head, "%s", tc.id) + tc.tail + `data: [DONE]` + "\n\n"
			srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)})
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, _, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			msg, f, ended := gatewayFold(t, evs)
			end := "cut"
			if tc.valid {
				end = "end"
			}
			id := "call_r26fc_" + tc.id
			checkCalls(t, msg, ended, []wantCall{{id, "get_weather", `{"city": "Oslo"}`, tc.valid, end}})
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, tc.raw)

			usrv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.unary)})
			res, err := newTestProvider(t, kOpenAI, usrv.URL).Generate(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			uid := id + "u"
			checkCalls(t, res.Message, map[string]string{uid: end}, []wantCall{{uid, "get_weather", `{"city": "Oslo"}`, tc.valid, end}})
			ufinish := llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
			if tc.valid {
				ufinish = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
			}
			wantFinish(t, res.Meta, ufinish, tc.raw)
			for i, m := range []*llmrelayv1.ResponseMeta{f.Meta, res.Meta} {
				w := cutCallWarning([]string{id, uid}[i], "a content filter")
				if hasWarning(m, w) == tc.valid {
					t.Errorf("warning %q: %q", w, m.GetWarnings())
				}
			}
		})
	}
}

// TestRound26ResponsesFilterCutsOpenCall: a Responses answer the content
// filter stopped (status incomplete, incomplete_details.reason
// content_filter) while a function_call item was still in_progress: the
// call's arguments parse, but it is cut, streamed and unary alike, and
// the folded stream equals the unary answer. Hand-built from the
// documented events (response.output_item.added, function_call_arguments
// .delta, response.incomplete, as testdata/tools19_responses_incomplete_
// open_stream.http) with the content_filter reason OpenAI documents for
// incomplete_details.reason.
func TestRound26ResponsesFilterCutsOpenCall(t *testing.T) {
	t.Parallel()
	item := `{"id":"fc_r26fc01","type":"function_call","status":"in_progress","arguments":"{\"city\":\"Oslo\"}","call_id":"call_r26fc01","name":"get_weather"}`
	final := `{"id":"resp_r26fc0001","object":"response","created_at":1795511200,"status":"incomplete","error":null,"incomplete_details":{"reason":"content_filter"},"model":"gpt-4.1-mini-2025-04-14","output":[` + item + `],"parallel_tool_calls":true,"usage":{"input_tokens":60,"output_tokens":9,"total_tokens":69}}`
	stream := sseEvent("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_r26fc0001","object":"response","created_at":1795511200,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1-mini-2025-04-14","output":[],"parallel_tool_calls":true,"usage":null}}`) +
		sseEvent("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_r26fc01","type":"function_call","status":"in_progress","arguments":"","call_id":"call_r26fc01","name":"get_weather"}}`) +
		sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_r26fc01","output_index":0,"delta":"{\"city\":\"Oslo\"}"}`) +
		sseEvent("response.incomplete", `{"type":"response.incomplete","sequence_number":3,"response":`+final+`}`)
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(stream)})
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	msg, f, ended := gatewayFold(t, evs)
	want := []wantCall{{"call_r26fc01", "get_weather", `{"city":"Oslo"}`, false, "cut"}}
	checkCalls(t, msg, ended, want)
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "incomplete/content_filter")

	usrv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(final)})
	res, err := newTestProvider(t, kOpenAI, usrv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	checkCalls(t, res.Message, map[string]string{"call_r26fc01": "cut"}, want)
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "incomplete/content_filter")
	for _, m := range []*llmrelayv1.ResponseMeta{f.Meta, res.Meta} {
		if !hasWarning(m, cutCallWarning("call_r26fc01", "a content filter")) {
			t.Errorf("warnings %q", m.GetWarnings())
		}
	}
}
