package anthropic

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// cityAnswerSchema lists reasoning before answer: the order the model must
// generate them in, so the provider must receive it unchanged.
const cityAnswerSchema = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}}, "required": ["reasoning", "answer"], "additionalProperties": false}`

const cityAnswerCompact = `{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"],"additionalProperties":false}`

func structuredRequest(native bool, tools ...*llmrelayv1.Tool) *provider.Request {
	return &provider.Request{Model: model, NativeStructuredOutput: native, Tools: tools,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Which city is it in? Answer as JSON."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
			Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: cityAnswerSchema}}}
}

// compactBody is the request body without whitespace (key order kept).
func compactBody(t *testing.T, c providertest.Captured) string {
	t.Helper()
	return compactJSON(t, c.Body)
}

func streamText(t *testing.T, evs []*provider.Event) (string, *llmrelayv1.ResponseMeta) {
	t.Helper()
	var b strings.Builder
	final := &llmrelayv1.ResponseMeta{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			b.WriteString(ev.Text)
		case provider.EventToolCall, provider.EventToolCallEnd:
			t.Errorf("the answer tool leaked as a tool event: %+v", ev.ToolCall)
		case provider.EventMeta:
			if ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
				final = ev.Meta
			}
		}
	}
	return b.String(), final
}

func TestStructuredOutputNative(t *testing.T) {
	t.Parallel()
	srv := providertest.Replay(t, providertest.Load(t, "testdata/structured_native.http"), providertest.Load(t, "testdata/structured_native_stream.http"))
	p := newTestProvider(t, srv.URL)
	res, err := p.Generate(context.Background(), structuredRequest(true))
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Last(t)
	body := compactBody(t, sent)
	if !strings.Contains(body, `"output_config":{"format":{"type":"json_schema","schema":`+cityAnswerCompact+`}}`) ||
		strings.Contains(body, `"tools"`) || strings.Contains(body, `"tool_choice"`) {
		t.Errorf("request body: %s", body)
	}
	if b := sent.Header.Get("Anthropic-Beta"); b != "" {
		t.Errorf("anthropic-beta %q: output_config is generally available", b)
	}
	want := `{"reasoning":"The Acropolis overlooks Athens, the capital of Greece.","answer":"Athens"}`
	if got := res.Message.GetParts()[0].GetText(); len(res.Message.GetParts()) != 1 || got != want {
		t.Errorf("answer = %v", res.Message)
	}
	if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("finish = %v", res.Meta.GetFinishReason())
	}

	s, err := p.Stream(context.Background(), structuredRequest(true))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	got, final := streamText(t, evs)
	if got != `{"reasoning":"Hagia Sophia stands in Istanbul, on the European side of the Bosphorus.","answer":"Istanbul"}` ||
		final.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("stream: %q, finish %v", got, final.GetFinishReason())
	}
	if !strings.Contains(compactBody(t, srv.Last(t)), `"output_config":{"format":{"type":"json_schema","schema":`+cityAnswerCompact+`}}`) {
		t.Errorf("stream request body: %s", srv.Last(t).Body)
	}
}

func TestStructuredOutputForcedTool(t *testing.T) {
	t.Parallel()
	srv := providertest.Replay(t, providertest.Load(t, "testdata/structured_tool.http"), providertest.Load(t, "testdata/structured_tool_stream.http"))
	p := newTestProvider(t, srv.URL)
	res, err := p.Generate(context.Background(), structuredRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	body := compactBody(t, srv.Last(t))
	wantTool := `"tools":[{"name":"json_response","description":"` + answerToolDescription + `","input_schema":` + cityAnswerCompact + `}],"tool_choice":{"type":"tool","name":"json_response"}`
	if !strings.Contains(body, wantTool) || strings.Contains(body, "output_config") {
		t.Errorf("request body:\n%s\nwant it to contain\n%s", body, wantTool)
	}
	want := `{"reasoning":"The Alhambra is a palace complex in Granada, in Andalusia.","answer":"Granada"}`
	if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != want {
		t.Errorf("answer = %v", res.Message)
	}
	m := res.Meta
	if m.GetToolCallCount() != 0 || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "tool_use" {
		t.Errorf("meta = %v", m)
	}

	s, err := p.Stream(context.Background(), structuredRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	got, final := streamText(t, evs)
	if got != `{"reasoning": "Neuschwanstein Castle is in Bavaria, near Füssen.", "answer": "Füssen"}` ||
		final.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || final.GetProviderFinishReason() != "tool_use" {
		t.Errorf("stream: %q, final meta %v", got, final)
	}
}

// TestStructuredOutputToolChoice: next to the caller's tools the answer
// tool makes some tool call required (any); a caller's named choice is
// kept; tool_choice none forces the answer tool; JSON_OBJECT offers any
// object.
func TestStructuredOutputToolChoice(t *testing.T) {
	t.Parallel()
	weather := weatherTool(t)
	noParallel := false
	for _, tc := range []struct {
		name   string
		req    func() *provider.Request
		choice string
	}{
		{"with tools", func() *provider.Request { return structuredRequest(false, weather) }, `{"type":"any"}`},
		{"with tools, no parallel calls", func() *provider.Request {
			r := structuredRequest(false, weather)
			r.Options.ParallelToolCalls = &noParallel
			return r
		}, `{"type":"any","disable_parallel_tool_use":true}`},
		{"caller names a tool", func() *provider.Request {
			r := structuredRequest(false, weather)
			r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: weather.GetName()}}
			return r
		}, `{"type":"tool","name":"get_weather"}`},
		{"caller says none", func() *provider.Request {
			r := structuredRequest(false, weather)
			r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
			return r
		}, `{"type":"tool","name":"json_response"}`},
		{"json object on a native model", func() *provider.Request {
			r := structuredRequest(true)
			r.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}
			return r
		}, `{"type":"tool","name":"json_response"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := New(testKey)
			if err != nil {
				t.Fatal(err)
			}
			raw, _, _, err := p.buildRequest(tc.req(), false)
			if err != nil {
				t.Fatal(err)
			}
			body := compactJSON(t, raw)
			if !strings.Contains(body, `"tool_choice":`+tc.choice) || !strings.Contains(body, `{"name":"json_response"`) {
				t.Errorf("body: %s", body)
			}
			if tc.name == "json object on a native model" && (!strings.Contains(body, `"input_schema":{"type":"object"}`) || strings.Contains(body, "output_config")) {
				t.Errorf("JSON_OBJECT is not a forced tool with any object: %s", body)
			}
		})
	}
}

// TestAnswerStreamKeepsOtherCalls: a real tool call next to the answer
// tool stays a tool call, and the turn stays TOOL_CALLS.
func TestAnswerStreamKeepsOtherCalls(t *testing.T) {
	t.Parallel()
	inner := &fakeStream{events: []*provider.Event{
		{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{CallID: "toolu_a", Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
		{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{CallID: "toolu_a"}},
		{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{CallID: "toolu_b", Index: 1, Name: answerTool}},
		{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{CallID: "toolu_b", Index: 1, Arguments: `{"answer":"x"}`}},
		{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{CallID: "toolu_b"}},
		{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, ProviderFinishReason: "tool_use"}},
	}}
	evs, err := collect(&answerStream{Stream: inner, tool: answerTool, otherCalls: map[string]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			kinds = append(kinds, "text:"+ev.Text)
		case provider.EventToolCall:
			kinds = append(kinds, "call:"+ev.ToolCall.CallID)
		case provider.EventToolCallEnd:
			kinds = append(kinds, "end:"+ev.ToolCall.CallID)
		case provider.EventMeta:
			kinds = append(kinds, "finish:"+ev.Meta.GetFinishReason().String())
		}
	}
	want := `call:toolu_a end:toolu_a text:{"answer":"x"} finish:FINISH_REASON_TOOL_CALLS`
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

type fakeStream struct {
	events []*provider.Event
}

func (f *fakeStream) Recv() (*provider.Event, error) {
	if len(f.events) == 0 {
		return nil, io.EOF
	}
	ev := f.events[0]
	f.events = f.events[1:]
	return ev, nil
}

func (f *fakeStream) Close() error { return nil }

// FuzzAnswerStream: on any stream, the answer tool never reaches the
// caller as a tool call, and the text relayed is exactly the plain stream's
// text and answer-tool arguments, in order.
func FuzzAnswerStream(f *testing.F) {
	for _, name := range []string{"structured_tool_stream", "structured_native_stream", "tools_stream", "noargs_stream"} {
		f.Add(providertest.Load(f, "testdata/"+name+".http").Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		plain, _ := collect(streamFromBody(body))
		answerID := ""
		var want strings.Builder
		for _, ev := range plain {
			switch {
			case ev.Kind == provider.EventToolCall && ev.ToolCall.Name == answerTool && answerID == "":
				answerID = ev.ToolCall.CallID
				want.WriteString(ev.ToolCall.Arguments)
			case ev.Kind == provider.EventToolCall && ev.ToolCall.CallID == answerID && answerID != "":
				want.WriteString(ev.ToolCall.Arguments)
			case ev.Kind == provider.EventText:
				want.WriteString(ev.Text)
			}
		}
		wrapped, err := collect(&answerStream{Stream: streamFromBody(body), tool: answerTool, otherCalls: map[string]bool{}})
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *provider.Error", err)
			}
		}
		var got strings.Builder
		for _, ev := range wrapped {
			switch ev.Kind {
			case provider.EventText:
				got.WriteString(ev.Text)
			case provider.EventToolCall, provider.EventToolCallEnd:
				if ev.ToolCall.Name == answerTool || (answerID != "" && ev.ToolCall.CallID == answerID) {
					t.Fatalf("the answer tool leaked: %+v", ev.ToolCall)
				}
			}
		}
		if got.String() != want.String() {
			t.Fatalf("text %q, want %q", got.String(), want.String())
		}
	})
}
