package openai

// Azure OpenAI's recorded answers from the Azure SDK for .NET's test-proxy
// session records (testdata/README.md, "Real recordings from the Azure SDK
// for .NET's session records"): a deployment that does not exist, the
// content filter verdicts of the 2023 preview API versions (the prompt's
// as prompt_annotations), and legacy function_call answers, unary and
// streamed. Every expectation below is read from the recording.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// azsdkSafeVerdicts are the four categories every 2023 record of the .NET
// SDK gives the prompt: all safe, none filtered.
const azsdkSafeVerdicts = `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},` +
	`"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`

// azsdkPromptVerdicts is the records' prompt_annotations list.
const azsdkPromptVerdicts = `[{"prompt_index":0,"content_filter_results":` + azsdkSafeVerdicts + `}]`

// azsdkFunctionArgs are the arguments of the get_future_temperature calls
// the records hold (the unary answer's, and the streamed fragments joined).
const azsdkFunctionArgs = "{\n  \"locationName\": \"Honolulu\",\n  \"date\": \"next Thursday\"\n}"

// azsdkWeatherTool is the function of ChatFunctionsTests, as the SDK
// sent it in "functions".
func azsdkWeatherTool(t testing.TB) *llmrelayv1.Tool {
	return &llmrelayv1.Tool{
		Name:        "get_future_temperature",
		Description: "requests the anticipated future temperature at a provided location to help inform advice about topics like choice of attire",
		Parameters: jsonText(t, map[string]any{"type": "object", "properties": map[string]any{
			"locationName": map[string]any{"type": "string", "description": "the name or brief description of a location for weather information"},
			"date":         map[string]any{"type": "string", "description": "the day, month, and year for which to retrieve weather information"},
		}}),
	}
}

// azsdkFunctionRequest is the first request of ChatFunctionsTests: the
// deployment gpt-4-0613, a system and a user message, the function,
// max_tokens 512.
func azsdkFunctionRequest(t testing.TB) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4-0613", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What should I wear in Honolulu next Thursday?")),
		},
		Tools:   []*llmrelayv1.Tool{azsdkWeatherTool(t)},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(512)},
	}
}

// extJSON returns meta.extended[key] as JSON with sorted keys ("" when
// absent).
func extJSON(t testing.TB, m *llmrelayv1.ResponseMeta, key string) string {
	t.Helper()
	v, ok := m.GetExtended().GetFields()[key]
	if !ok {
		return ""
	}
	raw, err := protojson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return sortedJSON(t, string(raw))
}

// sortedJSON re-encodes JSON with sorted keys and no spaces.
func sortedJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// wantAzsdkMeta checks the facts every 2023 record states: the response
// id, the model, the creation time, the apim-request-id and the prompt's
// verdicts (sent as prompt_annotations, reported as prompt_filter_results).
func wantAzsdkMeta(t *testing.T, m *llmrelayv1.ResponseMeta, id, model string, created int64, requestID, deployment string) {
	t.Helper()
	if m.GetResponseId() != id || m.GetResolvedModel() != model || m.GetCreateTime().GetSeconds() != created || m.GetProviderRequestId() != requestID {
		t.Errorf("meta id=%q model=%q created=%d request_id=%q, want %q %q %d %q",
			m.GetResponseId(), m.GetResolvedModel(), m.GetCreateTime().GetSeconds(), m.GetProviderRequestId(), id, model, created, requestID)
	}
	if got, want := extJSON(t, m, extPromptFilterResults), sortedJSON(t, azsdkPromptVerdicts); got != want {
		t.Errorf("prompt_filter_results %s, want %s (the recorded prompt_annotations)", got, want)
	}
	if got := extJSON(t, m, extAzureDeployment); got != `"`+deployment+`"` {
		t.Errorf("azure_deployment %s, want %q", got, deployment)
	}
}

func TestAzsdkRecordedUnary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		req   func(testing.TB) *provider.Request
		check func(t *testing.T, res *provider.Result)
	}{
		{"real_azsdk_chat_content_filter_categories", func(testing.TB) *provider.Request {
			return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-35-turbo-0613", Format: "openai-chat",
				Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("How do I cook a bell pepper?"))}, Options: &llmrelayv1.GenerationOptions{}}
		}, func(t *testing.T, res *provider.Result) {
			m := res.Meta
			wantAzsdkMeta(t, m, "chatcmpl-7bDzsDQz5c9V08nU7MaN7rHENBSVp", "gpt-35-turbo", 1689106296, "441dc2d5-dc87-4810-a6a4-96670da27be7", "gpt-35-turbo-0613")
			if got, want := extJSON(t, m, extContentFilterResults), sortedJSON(t, azsdkSafeVerdicts); got != want {
				t.Errorf("content_filter_results %s, want %s", got, want)
			}
			if !proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 16, OutputTokens: 261, TotalTokens: 277}) {
				t.Errorf("usage %v, want 16 + 261 = 277", m.GetUsage())
			}
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" {
				t.Errorf("finish %v %q", m.GetFinishReason(), m.GetProviderFinishReason())
			}
			if got := extJSON(t, m, extProcessingMS); got != "6586.5047" {
				t.Errorf("openai_processing_ms %s, want 6586.5047", got)
			}
			parts := res.Message.GetParts()
			if len(parts) != 1 || len(parts[0].GetText()) != 1058 ||
				parts[0].GetText()[:45] != "There are several ways to cook a bell pepper:" || !containsAll(parts[0].GetText(), "400°F", "Sautéing", "Drain and serve.") {
				t.Errorf("parts %v", parts)
			}
			wantWarnings(t, m)
		}},
		{"real_azsdk_simple_function_call_1", azsdkFunctionRequest, func(t *testing.T, res *provider.Result) {
			m := res.Meta
			wantAzsdkMeta(t, m, "chatcmpl-7bu6VUMQ9LjdYIX1VWPFZkWBYNypn", "gpt-4", 1689268155, "8203c5a8-d5c9-46b1-b899-b284ae1c0b34", "gpt-4-0613")
			if got := extJSON(t, m, extContentFilterResults); got != "{}" {
				t.Errorf("content_filter_results %s, want the recorded {}", got)
			}
			if !proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 108, OutputTokens: 26, TotalTokens: 134}) {
				t.Errorf("usage %v, want 108 + 26 = 134", m.GetUsage())
			}
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "function_call" || m.GetToolCallCount() != 1 {
				t.Errorf("finish %v %q, %d calls", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount())
			}
			parts := res.Message.GetParts()
			want := &llmrelayv1.ToolCall{CallId: "call_idx0", Name: "get_future_temperature", Arguments: azsdkFunctionArgs, ArgumentsValid: true}
			if len(parts) != 1 || !proto.Equal(parts[0].GetToolCall(), want) {
				t.Errorf("parts %v, want the one call %v", parts, want)
			}
			wantWarnings(t, m, "legacy function_call without an id; keyed as call_idx0")
		}},
		// The Java SDK's record keeps the body as a string: Azure's bytes
		// (April 2023, api-version 2023-03-15-preview): no filter
		// annotations at all, and retry-after: 0 on a 200.
		{"real_azsdk_java_chat_completions", func(testing.TB) *provider.Request {
			return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-35-turbo", Format: "openai-chat",
				Messages: []*llmrelayv1.Message{
					msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant. You will talk like a pirate.")),
					msgOf(llmrelayv1.Role_ROLE_USER, text("Can you help me?")),
					msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Of course, me hearty! What can I do for ye?")),
					msgOf(llmrelayv1.Role_ROLE_USER, text("What's the best way to train a parrot?")),
				}, Options: &llmrelayv1.GenerationOptions{}}
		}, func(t *testing.T, res *provider.Result) {
			m := res.Meta
			if m.GetResponseId() != "chatcmpl-7AMMHwd64TiSwbLf4XaV5UnvK0gtJ" || m.GetResolvedModel() != "gpt-35-turbo" ||
				m.GetCreateTime().GetSeconds() != 1682703581 || m.GetProviderRequestId() != "37559ab0-00d4-40e7-823c-026e5767a2cc" {
				t.Errorf("meta %v", m)
			}
			if !proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 65, OutputTokens: 224, TotalTokens: 289}) {
				t.Errorf("usage %v, want 65 + 224 = 289", m.GetUsage())
			}
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" {
				t.Errorf("finish %v %q", m.GetFinishReason(), m.GetProviderFinishReason())
			}
			for _, k := range []string{extPromptFilterResults, extContentFilterResults, extContentFilterResult} {
				if got := extJSON(t, m, k); got != "" {
					t.Errorf("%s %s: the answer had none", k, got)
				}
			}
			if m.GetRateLimit() != nil {
				t.Errorf("rate limit %v from a retry-after: 0 on a 200", m.GetRateLimit())
			}
			text := res.Message.GetParts()[0].GetText()
			if len(res.Message.GetParts()) != 1 || len(text) != 989 || !strings.HasPrefix(text, "Arrrr, training a parrot") ||
				!containsAll(text, "parrot's cage", `"step up" or "come here"`, "wonderful things!") {
				t.Errorf("parts %v", res.Message.GetParts())
			}
			wantWarnings(t, m)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kAzure, srv.URL).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestAzsdkFunctionCallFollowUp replays both answers of
// SimpleFunctionCallWorks(Azure): the call, then the text written from
// the function's result. The record's second request, which the live API
// accepted, sent the call back as the assistant's function_call (content
// null) and the result as a "function" message; we send the call as a
// tool call under the id we gave it and the result as a "tool" message
// naming that id: the arguments and the result must be the recorded
// bytes.
func TestAzsdkFunctionCallFollowUp(t *testing.T) {
	t.Parallel()
	srv := providertest.Replay(t, providertest.Load(t, td("real_azsdk_simple_function_call_1.http")),
		providertest.Load(t, td("real_azsdk_simple_function_call_2.http")))
	p := newTestProvider(t, kAzure, srv.URL)
	req := azsdkFunctionRequest(t)
	first, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	const result = `{"temperature":"31","unit":"celsius"}` // the record's function message
	call := first.Message.GetParts()[0].GetToolCall()
	follow := proto.Clone(req.Messages[0]).(*llmrelayv1.Message)
	req2 := &provider.Request{Protocol: req.Protocol, Model: req.Model, Format: req.Format, Tools: req.Tools, Options: req.Options,
		Messages: []*llmrelayv1.Message{follow, req.Messages[1], first.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: call.GetCallId(), Name: call.GetName(), Content: result}}})}}
	res, err := p.Generate(context.Background(), req2)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[1].Path != "/openai/deployments/gpt-4-0613/chat/completions" {
		t.Errorf("path %s", reqs[1].Path)
	}
	var body struct {
		Messages []struct {
			Role       string  `json:"role"`
			Content    *string `json:"content"`
			ToolCallID string  `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		MaxTokens *int `json:"max_tokens"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 4 {
		t.Fatalf("%d messages: %s", len(body.Messages), reqs[1].Body)
	}
	a, r := body.Messages[2], body.Messages[3]
	if a.Role != "assistant" || a.Content != nil || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_idx0" || a.ToolCalls[0].Type != "function" ||
		a.ToolCalls[0].Function.Name != "get_future_temperature" || a.ToolCalls[0].Function.Arguments != azsdkFunctionArgs {
		t.Errorf("assistant turn %+v, want the recorded call with its arguments byte for byte and content null", a)
	}
	if r.Role != "tool" || r.ToolCallID != "call_idx0" || r.Content == nil || *r.Content != result {
		t.Errorf("result turn %+v, want the recorded result for call_idx0", r)
	}
	if body.MaxTokens == nil || *body.MaxTokens != 512 {
		t.Errorf("max_tokens %v, want the recorded 512", body.MaxTokens)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("real_azsdk_simple_function_call_2.golden"), renderResult(t, res))
	m := res.Meta
	wantAzsdkMeta(t, m, "chatcmpl-7bu6XKIC9xyAQdgOdZAgzXgnKmKdq", "gpt-4", 1689268157, "1fc31cbc-4a2d-42ec-814a-a2a9a99e12e8", "gpt-4-0613")
	if got, want := extJSON(t, m, extContentFilterResults), sortedJSON(t, azsdkSafeVerdicts); got != want {
		t.Errorf("content_filter_results %s, want %s", got, want)
	}
	if !proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 153, OutputTokens: 67, TotalTokens: 220}) {
		t.Errorf("usage %v, want 153 + 67 = 220", m.GetUsage())
	}
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetToolCallCount() != 0 {
		t.Errorf("finish %v, %d calls", m.GetFinishReason(), m.GetToolCallCount())
	}
	const answer = "Given that the temperature in Honolulu next Thursday is expected to be around 31 degrees Celsius, I'd recommend light clothing. " +
		"A T-shirt, shorts, and sandals would be appropriate. Don't forget your sunglasses, and if you plan on spending a lot of time outside, " +
		"you might want to have a hat and sunscreen as well."
	if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != answer {
		t.Errorf("parts %v", parts)
	}
	wantWarnings(t, m)
}

// TestAzsdkStreamingFunctionCall replays StreamingFunctionCallWorks(Azure):
// the prompt's verdicts in a chunk with empty id, model and choices, then
// a legacy function_call streamed in twenty deltas (the name, then
// nineteen argument fragments), each choice with an empty
// content_filter_results, finish "function_call" on an empty delta, no
// usage, [DONE].
func TestAzsdkStreamingFunctionCall(t *testing.T) {
	t.Parallel()
	const name = "real_azsdk_streaming_function_call"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kAzure, srv.URL).Stream(context.Background(), azsdkFunctionRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td(name+".request.golden"), providertest.RequestGolden(srv.Last(t), authHeaders...))
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	m := f.Meta
	wantAzsdkMeta(t, m, "chatcmpl-7bvafhr7vNYEjDJFR32HAxXZr4sVs", "gpt-4", 1689273869, "be3f364b-4d07-498c-9497-417e4f61d0fd", "gpt-4-0613")
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "function_call" || m.GetToolCallCount() != 1 {
		t.Errorf("finish %v %q, %d calls", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount())
	}
	if m.GetUsage() != nil {
		t.Errorf("usage %v: the stream sent none", m.GetUsage())
	}
	if got := extJSON(t, m, extContentFilterResults); got != "" {
		t.Errorf("content_filter_results %s: every chunk's was empty", got)
	}
	want := &llmrelayv1.ToolCall{CallId: "call_idx0", Name: "get_future_temperature", Arguments: azsdkFunctionArgs, ArgumentsValid: true}
	if parts := f.Message.GetParts(); len(parts) != 1 || !proto.Equal(parts[0].GetToolCall(), want) {
		t.Errorf("parts %v, want the one call %v", parts, want)
	}
	var fragments int
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCall && ev.ToolCall.Arguments != "" {
			fragments++
		}
	}
	if fragments != 19 {
		t.Errorf("%d argument fragments relayed, the stream sent 19", fragments)
	}
	wantWarnings(t, m, "legacy function_call without an id; keyed as call_idx0")
}

// TestAzsdkBadDeployment replays BadDeploymentFails(Azure): a deployment
// the resource does not have. Azure answers 404 DeploymentNotFound; the
// request id is the apim-request-id.
func TestAzsdkBadDeployment(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("real_azsdk_bad_deployment_404.http"))
		p := newTestProvider(t, kAzure, srv.URL)
		req := simpleRequest("BAD_DEPLOYMENT_ID")
		var err error
		if streaming {
			var s provider.Stream
			if s, err = p.Stream(context.Background(), req); s != nil {
				t.Fatal("stream returned with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("streaming=%v: %v is not a *provider.Error", streaming, err)
		}
		const msg = "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."
		if pe.Provider != "azure" || pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Code != "DeploymentNotFound" || pe.Message != msg ||
			pe.RequestID != "b809d191-7db1-40ca-8c2f-a6c8e3fdf134" || pe.RetryAfter != 0 || pe.Param != "" {
			t.Errorf("streaming=%v: %s", streaming, renderErr(err))
		}
		if pe.Extended[extAzureDeployment] != "BAD_DEPLOYMENT_ID" {
			t.Errorf("streaming=%v: extended %v lacks the deployment", streaming, pe.Extended)
		}
		if got := srv.Last(t).Path; got != "/openai/deployments/BAD_DEPLOYMENT_ID/chat/completions" {
			t.Errorf("path %s", got)
		}
	}
}
