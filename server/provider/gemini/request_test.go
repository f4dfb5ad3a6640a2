package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func encode(t *testing.T, req *provider.Request) (string, error) {
	t.Helper()
	if req.Options == nil {
		req.Options = &llmrelayv1.GenerationOptions{}
	}
	if req.Model == "" {
		req.Model = "gemini-2.5-flash"
	}
	p := &Provider{apiKey: testKey}
	b, err := p.encodeRequest(req)
	return string(b), err
}

func user(parts ...*llmrelayv1.Part) []*llmrelayv1.Message {
	return []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, parts...)}
}

func imagePartOf(img *llmrelayv1.Image) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: img}}
}

func TestRequestEncoding(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	cases := []struct {
		name string
		req  *provider.Request
		want []string // substrings of the body
		not  []string
	}{
		{"all generation options", &provider.Request{Messages: user(text("hi")), Options: &llmrelayv1.GenerationOptions{
			Temperature: f(0.5), TopP: f(0.9), TopK: i32(40), MaxTokens: i32(100), Stop: []string{"END"}, Seed: i64(7),
			PresencePenalty: f(0.1), FrequencyPenalty: f(0.2), ParallelToolCalls: b(false),
		}}, []string{`"generationConfig":{"stopSequences":["END"],"maxOutputTokens":100,"temperature":0.5,"topP":0.9,"topK":40,"seed":7,"presencePenalty":0.1,"frequencyPenalty":0.2}`},
			[]string{"candidateCount", "parallel"}},
		{"no options, no generationConfig", &provider.Request{Messages: user(text("hi"))}, []string{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`}, nil},
		{"json object", &provider.Request{Messages: user(text("hi")), Options: &llmrelayv1.GenerationOptions{
			ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}}},
			[]string{`"responseMimeType":"application/json"`}, []string{"responseJsonSchema"}},
		{"json schema", &provider.Request{Messages: user(text("hi")), Options: &llmrelayv1.GenerationOptions{
			ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
				Schema: jsonText(t, map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}})}}},
			[]string{`"responseMimeType":"application/json","responseJsonSchema":{"properties":{"a":{"type":"string"}},"type":"object"}`}, nil},
		{"text format sends nothing", &provider.Request{Messages: user(text("hi")), Options: &llmrelayv1.GenerationOptions{
			ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT}}},
			nil, []string{"responseMimeType", "generationConfig"}},
		{"effort none on 2.5 disables thinking", &provider.Request{Messages: user(text("hi")), Options: &llmrelayv1.GenerationOptions{
			ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE}}, []string{`"thinkingConfig":{"thinkingBudget":0}`}, nil},
		{"effort high on gemini 3", &provider.Request{Model: "models/gemini-3-pro-preview", Messages: user(text("hi")), Options: &llmrelayv1.GenerationOptions{
			ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH}}, []string{`"thinkingConfig":{"thinkingLevel":"high"}`}, []string{"thinkingBudget"}},
		{"explicit budget wins over effort", &provider.Request{Model: "gemini-3-pro-preview", Messages: user(text("hi")),
			Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{
				ThinkingBudget: i32(2048), IncludeThoughts: b(true)}}}},
			[]string{`"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}`}, []string{"thinkingLevel"}},
		{"tool choice none", &provider.Request{Messages: user(text("hi")), Tools: []*llmrelayv1.Tool{{Name: "f"}}, Options: &llmrelayv1.GenerationOptions{
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}}},
			[]string{`"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`}, nil},
		{"tool choice required", &provider.Request{Messages: user(text("hi")), Tools: []*llmrelayv1.Tool{{Name: "f"}}, Options: &llmrelayv1.GenerationOptions{
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}}},
			[]string{`"functionCallingConfig":{"mode":"ANY"}`}, nil},
		{"extra body wins", &provider.Request{Messages: user(text("hi")), ProviderOptions: &llmrelayv1.ProviderOptions{
			ExtraBody: jsonText(t, map[string]any{"cachedContent": "cachedContents/abc", "generationConfig": map[string]any{"candidateCount": 1}})}},
			[]string{`"cachedContent":"cachedContents/abc"`, `"generationConfig":{"candidateCount":1}`}, nil},
		{"system messages joined", &provider.Request{Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("a")), msg(llmrelayv1.Role_ROLE_SYSTEM, text("b")), msg(llmrelayv1.Role_ROLE_USER, text("hi"))}},
			[]string{`"systemInstruction":{"parts":[{"text":"a"},{"text":"b"}]}`}, nil},
		{"gemini call id sent back", &provider.Request{Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("hi")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Let me look."), toolCallPart("8f3k2j", "lookup", ``)),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: "8f3k2j", Content: "boom", IsError: true}}}),
			msg(llmrelayv1.Role_ROLE_USER, text("and?")),
		}}, []string{
			`{"role":"model","parts":[{"text":"Let me look."},{"functionCall":{"id":"8f3k2j","name":"lookup","args":{}}}]}`,
			`{"role":"user","parts":[{"functionResponse":{"id":"8f3k2j","name":"lookup","response":{"error":"boom"}}}]},{"role":"user","parts":[{"text":"and?"}]}`,
		}, []string{"thoughtSignature"}},
		{"named result without a known call", &provider.Request{Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: "call_abc", Name: "lookup", Content: `[1,2]`}}})}},
			[]string{`{"functionResponse":{"id":"call_abc","name":"lookup","response":{"result":"[1,2]"}}}`}, nil},
		{"error result as JSON", &provider.Request{Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				Name: "lookup", Content: `{"code": 7}`, IsError: true}}})}},
			[]string{`"response":{"error":{"code":7}}`}, nil},
		{"image bytes sniffed", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: pngBytes}}))},
			[]string{`"inlineData":{"mimeType":"image/png"`}, nil},
		{"url-encoded data URL", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "data:image/svg+xml,%3Csvg%2F%3E"}}))},
			[]string{`"inlineData":{"mimeType":"image/svg+xml","data":"PHN2Zy8+"}`}, nil},
		{"url with explicit mime", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{
			Url: "https://generativelanguage.googleapis.com/v1beta/files/abc123"}, MimeType: "image/webp"}))},
			[]string{`"fileData":{"mimeType":"image/webp","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc123"}`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, err := encode(t, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid([]byte(body)) {
				t.Fatalf("invalid JSON: %s", body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %s\n%s", w, body)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("body has %s\n%s", n, body)
				}
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  *provider.Request
		msg  string
	}{
		{"url without known type", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/img?id=3&key=secret"}}))}, "set mime_type"},
		{"ftp url", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "ftp://example.com/a.png"}}))}, "http(s) or data URL"},
		{"bad data url", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "data:image/png;base64,@@@"}}))}, "bad base64"},
		{"bytes not an image", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("hello")}}))}, "need a mime_type"},
		{"no image source", &provider.Request{Messages: user(imagePartOf(&llmrelayv1.Image{}))}, "neither url nor data"},
		{"unknown call id", &provider.Request{Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("nope", "x"))}}, `call_id "nope"`},
		{"non-object arguments", &provider.Request{Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("a", "f", `[1`))}}, "not a JSON object"},
		{"image in system", &provider.Request{Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_SYSTEM, imagePartOf(&llmrelayv1.Image{}))}}, "only contain text"},
		{"tool call in user message", &provider.Request{Messages: user(toolCallPart("a", "f", "{}"))}, "not allowed"},
		{"no role", &provider.Request{Messages: []*llmrelayv1.Message{{Parts: []*llmrelayv1.Part{text("x")}}}}, "unsupported role"},
		{"schema missing", &provider.Request{Messages: user(text("x")), Options: &llmrelayv1.GenerationOptions{
			ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA}}}, "needs a schema"},
		{"tool without name", &provider.Request{Messages: user(text("x")), Tools: []*llmrelayv1.Tool{{}}}, "no name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := encode(t, tc.req)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Provider != "gemini" {
				t.Fatalf("err = %v, want invalid request", err)
			}
			if !strings.Contains(pe.Message, tc.msg) {
				t.Errorf("message %q lacks %q", pe.Message, tc.msg)
			}
			if strings.Contains(pe.Message, "secret") {
				t.Errorf("message leaks URL query: %q", pe.Message)
			}
		})
	}
}

// TestIsGemini3Plus: the generation that decides the thought-signature
// placeholder is the one the thinking mapping reads: the -latest aliases
// (Gemini 3 models today) were pre-3 here and 3+ there.
func TestIsGemini3Plus(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]bool{
		"gemini-3-pro-preview": true, "models/gemini-3.1-flash": true, "gemini-10-ultra": true,
		"gemini-flash-latest": true, "gemini-pro-latest": true, "gemini-flash-lite-latest": true, "models/gemini-flash-latest": true,
		"publishers/google/models/gemini-3-flash-preview@default": true, "gemini-live-3.1-flash-preview": true,
		"gemini-2.5-flash": false, "gemini-2.0-flash-lite": false, "gemini-exp-1206": false, "gemma-3-27b-it": false,
		"tunedModels/my-model-3": false, "": false, "gemini-": false,
	} {
		if got := isGemini3Plus(model); got != want {
			t.Errorf("isGemini3Plus(%q) = %v", model, got)
		}
		if levels := parseGemini(model).thinking() == thinkLevel; levels != isGemini3Plus(model) {
			t.Errorf("%q: thinkingLevel %v, but Gemini 3+ %v", model, levels, isGemini3Plus(model))
		}
	}
}

func TestGeneratedIDs(t *testing.T) {
	t.Parallel()
	a, b := generatedID("r1", 0, "f", "{}"), generatedID("r1", 1, "f", "{}")
	c := generatedID("r2", 0, "f", "{}")
	if a == b || a == c || !isGeneratedID(a) || a != generatedID("r1", 0, "g", "x") {
		t.Errorf("ids %s %s %s", a, b, c)
	}
	if generatedID("", 0, "f", "{}") == generatedID("", 0, "f", `{"a":1}`) {
		t.Error("fallback ids ignore the arguments")
	}
	for _, id := range []string{"call_abc", "gcall_XYZ", "gcall_", "gcall_0123456789abcdef0123456g", "8f3k2j"} {
		if isGeneratedID(id) {
			t.Errorf("isGeneratedID(%q)", id)
		}
	}
}

// TestReasoningRequest covers how assistant Reasoning parts and call
// signatures are sent back, and what is dropped with a warning.
func TestReasoningRequest(t *testing.T) {
	t.Parallel()
	call := func(id, sig string) *llmrelayv1.Part {
		p := toolCallPart(id, "f", `{}`)
		p.GetToolCall().Signature = sig
		return p
	}
	r := func(text, sig string) *llmrelayv1.Part {
		return reasoningPart(&llmrelayv1.Reasoning{Text: text, Signature: sig})
	}
	cases := []struct {
		name     string
		model    string
		parts    []*llmrelayv1.Part
		want     string // the model content's parts
		warnings []string
	}{
		{"thought with signature", "gemini-2.5-flash", []*llmrelayv1.Part{r("plan", "S"), text("a")},
			`[{"text":"plan","thought":true,"thoughtSignature":"S"},{"text":"a"}]`, nil},
		{"unsigned thought", "gemini-2.5-flash", []*llmrelayv1.Part{r("plan", ""), text("a")},
			`[{"text":"plan","thought":true},{"text":"a"}]`, nil},
		{"signature re-attached to the text before it", "gemini-2.5-flash", []*llmrelayv1.Part{text("a"), r("", "S")},
			`[{"text":"a","thoughtSignature":"S"}]`, nil},
		{"signature without a text before it", "gemini-2.5-flash", []*llmrelayv1.Part{r("", "S"), text("a")},
			`[{"text":"","thought":true,"thoughtSignature":"S"},{"text":"a"}]`, nil},
		{"signature after a call stays its own part", "gemini-2.5-flash", []*llmrelayv1.Part{call("c1", "C"), r("", "S")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"C"},{"text":"","thought":true,"thoughtSignature":"S"}]`, nil},
		{"second signature not merged into a signed text", "gemini-2.5-flash", []*llmrelayv1.Part{text("a"), r("", "S"), r("", "T")},
			`[{"text":"a","thoughtSignature":"S"},{"text":"","thought":true,"thoughtSignature":"T"}]`, nil},
		{"empty reasoning sends nothing", "gemini-2.5-flash", []*llmrelayv1.Part{r("", ""), text("a")},
			`[{"text":"a"}]`, nil},
		{"redacted and foreign items dropped", "gemini-2.5-flash", []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "data"}),
			reasoningPart(&llmrelayv1.Reasoning{Id: "rs_1", Text: "sum", Signature: "enc"}), text("a")},
			`[{"text":"a"}]`, []string{"message 1 part 0: redacted reasoning dropped", `message 1 part 1: reasoning item "rs_1" dropped`}},
		{"gemini 3: real signature, no placeholder", "gemini-3-pro-preview", []*llmrelayv1.Part{call("c1", "C"), call("c2", "")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"C"},{"functionCall":{"id":"c2","name":"f","args":{}}}]`, nil},
		{"gemini 3: placeholder only on an unsigned first call", "gemini-3-pro-preview", []*llmrelayv1.Part{call("c1", ""), call("c2", "D")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"id":"c2","name":"f","args":{}},"thoughtSignature":"D"}]`, nil},
		{"gemini 2.5: no placeholder", "gemini-2.5-flash", []*llmrelayv1.Part{call("c1", "")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}}}]`, nil},
		// The -latest aliases point at Gemini 3 models: they need the
		// placeholder as the versioned ids do (they got none).
		{"gemini-flash-latest: placeholder", "gemini-flash-latest", []*llmrelayv1.Part{call("c1", "")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]`, nil},
		{"models/gemini-pro-latest: placeholder", "models/gemini-pro-latest", []*llmrelayv1.Part{call("c1", "")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]`, nil},
		{"gemini-flash-lite-latest: placeholder", "gemini-flash-lite-latest", []*llmrelayv1.Part{call("c1", "")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]`, nil},
		{"vertex publisher path: placeholder", "publishers/google/models/gemini-3-flash-preview@default", []*llmrelayv1.Part{call("c1", "")},
			`[{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wire, warnings, err := buildRequest(&provider.Request{Model: tc.model, Options: &llmrelayv1.GenerationOptions{},
				Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("q")), msg(llmrelayv1.Role_ROLE_ASSISTANT, tc.parts...)}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(wire.Contents[1].Parts)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("parts\n got %s\nwant %s", got, tc.want)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %q", warnings, tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %d = %q, want prefix %q", i, warnings[i], w)
				}
			}
		})
	}
	// Reasoning is an assistant part only.
	_, err := encode(t, &provider.Request{Messages: user(reasoningPart(&llmrelayv1.Reasoning{Text: "x"}))})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest {
		t.Errorf("reasoning in a user message: %v", err)
	}
}

// TestStreamRequestWarnings: warnings from encoding the request come first
// on the stream.
func TestStreamRequestWarnings(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "stream_thinking_tools")
	req := generateCases(t)["thinking_tools"]
	req.Messages = append([]*llmrelayv1.Message{
		msg(llmrelayv1.Role_ROLE_USER, text("hi")),
		msg(llmrelayv1.Role_ROLE_ASSISTANT, reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "d"}), text("hello")),
	}, req.Messages...)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := s.Recv()
	if err != nil || ev.Kind != provider.EventMeta || len(ev.Meta.GetWarnings()) != 1 ||
		!strings.HasPrefix(ev.Meta.GetWarnings()[0], "message 1 part 0: redacted reasoning dropped") {
		t.Fatalf("first event %v %v", ev, err)
	}
	if _, end := drain(t, s); end != io.EOF {
		t.Errorf("end %v", end)
	}
}
