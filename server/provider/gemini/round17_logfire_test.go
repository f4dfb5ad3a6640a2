package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17: pydantic/logfire's live Gemini cassettes (testdata/README.md,
// "Round 17"): google-adk against generativelanguage.googleapis.com, with
// the API's refusals of a thinking spelling a model generation does not
// take and of penalties, and google-genai's response-schema answer. The
// expectations are read off the recordings by hand.

// round17Recordings are the recordings the round17_*_test.go files replay.
var round17Recordings = []string{
	"real_logfire_adk_thinking_budget_gemini_2", "real_logfire_adk_thinking_level_gemini_3",
	"real_logfire_adk_gemini_2_refuses_level_error", "real_logfire_adk_gemini_3_refuses_zero_budget_error",
	"real_logfire_adk_penalty_error", "real_logfire_adk_renamed_tool_1", "real_logfire_adk_renamed_tool_2",
	"real_logfire_genai_response_schema", "real_logfire_adk_every_setting",
	"real_mirascope_google_audio", "real_mirascope_google_thinking_stream_1", "real_mirascope_google_thinking_stream_2",
	"real_mirascope_google_parallel_tools_stream_1", "real_mirascope_google_parallel_tools_stream_2",
}

// r17Camel renames the snake_case keys the Python SDK wrote
// ("thinking_budget", "parameters_json_schema") to the lowerCamelCase we
// send: the API takes a proto field under either spelling. Values are
// left alone, so the names inside a schema's "properties" are kept.
func r17Camel(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			parts := strings.Split(k, "_")
			for i := 1; i < len(parts); i++ {
				if parts[i] != "" {
					parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
				}
			}
			if k == "properties" {
				out[k] = e
				if m, ok := e.(map[string]any); ok {
					props := make(map[string]any, len(m))
					for name, s := range m {
						props[name] = r17Camel(s)
					}
					out[k] = props
				}
				continue
			}
			out[strings.Join(parts, "")] = r17Camel(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r17Camel(e)
		}
		return out
	}
	return v
}

// r17JSON decodes a JSON text into a value.
func r17JSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// r17Ext is meta.extended as a map.
func r17Ext(m *llmrelayv1.ResponseMeta) map[string]any { return m.GetExtended().AsMap() }

// The adk agent's requests, as the cassettes recorded them (the YAML
// decoded; the SDK's key spelling and order).
const (
	r17AdkSayHelloSystem = "Answer in one word.\n\nYou are an agent. Your internal name is \"checkout\"."
	// The first interaction of test_a_gemini_2_model_asks_for_thinking_as_a_budget_and_a_gemini_3_model_as_a_level.
	r17AdkBudgetRequest = `{"contents": [{"parts": [{"text": "Say hello."}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Answer in one word.\n\nYou are an agent. Your internal name is \"checkout\"."}], "role": "user"}, "generationConfig": {"thinkingConfig": {"thinking_budget": 0}}}`
	// Its second interaction.
	r17AdkLevelRequest = `{"contents": [{"parts": [{"text": "Say hello."}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Answer in one word.\n\nYou are an agent. Your internal name is \"checkout\"."}], "role": "user"}, "generationConfig": {"thinkingConfig": {"thinking_level": "MINIMAL"}}}`
)

// r17SayHello is the adk agent's "Say hello." call to model with
// reasoning_effort NONE.
func r17SayHello(model string) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model,
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text(r17AdkSayHelloSystem)),
			msg(llmrelayv1.Role_ROLE_USER, text("Say hello.")),
		},
		Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE},
	}
}

// r17CompareRequest checks the contents, the system instruction's parts
// and the generationConfig we sent against a recorded request the API
// answered with a 200. adk also gave systemInstruction the role "user";
// ours sends none, as the API documents it.
func r17CompareRequest(t *testing.T, sent []byte, recorded string) {
	t.Helper()
	got, want := r17JSON(t, sent), r17Camel(r17JSON(t, []byte(recorded))).(map[string]any)
	if !jsonEqual(got["contents"], want["contents"]) {
		t.Errorf("contents\n got %v\nwant %v", got["contents"], want["contents"])
	}
	gs, _ := got["systemInstruction"].(map[string]any)
	ws, _ := want["systemInstruction"].(map[string]any)
	if !jsonEqual(gs["parts"], ws["parts"]) || gs["role"] != nil {
		t.Errorf("systemInstruction %v, want the parts of %v without a role", gs, ws)
	}
}

// TestRound17ThinkingPerGeneration: adk asks gemini-2.5-flash-lite for no
// thinking as a budget (thinkingBudget 0) and gemini-3.5-flash-lite as a
// level (MINIMAL); the API answered both with a 200. reasoning_effort NONE
// builds the same two requests (the level in lower case, as the API
// reference writes it). The answers: "Hello." in 2 tokens after 23, no
// thought tokens; Gemini 3's text carries a thoughtSignature, kept as a
// text-less reasoning part after the text; serviceTier "standard" in the
// body and in the X-Gemini-Service-Tier header.
func TestRound17ThinkingPerGeneration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, model, recorded, respID, sig string
		level                              string
	}{
		{name: "real_logfire_adk_thinking_budget_gemini_2", model: "gemini-2.5-flash-lite", recorded: r17AdkBudgetRequest,
			respID: "Puuhasj2L_uez7IPz8r7wAg"},
		{name: "real_logfire_adk_thinking_level_gemini_3", model: "gemini-3.5-flash-lite", recorded: r17AdkLevelRequest,
			respID: "P-uhauejB7fiz7IP7MaD6Q8", level: "MINIMAL",
			sig: "El4KXAERTTIPhV8BFIe47r2JldliH4XeyUb64JVzS2Q0ZVNI+jIxxEaCMBlZ25VYIQCdN4vthDcjZXYrdQg+irkhHPgIVN5N6XL0WtesQ5WatViEbMie6bt7Ji89BbQX"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, tc.name)
			res, err := p.Generate(context.Background(), r17SayHello(tc.model))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderResult(t, res))
			c := srv.Last(t)
			if c.Path != "/v1beta/models/"+tc.model+":generateContent" {
				t.Errorf("request to %s", c.Path)
			}
			r17CompareRequest(t, c.Body, tc.recorded)
			gc, _ := r17JSON(t, c.Body)["generationConfig"].(map[string]any)
			want, _ := r17Camel(r17JSON(t, []byte(tc.recorded))).(map[string]any)["generationConfig"].(map[string]any)
			if tc.level == "" {
				if !jsonEqual(gc, want) {
					t.Errorf("generationConfig %v, want %v", gc, want)
				}
			} else {
				tcfg, _ := gc["thinkingConfig"].(map[string]any)
				if lv, _ := tcfg["thinkingLevel"].(string); len(gc) != 1 || len(tcfg) != 1 || !strings.EqualFold(lv, tc.level) {
					t.Errorf("generationConfig %v, want %v", gc, want)
				}
			}

			parts := []*llmrelayv1.Part{text("Hello.")}
			if tc.sig != "" {
				parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: tc.sig}}})
			}
			if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, parts...); !proto.Equal(res.Message, want) {
				t.Errorf("message\n got %v\nwant %v", res.Message, want)
			}
			m := res.Meta
			if m.GetResponseId() != tc.respID || m.GetResolvedModel() != tc.model || m.GetServiceTier() != "standard" ||
				m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
				len(m.GetWarnings()) != 0 || m.GetProviderRequestId() != "" {
				t.Errorf("meta %v", m)
			}
			if want := (&llmrelayv1.Usage{InputTokens: 23, OutputTokens: 2, TotalTokens: 25}); !proto.Equal(m.GetUsage(), want) {
				t.Errorf("usage %v, want %v", m.GetUsage(), want)
			}
			if got, want := r17Ext(m)["usage_details"], map[string]any{"promptTokensDetails.TEXT": 23.0, "serviceTier": "standard"}; !jsonEqual(got, want) {
				t.Errorf("usage details %v, want %v", got, want)
			}
		})
	}
}

// r17AdkEverySettingRequest is the request of
// test_every_setting_the_gemini_row_claims_is_accepted_by_the_api, which
// the API answered with a 200.
const r17AdkEverySettingRequest = `{"contents": [{"parts": [{"text": "Say hello."}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Answer in one word.\n\nYou are an agent. Your internal name is \"checkout\"."}], "role": "user"}, "generationConfig": {"temperature": 0.2, "topP": 0.9, "topK": 20, "maxOutputTokens": 256, "stopSequences": ["NEVERMIND"], "seed": 7, "thinkingConfig": {"thinking_budget": 0}}}`

// TestRound17EverySetting: every sampling setting adk sent
// gemini-2.5-flash-lite at once (temperature, topP, topK,
// maxOutputTokens, stopSequences, seed, and no thinking as a zero budget)
// was accepted; ours builds the same generationConfig from the same
// options and reasoning_effort NONE. The answer is "Hello." (2 tokens
// after 23, STOP), response id PuuhaqvPF_fQz7IPqPLjmQI.
func TestRound17EverySetting(t *testing.T) {
	t.Parallel()
	const name = "real_logfire_adk_every_setting"
	temp, topP, topK, maxTok, seed := 0.2, 0.9, int32(20), int32(256), int64(7)
	req := r17SayHello("gemini-2.5-flash-lite")
	req.Options = &llmrelayv1.GenerationOptions{Temperature: &temp, TopP: &topP, TopK: &topK, MaxTokens: &maxTok,
		Stop: []string{"NEVERMIND"}, Seed: &seed, ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE}
	p, srv := replay(t, name)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	sent := srv.Last(t).Body
	r17CompareRequest(t, sent, r17AdkEverySettingRequest)
	want := r17Camel(r17JSON(t, []byte(r17AdkEverySettingRequest))).(map[string]any)["generationConfig"]
	if got := r17JSON(t, sent)["generationConfig"]; !jsonEqual(got, want) {
		t.Errorf("generationConfig\n got %v\nwant %v", got, want)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello.")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "PuuhaqvPF_fQz7IPqPLjmQI" || m.GetResolvedModel() != "gemini-2.5-flash-lite" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 ||
		!proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 23, OutputTokens: 2, TotalTokens: 25}) {
		t.Errorf("meta %v", m)
	}
}

// TestRound17ThinkingRefusals: what the API said to the thinking spelling
// a generation does not take, and to a penalty. Each is a 400
// INVALID_ARGUMENT with the message alone: no ErrorInfo (so no reason
// after the status), no BadRequest (no field named), no RetryInfo, no
// request id (the API sends none); an invalid request (gRPC
// InvalidArgument), whole message, not to be retried. The answers carry
// X-Gemini-Service-Tier: standard, which is the failed call's service
// tier (it was dropped before). Unary and streamed alike (an error status
// returns no stream).
func TestRound17ThinkingRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, msg string }{
		// gemini-2.5-flash-lite asked for thinking_level LOW.
		{"real_logfire_adk_gemini_2_refuses_level_error", "Thinking level is not supported for this model."},
		// gemini-3.5-flash-lite asked for thinking_budget 0: a message that
		// names nothing (see TestRound17Gemini3ZeroBudget).
		{"real_logfire_adk_gemini_3_refuses_zero_budget_error", "Request contains an invalid argument."},
		// gemini-2.5-flash-lite asked for presencePenalty 0.1.
		{"real_logfire_adk_penalty_error", "Penalty is not enabled for models/gemini-2.5-flash-lite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, streaming := range []bool{false, true} {
				p, _ := replay(t, tc.name)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), r17SayHello("gemini-2.5-flash-lite"))
					if s != nil {
						t.Fatal("Stream returned a stream with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), r17SayHello("gemini-2.5-flash-lite"))
				}
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("stream=%v: err = %v, want *provider.Error", streaming, err)
				}
				if pe.Provider != "gemini" || pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 ||
					pe.Code != "INVALID_ARGUMENT" || pe.Message != tc.msg || pe.Param != "" || pe.RequestID != "" ||
					pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryUnsaid {
					t.Errorf("stream=%v: got %+v", streaming, pe)
				}
				if m := pe.Meta; m.GetServiceTier() != "standard" || m.GetRateLimit() != nil || m.GetResponseId() != "" || m.GetUsage() != nil {
					t.Errorf("stream=%v: error meta %v, want the service tier alone", streaming, m)
				}
				if !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("stream=%v: error text %q lost the provider's message", streaming, err)
				}
			}
		})
	}
}

// TestRound17Gemini3ZeroBudget: a thinking_budget of 0 on a Gemini 3 model
// is what gemini-3.5-flash-lite answered with a bare "Request contains an
// invalid argument." (real_logfire_adk_gemini_3_refuses_zero_budget_error):
// Gemini 3 cannot switch thinking off. The adapter now refuses it before
// sending, naming the option; before, the request went out and the caller
// got the API's message, which names nothing. On gemini-2.5-flash-lite the
// same budget is sent as asked (the API took it:
// real_logfire_adk_thinking_budget_gemini_2), and on Gemini 3 any other
// budget is sent too.
func TestRound17Gemini3ZeroBudget(t *testing.T) {
	t.Parallel()
	withBudget := func(model string, b int32) *provider.Request {
		req := r17SayHello(model)
		req.Options = &llmrelayv1.GenerationOptions{}
		req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: &b}}}
		return req
	}
	p, srv := replay(t, "real_logfire_adk_gemini_3_refuses_zero_budget_error")
	_, err := p.Generate(context.Background(), withBudget("gemini-3.5-flash-lite", 0))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 0 ||
		pe.Param != "provider_options.gemini.thinking_budget" || !strings.Contains(pe.Message, "cannot switch thinking off") {
		t.Fatalf("Generate: %v (%+v), want a local invalid request naming thinking_budget", err, pe)
	}
	if s, err := p.Stream(context.Background(), withBudget("gemini-3.5-flash-lite", 0)); s != nil || !errors.As(err, &pe) || pe.Param != "provider_options.gemini.thinking_budget" {
		t.Fatalf("Stream: %v, want the same refusal", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the API", n)
	}

	p, srv = replay(t, "real_logfire_adk_thinking_budget_gemini_2")
	if _, err := p.Generate(context.Background(), withBudget("gemini-2.5-flash-lite", 0)); err != nil {
		t.Fatalf("gemini-2.5-flash-lite: %v", err)
	}
	r17CompareRequest(t, srv.Last(t).Body, r17AdkBudgetRequest)
	if gc := r17JSON(t, srv.Last(t).Body)["generationConfig"]; !jsonEqual(gc, map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 0}}) {
		t.Errorf("generationConfig %v, want thinkingBudget 0 as adk sent it", gc)
	}

	p, srv = replay(t, "real_logfire_adk_thinking_level_gemini_3")
	if _, err := p.Generate(context.Background(), withBudget("gemini-3.5-flash-lite", -1)); err != nil {
		t.Fatalf("gemini-3.5-flash-lite, dynamic budget: %v", err)
	}
	if gc := r17JSON(t, srv.Last(t).Body)["generationConfig"]; !jsonEqual(gc, map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": -1}}) {
		t.Errorf("generationConfig %v, want thinkingBudget -1", gc)
	}
}

// The recorded requests of
// test_a_renamed_tool_is_called_by_its_managed_name_and_dispatched_by_the_code_name.
const (
	r17AdkToolSystem   = "Use your tools to answer. Give the answer in one short sentence.\n\nYou are an agent. Your internal name is \"checkout\"."
	r17AdkToolParams   = `{"properties": {"city": {"title": "City", "type": "string", "description": "The city to look up, e.g. 'London'."}}, "required": ["city"], "title": "get_weatherParams", "type": "object"}`
	r17AdkToolRequest1 = `{"contents": [{"parts": [{"text": "What is the weather in Paris?"}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Use your tools to answer. Give the answer in one short sentence.\n\nYou are an agent. Your internal name is \"checkout\"."}], "role": "user"}, "tools": [{"functionDeclarations": [{"description": "Look up the current forecast for a city.", "name": "lookup_forecast", "parameters_json_schema": {"properties": {"city": {"title": "City", "type": "string", "description": "The city to look up, e.g. 'London'."}}, "required": ["city"], "title": "get_weatherParams", "type": "object"}}]}], "generationConfig": {}}`
	r17AdkToolRequest2 = `{"contents": [{"parts": [{"text": "What is the weather in Paris?"}], "role": "user"}, {"parts": [{"functionCall": {"args": {"city": "Paris"}, "name": "lookup_forecast"}}], "role": "model"}, {"parts": [{"functionResponse": {"name": "lookup_forecast", "response": {"result": "It is 17 degrees and raining in Paris."}}}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Use your tools to answer. Give the answer in one short sentence.\n\nYou are an agent. Your internal name is \"checkout\"."}], "role": "user"}, "tools": [{"functionDeclarations": [{"description": "Look up the current forecast for a city.", "name": "lookup_forecast", "parameters_json_schema": {"properties": {"city": {"title": "City", "type": "string", "description": "The city to look up, e.g. 'London'."}}, "required": ["city"], "title": "get_weatherParams", "type": "object"}}]}], "generationConfig": {}}`
)

// TestRound17AdkToolRoundTrip: gemini-2.5-flash-lite calls lookup_forecast
// (no id, no signature: a Gemini 2 model) with finishReason STOP and
// finishMessage "Model generated function call(s).": a tool-call finish,
// the id derived from the responseId, 89 in, 15 out. Our request carries
// adk's contents, system instruction and tool (generationConfig: adk sent
// {}, ours none). From the answer and the tool's result we build adk's
// second request, which the API answered: the model turn's functionCall
// without id or signature, the result as {"result": …} by name. That
// answer is a candidate whose content has a role and no parts, STOP,
// 129 prompt tokens and no candidatesTokenCount: an empty assistant
// message, 0 out, no warning.
func TestRound17AdkToolRoundTrip(t *testing.T) {
	t.Parallel()
	const first, second = "real_logfire_adk_renamed_tool_1", "real_logfire_adk_renamed_tool_2"
	const respID = "POuhasnJLOOi6dkPhMKQqAE"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text(r17AdkToolSystem)),
			msg(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "lookup_forecast", Description: "Look up the current forecast for a city.", Parameters: r17AdkToolParams}},
	}
	p, srv := replay(t, first)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	sent := srv.Last(t).Body
	r17CompareRequest(t, sent, r17AdkToolRequest1)
	if got, want := r17JSON(t, sent)["tools"], r17Camel(r17JSON(t, []byte(r17AdkToolRequest1))).(map[string]any)["tools"]; !jsonEqual(got, want) {
		t.Errorf("tools\n got %v\nwant %v", got, want)
	}
	if gc, ok := r17JSON(t, sent)["generationConfig"]; ok {
		t.Errorf("generationConfig %v, want none (adk's is empty)", gc)
	}
	call := toolCallPart(generatedID(respID, 0, "", ""), "lookup_forecast", `{"city":"Paris"}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, call); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != respID || m.GetResolvedModel() != "gemini-2.5-flash-lite" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got, _ := r17Ext(m)[extFinishMessage].(string); got != "Model generated function call(s)." {
		t.Errorf("finish message %q", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 89, OutputTokens: 15, TotalTokens: 104}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}

	// The follow-up.
	req.Messages = append(req.Messages, res.Message,
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetToolCall().GetCallId(), "It is 17 degrees and raining in Paris.")))
	next, srv2 := replay(t, second)
	res2, err := next.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderResult(t, res2))
	r17CompareRequest(t, srv2.Last(t).Body, r17AdkToolRequest2)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant an empty assistant message", res2.Message)
	}
	m2 := res2.Meta
	if m2.GetResponseId() != "PeuhavSIAci0qtsPn8iHuQg" || m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		m2.GetProviderFinishReason() != "STOP" || m2.GetToolCallCount() != 0 || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 129, TotalTokens: 129}); !proto.Equal(m2.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m2.GetUsage(), want)
	}
}

// TestRound17ResponseSchema: gemini-2.5-flash asked (by google-genai, with
// an OpenAPI responseSchema) for an object: the JSON as one text part,
// byte for byte; 58 thought tokens the caller never asked for, counted in
// the output (13 + 58 = 71) and in totalTokenCount (2 + 13 + 58 = 73); no
// serviceTier in the body nor header (the recording is from August 2025).
func TestRound17ResponseSchema(t *testing.T) {
	t.Parallel()
	const name = "real_logfire_genai_response_schema"
	p, _ := replay(t, name)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Hi"))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
			Type:   llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"properties":{"answer":{"title":"Answer","type":"string"}},"required":["answer"],"title":"ResponseData","type":"object"}`,
		}},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(`{"answer":"Hello! How can I help you today?"}`)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "92CnaIKJCczj7M8P27z38Ag" || m.GetResolvedModel() != "gemini-2.5-flash" || m.GetServiceTier() != "" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 2, OutputTokens: 13 + 58, TotalTokens: 73, ReasoningTokens: 58}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}
