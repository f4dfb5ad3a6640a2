package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func fileReq(format, model string, files ...*llmrelayv1.File) *provider.Request {
	proto := llmrelayv1.Protocol_PROTOCOL_DOCUMENTS
	parts := []*llmrelayv1.Part{text("What is the main content on this document?")}
	for _, f := range files {
		if provider.IsAudio(f) {
			proto = llmrelayv1.Protocol_PROTOCOL_AUDIO
		}
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: f}})
	}
	return &provider.Request{Protocol: proto, Model: model, Format: format,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: parts}},
		Options:  &llmrelayv1.GenerationOptions{}}
}

// sentContent is the content array of the first message (Chat Completions)
// or input item (Responses) of a captured request, as generic JSON.
func sentContent(t *testing.T, body []byte) []any {
	t.Helper()
	var b struct {
		Messages []struct {
			Content []any `json:"content"`
		} `json:"messages"`
		Input []struct {
			Content []any `json:"content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) > 0 {
		return b.Messages[0].Content
	}
	if len(b.Input) > 0 {
		return b.Input[0].Content
	}
	t.Fatalf("no content in %s", body)
	return nil
}

func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Real answers to file inputs, replayed with the request our adapter builds
// from the contract's File part; each request's content is compared with the
// one the live API accepted in the cassette (pydantic-ai's), so the shape
// is the provider's, not a guess.
func TestFileInputsRecorded(t *testing.T) {
	t.Parallel()
	pdf := []byte("%PDF-1.4\n%\xc3\xa4\xc3\xbc\xc3\xb6\xc3\x9f\n")
	mp3 := []byte{0xff, 0xfb, 0x74, 0xc4, 0x00, 0x03, 0xc0, 0x00}
	cases := []struct {
		recording, golden string
		req               *provider.Request
		// sent is the content the cassette's request had, with our test
		// bytes where the cassette's file was too big to keep here.
		sent  string
		check func(t *testing.T, res *provider.Result)
	}{
		// gpt-4o reading a PDF sent inline: a file part with a data: URL and
		// the filename (pydantic-ai sent "filename.pdf").
		{"real_pyd_openai_document_as_binary_content_input", "files_chat_pdf_data",
			fileReq("openai-chat", "gpt-4o", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: pdf}, MimeType: "application/pdf", Filename: "filename.pdf"}),
			`[{"text":"What is the main content on this document?","type":"text"},{"file":{"file_data":"data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCg==","filename":"filename.pdf"},"type":"file"}]`,
			func(t *testing.T, res *provider.Result) {
				if got := res.Message.GetParts()[0].GetText(); got != `The main content of the document is "Dummy PDF file."` {
					t.Errorf("text %q", got)
				}
				u := res.Meta.GetUsage()
				if u.GetInputTokens() != 235 || u.GetOutputTokens() != 13 || u.GetTotalTokens() != 248 {
					t.Errorf("usage %v", u)
				}
				if res.Meta.GetResponseId() != "chatcmpl-BO9ACIkIeOW3OmoArEqYmWmeogKvC" || res.Meta.GetResolvedModel() != "gpt-4o-2024-08-06" {
					t.Errorf("meta %v", res.Meta)
				}
			}},
		// An uploaded file by id, no filename: exactly the cassette's part.
		{"real_pyd_openai_uploaded_file_input", "files_chat_file_id",
			fileReq("openai-chat", "gpt-4o", &llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file-2bkCwDLR2p8cDXfT9he8tV"}}),
			`[{"text":"What is the main content on this document?","type":"text"},{"file":{"file_id":"file-2bkCwDLR2p8cDXfT9he8tV"},"type":"file"}]`,
			func(t *testing.T, res *provider.Result) {
				u := res.Meta.GetUsage()
				if u.GetInputTokens() != 234 || u.GetOutputTokens() != 53 || res.Meta.GetResponseId() != "chatcmpl-CgDNf5yzHe6V6DQHxio2IdIAdMyoR" {
					t.Errorf("meta %v", res.Meta)
				}
			}},
		// gpt-4o-audio-preview hearing an mp3: input_audio, format mp3 from
		// audio/mpeg (the recording is also replayed, with a text request,
		// in round12_test.go).
		{"real_pyd_openai_audio_as_binary_content_input", "files_chat_audio_mp3",
			fileReq("openai-chat", "gpt-4o-audio-preview", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: mp3}, MimeType: "audio/mpeg"}),
			`[{"text":"What is the main content on this document?","type":"text"},{"input_audio":{"data":"//t0xAADwAA=","format":"mp3"},"type":"input_audio"}]`,
			func(t *testing.T, res *provider.Result) {
				if got := res.Message.GetParts()[0].GetText(); got != "The name mentioned in the audio is Marcelo." {
					t.Errorf("text %q", got)
				}
			}},
		// The Responses API reading a PDF by URL: input_file with file_url.
		{"real_pyd_openai_document_url_input_response_api", "files_responses_url",
			fileReq(formatResponses, "gpt-4.1-nano", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://www.w3.org/WAI/ER/tests/xhtml/testfiles/resources/pdf/dummy.pdf"}, MimeType: "application/pdf"}),
			`[{"text":"What is the main content on this document?","type":"input_text"},{"file_url":"https://www.w3.org/WAI/ER/tests/xhtml/testfiles/resources/pdf/dummy.pdf","type":"input_file"}]`,
			func(t *testing.T, res *provider.Result) {
				u := res.Meta.GetUsage()
				if u.GetInputTokens() != 23 || u.GetOutputTokens() != 72 || u.GetTotalTokens() != 95 {
					t.Errorf("usage %v", u)
				}
				if res.Meta.GetResponseId() != "resp_015b88f1b471dcb90069397245702481979e5c36ff51d29a52" || res.Meta.GetResolvedModel() != "gpt-4.1-nano-2025-04-14" {
					t.Errorf("meta %v", res.Meta)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.recording+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			if len(res.Meta.GetWarnings()) != 0 {
				t.Errorf("warnings %v", res.Meta.GetWarnings())
			}
			tc.check(t, res)
			last := srv.Last(t)
			if got, want := sentContent(t, last.Body), jsonOf(t, tc.sent); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("content sent %s\nwant         %s", g, tc.sent)
			}
			if tc.recording != "real_pyd_openai_audio_as_binary_content_input" { // round12_test.go has its golden
				providertest.Golden(t, td(tc.recording+".golden"), renderResult(t, res))
			}
			providertest.Golden(t, td(tc.golden+".request.golden"), providertest.RequestGolden(last, authHeaders...))
		})
	}
}

// Logfire's audio-input cassette kept its whole request: a 0.2 s silent
// wav (a 44-byte PCM header, 16 kHz mono 16-bit, then 6400 zero bytes:
// 8792 bytes of JSON, the recorded Content-Length). The request built from
// a File of that wav is the recorded one, every field (the recording is
// also replayed, with a text request, in round17_mira_test.go).
func TestFileInputAudioWavIsTheRecordedRequest(t *testing.T) {
	t.Parallel()
	wav := append([]byte("RIFF\x24\x19\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x00\x19\x00\x00"), make([]byte, 6400)...)
	srv := providertest.ReplayFile(t, td("real_logfire_chat_audio_input.http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_AUDIO, Model: "gpt-4o-audio-preview", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text(`Respond with just the word "hello".`),
			{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: wav}, MimeType: "audio/wav"}}}}}},
		Options: &llmrelayv1.GenerationOptions{}}
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Hello" {
		t.Errorf("parts %v", p)
	}
	body := srv.Last(t).Body
	recorded := `{"messages":[{"role":"user","content":[{"type":"text","text":"Respond with just the word \"hello\"."},` +
		`{"type":"input_audio","input_audio":{"data":"` + base64.StdEncoding.EncodeToString(wav) + `","format":"wav"}}]}],"model":"gpt-4o-audio-preview"}`
	if len(recorded) != 8792 {
		t.Fatalf("the recorded request is 8792 bytes, this one %d", len(recorded))
	}
	var got, want any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request %.300s\nwant    %.300s", body, recorded)
	}
}

// Inline documents and files by id in the Responses API: input_file with
// file_data (a data: URL) and a default filename from the mime type, or
// file_id; Azure sends the same shapes.
func TestFileInputsResponsesShapes(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_pyd_openai_document_url_input_response_api.http"))
	req := fileReq(formatResponses, "gpt-4.1-nano",
		&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("plain notes")}, MimeType: "text/plain; charset=utf-8"},
		&llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file-abc123"}, Filename: "report.pdf"})
	if _, err := newTestProvider(t, kAzureV1Entra, srv.URL).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := `[{"text":"What is the main content on this document?","type":"input_text"},` +
		`{"file_data":"data:text/plain;base64,cGxhaW4gbm90ZXM=","filename":"file.txt","type":"input_file"},` +
		`{"file_id":"file-abc123","filename":"report.pdf","type":"input_file"}]`
	if got := sentContent(t, srv.Last(t).Body); !reflect.DeepEqual(got, jsonOf(t, want)) {
		g, _ := json.Marshal(got)
		t.Errorf("content sent %s\nwant         %s", g, want)
	}
	providertest.Golden(t, td("files_responses_azure_data_id.request.golden"), providertest.RequestGolden(srv.Last(t), authHeaders...))
}

// What a format cannot send is refused before the call, naming the field.
func TestFileInputsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, format string
		file         *llmrelayv1.File
		param        string
	}{
		{"chat: url", "openai-chat", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/a.pdf"}}, "messages[0].parts[1].file.url"},
		{"chat: wav by id", "openai-tools", &llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file-1"}, MimeType: "audio/wav"}, "messages[0].parts[1].file.file_id"},
		{"chat: flac", "openai-reasoning", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("fLaC")}, MimeType: "audio/flac"}, "messages[0].parts[1].file.mime_type"},
		{"chat: inline docx", "openai-chat", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("PK")}, MimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}, "messages[0].parts[1].file.mime_type"},
		{"responses: audio", formatResponses, &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}, "messages[0].parts[1].file.mime_type"},
		{"responses: gs uri", formatResponses, &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "gs://bucket/a.pdf"}}, "messages[0].parts[1].file.url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td("real_pyd_openai_uploaded_file_input.http"))
			_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), fileReq(tc.format, "gpt-4o", tc.file))
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
