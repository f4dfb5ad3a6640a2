package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func init() {
	round17Recordings = append(round17Recordings, "error_400_function_response_ref", "error_400_proto_invalid_function_name")
}

// schemaToolTurn is one call answered by a tool that returns a JSON
// Schema with $ref/$defs (Zod's z.toJSONSchema of a lazy schema, as
// vercel/ai#14369's tool returned), as a result or as an error.
func schemaToolTurn(model string, isError bool, parts ...*llmrelayv1.Part) *provider.Request {
	content := `{"type":"object","properties":{"filter":{"$ref":"#/$defs/__r26schema0"}},"$defs":{"__r26schema0":{"type":"object","properties":{"or":{"type":"array","items":{"$ref":"#/$defs/__r26schema0"}}}}}}`
	tr := &llmrelayv1.ToolResult{CallId: "call_r26_schema", Content: content, IsError: isError, Parts: parts}
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: model, Format: "gemini",
		Tools: []*llmrelayv1.Tool{{Name: "describe_filter", Parameters: `{"type":"object"}`}},
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("What does a filter look like?")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("call_r26_schema", "describe_filter", `{}`)),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: tr}}),
		}, Options: &llmrelayv1.GenerationOptions{}}
}

// Gemini reads every "$ref" key of functionResponse.response as a
// reference to a medium of that response by displayName and refuses one
// that names none: "The referenced name `#/$defs/__schema0` in
// function_response.response does not match to a display_name in the
// function_response.parts." (vercel/ai#14369, RooCodeInc/Roo-Code#11430 on
// gemini-3-pro-preview, twentyhq/twenty#21712). A tool's JSON with such a
// $ref was sent as the response object and the request refused. It now
// goes as text under "result" ("error" for an error), whole, with a
// warning naming the references, on every model.
func TestRound26ToolResultSchemaRefAsText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model   string
		isError bool
		key     string
	}{
		{"gemini-2.5-flash", false, "result"},
		{"gemini-3-flash-preview", false, "result"},
		{"gemini-3-flash-preview", true, "error"},
	} {
		req := schemaToolTurn(tc.model, tc.isError)
		p, srv := replay(t, fileRecording)
		res, err := p.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		content := req.Messages[2].Parts[0].GetToolResult().GetContent()
		wantResp, _ := json.Marshal(map[string]string{tc.key: content})
		want := normJSON(t, `{"role":"user","parts":[{"functionResponse":{"id":"call_r26_schema","name":"describe_filter","response":`+string(wantResp)+`}}]}`)
		if got := sentTurn(t, srv.Last(t).Body); got != want {
			t.Errorf("%s error %v: turn\n got %s\nwant %s", tc.model, tc.isError, got, want)
		}
		w := res.Meta.GetWarnings()
		if len(w) != 1 || !strings.HasPrefix(w[0], `messages[2].parts[0].tool_result: sent as text under "`+tc.key+`"`) ||
			!strings.HasSuffix(w[0], `, and "#/$defs/__r26schema0" names none`) {
			t.Errorf("%s error %v: warnings %q", tc.model, tc.isError, w)
		}
	}
}

// A tool's own reference to its medium, by the file's name, is what
// Google documents ({"image_ref": {"$ref": "instrument.jpg"}} beside a part
// whose displayName is "instrument.jpg"): on Gemini 3 the part carries the
// file's name as displayName and the tool's JSON goes as written; a medium
// the tool does not reference goes unreferenced (the tool's object is not
// rewritten), named by its index, and a second file of the same name gets
// a name of its own (displayNames are unique in a response). Before Gemini
// 3 the media leave the functionResponse, so the reference names none and
// the JSON goes as text.
func TestRound26ToolResultOwnRef(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nr26")
	media := func(name string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: png}, MimeType: "image/png", Filename: name}}}
	}
	turn := func(model string) *provider.Request {
		tr := &llmrelayv1.ToolResult{CallId: "call_r26_chart", Content: `{"quarter":"Q3","chart":{"$ref":"sales.png"}}`,
			Parts: []*llmrelayv1.Part{media("sales.png"), media("sales.png")}}
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: model, Format: "gemini",
			Tools: []*llmrelayv1.Tool{{Name: "sales_chart", Parameters: `{"type":"object"}`}},
			Messages: []*llmrelayv1.Message{
				msg(llmrelayv1.Role_ROLE_USER, text("Chart Q3 sales.")),
				msg(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("call_r26_chart", "sales_chart", `{"quarter":"Q3"}`)),
				msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: tr}}),
			}, Options: &llmrelayv1.GenerationOptions{}}
	}

	p, srv := replay(t, fileRecording)
	res, err := p.Generate(context.Background(), turn("gemini-3-flash-preview"))
	if err != nil {
		t.Fatal(err)
	}
	want := normJSON(t, `{"role":"user","parts":[{"functionResponse":{"id":"call_r26_chart","name":"sales_chart",
		"response":{"quarter":"Q3","chart":{"$ref":"sales.png"}},
		"parts":[{"inlineData":{"displayName":"sales.png","mimeType":"image/png","data":"iVBORw0KGgpyMjY="}},
		         {"inlineData":{"displayName":"image_1.png","mimeType":"image/png","data":"iVBORw0KGgpyMjY="}}]}}]}`)
	if got := sentTurn(t, srv.Last(t).Body); got != want {
		t.Errorf("gemini 3 turn\n got %s\nwant %s", got, want)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("gemini 3 warnings %q", w)
	}

	p, srv = replay(t, fileRecording)
	res, err = p.Generate(context.Background(), turn("gemini-2.5-flash"))
	if err != nil {
		t.Fatal(err)
	}
	want = normJSON(t, `{"role":"user","parts":[{"functionResponse":{"id":"call_r26_chart","name":"sales_chart",
		"response":{"result":"{\"quarter\":\"Q3\",\"chart\":{\"$ref\":\"sales.png\"}}"}}},
		{"text":"The result of sales_chart call call_r26_chart continues with these attachments:"},
		{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgpyMjY="}},
		{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgpyMjY="}}]}`)
	if got := sentTurn(t, srv.Last(t).Body); got != want {
		t.Errorf("gemini 2.5 turn\n got %s\nwant %s", got, want)
	}
	w := res.Meta.GetWarnings()
	if len(w) != 3 || !strings.Contains(w[2], `tool_result: sent as text under "result"`) || !strings.HasSuffix(w[2], `, and "sales.png" names none`) {
		t.Errorf("gemini 2.5 warnings %q", w)
	}

	// The same medium referenced twice: Google allows one reference per
	// displayName; as text.
	req := turn("gemini-3-flash-preview")
	req.Messages[2].Parts[0].GetToolResult().Content = `{"front":{"$ref":"sales.png"},"again":[{"$ref":"sales.png"}]}`
	p, srv = replay(t, fileRecording)
	res, err = p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentTurn(t, srv.Last(t).Body); !strings.Contains(got, `"response":{"result":"{\"front\"`) || strings.Contains(got, `"attachments"`) {
		t.Errorf("twice turn %s", got)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.HasSuffix(w[0], `, and "sales.png" is referenced more than once`) {
		t.Errorf("twice warnings %q", w)
	}
}

// The API's refusal of an unmatched reference is an invalid request with
// its words (testdata/error_400_function_response_ref.http, the body
// vercel/ai#14369 quotes).
func TestRound26FunctionResponseRefRefused(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "error_400_function_response_ref")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "INVALID_ARGUMENT" ||
		pe.Message != "The referenced name `#/$defs/__schema0` in function_response.response does not match to a display_name in the function_response.parts." {
		t.Errorf("kind %v status %d code %q message %q", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
	}
}

// Google's other validation form, "The GenerateContentRequest proto is
// invalid:" and an indented line per field
// (testdata/error_400_proto_invalid_function_name.http, the body
// zed-industries/zed#37643 quotes, with its legacy "errors" list): an
// invalid request naming the first field; the field was lost (the message
// does not begin with the field's line).
func TestRound26ProtoInvalidNamesField(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "error_400_proto_invalid_function_name")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != provider.KindInvalidRequest || pe.Param != "tools[0].function_declarations[178].name" || pe.Code != "INVALID_ARGUMENT" ||
		!strings.HasPrefix(pe.Message, "The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[178].name: [FIELD_INVALID] Invalid function name.") {
		t.Errorf("kind %v param %q code %q message %q", pe.Kind, pe.Param, pe.Code, pe.Message)
	}
}

// jsonRefs finds a "$ref" key however its JSON escapes it, in objects
// inside arrays, and lists a value that is not a string as its JSON.
func TestRound26JSONRefs(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`{"a":1}`:                           "",
		`{"$ref":"x.png"}`:                  "x.png",
		`{"\u0024ref":"y.png"}`:             "y.png",
		`{"l":[{"$ref":"b"},{"$ref":"a"}]}`: "a|b",
		`{"$ref":5,"t":"$ref"}`:             "5",
		`{"t":"\u00e9"}`:                    "",
	} {
		if got := strings.Join(jsonRefs(json.RawMessage(doc)), "|"); got != want {
			t.Errorf("jsonRefs(%s) = %q, want %q", doc, got, want)
		}
	}
}

// An error result with a medium: the medium is named by its index and
// left unreferenced, as the result wrapper leaves it (python-genai#2792:
// the documented references refused on newer models).
func TestRound26ErrorResultNamesMedia(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nr26e")
	tr := &llmrelayv1.ToolResult{CallId: "call_r26_err", Content: "Timed out after the first capture.", IsError: true,
		Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: png}, MimeType: "image/png"}}}}}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3-flash-preview", Format: "gemini",
		Tools: []*llmrelayv1.Tool{{Name: "capture", Parameters: `{"type":"object"}`}},
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("Capture the page.")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("call_r26_err", "capture", `{}`)),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: tr}}),
		}, Options: &llmrelayv1.GenerationOptions{}}
	p, srv := replay(t, fileRecording)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := normJSON(t, `{"role":"user","parts":[{"functionResponse":{"id":"call_r26_err","name":"capture",
		"response":{"error":"Timed out after the first capture."},
		"parts":[{"inlineData":{"displayName":"image_0.png","mimeType":"image/png","data":"iVBORw0KGgpyMjZl"}}]}}]}`)
	if got := sentTurn(t, srv.Last(t).Body); got != want {
		t.Errorf("turn\n got %s\nwant %s", got, want)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}
