package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

func filePart(f *llmrelayv1.File) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: f}}
}

func pdfData(b string) *llmrelayv1.File {
	return &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte(b)}, MimeType: "application/pdf"}
}

// The offline echo model takes documents and audio (the embedded default
// gives it both capabilities) and says what it received, never the bytes.
func TestFilesBuiltinEcho(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	msg := user("summarise")
	msg.Parts = append(msg.Parts, filePart(pdfData("%PDF-1.4 x")),
		filePart(&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF....WAVE")}, MimeType: "audio/wav"}),
		filePart(&llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file-abc"}}))
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{msg}})
	if err != nil {
		t.Fatal(err)
	}
	want := "You said: summarise [file application/pdf, 10 bytes] [file audio/wav, 12 bytes] [file unknown, id file-abc]"
	if got := resp.GetMessage().GetParts()[0].GetText(); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if resp.GetMeta().GetProtocol() != llmrelayv1.Protocol_PROTOCOL_AUDIO {
		t.Errorf("protocol = %v, want PROTOCOL_AUDIO (audio decides the capability)", resp.GetMeta().GetProtocol())
	}
}

// Malformed file parts are InvalidArgument naming the field, before any
// provider is called.
func TestFilesValidation(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	withFile := func(role llmrelayv1.Role, f *llmrelayv1.File) func() error {
		return func() error {
			m := &llmrelayv1.Message{Role: role, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "x"}}, filePart(f)}}
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{m}})
			return err
		}
	}
	user, asst := llmrelayv1.Role_ROLE_USER, llmrelayv1.Role_ROLE_ASSISTANT
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"assistant file", withFile(asst, pdfData("x")), "messages[0].parts[1].file"},
		{"no source", withFile(user, &llmrelayv1.File{MimeType: "application/pdf"}), "messages[0].parts[1].file"},
		{"data without mime", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("x")}}), "messages[0].parts[1].file.mime_type"},
		{"empty data", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_Data{}, MimeType: "application/pdf"}), "messages[0].parts[1].file.data"},
		{"data: url", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "data:application/pdf;base64,eA=="}}), "messages[0].parts[1].file.url"},
		{"ftp url", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "ftp://example.com/a.pdf"}}), "messages[0].parts[1].file.url"},
		{"blank file id", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: " "}}), "messages[0].parts[1].file.file_id"},
		{"bad mime", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("x")}, MimeType: "pdf"}), "messages[0].parts[1].file.mime_type"},
		{"filename newline", withFile(user, &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("x")}, MimeType: "text/plain", Filename: "a\nb"}), "messages[0].parts[1].file.filename"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, info, br := statusDetails(t, tc.call())
			if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" {
				t.Fatalf("got %v %s (%s)", st.Code(), info.GetReason(), st.Message())
			}
			if br == nil || len(br.GetFieldViolations()) == 0 || br.GetFieldViolations()[0].GetField() != tc.field {
				t.Fatalf("BadRequest = %v, want field %q", br, tc.field)
			}
		})
	}
}

const filesOpenAIYAML = `
defaults:
  retry: {max_attempts: 1}
providers:
  - name: oai
    type: openai
    base_url: {{URL}}
    api_key: sk-test-files
models:
  - name: text-only
    provider: oai
    upstream_model: gpt-4o
    capabilities:
      chat: {format: openai-chat}
      tools: {format: openai-tools}
  - name: omni
    provider: oai
    upstream_model: gpt-4o-audio-preview
    capabilities:
      chat: {format: openai-chat}
      tools: {format: openai-tools}
      documents: {format: openai-chat}
      audio: {format: openai-chat}
  - name: responses
    provider: oai
    upstream_model: gpt-5
    capabilities:
      chat: {format: openai-responses}
      documents: {format: openai-responses}
`

// A file part needs the model's documents or audio capability, as an image
// needs vision (FailedPrecondition naming it); what the capability's format
// cannot send is InvalidArgument naming the field; neither calls the
// provider. What it can send reaches the provider in its shape.
func TestFilesCapabilitiesAndFormats(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies []string
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-files1","object":"chat.completion","created":1,"model":"gpt-4o-audio-preview","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	defer up.Close()
	c, _ := startWith(t, filesOpenAIYAML, up.URL+"/v1")
	ctx := context.Background()
	chat := func(model string, files ...*llmrelayv1.File) func() error {
		return func() error {
			m := user("what is in it?")
			for _, f := range files {
				m.Parts = append(m.Parts, filePart(f))
			}
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: model, Messages: []*llmrelayv1.Message{m}})
			return err
		}
	}
	wav := &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}
	cases := []refusalCase{
		{"document without capability", chat("text-only", pdfData("%PDF")), codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no documents capability"},
		{"audio without capability", chat("text-only", wav), codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no audio capability"},
		{"audio on a documents-only model", chat("responses", pdfData("%PDF"), wav), codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no audio capability"},
		{"tools with a document, no capability", func() error {
			m := user("x")
			m.Parts = append(m.Parts, filePart(pdfData("%PDF")))
			_, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "text-only", Messages: []*llmrelayv1.Message{m}, Tools: weatherTools(t)})
			return err
		}, codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no documents capability"},
		{"chat completions: file by url", chat("omni", &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/a.pdf"}, MimeType: "application/pdf"}),
			codes.InvalidArgument, "INVALID_REQUEST", "messages[0].parts[1].file.url"},
		{"chat completions: ogg audio", chat("omni", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("OggS")}, MimeType: "audio/ogg"}),
			codes.InvalidArgument, "INVALID_REQUEST", "messages[0].parts[1].file.mime_type"},
		{"chat completions: inline text", chat("omni", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("hi")}, MimeType: "text/plain"}),
			codes.InvalidArgument, "INVALID_REQUEST", "messages[0].parts[1].file.mime_type"},
		{"responses: inline zip", chat("responses", &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("PK")}, MimeType: "application/zip"}),
			codes.InvalidArgument, "INVALID_REQUEST", "messages[0].parts[1].file.mime_type"},
	}
	checkRefusals(t, cases)
	mu.Lock()
	if len(bodies) != 0 {
		t.Fatalf("the provider was called %d times for refused requests", len(bodies))
	}
	mu.Unlock()

	// Sent: a PDF and a wav, in the Chat Completions shapes.
	if err := chat("omni", pdfData("%PDF-1.4"), wav)(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var body struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if len(bodies) != 1 || json.Unmarshal([]byte(bodies[0]), &body) != nil || len(body.Messages) != 1 || len(body.Messages[0].Content) != 3 {
		t.Fatalf("bodies = %q", bodies)
	}
	got, _ := json.Marshal(body.Messages[0].Content[1:])
	want := `[{"file":{"file_data":"data:application/pdf;base64,JVBERi0xLjQ=","filename":"file.pdf"},"type":"file"},{"input_audio":{"data":"UklGRg==","format":"wav"},"type":"input_audio"}]`
	if string(got) != want {
		t.Errorf("content = %s\nwant      %s", got, want)
	}
}

// A format without file input cannot be given the documents or audio
// capability: the configuration is refused.
func TestFilesCapabilityNeedsAFormatThatTakesThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, format, capab string }{
		{"ollama", "ollama", "documents"}, {"ollama", "ollama", "audio"},
		{"anthropic", "anthropic-messages", "audio"}, {"openai", "openai-responses", "audio"},
	} {
		y := `
providers:
  - {name: p, type: ` + tc.typ + `, base_url: "http://127.0.0.1:1", api_key: k}
models:
  - name: m
    provider: p
    capabilities:
      chat: {format: ` + tc.format + `}
      ` + tc.capab + `: {format: ` + tc.format + `}
`
		cfg, err := config.Parse([]byte(y), "test")
		if err != nil {
			t.Fatalf("%v: %v", tc, err)
		}
		_, err = server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil || !strings.Contains(err.Error(), tc.format+" does not serve "+tc.capab) {
			t.Errorf("%v: err = %v", tc, err)
		}
	}
}

// refusalCase is a call the gateway must refuse: with code and reason, and
// (FailedPrecondition) a message naming the capability, else a BadRequest
// naming the field, want.
type refusalCase struct {
	name   string
	call   func() error
	code   codes.Code
	reason string
	want   string
}

func checkRefusals(t *testing.T, cases []refusalCase) {
	t.Helper()
	for _, tc := range cases {
		st, info, br := statusDetails(t, tc.call())
		if st.Code() != tc.code || info.GetReason() != tc.reason {
			t.Errorf("%s: got %v %s (%s), want %v %s", tc.name, st.Code(), info.GetReason(), st.Message(), tc.code, tc.reason)
			continue
		}
		if tc.code == codes.FailedPrecondition {
			if !strings.Contains(st.Message(), tc.want) {
				t.Errorf("%s: message %q, want %q", tc.name, st.Message(), tc.want)
			}
		} else if br == nil || len(br.GetFieldViolations()) == 0 || br.GetFieldViolations()[0].GetField() != tc.want {
			t.Errorf("%s: BadRequest = %v, want field %q", tc.name, br, tc.want)
		}
	}
}
