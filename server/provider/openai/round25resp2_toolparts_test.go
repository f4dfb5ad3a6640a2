package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"google.golang.org/protobuf/proto"
)

// Round 25 (responses, wave 2): anomalyco/opencode's recordings of a
// function_call_output whose output is a list (input_text, then an
// input_file or input_image), which OpenAI and xAI answered. Each request
// is the follow-up after a tool call; the contract says it with a
// ToolResult carrying parts (ToolResult.parts), and the request we build
// must send the call and its output as the recorded one did.

// r25ToolPartsCase is one recording: its follow-up as the contract says
// it (the tool result's parts decoded from the recorded output).
type r25ToolPartsCase struct {
	name, model, baseURL string
	reasoning            bool
}

// r25ToolPartsRequest is the recorded follow-up (system, user, the call,
// its output) as the contract says it: the output's first input_text is
// the result's content, the items after it its parts (a data: URL decoded
// to the file's or image's bytes and media type).
func r25ToolPartsRequest(t *testing.T, c r25ToolPartsCase, recorded map[string]any) *provider.Request {
	t.Helper()
	in := recorded["input"].([]any)
	if len(in) != 4 {
		t.Fatalf("recorded input %v", in)
	}
	system := in[0].(map[string]any)["content"].(string)
	question := in[1].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	call, out := in[2].(map[string]any), in[3].(map[string]any)
	items := out["output"].([]any)
	content := items[0].(map[string]any)["text"].(string)
	var parts []*llmrelayv1.Part
	for _, raw := range items[1:] {
		it := raw.(map[string]any)
		switch it["type"] {
		case "input_file":
			mt, data := r25DataURL(t, it["file_data"].(string))
			parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{
				Source: &llmrelayv1.File_Data{Data: data}, MimeType: mt, Filename: it["filename"].(string)}}})
		case "input_image":
			mt, data := r25DataURL(t, it["image_url"].(string))
			parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
				Source: &llmrelayv1.Image_Data{Data: data}, MimeType: mt}}})
		default:
			t.Fatalf("recorded output item %v", it)
		}
	}
	tool := recorded["tools"].([]any)[0].(map[string]any)
	params, err := json.Marshal(tool["parameters"])
	if err != nil {
		t.Fatal(err)
	}
	req := r21Request(c.model, "")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, c.reasoning
	req.Tools = []*llmrelayv1.Tool{{Name: tool["name"].(string), Description: tool["description"].(string), Parameters: string(params)}}
	req.Messages = []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system)),
		msgOf(llmrelayv1.Role_ROLE_USER, text(question)),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: call["call_id"].(string), Name: call["name"].(string), Arguments: call["arguments"].(string)}}}}},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: out["call_id"].(string), Content: content, Parts: parts}}}}},
	}
	return req
}

// r25DataURL splits a base64 data: URL into its media type and bytes.
func r25DataURL(t *testing.T, u string) (string, []byte) {
	t.Helper()
	rest, ok := strings.CutPrefix(u, "data:")
	mt, b64, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		t.Fatalf("not a base64 data: URL: %.60q", u)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return mt, data
}

// r25CheckToolParts builds the recording's follow-up and compares its call
// and output items with the recorded ones, which the provider answered.
func r25CheckToolParts(t *testing.T, c r25ToolPartsCase) {
	t.Helper()
	recorded := r25RecordedRequest(t, c.name)
	req := r25ToolPartsRequest(t, c, recorded)
	p, err := New(testKey, WithBaseURL(c.baseURL))
	if err != nil {
		t.Fatal(err)
	}
	built, warnings := r24Built(t, p, req)
	want := recorded["input"].([]any)
	if len(warnings) != 0 || len(built.Input) != len(want) {
		t.Fatalf("input %v, warnings %q", built.Input, warnings)
	}
	for i := 2; i < len(want); i++ {
		g, w := built.Input[i].(map[string]any), want[i].(map[string]any)
		// The item ids and statuses opencode made up for the call and
		// its output (fc_…/fco_…, "completed"): ours sends neither (the
		// contract pairs by call_id, as TestRound24OpencodeToolLoop says).
		delete(w, "id")
		delete(w, "status")
		if !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("input[%d]\n got %.600s\nwant %.600s", i, gb, wb)
		}
	}
}

// TestRound25OpencodePDFToolResult: anomalyco/opencode's pdf/openai-tool-result
// and pdf/xai-tool-result recordings (August 2026), gpt-4o-mini on OpenAI
// and grok-4.5 on xAI: the follow-up after a read_pdf call whose output
// is [input_text "PDF read successfully", input_file {filename, file_data
// as a data:application/pdf;base64 URL}], answered "… ORCHID-7391" by
// both. Our follow-up sends the call and the output as recorded; the
// answers are read whole.
func TestRound25OpencodePDFToolResult(t *testing.T) {
	t.Parallel()
	r25CheckToolParts(t, r25ToolPartsCase{name: "real_opencode_pdf_openai_tool_result_stream", model: "gpt-4o-mini", baseURL: "https://api.openai.com/v1"})
	r25CheckToolParts(t, r25ToolPartsCase{name: "real_opencode_pdf_xai_tool_result_stream", model: "grok-4.5", baseURL: "https://api.x.ai/v1"})

	f := r21Stream(t, "real_opencode_pdf_openai_tool_result_stream", r21Request("gpt-4o-mini", "Return only the verification code from the PDF."))
	r21Answer{text: "The verification code from the PDF is: ORCHID-7391",
		usage: &llmrelayv1.Usage{InputTokens: 107, OutputTokens: 16, TotalTokens: 123},
		id:    "resp_0b591494b7edb09b016a8b3cb2837887d295d458c80a691078", model: "gpt-4o-mini-2024-07-18"}.check(t, f.Message, f.Meta)

	f = r21Stream(t, "real_opencode_pdf_xai_tool_result_stream", r21Request("grok-4.5", "Return only the verification code from the PDF."))
	r21Answer{text: "ORCHID-7391",
		usage: &llmrelayv1.Usage{InputTokens: 1262, OutputTokens: 10, TotalTokens: 1272, CachedInputTokens: 128},
		id:    "0759ba64-ac9b-99ec-a177-354062954b11", model: "grok-4.5"}.check(t, f.Message, f.Meta)
}

// TestRound25OpencodeImageToolResult: anomalyco/opencode's
// openai-responses-gpt-5-5-image-tool-result recording (gpt-5.5 on OpenAI,
// May 2026): the follow-up after a read_screenshot call whose output is
// [input_text "Image read successfully", input_image {image_url as a
// data:image/png;base64 URL}], with no detail (the output item's detail
// is optional and "defaults to auto"), answered "jiggling restroom prison"
// (phase final_answer). Our follow-up sends the call and the output as
// recorded; the answer is read whole.
func TestRound25OpencodeImageToolResult(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_gpt55_image_tool_result_stream"
	r25CheckToolParts(t, r25ToolPartsCase{name: name, model: "gpt-5.5", baseURL: "https://api.openai.com/v1", reasoning: true})

	req := r21Request("gpt-5.5", "Use the read_screenshot tool, then reply with the words shown.")
	req.Reasoning = true
	f := r21Stream(t, name, req)
	r21Answer{text: "jiggling restroom prison",
		usage: &llmrelayv1.Usage{InputTokens: 227, OutputTokens: 9, TotalTokens: 236},
		id:    "resp_06646cef0abb6407016a1235f665a88197a401db20cfc8c787", model: "gpt-5.5-2026-04-23"}.check(t, f.Message, f.Meta)
	if ph := f.Message.GetParts()[0].GetPhase(); ph != "final_answer" {
		t.Errorf("phase %q", ph)
	}
}

// TestRound25OpencodeDigitalOceanKimiToolLoop: kimi-k2.6 on DigitalOcean's
// serverless inference Responses endpoint (inference.do-ai.run/v1/responses,
// October 2026; anomalyco/opencode's
// digitalocean-responses/uses-responses-for-a-non-openai-model
// recording), LiteLLM's hosted_vllm in front of vLLM: a reasoning item
// with a bare 16-hex id streamed as reasoning_text (no summary, no
// encrypted content), then the call; response.completed lists both
// afresh (rs_…/fc_… ids, call id functions.get_weather:0, the arguments
// without the spaces streamed around them). The follow-up DigitalOcean
// answered sends the call turn's reasoning back as {type: reasoning,
// summary: [{summary_text, text}], encrypted_content: null}, without an
// id, then the call with its streamed call id.
func TestRound25OpencodeDigitalOceanKimiToolLoop(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_digitalocean_kimi_tool_loop_stream_1"
	const instr = "Use the get_weather tool exactly once. After the tool result, reply exactly: Paris is sunny."
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req := r21Request("kimi-k2.6", "What is the weather in Paris?")
	req.Reasoning, req.Protocol, req.Tools = true, llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	f := r21Stream(t, name, req)
	parts := f.Message.GetParts()
	if len(parts) != 2 || !strings.HasPrefix(parts[0].GetReasoning().GetText(), " The user is asking") || parts[0].GetReasoning().GetSignature() != "" {
		t.Fatalf("parts %v", parts)
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 89 || u.GetCachedInputTokens() != 64 || u.GetOutputTokens() != 70 || u.GetReasoningTokens() != 52 {
		t.Errorf("usage %v", u)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	call := parts[1].GetToolCall()

	p, err := New(testKey, WithBaseURL("https://inference.do-ai.run/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("kimi-k2.6", "")
	next.Reasoning, next.Protocol, next.Tools = true, llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	next.Messages = []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(instr)),
		msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")),
		f.Message,
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: call.GetCallId(), Content: `{"temperature":22,"condition":"sunny"}`}}}}},
	}
	built, warnings := r24Built(t, p, next)
	want := r24RecordedInput(t, name)
	// Ours sends the system message as an input item (developer, a
	// reasoning request) where opencode sent it as instructions.
	got := built.Input[1:]
	if len(warnings) != 0 || len(got) != len(want) {
		t.Fatalf("input %v, warnings %q; recorded %v", built.Input, warnings, want)
	}
	for i := range want {
		g, w := got[i].(map[string]any), want[i].(map[string]any)
		switch w["type"] {
		case "reasoning":
			// Recorded with "encrypted_content": null, which ours
			// leaves out.
			if v, ok := w["encrypted_content"]; !ok || v != nil {
				t.Fatalf("recorded %v", w)
			}
			delete(w, "encrypted_content")
		case "function_call":
			// The arguments go back as streamed (" {…} ", spaces
			// around them); opencode re-serialized them.
			w["arguments"] = g["arguments"]
			if g["arguments"] != ` {"city":"Paris"} ` {
				t.Errorf("arguments %q", g["arguments"])
			}
		}
		if !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("input[%d]\n got %s\nwant %s", i, gb, wb)
		}
	}

	// Responses only: the host's Chat Completions replay stays none (the
	// reasoning left out, warned), and an explicit "none" holds on the
	// Responses API too.
	next.Format = "openai-chat"
	b, warnings, err := p.buildChatRequest(next, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "The user is asking") || len(warnings) != 1 {
		t.Errorf("chat request %s, warnings %q", b, warnings)
	}
	next.Format = formatResponses
	none, err := New(testKey, WithBaseURL("https://inference.do-ai.run/v1"), WithReasoningReplay("none"))
	if err != nil {
		t.Fatal(err)
	}
	if built, warnings := r24Built(t, none, next); len(built.Input) != 4 || len(warnings) != 1 {
		t.Errorf("replay none: input %v, warnings %q", built.Input, warnings)
	}
}

// TestRound25AzureMultiSummaryEncrypted: gpt-5.4 on Azure (vercel/ai's
// azure-gpt5-reasoning-multi-summary-with-encryption fixture, synthesized
// by its authors from the live stream's shape): one reasoning item whose
// summary streams as six parts (summary_index 0…5, each with its
// part.added, deltas, text.done and part.done), its encrypted_content a
// partial value in output_item.added and another in output_item.done and
// response.completed. The stream folds to one reasoning part: the six
// summaries joined with a blank line (as the unary reading joins them),
// signed with the done event's encrypted content, never the partial one;
// the follow-up sends that item whole.
func TestRound25AzureMultiSummaryEncrypted(t *testing.T) {
	t.Parallel()
	const name = "vercel_azure_gpt54_multi_summary_encrypted_stream"
	req := r21Request("gpt-5.4", "Explain.")
	req.Reasoning = true
	f := r21Stream(t, name, req)
	var summaries []string
	for i := range 6 {
		summaries = append(summaries, fmt.Sprintf("**Anonymized summary %d**\n\nThis is placeholder reasoning text for anonymized fixture summary index %d. "+
			"The actual reasoning content has been redacted; only the streaming structure is preserved for test purposes.", i, i))
	}
	canonical := "AZURE_FIXTURE_CANONICAL_" + strings.Repeat("B", 64)
	parts := f.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	if r.GetId() != "rs_anonymized_reasoning_synth_001" || r.GetText() != strings.Join(summaries, "\n\n") || r.GetSignature() != canonical ||
		!reflect.DeepEqual(r.GetSummaryParts(), summaries) {
		t.Errorf("reasoning %v", r)
	}
	if parts[1].GetText() != "Anonymized assistant response text." || parts[1].GetPhase() != "final_answer" || len(f.Meta.GetWarnings()) != 0 {
		t.Errorf("text %v, warnings %q", parts[1], f.Meta.GetWarnings())
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 100 || u.GetOutputTokens() != 500 || u.GetReasoningTokens() != 300 {
		t.Errorf("usage %v", u)
	}

	// The unary reading of the final response is the same block.
	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	unary, err := p.parseResponsesResponse(respFinalObject(string(raw)), "gpt-5.4")
	if err != nil {
		t.Fatal(err)
	}
	if u := unary.Message.GetParts(); len(u) != 2 || !proto.Equal(u[0], parts[0]) {
		t.Errorf("unary parts %v", u)
	}

	got, warnings := r24NextInput(t, p, "gpt-5.4", msgOf(llmrelayv1.Role_ROLE_USER, text("Explain.")), f.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("More.")))
	// The six summaries go back as six summary_text entries (round 26;
	// before, one entry held them joined).
	var entries []any
	for _, s := range summaries {
		entries = append(entries, map[string]any{"type": "summary_text", "text": s})
	}
	want := map[string]any{"type": "reasoning", "id": "rs_anonymized_reasoning_synth_001", "encrypted_content": canonical, "summary": entries}
	if len(warnings) != 0 || len(got) != 4 || !reflect.DeepEqual(got[1], want) {
		t.Errorf("input %v, warnings %q", got, warnings)
	}
}
