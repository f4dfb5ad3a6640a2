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
	"google.golang.org/protobuf/proto"
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

// TestRound25OpencodeMantleGptOssReplay: gpt-oss-20b on Amazon Bedrock's
// Mantle endpoint, /v1/responses (anomalyco/opencode's
// bedrock-mantle-replay recording, September 2026), four turns: "OK",
// "TEST", a call to lookup_code, then "DONE" from its result. Mantle's
// stream: `data:` lines only, created_at a float (1788998643.0), reasoning
// items with msg_ ids streamed as reasoning_text parts
// (reasoning_part.added/done), the message's text at content_index 1, and
// a call whose output_item.done item and final response entry have no id
// but an item_id (and its output_index). Each answer is read whole.
//
// The fourth request, which Bedrock answered, sends every turn's
// reasoning back as a summary_text with encrypted_content null (gpt-oss
// keeps the reasoning of its tool-call turns; Mantle has no encrypted
// content). Ours left them all out, with a warning per item ("reasoning
// without encrypted content (signature) was not sent"); it now sends them
// as recorded: reasoning replay "reasoning" (auto for bedrock-mantle.*
// hosts, as on Chat Completions) sends reasoning without encrypted
// content as its summary text on the Responses API.
func TestRound25OpencodeMantleGptOssReplay(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_mantle_gptoss20b_replay_stream"
	tools := []*llmrelayv1.Tool{{Name: "lookup_code", Description: "Return the code to reply with",
		Parameters: `{"type":"object","properties":{},"additionalProperties":false}`}}
	questions := []string{`Reply with exactly "OK".`, `Now reply with exactly "TEST".`,
		"Call lookup_code. After the tool returns, reply with exactly the returned code."}
	var history []*llmrelayv1.Message
	for i, want := range []struct {
		reasoning, rsID, text string
		usage                 *llmrelayv1.Usage
		finish                llmrelayv1.FinishReason
	}{
		{`User wants response: exactly "OK". So just output OK.`, "msg_bac8180318660c28", "OK",
			&llmrelayv1.Usage{InputTokens: 73, OutputTokens: 24, TotalTokens: 97, ReasoningTokens: 14}, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"Just output TEST.", "msg_9348a0514e92a366", "TEST",
			&llmrelayv1.Usage{InputTokens: 91, OutputTokens: 15, TotalTokens: 106, ReasoningTokens: 5}, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"We need to invoke function lookup_code.", "msg_bfa65c1db1f9892a", "",
			&llmrelayv1.Usage{InputTokens: 167, OutputTokens: 32, TotalTokens: 199, ReasoningTokens: 15}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS},
		{"It returned DONE.", "msg_9144e25a9c0f6e1a", "DONE",
			&llmrelayv1.Usage{InputTokens: 143, OutputTokens: 15, TotalTokens: 158, ReasoningTokens: 5}, llmrelayv1.FinishReason_FINISH_REASON_STOP},
	} {
		req := r21Request("openai.gpt-oss-20b", questions[min(i, len(questions)-1)])
		req.Reasoning, req.Protocol, req.Tools = true, llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
		f := r21Stream(t, name+"_"+string(rune('1'+i)), req)
		p := f.Message.GetParts()
		if len(p) != 2 || p[0].GetReasoning().GetText() != want.reasoning || p[0].GetReasoning().GetId() != want.rsID {
			t.Fatalf("answer %d: parts %v", i+1, p)
		}
		if want.text != "" && p[1].GetText() != want.text {
			t.Errorf("answer %d: text %v", i+1, p[1])
		}
		if i == 2 {
			if c := p[1].GetToolCall(); c.GetCallId() != "call_984d58b480269b59" || c.GetName() != "lookup_code" ||
				c.GetArguments() != "{\"data\":{}}\n" || !c.GetArgumentsValid() {
				t.Errorf("call %v", c)
			}
		}
		wantFinish(t, f.Meta, want.finish, "completed")
		if u := f.Meta.GetUsage(); !proto.Equal(u, want.usage) || len(f.Meta.GetWarnings()) != 0 || f.Meta.GetCreateTime().GetSeconds() != 1788998643+int64(i/3) {
			t.Errorf("answer %d: usage %v, want %v; warnings %q; created %v", i+1, u, want.usage, f.Meta.GetWarnings(), f.Meta.GetCreateTime())
		}
		if i < len(questions) {
			history = append(history, msgOf(llmrelayv1.Role_ROLE_USER, text(questions[i])), f.Message)
		}
	}

	// The fourth request, built from our folds of the first three.
	p, err := New(testKey, WithBaseURL("https://bedrock-mantle.us-east-1.api.aws/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("openai.gpt-oss-20b", "")
	next.Reasoning, next.Protocol, next.Tools = true, llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	next.Messages = append(history, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_984d58b480269b59", Content: "DONE"}}}}})
	built, warnings := r24Built(t, p, next)
	want := r24RecordedInput(t, name+"_3")
	if len(warnings) != 0 || len(built.Input) != len(want) {
		t.Fatalf("input %v, warnings %q; recorded %v", built.Input, warnings, want)
	}
	r24DropEmptyAnnotations(built.Input)
	for i := range want {
		g, w := built.Input[i].(map[string]any), want[i].(map[string]any)
		switch w["type"] {
		case "reasoning":
			// Recorded with "encrypted_content": null, which ours
			// leaves out.
			if w["encrypted_content"] != nil {
				t.Fatalf("recorded %v", w)
			}
			delete(w, "encrypted_content")
		case "message":
			// The assistant's text, recorded as a string, is ours as
			// one output_text part.
			w["content"] = []any{map[string]any{"type": "output_text", "text": w["content"]}}
		case "function_call":
			// Recorded with its item id (fc_…, which ours leaves out,
			// as TestRound24OpencodeToolLoop says) and the arguments
			// without the newline Mantle streamed after them.
			delete(w, "id")
			w["arguments"] = g["arguments"]
			if g["arguments"] != "{\"data\":{}}\n" {
				t.Errorf("input[%d] arguments %q", i, g["arguments"])
			}
		case nil:
			// The user turns, recorded as EasyInputMessages.
			w["type"] = "message"
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("input[%d]\n got %v\nwant %v", i, g, w)
		}
	}
}
