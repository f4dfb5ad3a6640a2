package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func build(t *testing.T, req *provider.Request) (map[string]any, []string, []string, error) {
	t.Helper()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, betas, warnings, err := p.buildRequest(req, false)
	if err != nil {
		return nil, nil, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	return m, betas, warnings, nil
}

func TestBuildRequestRejects(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))
	withOpts := func(o *llmrelayv1.GenerationOptions) *provider.Request {
		return &provider.Request{Model: model, Messages: []*llmrelayv1.Message{user}, Options: o}
	}
	withMsgs := func(ms ...*llmrelayv1.Message) *provider.Request {
		return &provider.Request{Model: model, Messages: ms, Options: &llmrelayv1.GenerationOptions{}}
	}
	img := func(i *llmrelayv1.Image) *llmrelayv1.Message {
		return msgOf(llmrelayv1.Role_ROLE_USER, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: i}})
	}
	cases := []struct {
		name  string
		req   *provider.Request
		param string
	}{
		{"no model", &provider.Request{Messages: []*llmrelayv1.Message{user}}, "model"},
		{"no messages", withMsgs(), "messages"},
		{"only system", withMsgs(msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("s"))), "messages"},
		{"json schema without schema", withOpts(&llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA}}), "options.response_format.schema"},
		{"forced-tool schema not an object", withOpts(&llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: `{"type":"array"}`}}), "options.response_format.schema"},
		{"forced tool with thinking", &provider.Request{Model: model, Messages: []*llmrelayv1.Message{user},
			Options:         &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](2048)}}}}, "options.response_format"},
		{"answer tool name taken", &provider.Request{Model: model, Messages: []*llmrelayv1.Message{user},
			Tools:   []*llmrelayv1.Tool{{Name: "json_response", Parameters: `{"type":"object"}`}},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}}}, "tools[0].name"},
		{"seed", withOpts(&llmrelayv1.GenerationOptions{Seed: ptr[int64](1)}), "options.seed"},
		{"presence", withOpts(&llmrelayv1.GenerationOptions{PresencePenalty: ptr(0.5)}), "options.presence_penalty"},
		{"frequency", withOpts(&llmrelayv1.GenerationOptions{FrequencyPenalty: ptr(0.5)}), "options.frequency_penalty"},
		{"zero max tokens", withOpts(&llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](0)}), "options.max_tokens"},
		{"tool choice without tools", withOpts(&llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "f"}}}), "options.tool_choice"},
		{"image in system", withMsgs(&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{}}}}}, user), "messages[0].parts[0]"},
		{"unspecified role", withMsgs(&llmrelayv1.Message{Parts: []*llmrelayv1.Part{text("x")}}), "messages[0].role"},
		{"data without mime", withMsgs(img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte{1}}})), "messages[0].parts[0].image.mime_type"},
		{"ftp image", withMsgs(img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "ftp://x/y.png"}})), "messages[0].parts[0].image.url"},
		{"data url not base64", withMsgs(img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "data:image/png,abc"}})), "messages[0].parts[0].image.url"},
		{"data url no comma", withMsgs(img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "data:image/png;base64"}})), "messages[0].parts[0].image.url"},
		{"tool call in user message", withMsgs(msgOf(llmrelayv1.Role_ROLE_USER, toolCallPart("toolu_1", "f", "{}"))), "messages[0].parts[0]"},
		{"tool result without id", withMsgs(msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("", "x", false))), "messages[0].parts[0]"},
		{"empty part", withMsgs(msgOf(llmrelayv1.Role_ROLE_USER, &llmrelayv1.Part{})), "messages[0].parts[0]"},
	}
	for _, tc := range cases {
		_, _, _, err := build(t, tc.req)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != tc.param || pe.Provider != "anthropic" {
			t.Errorf("%s: err = %#v, want invalid request on %q", tc.name, err, tc.param)
		}
	}
}

func TestToolChoiceMapping(t *testing.T) {
	t.Parallel()
	mode := func(m llmrelayv1.ToolChoiceMode) *llmrelayv1.ToolChoice {
		return &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: m}}
	}
	cases := []struct {
		choice   *llmrelayv1.ToolChoice
		parallel *bool
		want     string
	}{
		{nil, nil, ""},
		{nil, ptr(true), ""},
		{nil, ptr(false), `{"type":"auto","disable_parallel_tool_use":true}`},
		{mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO), nil, `{"type":"auto"}`},
		{mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), ptr(false), `{"type":"any","disable_parallel_tool_use":true}`},
		{mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE), ptr(false), `{"type":"none"}`},
		{&llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}, nil, `{"type":"tool","name":"get_weather"}`},
	}
	for i, tc := range cases {
		m, _, _, err := build(t, &provider.Request{
			Model: model, Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))},
			Tools:   []*llmrelayv1.Tool{{Name: "get_weather"}},
			Options: &llmrelayv1.GenerationOptions{ToolChoice: tc.choice, ParallelToolCalls: tc.parallel},
		})
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		got := ""
		if v, ok := m["tool_choice"]; ok {
			b, _ := json.Marshal(v)
			got = string(b)
		}
		// json.Marshal of a map sorts keys; compare as maps.
		if !sameJSON(t, got, tc.want) {
			t.Errorf("%d: tool_choice = %s, want %s", i, got, tc.want)
		}
		if tools := m["tools"].([]any); tools[0].(map[string]any)["input_schema"].(map[string]any)["type"] != "object" {
			t.Errorf("%d: default input_schema missing: %v", i, tools)
		}
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	if a == "" || b == "" {
		return a == b
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestSystemBlocksAndExtraBody(t *testing.T) {
	t.Parallel()
	extra, err := jsonString(map[string]any{"max_tokens": 77, "service_tier": "standard_only"})
	if err != nil {
		t.Fatal(err)
	}
	m, betas, warnings, err := build(t, &provider.Request{
		Model: model,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("one")),
			{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("hi")}, Name: "alice"},
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("two")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT),
		},
		Options: &llmrelayv1.GenerationOptions{},
		ProviderOptions: &llmrelayv1.ProviderOptions{
			Provider:  &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{Betas: []string{"a, b", "c"}}},
			ExtraBody: extra,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, mustJSON(t, m["system"]), `[{"type":"text","text":"one"},{"type":"text","text":"two"}]`) {
		t.Errorf("system = %v", m["system"])
	}
	if m["max_tokens"] != 77.0 || m["service_tier"] != "standard_only" {
		t.Errorf("extra_body not merged: %v", m)
	}
	if strings.Join(betas, ",") != "a,b,c" {
		t.Errorf("betas = %v", betas)
	}
	// The second system message comes after the conversation began: it
	// goes to the system prompt, before every message, with a warning.
	if len(warnings) != 3 || !strings.Contains(warnings[0], "alice") || !strings.Contains(warnings[1], "messages[2]: a system message after the conversation began") ||
		!strings.Contains(warnings[2], "empty message") {
		t.Errorf("warnings = %q", warnings)
	}
	if msgs := m["messages"].([]any); len(msgs) != 1 {
		t.Errorf("messages = %v", msgs)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolInput(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]struct {
		input string
		ok    bool
	}{
		"":                    {"{}", true},
		`{ "b": 1, "a": 2 }`:  {`{"b":1,"a":2}`, true},
		`{"a": `:              {"{}", false},
		`[1,2]`:               {"{}", false},
		`"str"`:               {"{}", false},
		"  {\"x\":\n[true]} ": {`{"x":[true]}`, true},
	} {
		got, ok := toolInput(args)
		if string(got) != want.input || ok != want.ok {
			t.Errorf("toolInput(%q) = %s, %v; want %s, %v", args, got, ok, want.input, want.ok)
		}
	}
}

// TestReasoningGoesBack checks how Reasoning parts and tool call signatures
// of an assistant turn are sent: signed thinking and redacted thinking in
// their position, everything Anthropic would reject left out with a
// warning naming the part.
func TestReasoningGoesBack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		parts  []*llmrelayv1.Part
		blocks string // the assistant turn's content
		warn   string // substring of the only warning; "" for none
	}{
		{"signed thinking", []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: "plan", Signature: "EqA1"}), text("ok")},
			`[{"type":"thinking","thinking":"plan","signature":"EqA1"},{"type":"text","text":"ok"}]`, ""},
		{"empty thinking text kept", []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Signature: "EqA2"}), text("ok")},
			`[{"type":"thinking","thinking":"","signature":"EqA2"},{"type":"text","text":"ok"}]`, ""},
		{"redacted", []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "EmwK"}), text("ok")},
			`[{"type":"redacted_thinking","data":"EmwK"},{"type":"text","text":"ok"}]`, ""},
		{"position kept", []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "a", Signature: "S1"}), toolCallPart("toolu_1", "f", `{}`),
			reasoningPart(&llmrelayv1.Reasoning{Text: "b", Signature: "S2"}), toolCallPart("toolu_2", "f", `{}`),
		}, `[{"type":"thinking","thinking":"a","signature":"S1"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}},` +
			`{"type":"thinking","thinking":"b","signature":"S2"},{"type":"tool_use","id":"toolu_2","name":"f","input":{}}]`, ""},
		{"unsigned dropped", []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: "plan"}), text("ok")},
			`[{"type":"text","text":"ok"}]`, "messages[1].parts[0]: reasoning without a signature"},
		{"redacted without data dropped", []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Redacted: true}), text("ok")},
			`[{"type":"text","text":"ok"}]`, "redacted reasoning without data"},
		{"other provider's item dropped", []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Id: "rs_68af", Text: "s", Signature: "gAAAA"}), text("ok")},
			`[{"type":"text","text":"ok"}]`, `"rs_68af"`},
		{"tool call signature dropped", []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: "toolu_1", Name: "f", Arguments: `{"a":1}`, Signature: "CiQB"}}}},
			`[{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]`, "signature not sent"},
	}
	for _, tc := range cases {
		m, _, warnings, err := build(t, &provider.Request{Model: model, Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("hi")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, tc.parts...),
		}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := mustJSON(t, m["messages"].([]any)[1].(map[string]any)["content"])
		if !sameJSON(t, got, tc.blocks) {
			t.Errorf("%s: content = %s\nwant %s", tc.name, got, tc.blocks)
		}
		switch {
		case tc.warn == "" && len(warnings) != 0:
			t.Errorf("%s: warnings = %q", tc.name, warnings)
		case tc.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warn)):
			t.Errorf("%s: warnings = %q, want one with %q", tc.name, warnings, tc.warn)
		}
	}
	// Reasoning outside an assistant message is a caller error.
	_, _, _, err := build(t, &provider.Request{Model: model, Messages: []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, reasoningPart(&llmrelayv1.Reasoning{Text: "x", Signature: "S"})),
	}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "messages[0].parts[0]" {
		t.Errorf("reasoning in a user message: err = %v", err)
	}
}

// TestReasoningRoundTrip sends Generate's own answer back as history: the
// assistant turn must hold the blocks the response had, byte for byte.
func TestReasoningRoundTrip(t *testing.T) {
	t.Parallel()
	raw := providertest.Load(t, "testdata/thinking.http").Body
	res, err := parseResponse(raw, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	req := thinkingRequest(t)
	req.Messages = append(req.Messages, res.Message)
	m, _, warnings, err := build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, m["messages"].([]any)[1].(map[string]any)["content"]), mustJSON(t, resp["content"]); !sameJSON(t, got, want) || len(warnings) != 0 {
		t.Errorf("sent back:\n%s\nresponse content:\n%s\nwarnings %q", got, want, warnings)
	}
}

// TestExtraBodyCannotTurnStreamingOff: stream and model are the adapter's;
// extra_body cannot change them (a stream answered as JSON could not be
// read), and says so.
func TestExtraBodyCannotTurnStreamingOff(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := jsonString(map[string]any{"stream": false, "model": "other", "top_k": 5})
	if err != nil {
		t.Fatal(err)
	}
	body, _, warnings, err := p.buildRequest(&provider.Request{Model: model, Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))},
		Options: &llmrelayv1.GenerationOptions{}, ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: extra}}, true)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if m["stream"] != true || m["model"] != model || m["top_k"] != 5.0 {
		t.Errorf("body %s", body)
	}
	if len(warnings) != 2 {
		t.Errorf("warnings %q", warnings)
	}
}

// A tool schema without a root type gets "type":"object" first (Anthropic
// requires input_schema.type), the rest kept byte for byte; one with a
// type is sent as written.
func TestTypelessToolSchemaGetsObjectType(t *testing.T) {
	t.Parallel()
	got, _, err := convertTools([]*llmrelayv1.Tool{
		{Name: "now", Parameters: `{"properties":{},"additionalProperties":false}`},
		{Name: "add", Parameters: `{"properties":{"a":{"type":"integer"}},"type":"object"}`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got[0].InputSchema); s != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Errorf("typeless schema sent as %s", s)
	}
	if s := string(got[1].InputSchema); s != `{"properties":{"a":{"type":"integer"}},"type":"object"}` {
		t.Errorf("typed schema sent as %s", s)
	}
}

// A 200 body that is no message at all is a bad response, not an empty
// answer; a body that is a message, however bare, is read.
func TestParseResponseNotAMessage(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`{}`, `null`, `{"error":null}`, ` { } `} {
		_, err := parseResponse([]byte(raw), http.Header{})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
			t.Errorf("%s: err = %v, want a bad response", raw, err)
		}
	}
	for _, raw := range []string{`{"type":"message","content":[]}`, `{"id":"msg_01NotAMessageTest"}`, `{"content":[{"type":"text","text":"hi"}]}`} {
		if _, err := parseResponse([]byte(raw), http.Header{}); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
