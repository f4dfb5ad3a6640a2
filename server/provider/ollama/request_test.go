package ollama

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func imagePart(img *llmrelayv1.Image) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: img}}
}

func TestBuildChatRequestInvalid(t *testing.T) {
	t.Parallel()
	user := func(parts ...*llmrelayv1.Part) []*llmrelayv1.Message {
		return []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, parts...)}
	}
	cases := []struct {
		name  string
		req   *provider.Request
		param string
		msg   string
	}{
		{"http image url", &provider.Request{Model: "llava", Messages: user(text("x"),
			imagePart(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/cat.png"}}))},
			"messages[0].parts[1].image.url", "messages[0].parts[1]: image URLs are not supported by Ollama"},
		{"bad data url", &provider.Request{Model: "llava", Messages: user(
			imagePart(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "data:image/png;base64,@@@"}}))},
			"messages[0].parts[0].image.url", "not valid base64"},
		{"empty image data", &provider.Request{Model: "llava", Messages: user(
			imagePart(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{}}))},
			"messages[0].parts[0].image.data", "empty image data"},
		// The server refuses files first (no ollama format has the documents
		// or audio capability); the adapter refuses them too, never drops.
		{"pdf file", &provider.Request{Model: "llava", Messages: user(text("x"), &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{
			File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF")}, MimeType: "application/pdf"}}})},
			"messages[0].parts[1].file", "takes no document or audio input"},
		{"no model", &provider.Request{Messages: user(text("x"))}, "model", "model is required"},
		{"no role", &provider.Request{Model: "m", Messages: []*llmrelayv1.Message{{Parts: []*llmrelayv1.Part{text("x")}}}}, "messages[0].role", "no supported role"},
		{"tool call in user message", &provider.Request{Model: "m", Messages: user(&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{Name: "f"}}})},
			"messages[0].parts[0]", "only allowed in assistant messages"},
		{"reasoning in user message", &provider.Request{Model: "m", Messages: user(&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: "hmm"}}})},
			"messages[0].parts[0]", "reasoning is only allowed in assistant messages"},
		{"empty part", &provider.Request{Model: "m", Messages: user(&llmrelayv1.Part{})}, "messages[0].parts[0]", "empty or unknown part"},
		{"tool choice unknown function", &provider.Request{Model: "m", Messages: user(text("x")), Tools: []*llmrelayv1.Tool{{Name: "a"}},
			Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "b"}}}},
			"options.tool_choice.function_name", `"b"`},
		{"schema format without schema", &provider.Request{Model: "m", Messages: user(text("x")),
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA}}},
			"options.response_format.schema", "needs a schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := buildChatRequest(tc.req, false)
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *provider.Error", err)
			}
			if pe.Kind != provider.KindInvalidRequest || pe.Param != tc.param || !strings.Contains(pe.Message, tc.msg) {
				t.Errorf("got kind=%v param=%q msg=%q", pe.Kind, pe.Param, pe.Message)
			}
		})
	}
}

// TestBuildChatRequestOptions covers every option mapping at once.
func TestBuildChatRequestOptions(t *testing.T) {
	t.Parallel()
	extra, err := jsonString(map[string]any{"options": map[string]any{"mirostat": 2}, "raw": true, "stream": false})
	if err != nil {
		t.Fatal(err)
	}
	schema := jsonText(t, map[string]any{"type": "object", "properties": map[string]any{"age": map[string]any{"type": "integer"}}})
	req := &provider.Request{
		Model: "llama3.1",
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_USER, Name: "alice", Parts: []*llmrelayv1.Part{text("Ollama is 22 <years> old & busy."), text("Answer as JSON.")}},
			msg(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "c1", Name: "lookup", Arguments: `{"q": "x"`}}}),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "c1", Content: "boom", IsError: true}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "unknown", Content: "?"}}}),
		},
		Tools: []*llmrelayv1.Tool{{Name: "lookup", Strict: ptr(true)}, {Name: "other"}},
		Options: &llmrelayv1.GenerationOptions{
			Temperature: ptr(0.0), PresencePenalty: ptr(0.5), FrequencyPenalty: ptr(0.25),
			ReasoningEffort:   llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH,
			ToolChoice:        &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "lookup"}},
			ResponseFormat:    &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema},
			ParallelToolCalls: ptr(false),
		},
		ProviderOptions: &llmrelayv1.ProviderOptions{
			Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{
				RepeatPenalty: ptr(1.1), KeepAlive: durationpb.New(90 * time.Minute),
			}},
			ExtraBody: extra,
		},
	}
	b, err := buildChatRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.body) {
		t.Fatalf("body is not JSON: %s", b.body)
	}
	out := providertest.IndentJSON(b.body)
	out = append(out, "\nwarnings:\n"...)
	for _, w := range b.warnings {
		out = append(out, w+"\n"...)
	}
	providertest.Golden(t, td("request_options.golden"), out)
}

func TestToolChoiceNoneOmitsTools(t *testing.T) {
	t.Parallel()
	req := toolsRequest(t)
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	b, err := buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b.body), `"tools"`) {
		t.Errorf("tools sent with tool_choice none: %s", b.body)
	}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	if b, err = buildChatRequest(req, false); err != nil || len(b.warnings) != 1 || !strings.Contains(string(b.body), `"tools"`) {
		t.Errorf("required: %v %v", err, b)
	}
}

func TestThinkMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		effort llmrelayv1.ReasoningEffort
		think  *bool
		want   string
	}{
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, nil, ""},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, nil, `"think":false`},
		// Levels are gpt-oss's (reasoning19_test.go); other models get true.
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL, nil, `"think":true`},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM, nil, `"think":true`},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, ptr(false), `"think":false`},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, ptr(true), `"think":true`},
	}
	for _, tc := range cases {
		req := &provider.Request{Model: "m", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("x"))},
			Options: &llmrelayv1.GenerationOptions{ReasoningEffort: tc.effort}}
		if tc.think != nil {
			req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: tc.think}}}
		}
		b, err := buildChatRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(b.body), `"think"`)
		if (tc.want == "" && has) || (tc.want != "" && !strings.Contains(string(b.body), tc.want)) {
			t.Errorf("effort %v think %v: body %s, want %s", tc.effort, tc.think, b.body, tc.want)
		}
	}
}

func TestFormatKeepAlive(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		5 * time.Minute: "5m", time.Hour: "1h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s",
		0: "0s", -time.Second: "-1s", 1500 * time.Millisecond: "1.5s", 2*time.Hour + 5*time.Second: "2h0m5s",
	}
	for d, want := range cases {
		got, err := formatKeepAlive(durationpb.New(d))
		if err != nil || got != want {
			t.Errorf("formatKeepAlive(%v) = %q, %v; want %q", d, got, err, want)
		}
	}
	if _, err := formatKeepAlive(&durationpb.Duration{Seconds: 1, Nanos: -1}); err == nil {
		t.Error("invalid duration accepted")
	}
}

func TestDecodeDataURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"data:image/png;base64,aGVsbG8=", "hello", true},
		{"data:image/png;base64,aGVsbG8", "hello", true},
		{"data:image/png;BASE64,aGVs\nbG8=", "hello", true},
		{"data:text/plain,hi%20there", "hi there", true},
		{"data:image/png;base64,", "", false},
		{"data:image/png;base64", "", false},
		{"data:,%zz", "", false},
	}
	for _, tc := range cases {
		got, err := decodeDataURL(tc.in)
		if (err == nil) != tc.ok || string(got) != tc.want {
			t.Errorf("decodeDataURL(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func TestMergeExtraBody(t *testing.T) {
	t.Parallel()
	extra, err := jsonString(map[string]any{"model": "override", "z": 1, "a": "x"})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := mergeExtraBody([]byte(`{"model":"m","stream":false,"n":1.50}`), extra)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","stream":false,"n":1.50,"a":"x","z":1}`; string(out) != want { // model is the adapter's
		t.Errorf("merged = %s, want %s", out, want)
	}
}

func TestBuildEmbedRequestInvalid(t *testing.T) {
	t.Parallel()
	for _, req := range []*provider.EmbedRequest{
		nil, {Inputs: []string{"x"}}, {Model: "m"}, {Model: "m", Inputs: []string{"x"}, Dimensions: ptr(int32(0))},
	} {
		if _, _, err := buildEmbedRequest(req); err == nil {
			t.Errorf("buildEmbedRequest(%v) accepted", req)
		}
	}
}

// TestBuildChatRequestReasoning covers reasoning sent back: the text of an
// assistant's reasoning parts becomes its thinking (several joined); what
// Ollama cannot take (signatures, redacted reasoning, tool call
// signatures, e.g. from a conversation begun with another provider) is
// dropped with a warning each.
func TestBuildChatRequestReasoning(t *testing.T) {
	t.Parallel()
	reasoning := func(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
	}
	req := &provider.Request{
		Model: "gpt-oss:20b",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("Look up x.")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT,
				reasoning(&llmrelayv1.Reasoning{Text: "I should look x up."}),
				text("Looking it up."),
				reasoning(&llmrelayv1.Reasoning{Text: "Then y.", Signature: "EqQBCkYIBxgCKkDsig", Id: "rs_1"}),
				reasoning(&llmrelayv1.Reasoning{Redacted: true, Signature: "EmwKAhgBEgy3va3pzix"}),
				reasoning(&llmrelayv1.Reasoning{}),
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: "c1", Name: "lookup", Arguments: `{"q":"x"}`, ArgumentsValid: true, Signature: "CiQBjz1rX9sig",
				}}}),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "c1", Content: "42"}}}),
			// Thinking alone still makes an assistant message.
			msg(llmrelayv1.Role_ROLE_ASSISTANT, reasoning(&llmrelayv1.Reasoning{Text: "x is 42."})),
			msg(llmrelayv1.Role_ROLE_USER, text("And?")),
		},
	}
	b, err := buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var body chatRequest
	if err := json.Unmarshal(b.body, &body); err != nil {
		t.Fatal(err)
	}
	if got, want := body.Messages[1].Thinking, "I should look x up.\n\nThen y."; got != want {
		t.Errorf("thinking = %q, want %q", got, want)
	}
	if len(body.Messages) != 5 || body.Messages[3].Role != "assistant" || body.Messages[3].Thinking != "x is 42." {
		t.Errorf("messages = %+v", body.Messages)
	}
	if len(b.warnings) != 3 {
		t.Errorf("warnings = %q, want 3", b.warnings)
	}
	for _, secret := range []string{"EqQBCkYIBxgCKkDsig", "EmwKAhgBEgy3va3pzix", "CiQBjz1rX9sig", "rs_1"} {
		if strings.Contains(string(b.body), secret) {
			t.Errorf("%s sent to Ollama", secret)
		}
	}
	out := providertest.IndentJSON(b.body)
	out = append(out, "\nwarnings:\n"...)
	for _, w := range b.warnings {
		out = append(out, w+"\n"...)
	}
	providertest.Golden(t, td("request_reasoning.golden"), out)
}
