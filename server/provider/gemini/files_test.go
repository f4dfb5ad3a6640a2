package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// fileRecording is the real answer to an inline file (files_test.go).
const fileRecording = "real_pyd_google_model_text_as_binary_content_input"

func fileOf(f *llmrelayv1.File) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: f}}
}

// sentContents is the contents array of a captured request.
func sentContents(t *testing.T, body []byte) any {
	t.Helper()
	var b struct {
		Contents any `json:"contents"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Contents
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// gemini-2.0-flash reading plain text sent inline (pydantic-ai's cassette):
// inlineData with the mime type and base64 data, after the text part, as
// the cassette's request the API answered 200 to.
func TestFileInlineTextRecorded(t *testing.T) {
	t.Parallel()
	const name = fileRecording
	p, srv := replay(t, name)
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_DOCUMENTS, Model: "gemini-2.0-flash", Format: "gemini",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful chatbot.")),
			msg(llmrelayv1.Role_ROLE_USER, text("What is the main content on this document?"),
				fileOf(&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("This is a test document.")}, MimeType: "text/plain"})),
		},
		Options: &llmrelayv1.GenerationOptions{}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	want := `[{"parts":[{"text":"What is the main content on this document?"},{"inlineData":{"data":"VGhpcyBpcyBhIHRlc3QgZG9jdW1lbnQu","mimeType":"text/plain"}}],"role":"user"}]`
	if got := sentContents(t, c.Body); !reflect.DeepEqual(got, mustJSON(t, want)) {
		g, _ := json.Marshal(got)
		t.Errorf("contents %s\nwant     %s", g, want)
	}
	if got := res.Message.GetParts()[0].GetText(); got != "The main content of the document is that it is a test document.\n" {
		t.Errorf("text %q", got)
	}
	u := res.Meta.GetUsage()
	if u.GetInputTokens() != 21 || u.GetOutputTokens() != 15 || u.GetTotalTokens() != 36 ||
		res.Meta.GetResponseId() != "ijR8aZq2E_6hz7IP8f_E6Qg" || res.Meta.GetResolvedModel() != "gemini-2.0-flash" ||
		res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", res.Meta)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(c, requestHeaders...))
}

// Audio inline, a PDF by gs:// URI and an uploaded file by its URI: inlineData
// and fileData (mimeType left out when the caller gave none: a Files API
// file has its own).
func TestFileShapes(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, fileRecording)
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_AUDIO, Model: "gemini-2.5-flash", Format: "gemini",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Transcribe and compare."),
			fileOf(&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}),
			fileOf(&llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "gs://cloud-samples-data/generative-ai/pdf/2403.05530.pdf"}, MimeType: "application/pdf"}),
			fileOf(&llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "https://generativelanguage.googleapis.com/v1beta/files/abc-123"}}),
		)},
		Options: &llmrelayv1.GenerationOptions{}}
	if _, err := p.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	want := `[{"parts":[{"text":"Transcribe and compare."},{"inlineData":{"data":"UklGRg==","mimeType":"audio/wav"}},` +
		`{"fileData":{"fileUri":"gs://cloud-samples-data/generative-ai/pdf/2403.05530.pdf","mimeType":"application/pdf"}},` +
		`{"fileData":{"fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc-123"}}],"role":"user"}]`
	if got := sentContents(t, c.Body); !reflect.DeepEqual(got, mustJSON(t, want)) {
		g, _ := json.Marshal(got)
		t.Errorf("contents %s\nwant     %s", g, want)
	}
	providertest.Golden(t, filepath.Join("testdata", "files_audio_gs_file_uri.request.golden"), providertest.RequestGolden(c, requestHeaders...))
}

// A URL without a mime type and an unsupported type are refused before the
// call, naming the field.
func TestFileRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		file  *llmrelayv1.File
		param string
	}{
		{"url without mime", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/a.pdf"}}, "messages[0].parts[1].file.mime_type"},
		{"zip", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("PK")}, MimeType: "application/zip"}, "messages[0].parts[1].file.mime_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, fileRecording)
			_, err := p.Generate(context.Background(), &provider.Request{Model: "gemini-2.5-flash", Format: "gemini",
				Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("x"), fileOf(tc.file))}, Options: &llmrelayv1.GenerationOptions{}})
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != tc.param {
				t.Fatalf("err = %#v, want InvalidRequest on %s", err, tc.param)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// An image URL Gemini cannot take (not http(s), not a data URL) is refused
// before the call naming the part's image field, so the gRPC status has a
// BadRequest violation for it (the request fuzzer found it without one).
func TestImageURLRefusedNamesField(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"ftp://x/y", "%zz", "javascript:alert(1)", "http://"} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, fileRecording)
			_, err := p.Generate(context.Background(), &provider.Request{Model: "gemini-2.5-flash", Format: "gemini",
				Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("x"),
					&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: u}}}})},
				Options: &llmrelayv1.GenerationOptions{}})
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "messages[0].parts[1].image" {
				t.Fatalf("err = %#v, want InvalidRequest on messages[0].parts[1].image", err)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}
