package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func fileRequest(prompt string, files ...*llmrelayv1.File) *provider.Request {
	parts := []*llmrelayv1.Part{text(prompt)}
	for _, f := range files {
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: f}})
	}
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_DOCUMENTS, Model: "claude-sonnet-4-5", Format: "anthropic-messages",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, parts...)}, Options: &llmrelayv1.GenerationOptions{}}
}

// sentBlocks is the content of the first message of a captured request.
func sentBlocks(t *testing.T, body []byte) []any {
	t.Helper()
	var b struct {
		Messages []struct {
			Content []any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Messages) == 0 {
		t.Fatalf("body %s: %v", body, err)
	}
	return b.Messages[0].Content
}

// Real answers to documents (pydantic-ai's cassettes), replayed with the
// request the adapter builds from File parts; the blocks sent are the ones
// the live API answered 200 to, compared whole.
func TestDocumentsRecorded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		recording string
		req       *provider.Request
		sent      string
		text      string
		in, out   int32
		id        string
	}{
		// Plain text inline: a document with a text source holding the text
		// itself (not base64), media_type text/plain.
		{"real_pyd_anthropic_text_document_as_binary_content_input",
			fileRequest("What does this text file say?", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("Dummy TXT file\n")}, MimeType: "text/plain"}),
			`[{"text":"What does this text file say?","type":"text"},{"source":{"data":"Dummy TXT file\n","media_type":"text/plain","type":"text"},"type":"document"}]`,
			`The text file says "Dummy TXT file".`, 57, 14, "msg_01KanQBT3kkADVzF2uCY9XPR"},
		// A PDF by URL: a url source.
		{"real_pyd_anthropic_document_url_input",
			fileRequest("What is the main content on this document?", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://pdfobject.com/pdf/sample.pdf"}, MimeType: "application/pdf"}),
			`[{"text":"What is the main content on this document?","type":"text"},{"source":{"type":"url","url":"https://pdfobject.com/pdf/sample.pdf"},"type":"document"}]`,
			"", 2682, 101, "msg_014baYh9nwS6x3wiEtCQHkU7"},
	}
	for _, tc := range cases {
		t.Run(tc.recording, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.recording+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var want any
			if err := json.Unmarshal([]byte(tc.sent), &want); err != nil {
				t.Fatal(err)
			}
			last := srv.Last(t)
			if got := sentBlocks(t, last.Body); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("blocks sent %s\nwant        %s", g, tc.sent)
			}
			if b := last.Header.Get("Anthropic-Beta"); b != "" {
				t.Errorf("anthropic-beta %q without a file id", b)
			}
			if tc.text != "" && res.Message.GetParts()[0].GetText() != tc.text {
				t.Errorf("text %q", res.Message.GetParts()[0].GetText())
			}
			u := res.Meta.GetUsage()
			if u.GetInputTokens() != tc.in || u.GetOutputTokens() != tc.out || u.GetTotalTokens() != tc.in+tc.out ||
				res.Meta.GetResponseId() != tc.id || res.Meta.GetResolvedModel() != "claude-sonnet-4-5-20250929" ||
				res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(res.Meta.GetWarnings()) != 0 {
				t.Errorf("meta %v", res.Meta)
			}
			providertest.Golden(t, "testdata/"+tc.recording+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.recording+".request.golden", providertest.RequestGolden(last, requestHeaders...))
		})
	}
}

// Inline PDF bytes are a base64 source; a file id is a file source and the
// request carries the Files API beta, added to the caller's betas.
func TestDocumentsInlineAndFileID(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_document_url_input.http")
	req := fileRequest("Compare them.",
		&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF-1.4")}, MimeType: "application/pdf"},
		&llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file_011CNha8iCJcU1wXNR6q4V8w"}})
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{Betas: []string{"context-1m-2025-08-07"}}}}
	if _, err := newTestProvider(t, srv.URL).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	last := srv.Last(t)
	want := `[{"text":"Compare them.","type":"text"},{"source":{"data":"JVBERi0xLjQ=","media_type":"application/pdf","type":"base64"},"type":"document"},{"source":{"file_id":"file_011CNha8iCJcU1wXNR6q4V8w","type":"file"},"type":"document"}]`
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if got := sentBlocks(t, last.Body); !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("blocks sent %s\nwant        %s", g, want)
	}
	if b := last.Header.Get("Anthropic-Beta"); b != "context-1m-2025-08-07,files-api-2025-04-14" {
		t.Errorf("anthropic-beta %q", b)
	}
	providertest.Golden(t, "testdata/files_pdf_data_and_file_id.request.golden", providertest.RequestGolden(last, requestHeaders...))
}

// Audio, other document types and text by URL are refused before the call,
// naming the field.
func TestDocumentsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		file  *llmrelayv1.File
		param string
	}{
		{"audio", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}, "messages[0].parts[1].file.mime_type"},
		{"csv", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("a,b")}, MimeType: "text/csv"}, "messages[0].parts[1].file.mime_type"},
		{"text by url", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/a.txt"}, MimeType: "text/plain"}, "messages[0].parts[1].file.mime_type"},
		{"gs uri", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "gs://bucket/a.pdf"}}, "messages[0].parts[1].file.url"},
		{"text not utf-8", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte{0xff, 0xfe}}, MimeType: "text/plain"}, "messages[0].parts[1].file.data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_document_url_input.http")
			_, err := newTestProvider(t, srv.URL).Generate(context.Background(), fileRequest("x", tc.file))
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
