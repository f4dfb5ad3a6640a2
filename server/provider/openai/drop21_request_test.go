package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// drop21Providers are the adapter against OpenAI's own API, Azure's, and a
// compatible server (vLLM, on a local port): OpenAI's documented limits
// hold for the first two only.
func drop21Providers(t *testing.T) map[string]*Provider {
	t.Helper()
	oai, err := New(testKey, WithBaseURL("https://api.openai.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	az, err := NewAzure(testKey, WithBaseURL("https://res.openai.azure.com"))
	if err != nil {
		t.Fatal(err)
	}
	compat, err := New(testKey, WithBaseURL("http://127.0.0.1:8000/v1"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Provider{"openai": oai, "azure": az, "compat": compat}
}

func drop21Base() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1-mini", Format: "openai-tools",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("weather?"))},
		Options:  &llmrelayv1.GenerationOptions{},
	}
}

func d21Call(id, name string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: name, Arguments: `{}`}}}
}

func d21Result(id string, isError bool) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: "out", IsError: isError}}}
}

// TestDrop21OpenAILimits: what OpenAI's and Azure's APIs refuse of a
// request (a tool name with a dot or over 64 characters, a fifth stop
// sequence, top_logprobs over 20, metadata beyond 16 bounded pairs, a tool
// result answering no call) is InvalidArgument naming the request's field
// before any call; a compatible server gets it as given (vLLM takes them).
func TestDrop21OpenAILimits(t *testing.T) {
	t.Parallel()
	tool := func(name string) *llmrelayv1.Tool {
		return &llmrelayv1.Tool{Name: name, Parameters: `{"type":"object"}`}
	}
	bigMeta := map[string]string{}
	for _, k := range strings.Split("a b c d e f g h i j k l m n o p q", " ") {
		bigMeta[k] = "v"
	}
	cases := []struct {
		name  string
		mut   func(*provider.Request)
		field string
		// chat/responses: whether the case applies to that format (the
		// Responses API has no stop).
		chat, responses bool
	}{
		{"dotted tool name", func(r *provider.Request) { r.Tools = []*llmrelayv1.Tool{tool("ok"), tool("web.search")} }, "tools[1].name", true, true},
		{"65-character tool name", func(r *provider.Request) { r.Tools = []*llmrelayv1.Tool{tool(strings.Repeat("a", 65))} }, "tools[0].name", true, true},
		{"five stop sequences", func(r *provider.Request) { r.Options.Stop = []string{"1", "2", "3", "4", "5"} }, "options.stop", true, false},
		{"top_logprobs 21", func(r *provider.Request) {
			r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(21)}}}
		}, "provider_options.openai.top_logprobs", true, true},
		{"17 metadata pairs", func(r *provider.Request) {
			r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Metadata: bigMeta}}}
		}, "provider_options.openai.metadata", true, true},
		{"metadata value of 513 characters", func(r *provider.Request) {
			r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Metadata: map[string]string{"k": strings.Repeat("é", 513)}}}}
		}, `provider_options.openai.metadata["k"]`, true, true},
		{"tool result answering no call", func(r *provider.Request) {
			r.Messages = append(r.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, d21Call("call_1", "ok")),
				msgOf(llmrelayv1.Role_ROLE_TOOL, d21Result("call_1", false), d21Result("call_2", false)))
		}, "messages[2].parts[1].tool_result.call_id", true, true},
		{"tool result after an assistant turn without its call", func(r *provider.Request) {
			r.Messages = append(r.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, d21Call("call_1", "ok")),
				msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("and then")),
				msgOf(llmrelayv1.Role_ROLE_TOOL, d21Result("call_1", false)))
		}, "messages[3].parts[0].tool_result.call_id", true, false},
	}
	for pname, p := range drop21Providers(t) {
		for _, tc := range cases {
			for _, format := range []string{"chat", "responses"} {
				if (format == "chat" && !tc.chat) || (format == "responses" && !tc.responses) {
					continue
				}
				req := drop21Base()
				tc.mut(req)
				var err error
				if format == "chat" {
					_, _, err = p.buildChatRequest(req, false)
				} else {
					_, _, err = p.buildResponsesRequest(req, false)
				}
				var pe *provider.Error
				switch {
				case pname == "compat" && err != nil:
					t.Errorf("%s %s %s: a compatible server's request was refused: %v", pname, format, tc.name, err)
				case pname != "compat" && (!errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != tc.field):
					t.Errorf("%s %s %s: got %v, want an invalid request naming %s", pname, format, tc.name, err, tc.field)
				}
			}
		}
	}
}

// TestDrop21OpenAIWithinLimits: the limits themselves are taken (4 stop
// sequences, top_logprobs 20, a 64-character name, 16 pairs of 64/512
// characters, results of the previous turn's calls).
func TestDrop21OpenAIWithinLimits(t *testing.T) {
	t.Parallel()
	meta := map[string]string{}
	for _, k := range strings.Split("a b c d e f g h i j k l m n o", " ") {
		meta[k] = "v"
	}
	meta[strings.Repeat("k", 64)] = strings.Repeat("v", 512)
	req := drop21Base()
	req.Tools = []*llmrelayv1.Tool{{Name: strings.Repeat("a", 64)}, {Name: "get-weather_2"}}
	req.Options.Stop = []string{"1", "2", "3", "4"}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(20), Metadata: meta, Store: proto.Bool(true)}}}
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, d21Call("call_1", "get-weather_2"), d21Call("call_2", "get-weather_2")),
		msgOf(llmrelayv1.Role_ROLE_TOOL, d21Result("call_1", false)), msgOf(llmrelayv1.Role_ROLE_TOOL, d21Result("call_2", false)))
	p := drop21Providers(t)["openai"]
	body, _, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Stop        []string `json:"stop"`
		TopLogprobs int      `json:"top_logprobs"`
	}
	if err := json.Unmarshal(body, &w); err != nil || len(w.Stop) != 4 || w.TopLogprobs != 20 {
		t.Fatalf("sent %s (%v)", body, err)
	}
	if _, _, err := p.buildResponsesRequest(req, false); err != nil {
		t.Fatal(err)
	}
}

// TestDrop21OpenAIDropWarnings: what the OpenAI formats have no field for
// is not sent, and meta.warnings says so: a tool result's is_error, a tool
// message's name (Chat Completions), reasoning_summary (Chat Completions).
func TestDrop21OpenAIDropWarnings(t *testing.T) {
	t.Parallel()
	req := drop21Base()
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, d21Call("call_1", "get_weather")),
		&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Name: "weather-bot", Parts: []*llmrelayv1.Part{d21Result("call_1", true)}})
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{ReasoningSummary: "auto"}}}
	p := drop21Providers(t)["compat"]
	_, warnings, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"is_error of 1 tool result(s) not sent (messages[2].parts[0])", "the name of 1 tool message(s) not sent (messages[2])", "reasoning_summary not sent"}
	for _, w := range want {
		if !containsSub(warnings, w) {
			t.Errorf("chat warnings %q lack %q", warnings, w)
		}
	}
	_, warnings, err = p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if !containsSub(warnings, want[0]) || containsSub(warnings, want[2]) {
		t.Errorf("responses warnings %q: want the is_error one, not reasoning_summary's (sent as reasoning.summary)", warnings)
	}
	// Without them, no warning.
	clean := drop21Base()
	if _, warnings, err := p.buildChatRequest(clean, false); err != nil || len(warnings) != 0 {
		t.Errorf("clean request: %v %q", err, warnings)
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestDrop21AdaDimensions: OpenAI's ada-002 takes no dimensions
// (text-embedding-3 and later only): refused naming the field, on
// OpenAI's API only; text-embedding-3 models and other servers get it.
func TestDrop21AdaDimensions(t *testing.T) {
	t.Parallel()
	ps := drop21Providers(t)
	dims := proto.Int32(256)
	_, _, err := ps["openai"].buildEmbedRequest(&provider.EmbedRequest{Model: "text-embedding-ada-002", Inputs: []string{"a"}, Dimensions: dims})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Param != "dimensions" || pe.Kind != provider.KindInvalidRequest {
		t.Fatalf("ada-002 with dimensions: %v", err)
	}
	for _, c := range []struct {
		p     *Provider
		model string
	}{{ps["openai"], "text-embedding-3-small"}, {ps["compat"], "text-embedding-ada-002"}, {ps["azure"], "text-embedding-ada-002"}} {
		body, _, err := c.p.buildEmbedRequest(&provider.EmbedRequest{Model: c.model, Inputs: []string{"a"}, Dimensions: dims})
		if err != nil || !strings.Contains(string(body), `"dimensions":256`) {
			t.Errorf("%s: %s %v", c.model, body, err)
		}
	}
}

// TestDrop21ChatMetadataNeedsStore: OpenAI's Chat Completions answer
// metadata without store with a 400 naming no param ("The 'metadata'
// parameter is only allowed when 'store' is enabled."): refused naming
// provider_options.openai.metadata. With store true it is sent; the
// Responses API and other servers take it as it is.
func TestDrop21ChatMetadataNeedsStore(t *testing.T) {
	t.Parallel()
	ps := drop21Providers(t)
	req := drop21Base()
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Metadata: map[string]string{"k": "v"}}}}
	_, _, err := ps["openai"].buildChatRequest(req, false)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Param != "provider_options.openai.metadata" {
		t.Fatalf("metadata without store: %v", err)
	}
	if _, _, err := ps["openai"].buildResponsesRequest(req, false); err != nil {
		t.Errorf("responses: %v", err)
	}
	if _, _, err := ps["compat"].buildChatRequest(req, false); err != nil {
		t.Errorf("compatible server: %v", err)
	}
	req.ProviderOptions.GetOpenai().Store = proto.Bool(true)
	body, _, err := ps["openai"].buildChatRequest(req, false)
	if err != nil || !strings.Contains(string(body), `"metadata":{"k":"v"}`) {
		t.Errorf("with store: %s %v", body, err)
	}
}
