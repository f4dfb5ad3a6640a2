package gemini

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 24 (second wave): the first wave's leftovers (testdata/README.md,
// "Round 24 (second wave)").

// r24w2Tools is a tools request naming one function name.
func r24w2Tools(name string) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Hi"))},
		Tools:    []*llmrelayv1.Tool{{Name: "lookup", Parameters: `{"type":"object"}`}, {Name: name, Parameters: `{"type":"object"}`}}}
}

// TestRound24W2FunctionNames: Gemini refuses a function name that does not
// start with a letter or _, holds another character than letters, digits,
// _ . : -, or is longer than 64 (the Gemini API; Vertex AI takes 128),
// before generating: the adapter refuses it first, naming tools[i].name.
// Names Gemini takes are sent.
func TestRound24W2FunctionNames(t *testing.T) {
	t.Parallel()
	api, err := New(testKey) // the Gemini API's base URL: never reached
	if err != nil {
		t.Fatal(err)
	}
	long := "a" + strings.Repeat("b", 64)
	for _, tc := range []struct {
		name    string
		refused bool // on every base URL
		apiOnly bool // on the Gemini API's only
	}{
		{"1lookup", true, false}, {"-lookup", true, false}, {".lookup", true, false}, {"get weather", true, false},
		{"get/weather", true, false}, {"météo", true, false}, {"a" + strings.Repeat("b", 128), true, false},
		{long, false, true},
		{"_lookup", false, false}, {"mcp:server.get-weather_2", false, false}, {"a" + strings.Repeat("b", 63), false, false},
	} {
		_, _, err := api.encodeRequestWarn(r24w2Tools(tc.name))
		var pe *provider.Error
		if refused := errors.As(err, &pe) && pe.Kind == provider.KindInvalidRequest && pe.Param == "tools[1].name"; refused != (tc.refused || tc.apiOnly) {
			t.Errorf("%q on the Gemini API: err %v", tc.name, err)
		}
		p, _ := replay(t, "plain")
		_, _, err = p.encodeRequestWarn(r24w2Tools(tc.name))
		if refused := errors.As(err, &pe) && pe.Param == "tools[1].name"; refused != tc.refused {
			t.Errorf("%q on another base URL: err %v", tc.name, err)
		}
	}
	// The whole call: refused before any request is sent.
	p, srv := replay(t, "plain")
	if _, err := p.Generate(context.Background(), r24w2Tools("9lives")); err == nil {
		t.Fatal("a function name starting with a digit was sent")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func init() {
	round17Recordings = append(round17Recordings, "modelstatus24_legacy", "modelstatus24_legacy_stream")
}

// TestRound24W2ModelStatus: a response's modelStatus (GenerateContentResponse
// .modelStatus in Google's SDKs: modelStage, retirementTime, message) is
// kept whole in meta.extended, and a LEGACY model retiring on a date is
// warned of with the API's message, unary and streamed (once, though every
// chunk carries it). It was dropped unsaid.
func TestRound24W2ModelStatus(t *testing.T) {
	t.Parallel()
	const warning = "gemini reports the model in stage LEGACY, to be retired at 2026-06-01T00:00:00Z: gemini-2.0-flash-001 will be retired on 2026-06-01. Migrate to a newer model."
	want := map[string]any{"modelStage": "LEGACY", "retirementTime": "2026-06-01T00:00:00Z",
		"message": "gemini-2.0-flash-001 will be retired on 2026-06-01. Migrate to a newer model."}
	res, _ := r21Unary(t, "modelstatus24_legacy", r21User("gemini-2.0-flash-001", "", msg(llmrelayv1.Role_ROLE_USER, text("Bonjour"))))
	if got := r17Ext(res.Meta)[extModelStatus]; !jsonEqual(got, want) {
		t.Errorf("model status %v", got)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warning {
		t.Errorf("warnings %q", w)
	}
	evs, _ := r20Stream(t, "modelstatus24_legacy_stream", r21User("gemini-2.0-flash-001", "", msg(llmrelayv1.Role_ROLE_USER, text("Bonjour"))))
	f := foldEvents(evs)
	if got := r17Ext(f.meta)[extModelStatus]; !jsonEqual(got, want) || f.text != "Bonjour ! Comment puis-je vous aider ?" {
		t.Errorf("model status %v, text %q", got, f.text)
	}
	if w := f.meta.GetWarnings(); len(w) != 1 || w[0] != warning {
		t.Errorf("warnings %q", w)
	}
	for _, tc := range []struct {
		ms   modelStatus
		want string
	}{
		{modelStatus{ModelStage: "STABLE"}, ""},
		{modelStatus{ModelStage: "PREVIEW", Message: "x"}, ""},
		{modelStatus{ModelStage: "PREVIEW", RetirementTime: "2026-01-02T00:00:00Z"}, "gemini reports the model in stage PREVIEW, to be retired at 2026-01-02T00:00:00Z"},
		{modelStatus{ModelStage: "RETIRED"}, "gemini reports the model in stage RETIRED"},
		{modelStatus{RetirementTime: "2026-01-02T00:00:00Z"}, "gemini reports the model, to be retired at 2026-01-02T00:00:00Z"},
	} {
		if got := modelStatusWarning(tc.ms); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.ms, got, tc.want)
		}
	}
}

func init() {
	round17Recordings = append(round17Recordings, "unexpected24_tool_call", "unexpected24_tool_call_stream")
}

// TestRound24W2UnexpectedToolCall: Gemini ends an answer whose call names
// a function the request did not declare with UNEXPECTED_TOOL_CALL, the
// call in the content and a finishMessage naming it. The call is relayed
// as written (OTHER, not TOOL_CALLS), with a warning that it is not one
// of the request's functions, unary and streamed: it was relayed as any
// call, the finish alone telling it apart.
func TestRound24W2UnexpectedToolCall(t *testing.T) {
	t.Parallel()
	const warning = "finishReason UNEXPECTED_TOOL_CALL: the model called a function the request does not declare (undeclaredTool), relayed as written, not one to run: Unexpected tool call: Model tried to call an undeclared function: undeclaredTool"
	req := r24w2Tools("lookup_time")
	check := func(where string, calls []*llmrelayv1.ToolCall, m *llmrelayv1.ResponseMeta) {
		t.Helper()
		if len(calls) != 1 || calls[0].GetName() != "undeclaredTool" || calls[0].GetArguments() != `{"arg1":"value1","arg2":"value2"}` {
			t.Errorf("%s: calls %v", where, calls)
		}
		if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || m.GetProviderFinishReason() != "UNEXPECTED_TOOL_CALL" {
			t.Errorf("%s: finish %v", where, m)
		}
		if w := m.GetWarnings(); len(w) != 1 || w[0] != warning {
			t.Errorf("%s: warnings %q", where, w)
		}
	}
	res, _ := r21Unary(t, "unexpected24_tool_call", req)
	var calls []*llmrelayv1.ToolCall
	for _, pt := range res.Message.GetParts() {
		if tc := pt.GetToolCall(); tc != nil {
			calls = append(calls, tc)
		}
	}
	check("unary", calls, res.Meta)
	evs, _ := r20Stream(t, "unexpected24_tool_call_stream", req)
	f := foldEvents(evs)
	check("stream", f.calls, f.meta)
}

// r24w2Paint is a pydantic-style schema whose fields reference a
// definition with keywords beside the $ref: a title (refused there) and a
// description and default (taken), as pydantic writes
// `paint: Color = Field(title="Paint", description="The paint.")`.
const r24w2Paint = `{"$defs":{"Color":{"enum":["red","blue"],"title":"Color","type":"string"}},` +
	`"properties":{"paint":{"$ref":"#/$defs/Color","title":"Paint","description":"The paint."},` +
	`"trim":{"$ref":"#/$defs/Color","default":"red","description":"The trim."}},"required":["paint"],"title":"Job","type":"object"}`

// TestRound24W2RefSiblings: Gemini refuses keywords beside a $ref other
// than $-keywords, description and default (a 400 before generating); the
// adapter moves them into that schema's description, in the tool's
// parameters and the response schema alike, with a warning, and sends a
// $ref with a description and default as written (Google's own
// parametersJsonSchema example, googleapis/python-genai#1122).
func TestRound24W2RefSiblings(t *testing.T) {
	t.Parallel()
	const sent = `{"$defs":{"Color":{"enum":["red","blue"],"title":"Color","type":"string"}},` +
		`"properties":{"paint":{"$ref":"#/$defs/Color","description":"The paint.\n\n{title: \"Paint\"}"},` +
		`"trim":{"$ref":"#/$defs/Color","default":"red","description":"The trim."}},"required":["paint"],"title":"Job","type":"object"}`
	req := r24w2Tools("lookup_time")
	req.Tools[1].Parameters = r24w2Paint
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: r24w2Paint}}
	req.Model = "gemini-3-flash-preview" // takes tools with a JSON answer
	p, srv := replay(t, "plain")
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	body := r17JSON(t, srv.Last(t).Body)
	decl := body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[1].(map[string]any)
	if !jsonEqual(decl["parametersJsonSchema"], r19Decode(t, sent)) {
		t.Errorf("parameters %v", decl["parametersJsonSchema"])
	}
	if gc := body["generationConfig"].(map[string]any); !jsonEqual(gc["responseJsonSchema"], r19Decode(t, sent)) {
		t.Errorf("response schema %v", gc["responseJsonSchema"])
	}
	// Key order is kept: the bytes sent hold the schema as rewritten.
	if !strings.Contains(string(srv.Last(t).Body), `"parametersJsonSchema":`+sent) {
		t.Errorf("body %s", srv.Last(t).Body)
	}
	want := []string{
		"tools[1].parameters: Gemini takes only description, default and $-keywords beside a $ref; title moved into that schema's description, which the model reads but is not held to",
		"options.response_format.schema: Gemini takes only description, default and $-keywords beside a $ref; title moved into that schema's description, which the model reads but is not held to",
	}
	for _, w := range want {
		if !slices.Contains(res.Meta.GetWarnings(), w) {
			t.Errorf("warnings %q lack %q", res.Meta.GetWarnings(), w)
		}
	}
	// A description and default beside a $ref go as written, unwarned.
	req.Tools[1].Parameters = `{"$defs":{"City":{"properties":{"name":{"type":"string"}},"type":"object"}},"properties":{"city":{"$ref":"#/$defs/City","description":"The city to get the weather of."}},"type":"object"}`
	req.Options = nil
	body2, warnings, err := p.encodeRequestWarn(req)
	if err != nil || len(warnings) != 0 || !strings.Contains(string(body2), `"parametersJsonSchema":`+req.Tools[1].Parameters) {
		t.Errorf("body %s, warnings %q, err %v", body2, warnings, err)
	}
}
