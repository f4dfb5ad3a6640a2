package server_test

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// s21Answer is one answer as a unary body and as a stream of the same
// content.
type s21Answer struct {
	name          string
	format        f13Format
	unary, stream string
	tools         bool
}

func s21RespEvent(typ, body string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + body + "}\n\n"
}

// s21Answers: answers whose streams the gateway's fold (and the
// client's) must fold to the unary message.
func s21Answers() []s21Answer {
	tools := openaiChat
	tools.yaml = `providers:
  - name: up
    type: openai
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: gpt-4o-mini, capabilities: {tools: {format: openai-chat}}}
`
	resp := openaiResponses
	resp.yaml = `providers:
  - name: up
    type: openai
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: gpt-4.1, capabilities: {tools: {format: openai-responses}}}
`
	anth := anthropicFormat
	anth.yaml = `providers:
  - name: up
    type: anthropic
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: claude-sonnet-4-5, capabilities: {tools: {format: anthropic-messages}}}
`
	chunk := func(delta, finish string) string { return openaiChunk(delta, finish) }
	respItems := `[{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Think first."}]},` +
		`{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Checking."}]},` +
		`{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
		`{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","name":"get_time","arguments":"{\"city\":\"Rome\"}"}]`
	respFinal := `"response":{"id":"resp_s21","object":"response","created_at":1760433275,"model":"gpt-4.1-2025-04-14","status":"completed","output":` + respItems +
		`,"usage":{"input_tokens":24,"output_tokens":8,"total_tokens":32}}`
	return []s21Answer{
		{
			// Thinking with its signature, text, then a tool_use whose
			// input a proxy sent whole in content_block_start and again
			// in fragments.
			name: "anthropic input twice", format: anth, tools: true,
			unary: `{"model":"claude-sonnet-4-5","id":"msg_s21","type":"message","role":"assistant","content":[` +
				`{"type":"thinking","thinking":"Think.","signature":"EqQBsig"},{"type":"text","text":"Checking."},` +
				`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],` +
				`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":10}}`,
			stream: anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5","id":"msg_s21","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
				anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}`) +
				anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"Think."}`) +
				anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"signature_delta","signature":"EqQBsig"}`) +
				anthropicEvent("content_block_stop", `"index":0`) +
				anthropicEvent("content_block_start", `"index":1,"content_block":{"type":"text","text":""}`) +
				anthropicEvent("content_block_delta", `"index":1,"delta":{"type":"text_delta","text":"Checking."}`) +
				anthropicEvent("content_block_stop", `"index":1`) +
				anthropicEvent("content_block_start", `"index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}`) +
				anthropicEvent("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}`) +
				anthropicEvent("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}`) +
				anthropicEvent("content_block_stop", `"index":2`) +
				anthropicEvent("message_delta", `"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":10}`) +
				anthropicEvent("message_stop", `"x":0`),
		},
		{
			// Reasoning again after the text (reasoning_content, content,
			// reasoning_content): the fold's reasoning block is written
			// after the text part was appended. The gateway's fold
			// panicked there (a strings.Builder moved by the append).
			name: "chat reasoning after text", format: tools, tools: true,
			unary: `{"id":"chatcmpl-s21","object":"chat.completion","created":1760433164,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant",` +
				`"reasoning_content":"Think. More.","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
				`"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32}}`,
			stream: chunk(`{"role":"assistant","reasoning_content":"Think."}`, "null") +
				chunk(`{"content":"Checking."}`, "null") +
				chunk(`{"reasoning_content":" More."}`, "null") +
				chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}`, "null") +
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`, "null") +
				chunk(`{}`, `"tool_calls"`) + "data: [DONE]\n\n",
		},
		{
			// A Responses stream whose deltas name their item by neither
			// item_id nor output_index.
			name: "responses keyless deltas", format: resp, tools: true,
			unary: `{"id":"resp_s21","object":"response","created_at":1760433275,"model":"gpt-4.1-2025-04-14","status":"completed","output":` + respItems +
				`,"usage":{"input_tokens":24,"output_tokens":8,"total_tokens":32}}`,
			stream: s21RespEvent("response.created", `"response":{"id":"resp_s21","object":"response","created_at":1760433275,"model":"gpt-4.1-2025-04-14","status":"in_progress","output":[]}`) +
				s21RespEvent("response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`) +
				s21RespEvent("response.reasoning_summary_text.delta", `"summary_index":0,"delta":"Think "`) +
				s21RespEvent("response.reasoning_summary_text.delta", `"summary_index":0,"delta":"first."`) +
				s21RespEvent("response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Think first."}]}`) +
				s21RespEvent("response.output_item.added", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
				s21RespEvent("response.output_text.delta", `"content_index":0,"delta":"Check"`) +
				s21RespEvent("response.output_text.delta", `"content_index":0,"delta":"ing."`) +
				s21RespEvent("response.output_item.done", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Checking."}]}`) +
				s21RespEvent("response.output_item.added", `"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_1","name":"get_weather","arguments":""}`) +
				s21RespEvent("response.function_call_arguments.delta", `"delta":"{\"city\":"`) +
				s21RespEvent("response.function_call_arguments.delta", `"delta":"\"Paris\"}"`) +
				s21RespEvent("response.output_item.added", `"output_index":3,"item":{"id":"fc_2","type":"function_call","status":"in_progress","call_id":"call_2","name":"get_time","arguments":""}`) +
				s21RespEvent("response.function_call_arguments.delta", `"delta":"{\"city\":"`) +
				s21RespEvent("response.function_call_arguments.delta", `"delta":"\"Rome\"}"`) +
				s21RespEvent("response.completed", respFinal),
		},
	}
}

// TestClientFoldMatchesUnaryStream21: through the gateway, the Go
// client's accumulator (client.ToolsStream.Wait) folds each stream to the
// message the unary RPC returns for the same content, and the stream's
// end meta counts the same calls.
func TestClientFoldMatchesUnaryStream21(t *testing.T) {
	t.Parallel()
	for _, a := range s21Answers() {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_s21"}}
			uup := f13Serve(t, respond(200, h, a.unary))
			uc := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+a.format.yaml, uup.URL, &f13Clock{})
			req := &llmrelayv1.ToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("Weather?")}, Tools: weatherTools(t)}
			ures, err := uc.Tools(context.Background(), req)
			if err != nil {
				t.Fatalf("unary: %v", err)
			}
			sh := http.Header{"Content-Type": {"text/event-stream"}, "X-Request-Id": {"req_s21"}}
			sup := f13Serve(t, respond(200, sh, a.stream))
			sc := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+a.format.yaml, sup.URL, &f13Clock{})
			s, err := (&client.Client{Gateway: sc}).StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: req.Messages, Tools: req.Tools})
			if err != nil {
				t.Fatal(err)
			}
			msg, meta, err := s.Wait()
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if !proto.Equal(msg, ures.GetMessage()) {
				t.Errorf("client fold\n%s\nunary\n%s", protojson.Format(msg), protojson.Format(ures.GetMessage()))
			}
			if meta.GetToolCallCount() != ures.GetMeta().GetToolCallCount() || meta.GetFinishReason() != ures.GetMeta().GetFinishReason() {
				t.Errorf("stream meta %d calls %v, unary %d calls %v", meta.GetToolCallCount(), meta.GetFinishReason(),
					ures.GetMeta().GetToolCallCount(), ures.GetMeta().GetFinishReason())
			}
		})
	}
}

// TestLogprobsInFailedMetaStream21: the token logprobs of a chat stream
// that fails after its text began (an error chunk) reach the client in
// the failure's meta (FailedCallMeta, meta.extended["logprobs"]), beside
// the text already relayed; they were gathered for the finish and lost.
func TestLogprobsInFailedMetaStream21(t *testing.T) {
	t.Parallel()
	lp := func(tok string) string { return `{"token":"` + tok + `","logprob":-0.5,"bytes":[1],"top_logprobs":[]}` }
	chunk := func(tok string) string {
		return `data: {"id":"chatcmpl-s21","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + tok +
			`"},"logprobs":{"content":[` + lp(tok) + `]},"finish_reason":null}]}` + "\n\n"
	}
	body := chunk("The") + chunk(" capital") + openaiChat.errEvent
	up := f13Serve(t, respond(200, openaiChat.streamHead(1), body))
	c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+openaiChat.yaml, up.URL, &f13Clock{})
	got := readStream13(t, c)
	if got.text != "The capital" || got.err == nil {
		t.Fatalf("text %q, err %v", got.text, got.err)
	}
	m := failedMeta(t, got.err)
	v, ok := m.GetExtended().AsMap()["logprobs"].(map[string]any)
	if !ok {
		t.Fatalf("no logprobs in the failed call's meta %v", m)
	}
	content, _ := v["content"].([]any)
	if len(content) != 2 || content[0].(map[string]any)["token"] != "The" || content[1].(map[string]any)["token"] != " capital" {
		t.Errorf("logprobs %v", v)
	}
}
