package openai

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// r25RecordedRequest is a recorded request body
// (<name>.recorded_request.json, as the source recorded it), decoded.
func r25RecordedRequest(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(td(name + ".recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// r25PDFRequest is the request of opencode's pdf recordings as the
// contract says it: a PDF (the recorded one, decoded from its data: URL)
// and the question, in one user message, at most 40 output tokens,
// temperature 0.
func r25PDFRequest(t *testing.T, recorded map[string]any, model string) *provider.Request {
	t.Helper()
	content := recorded["input"].([]any)[0].(map[string]any)["content"].([]any)
	file := content[0].(map[string]any)
	data, ok := strings.CutPrefix(file["file_data"].(string), "data:application/pdf;base64,")
	if !ok {
		t.Fatalf("file_data %.40q", file["file_data"])
	}
	pdf, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	req := r21Request(model, "")
	req.Messages = []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: pdf}, MimeType: "application/pdf", Filename: file["filename"].(string)}}},
		text(content[1].(map[string]any)["text"].(string)),
	}}}
	temp := float64(0)
	req.Options = &llmrelayv1.GenerationOptions{MaxTokens: ptrInt32(40), Temperature: &temp}
	return req
}

func ptrInt32(n int32) *int32 { return &n }

// TestRound25OpencodePDFUserInput: anomalyco/opencode's pdf/openai-user-input
// recording, gpt-4o-mini on OpenAI's Responses API (August 2026): a PDF
// sent inline as an input_file (filename and a data: URL) before the
// question, answered "ORCHID-7391" in six deltas, 44 input and 7 output
// tokens of the 40 allowed. The request we build sends the same content,
// the PDF's data: URL byte for byte, and the same limit and temperature;
// the answer is read whole (no bug).
func TestRound25OpencodePDFUserInput(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_pdf_openai_user_input_stream"
	recorded := r25RecordedRequest(t, name)
	req := r25PDFRequest(t, recorded, "gpt-4o-mini")
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	b, warnings, err := p.buildResponsesRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var built map[string]any
	if err := json.Unmarshal(b, &built); err != nil {
		t.Fatal(err)
	}
	// Our message item says its type ("message"), which the recorded
	// one (an EasyInputMessage) leaves out: both are the API's.
	in := built["input"].([]any)
	if len(in) != 1 || in[0].(map[string]any)["type"] != "message" {
		t.Fatalf("input %v", in)
	}
	delete(in[0].(map[string]any), "type")
	for _, k := range []string{"input", "max_output_tokens", "temperature", "stream"} {
		if !reflect.DeepEqual(built[k], recorded[k]) {
			t.Errorf("%s: built %.300v, recorded %.300v", k, built[k], recorded[k])
		}
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	f := r21Stream(t, name, req)
	r21Answer{text: "ORCHID-7391", usage: &llmrelayv1.Usage{InputTokens: 44, OutputTokens: 7, TotalTokens: 51},
		id: "resp_03fe79eb21c3966c016a8b3cbc8dd087d2a1ace811c65df1b3", model: "gpt-4o-mini-2024-07-18"}.check(t, f.Message, f.Meta)
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
}
