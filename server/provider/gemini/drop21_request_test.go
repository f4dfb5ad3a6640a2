package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func d21Text(s string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}}
}

func d21Image(d llmrelayv1.ImageDetail) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MimeType: "image/png", Detail: d}}}
}

// TestDrop21ImageDetail: an image's detail level (LOW, HIGH) is the part's
// mediaResolution on Gemini 3, the only models that take one; on Gemini
// 2.5 it cannot be sent and meta.warnings says so (it was dropped
// silently). AUTO asks for nothing.
func TestDrop21ImageDetail(t *testing.T) {
	t.Parallel()
	msgs := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{
		d21Text("compare"), d21Image(llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW), d21Image(llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH), d21Image(llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO),
	}}}
	body, warnings, err := buildRequest(&provider.Request{Model: "gemini-3-flash-preview", Messages: msgs, Options: &llmrelayv1.GenerationOptions{}})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("gemini 3: %v %q", err, warnings)
	}
	b, err := json.Marshal(body.Contents)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `"mediaResolution":{"level":"MEDIA_RESOLUTION_LOW"}`) ||
		!strings.Contains(got, `"mediaResolution":{"level":"MEDIA_RESOLUTION_HIGH"}`) || strings.Count(got, "mediaResolution") != 2 {
		t.Errorf("gemini 3 contents %s", got)
	}
	body, warnings, err = buildRequest(&provider.Request{Model: "gemini-2.5-flash", Messages: msgs, Options: &llmrelayv1.GenerationOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(body.Contents); strings.Contains(string(b), "mediaResolution") {
		t.Errorf("gemini 2.5 was sent a part's mediaResolution: %s", b)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "messages[0].parts[1].image.detail IMAGE_DETAIL_LOW not sent") ||
		!strings.HasPrefix(warnings[1], "messages[0].parts[2].image.detail IMAGE_DETAIL_HIGH not sent") {
		t.Errorf("gemini 2.5 warnings %q", warnings)
	}
}

// TestDrop21MessagesNotSent: empty text parts are left out (Gemini
// answers one with a 400 "Unable to submit request because it has an empty
// text parameter"), a message with nothing else is not sent, with a
// warning; a name and a system message's move to systemInstruction are
// warned about.
func TestDrop21MessagesNotSent(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Model: "gemini-2.5-flash", Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{d21Text("")}},
		{Role: llmrelayv1.Role_ROLE_USER, Name: "alice", Parts: []*llmrelayv1.Part{d21Text(""), d21Text("hi")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{d21Text("")}},
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{d21Text("late")}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{d21Text("and?")}},
	}}
	body, warnings, err := buildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"user","parts":[{"text":"and?"}]}],"systemInstruction":{"parts":[{"text":"late"}]}}`
	if string(b) != want {
		t.Errorf("body\n got %s\nwant %s", b, want)
	}
	wantWarnings := []string{`messages[1]: name "alice" not sent`, "messages[2]: empty message not sent", "messages[3]: a system message after the conversation began"}
	if len(warnings) != len(wantWarnings) {
		t.Fatalf("warnings %q", warnings)
	}
	for i, w := range wantWarnings {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d = %q, want %q", i, warnings[i], w)
		}
	}
}

// TestDrop21ToolsWithJSON: Gemini before 3 refuses function calling beside
// a JSON response mime type with a 400 naming no field; refused here naming
// options.response_format. Gemini 3 takes both, and a JSON answer without
// tools goes everywhere.
func TestDrop21ToolsWithJSON(t *testing.T) {
	t.Parallel()
	req := func(model string, tools bool) *provider.Request {
		r := &provider.Request{Model: model, Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{d21Text("hi")}}},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}}}
		if tools {
			r.Tools = []*llmrelayv1.Tool{{Name: "get_weather"}}
		}
		return r
	}
	_, _, err := buildRequest(req("gemini-2.5-flash", true))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Param != "options.response_format" || pe.Kind != provider.KindInvalidRequest {
		t.Fatalf("gemini 2.5 with tools and JSON: %v", err)
	}
	for _, r := range []*provider.Request{req("gemini-3-flash-preview", true), req("gemini-2.5-flash", false)} {
		if _, _, err := buildRequest(r); err != nil {
			t.Errorf("%s (tools %d): %v", r.Model, len(r.Tools), err)
		}
	}
}
