package anthropic

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func d21Call(id string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: "get_weather", Arguments: `{}`}}}
}

func d21Result(id string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: "sunny"}}}
}

var (
	d21User      = llmrelayv1.Role_ROLE_USER
	d21Assistant = llmrelayv1.Role_ROLE_ASSISTANT
	d21Tool      = llmrelayv1.Role_ROLE_TOOL
	d21System    = llmrelayv1.Role_ROLE_SYSTEM
)

// TestDrop21AnthropicRefusals: what the Messages API refuses with a 400
// naming its own wire position (tools.0.custom.name, messages.N after
// merging and without the system messages) is InvalidArgument naming the
// request's field: a tool name with a dot, a colon or over 128
// characters, a tool result answering no call of the assistant turn just
// before it, an assistant call the next user turn leaves unanswered.
func TestDrop21AnthropicRefusals(t *testing.T) {
	t.Parallel()
	tools := func(names ...string) []*llmrelayv1.Tool {
		var out []*llmrelayv1.Tool
		for _, n := range names {
			out = append(out, &llmrelayv1.Tool{Name: n, Parameters: `{"type":"object"}`})
		}
		return out
	}
	cases := []struct {
		name  string
		msgs  []*llmrelayv1.Message
		tools []*llmrelayv1.Tool
		field string
	}{
		{"dotted tool name", []*llmrelayv1.Message{msgOf(d21User, text("hi"))}, tools("get_weather", "web.search"), "tools[1].name"},
		{"colon in a tool name", []*llmrelayv1.Message{msgOf(d21User, text("hi"))}, tools("mcp:search"), "tools[0].name"},
		{"129-character tool name", []*llmrelayv1.Message{msgOf(d21User, text("hi"))}, tools(strings.Repeat("a", 129)), "tools[0].name"},
		{"result without any call", []*llmrelayv1.Message{msgOf(d21User, text("hi")), msgOf(d21Tool, d21Result("toolu_x"))}, nil,
			"messages[1].parts[0].tool_result.call_id"},
		{"result of a call two turns back", []*llmrelayv1.Message{
			msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1")), msgOf(d21Tool, d21Result("toolu_1")),
			msgOf(d21Assistant, text("it is sunny")), msgOf(d21User, text("and now?")), msgOf(d21Tool, d21Result("toolu_1")),
		}, nil, "messages[5].parts[0].tool_result.call_id"},
		{"second result answering no call", []*llmrelayv1.Message{
			msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1")), msgOf(d21Tool, d21Result("toolu_1"), d21Result("toolu_2")),
		}, nil, "messages[2].parts[1].tool_result.call_id"},
		{"call left unanswered by the next user turn", []*llmrelayv1.Message{
			msgOf(d21User, text("hi")), msgOf(d21Assistant, text("let me look"), d21Call("toolu_1"), d21Call("toolu_2")),
			msgOf(d21Tool, d21Result("toolu_1")), msgOf(d21User, text("well?")),
		}, nil, "messages[1].parts[2].tool_call.call_id"},
		{"call answered by text only", []*llmrelayv1.Message{
			msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1")), msgOf(d21User, text("never mind")), msgOf(d21Assistant, text("ok")),
		}, nil, "messages[1].parts[0].tool_call.call_id"},
	}
	for _, tc := range cases {
		req := &provider.Request{Model: model, Messages: tc.msgs, Tools: tc.tools, Options: &llmrelayv1.GenerationOptions{}}
		_, _, _, err := build(t, req)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != tc.field {
			t.Errorf("%s: got %v, want an invalid request naming %s", tc.name, err, tc.field)
		}
	}
}

// TestDrop21AnthropicPairsTaken: what the API takes stays taken: results
// after an assistant turn merged from two messages, results with user text
// in the same turn (the adapter puts the results first), a conversation
// that ends with the calls, several rounds, 128-character names with _
// and -.
func TestDrop21AnthropicPairsTaken(t *testing.T) {
	t.Parallel()
	convs := map[string][]*llmrelayv1.Message{
		"merged assistant turn": {msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1")), msgOf(d21Assistant, text("checking"), d21Call("toolu_2")),
			msgOf(d21Tool, d21Result("toolu_2")), msgOf(d21Tool, d21Result("toolu_1"))},
		"user text beside results": {msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1")), msgOf(d21User, text("also: hurry")),
			msgOf(d21Tool, d21Result("toolu_1"))},
		"ends with calls": {msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1"))},
		"two rounds": {msgOf(d21System, text("be brief")), msgOf(d21User, text("hi")), msgOf(d21Assistant, d21Call("toolu_1")), msgOf(d21Tool, d21Result("toolu_1")),
			msgOf(d21Assistant, d21Call("toolu_2")), msgOf(d21Tool, d21Result("toolu_2")), msgOf(d21Assistant, text("done"))},
	}
	for name, msgs := range convs {
		req := &provider.Request{Model: model, Messages: msgs, Options: &llmrelayv1.GenerationOptions{},
			Tools: []*llmrelayv1.Tool{{Name: "get_weather"}, {Name: strings.Repeat("a-_", 42) + "bc"}}}
		if _, _, _, err := build(t, req); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestDrop21AnthropicWarnings: what the Messages API has no place for is
// sent as near as it can be and meta.warnings says what changed: an
// image's detail level (low or high; auto is what Anthropic does anyway),
// a system message in the middle of the conversation (it goes to the
// system prompt, before every message), response_format strict answered
// through the forced tool.
func TestDrop21AnthropicWarnings(t *testing.T) {
	t.Parallel()
	img := func(d llmrelayv1.ImageDetail) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/a.png"}, Detail: d}}}
	}
	req := &provider.Request{Model: model, Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
		Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: `{"type":"object"}`, Strict: proto.Bool(true)}},
		Messages: []*llmrelayv1.Message{
			msgOf(d21System, text("first")),
			msgOf(d21User, text("look"), img(llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW), img(llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO)),
			msgOf(d21System, text("late")),
		}}
	m, _, warnings, err := build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"messages[1].parts[1].image.detail IMAGE_DETAIL_LOW not sent",
		"messages[2]: a system message after the conversation began is sent in the system prompt",
		"options.response_format.strict not honoured",
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", warnings, len(want))
	}
	for i, w := range want {
		if !strings.Contains(warnings[i], w) {
			t.Errorf("warning %d = %q, want %q", i, warnings[i], w)
		}
	}
	if !sameJSON(t, mustJSON(t, m["system"]), `[{"type":"text","text":"first"},{"type":"text","text":"late"}]`) {
		t.Errorf("system = %v", m["system"])
	}
	// Native structured output holds the answer to the schema: no warning.
	req.NativeStructuredOutput = true
	req.Messages = []*llmrelayv1.Message{msgOf(d21User, text("hi"))}
	if _, _, warnings, err := build(t, req); err != nil || len(warnings) != 0 {
		t.Errorf("native: %v %q", err, warnings)
	}
}

// TestDrop21AnthropicBlankStop: the Messages API refuses a stop sequence
// of whitespace only ("stop_sequences: each stop sequence must contain
// non-whitespace"): refused naming the request's entry; one with
// whitespace around a character is sent as given.
func TestDrop21AnthropicBlankStop(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Model: model, Messages: []*llmrelayv1.Message{msgOf(d21User, text("hi"))},
		Options: &llmrelayv1.GenerationOptions{Stop: []string{"END", "\n"}}}
	_, _, _, err := build(t, req)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Param != "options.stop[1]" || pe.Kind != provider.KindInvalidRequest {
		t.Fatalf("got %v, want an invalid request naming options.stop[1]", err)
	}
	req.Options.Stop = []string{"\nEND\n", " x"}
	m, _, _, err := build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, m["stop_sequences"]); got != `["\nEND\n"," x"]` {
		t.Errorf("stop_sequences %s", got)
	}
}

// TestDrop21AnthropicPrefillWhitespace: an assistant prefill ending in
// whitespace is refused by the API naming no message ("final assistant
// content cannot end with trailing whitespace"): refused naming the part.
// An earlier assistant turn may end in whitespace.
func TestDrop21AnthropicPrefillWhitespace(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Model: model, Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{
		msgOf(d21User, text("hi")), msgOf(d21Assistant, text("Hello \n")), msgOf(d21User, text("list three")),
		msgOf(d21Assistant, text("1."), text("2. "), text("")),
	}}
	_, _, _, err := build(t, req)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Param != "messages[3].parts[1].text" || pe.Kind != provider.KindInvalidRequest {
		t.Fatalf("got %v, want an invalid request naming messages[3].parts[1].text", err)
	}
	req.Messages[3] = msgOf(d21Assistant, text("1."))
	if _, _, _, err := build(t, req); err != nil {
		t.Fatal(err)
	}
}
