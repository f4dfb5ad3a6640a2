package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 22 (mga): maruel/genai's go-vcr recordings of Alibaba Cloud's
// DashScope compatible mode (providers/alibaba/testdata/TestClient/{US,Intl}/
// Scoreboard/..., February 2026; testdata/README.md, "Round 22:
// maruel/genai's recordings").

const (
	r22mgaDashScopeUS   = "https://dashscope-us.aliyuncs.com/compatible-mode/v1"
	r22mgaDashScopeIntl = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
)

// TestRound22mgaQwenUnaryThinks: two unary calls that set no
// enable_thinking, which DashScope answered with the model's reasoning:
// qwen3-30b-a3b on dashscope-us ("Hello.", 16 in, 169 out of which 162
// reasoning) and qwen3.5-35b-a3b on dashscope-intl ("Hello", 18 in, 356
// out of which 350 reasoning, text_tokens in both details, the reasoning
// ending "Final choice: Hello.cw" as sent). Both have system_fingerprint
// null and no request id (DashScope's success bodies carry none, the
// cassettes no x-request-id). The adapter used to send enable_thinking
// false on every unary call that asked nothing, from the 2025 reports of
// DashScope refusing a non-streaming call that thinks: it turned off the
// reasoning these models give by default, unary only. A call that asks
// nothing now sends nothing, as these did.
func TestRound22mgaQwenUnaryThinks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, base, model, id string
		created               int64
		usage                 *llmrelayv1.Usage
		answer, reasonStart   string
		reasonEnd             string
	}{
		{"real_maruel_qwen3_30b_a3b_text", r22mgaDashScopeUS, "qwen3-30b-a3b", "chatcmpl-GmPWHbfsBfd6SWN5", 1772142580,
			r22mgaUsage(16, 169, 185, 162, 0), "Hello.", `Okay, the user said "Say hello. Use only one word."`, "Alright, that should do it."},
		{"real_maruel_qwen35_35b_a3b_text", r22mgaDashScopeIntl, "qwen3.5-35b-a3b", "chatcmpl-8b6742d7-239c-937e-a9d9-668f2923a8b6", 1772145389,
			r22mgaUsage(18, 356, 374, 350, 0), "Hello", "Thinking Process:\n\n1.  **Analyze the Request:**", "Final choice: Hello.cw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, body := r22Unary(t, tc.name, tc.base, r22Ask(tc.model, "Say hello. Use only one word."), false)
			r22Meta(t, res.Meta, tc.id, "", tc.model, tc.created, tc.usage, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			r, a := r21cParts(t, res.Message)
			if a != tc.answer || !strings.HasPrefix(r, tc.reasonStart) || !strings.HasSuffix(r, tc.reasonEnd) {
				t.Errorf("reasoning %q, answer %q", r, a)
			}
			if _, ok := body["enable_thinking"]; ok || body["model"] != tc.model {
				t.Errorf("request %v (the recorded one had no enable_thinking)", body)
			}
			if len(res.Meta.GetWarnings()) != 0 {
				t.Errorf("warnings %v", res.Meta.GetWarnings())
			}
		})
	}
}

// TestRound22mgaQwenToolLoop: qwen3-30b-a3b on dashscope-us, thinking by
// default, a tool allowed (auto), unary: content "" beside the reasoning
// and one call square_root({"number": 132413}) with DashScope's id
// call_3863d2ccc7044a60bbf910 (index 0), finish tool_calls, 209 in, 145
// out (116 reasoning), Content-Length 1000 as recorded. The recorded
// second request, which DashScope answered, sends the call back with its
// id and no reasoning_content (DashScope does not take Qwen's reasoning
// back; maruel/genai drops it) and no content: ours must too. Its answer:
// "363.89" with a reasoning that checks the result, 83 in, 328 out (317
// reasoning).
func TestRound22mgaQwenToolLoop(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))
	const callID = "call_3863d2ccc7044a60bbf910"
	res, body := r22Unary(t, "real_maruel_qwen3_30b_a3b_sqrt_1", r22mgaDashScopeUS,
		r22mgaTools("qwen3-30b-a3b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, false, user), false)
	r22Meta(t, res.Meta, "chatcmpl-c_EZ2SC8L8Mhy7iX", "", "qwen3-30b-a3b", 1772142734,
		r22mgaUsage(209, 145, 354, 116, 0), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 2 || !strings.HasPrefix(parts[0].GetReasoning().GetText(), "Okay, the user wants me to calculate the square root of 132413") {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` {
		t.Errorf("call %v", c)
	}
	if _, ok := body["enable_thinking"]; ok || body["tool_choice"] != "auto" {
		t.Errorf("request %v", body)
	}

	res2, body2 := r22Unary(t, "real_maruel_qwen3_30b_a3b_sqrt_2", r22mgaDashScopeUS,
		r22mgaTools("qwen3-30b-a3b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, false, user, res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, "363.89"))), false)
	asst := r22mgaSent(t, body2, 3, 1)
	calls, _ := asst["tool_calls"].([]any)
	c0, _ := calls[0].(map[string]any)
	fn, _ := c0["function"].(map[string]any)
	if _, ok := asst["reasoning_content"]; ok || len(calls) != 1 || c0["id"] != callID || fn["arguments"] != `{"number": 132413}` {
		t.Errorf("assistant %v", asst)
	}
	if c, ok := asst["content"]; ok && c != nil && c != "" {
		t.Errorf("assistant content %v (the recorded request had none)", c)
	}
	if tool := r22mgaSent(t, body2, 3, 2); tool["tool_call_id"] != callID || tool["content"] != "363.89" {
		t.Errorf("tool message %v", tool)
	}
	if body2["tool_choice"] != "none" {
		t.Errorf("tool_choice %v", body2["tool_choice"])
	}
	// One warning: the reasoning part not sent back.
	if w := res2.Meta.GetWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "1 reasoning part(s) of earlier assistant turns not sent") {
		t.Errorf("warnings %v", w)
	}
	r22Meta(t, res2.Meta, "chatcmpl-03Bpao8BxI0Loc34", "", "qwen3-30b-a3b", 1772142737,
		r22mgaUsage(83, 328, 411, 317, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res2.Message); a != "363.89" || !strings.HasSuffix(r, "Alright, I'll present that as the answer.") {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
}

// TestRound22mgaQwenRequiredRefused: the same model with a call required
// while thinking: 400 "<400> InternalError.Algo.InvalidParameter: The
// tool_choice parameter does not support being set to required or object
// in thinking mode", code invalid_parameter_error, the body's id and
// request_id ixv8GZ_SpiR8Voog: an invalid request, the message whole, the
// request id from the body.
func TestRound22mgaQwenRequiredRefused(t *testing.T) {
	t.Parallel()
	e := r22Err(t, "real_maruel_qwen3_30b_a3b_required_thinking_error", r22mgaDashScopeUS,
		r22mgaTools("qwen3-30b-a3b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, false, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))))
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_parameter_error" || e.RequestID != "ixv8GZ_SpiR8Voog" ||
		e.Message != "<400> InternalError.Algo.InvalidParameter: The tool_choice parameter does not support being set to required or object in thinking mode" {
		t.Errorf("error %+v", e)
	}
}

// TestRound22mgaQwenUnaryThinkingRefusedResent: where DashScope refuses a
// unary call that thinks (the 400 of dialect_dashscope_err_400_enable_thinking,
// the body tencentmusic/supersonic#2355 quotes for qwen3-32b on
// dashscope.aliyuncs.com), the call that asked nothing is sent again with
// enable_thinking false, once, and the answer says so in a warning; a call
// whose enable_thinking was the caller's (an effort, extra_body) gets the
// refusal, not a resend.
func TestRound22mgaQwenUnaryThinkingRefusedResent(t *testing.T) {
	t.Parallel()
	refusal := providertest.Load(t, td("dialect_dashscope_err_400_enable_thinking.http"))
	ok := providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"choices":[{"message":{"content":"4","role":"assistant"},"finish_reason":"stop","index":0,"logprobs":null}],"object":"chat.completion",` +
			`"usage":{"prompt_tokens":14,"completion_tokens":1,"total_tokens":15},"created":1772140000,"system_fingerprint":null,"model":"qwen3-32b","id":"chatcmpl-resent"}`)}
	const cn = "https://dashscope.aliyuncs.com/compatible-mode/v1"

	srv := providertest.Replay(t, refusal, ok)
	res, err := newHostProvider(t, cn, srv.URL).Generate(context.Background(), r22Ask("qwen3-32b", "2+2?"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first, second := r20Request(t, reqs[0].Body), r20Request(t, reqs[1].Body)
	if _, set := first["enable_thinking"]; set || second["enable_thinking"] != false || second["model"] != "qwen3-32b" {
		t.Errorf("first %v, second %v", first, second)
	}
	delete(second, "enable_thinking")
	if len(first) != len(second) {
		t.Errorf("the resend changed more than enable_thinking: %v vs %v", first, second)
	}
	if res.Message.GetParts()[0].GetText() != "4" || len(res.Meta.GetWarnings()) != 1 || res.Meta.GetWarnings()[0] != warnDashScopeUnthinking {
		t.Errorf("result %v, warnings %v", res.Message, res.Meta.GetWarnings())
	}

	// Asked for explicitly: the refusal is the caller's.
	for _, mod := range []func(*provider.Request){
		func(r *provider.Request) {
			r.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
		},
		func(r *provider.Request) {
			r.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"enable_thinking":true}`}
		},
	} {
		srv := providertest.Replay(t, refusal, ok)
		req := r22Ask("qwen3-32b", "2+2?")
		mod(req)
		_, err := newHostProvider(t, cn, srv.URL).Generate(context.Background(), req)
		if e := providerError(t, err); e.Kind != provider.KindInvalidRequest || e.Code != "invalid_parameter_error" ||
			e.Message != "parameter.enable_thinking must be set to false for non-streaming calls" || e.RequestID != "53ada3be-865a-4b26-a48d-1ca6e3cf6219" || len(srv.Requests()) != 1 {
			t.Errorf("error %+v after %d requests", e, len(srv.Requests()))
		}
	}

	// Another host's 400 with the same words is not DashScope's: no resend.
	srv = providertest.Replay(t, refusal, ok)
	if _, err := newHostProvider(t, "https://api.example.com/v1", srv.URL).Generate(context.Background(), r22Ask("qwen3-32b", "2+2?")); err == nil || len(srv.Requests()) != 1 {
		t.Errorf("err %v after %d requests", err, len(srv.Requests()))
	}
}

// TestRound22mgaQwenStreamToolCall: the same model and tool streamed
// (stream_options include_usage, as maruel/genai sent it): the reasoning
// in 34 reasoning_content chunks ("Okay, the user wants me to calculate
// …the tool call.\n"), then the call call_eeff263c22094a63953cef in four
// fragments whose later ones repeat "type" with "id": "" (one chunk with
// neither finish_reason nor logprobs), making {"number": 132413}; the
// finish on an empty delta; the usage on a chunk with no choices (209 in,
// 155 out, 126 reasoning). No request id (Eagleeye-Traceid is a trace id).
func TestRound22mgaQwenStreamToolCall(t *testing.T) {
	t.Parallel()
	f, body := r21cStream(t, "real_maruel_qwen3_30b_a3b_sqrt_stream", r22mgaDashScopeUS,
		r22mgaTools("qwen3-30b-a3b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, false, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))))
	parts := f.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning().GetText(); !strings.HasPrefix(r, "Okay, the user wants me to calculate the square root of 132413 using the square_root tool.") ||
		!strings.HasSuffix(r, "Alright, let's proceed with the tool call.\n") {
		t.Errorf("reasoning %q", r)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_eeff263c22094a63953cef" || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "chatcmpl-vSxoTqInIrlBniSW", "", "qwen3-30b-a3b", 1772142601,
		r22mgaUsage(209, 155, 364, 126, 0), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if len(f.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %v", f.Meta.GetWarnings())
	}
	if _, ok := body["enable_thinking"]; ok || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v", body["stream_options"])
	}
}

// TestRound22mgaDashScopeErrors: DashScope's error answers carry their
// request id only in the body ("request_id" beside the error object; the
// cassettes have no request-id header). A stream to a model that does not
// exist: 404 model_not_found "The model `bad model` does not exist or you
// do not have access to it.", request id XQhNhmsUBb8-U6Eb: a not-found
// error, refused before the stream opens. A unary call with a key DashScope
// does not know: 401 invalid_api_key "Incorrect API key provided. For
// details, see: https://help.aliyun.com/zh/model-studio/error-code#apikey-error",
// request id LNr-lVSSiNsZr0Rc: unauthenticated.
func TestRound22mgaDashScopeErrors(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_maruel_dashscope_bad_model_stream_error.http"))
	_, err := newHostProvider(t, r22mgaDashScopeUS, srv.URL).Stream(context.Background(), r22Ask("bad model", "Tell a short joke."))
	if e := providerError(t, err); e.Kind != provider.KindNotFound || e.HTTPStatus != 404 || e.Code != "model_not_found" ||
		e.Message != "The model `bad model` does not exist or you do not have access to it." || e.RequestID != "XQhNhmsUBb8-U6Eb" {
		t.Errorf("error %+v", e)
	}
	e := r22Err(t, "real_maruel_dashscope_bad_key_error", r22mgaDashScopeUS, r22Ask("qwen3-30b-a3b", "Tell a short joke."))
	if e.Kind != provider.KindUnauthenticated || e.HTTPStatus != 401 || e.Code != "invalid_api_key" || e.RequestID != "LNr-lVSSiNsZr0Rc" ||
		e.Message != "Incorrect API key provided. For details, see: https://help.aliyun.com/zh/model-studio/error-code#apikey-error" {
		t.Errorf("error %+v", e)
	}
}
