package server

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestDrop21RequestFieldOf: the providers' own paths of refused fields, as
// their 400s give them (OpenAI's param, Anthropic's location before its
// message, Google's BadRequest field violation), become the request's
// field where the adapter's encoding makes it certain, and stay as they
// are where it does not.
func TestDrop21RequestFieldOf(t *testing.T) {
	t.Parallel()
	part := func(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }
	result := func(id string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id}}}
	}
	msgs := []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{part("s")}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{part("a"), part("b")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{part("c")}},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{result("1"), result("2")}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{part("d")}},
	}
	tools := []*llmrelayv1.Tool{{Name: "a"}, {Name: "b"}}
	req := func(format string, mut ...func(*provider.Request)) *provider.Request {
		r := &provider.Request{Format: format, Messages: msgs, Tools: tools, Options: &llmrelayv1.GenerationOptions{
			MaxTokens: proto.Int32(5), Stop: []string{"a", "b", "c", "d", "e"}, Temperature: proto.Float64(1),
			ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW,
			ResponseFormat:  &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: `{}`},
		}, ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{TopLogprobs: proto.Int32(30)}}}}
		for _, m := range mut {
			m(r)
		}
		return r
	}
	budget := func(r *provider.Request) {
		r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: proto.Int32(0)}}}
	}
	extra := func(r *provider.Request) {
		r.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"stop":["x"]}`}
	}
	cases := []struct {
		req         *provider.Request
		param, want string
	}{
		{req("openai-chat"), "stop", "options.stop"},
		{req("openai-chat"), "stop[4]", "options.stop[4]"},
		{req("openai-chat", extra), "stop", ""},
		{req("openai-chat"), "max_completion_tokens", "options.max_tokens"},
		// A field the request did not set is no option of it (the
		// provider blamed an adapter default, or another request's).
		{req("openai-chat"), "seed", ""},
		{req("openai-chat"), "store", ""},
		{req("openai-chat", func(r *provider.Request) { r.Options = &llmrelayv1.GenerationOptions{} }), "max_tokens", ""},
		{req("openai-tools"), "tools[1].function.name", "tools[1].name"},
		{req("openai-tools"), "tools[0].function.parameters", "tools[0].parameters"},
		{req("openai-tools"), "tools[2].function.name", ""},
		{req("openai-chat"), "response_format.json_schema.schema", "options.response_format.schema"},
		// Groq's per-model refusal of a format type (the adapter names
		// response_format.type: real_maruel_groq_*_json_schema_*err).
		{req("openai-chat"), "response_format.type", "options.response_format.type"},
		{req("openai-chat"), "response_format", "options.response_format"},
		{req("openai-responses"), "text.format.type", "options.response_format.type"},
		{req("openai-chat"), "top_logprobs", "provider_options.openai.top_logprobs"},
		{req("openai-chat"), "messages[1].content[1].text", "messages[1].parts[1]"},
		{req("openai-chat"), "messages[3].content", "messages[3].parts[0].tool_result.content"},
		{req("openai-chat"), "messages[4].tool_call_id", "messages[3].parts[1].tool_result.call_id"},
		{req("openai-chat"), "messages[5]", "messages[4]"},
		{req("openai-chat"), "messages[6]", ""},
		{req("openai-responses"), "text.format.schema", "options.response_format.schema"},
		{req("openai-responses"), "reasoning.effort", "options.reasoning_effort"},
		{req("openai-responses"), "input[3]", ""},
		{req("anthropic-messages"), "tools.1.custom.name", "tools[1].name"},
		{req("anthropic-messages"), "tools.0.custom.input_schema.type", "tools[0].parameters"},
		{req("anthropic-messages"), "tools.2.name", ""},
		{req("anthropic-messages"), "stop_sequences", "options.stop"},
		{req("anthropic-messages"), "max_tokens", "options.max_tokens"},
		{req("anthropic-messages", func(r *provider.Request) { r.Options = &llmrelayv1.GenerationOptions{} }), "max_tokens", ""},
		{req("anthropic-messages"), "messages.1.content.0", ""},
		{req("gemini"), "generation_config.temperature", "options.temperature"},
		{req("gemini"), "generationConfig.maxOutputTokens", "options.max_tokens"},
		{req("gemini"), "tools[0].function_declarations[1].name", "tools[1].name"},
		{req("gemini", budget), "generation_config.thinking_config.thinking_budget", "provider_options.gemini.thinking_budget"},
		{req("gemini"), "generation_config.thinking_config.thinking_budget", "options.reasoning_effort"},
		{req("gemini", func(r *provider.Request) { r.Options.ReasoningEffort = 0 }), "generation_config.thinking_config.thinking_budget", ""},
		{req("gemini"), "contents[1].parts[0]", ""},
		{req("ollama"), "options.temperature", ""},
		{nil, "stop", ""},
	}
	for _, tc := range cases {
		format := "<nil>"
		if tc.req != nil {
			format = tc.req.Format
		}
		if got := requestFieldOf(tc.req, tc.param); got != tc.want {
			t.Errorf("%s %q: got %q, want %q", format, tc.param, got, tc.want)
		}
	}
}

// FuzzDrop21WirePath: any provider path splits without a panic, and a
// translation, when there is one, is a request path.
func FuzzDrop21WirePath(f *testing.F) {
	for _, s := range []string{"tools[0].function.name", "tools.0.custom.name", "generationConfig.topK", "a[", "[]", "messages[99999999999].x", ".", "a..b[1][2]"} {
		f.Add(s)
	}
	r := &provider.Request{Format: "openai-chat", Tools: []*llmrelayv1.Tool{{Name: "a"}},
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER}}, Options: &llmrelayv1.GenerationOptions{}}
	f.Fuzz(func(t *testing.T, param string) {
		for _, format := range []string{"openai-chat", "openai-responses", "anthropic-messages", "gemini"} {
			r.Format = format
			got := requestFieldOf(r, param)
			if got != "" && !messageParamRE.MatchString(got) && !hasAnyPrefix(got, "options.", "provider_options.", "tools") {
				t.Fatalf("%s %q: %q is no request path", format, param, got)
			}
		}
	})
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}
