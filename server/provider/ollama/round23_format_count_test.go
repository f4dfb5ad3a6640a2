package ollama

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// Round 23: with a format set, a local Ollama runs a thinking model twice
// (ollama/ollama server/routes.go, ChatHandler: structuredOutputsState; the
// first run unconstrained until the content starts, then a second run with
// the thinking in the prompt and the format applied) and its done line
// counts the second run only: eval_count leaves the thinking out
// (real_maruel_gemma4_e2b_thinking_json_schema: 817 bytes of thinking, 11
// tokens counted). The usage stays as counted, with a warning
// (window.formatCountWarning); ollama.com, which counts the whole answer,
// gets none.

const r23FormatWarning = "eval_count 11 leaves out the thinking"

func r23SchemaRequest(extra string) *provider.Request {
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON."))}}
	if extra != "" {
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: extra}
	} else {
		req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"type":"object","properties":{"is_fruit":{"type":"boolean"}},"required":["is_fruit"]}`}}
	}
	return req
}

// r23Stream is the recorded answer as a local Ollama streams it: the
// thinking in pieces (the first run), the empty-content line the
// generic thinking parser sends at the switch, the content in pieces (the
// second run), then the recorded done line.
func r23Stream(t *testing.T) string {
	t.Helper()
	const name = "real_maruel_gemma4_e2b_thinking_json_schema"
	content, thinking, done := r22Recorded(t, name, false)
	var b strings.Builder
	line := func(field, piece string) {
		b.WriteString(providertest.MustJSON(map[string]any{"model": "gemma4:e2b", "created_at": "2026-05-04T22:48:59.1Z",
			"message": map[string]any{"role": "assistant", "content": "", field: piece}, "done": false}) + "\n")
	}
	for _, p := range providertest.StringPieces(thinking, 40, nil) {
		line("thinking", p)
	}
	line("content", "")
	for _, p := range providertest.StringPieces(content, 5, nil) {
		line("content", p)
	}
	done["message"] = json.RawMessage(`{"role":"assistant","content":""}`)
	b.WriteString(providertest.MustJSON(done) + "\n")
	return b.String()
}

func r23StreamMeta(t *testing.T, body string, req *provider.Request) *llmrelayv1.ResponseMeta {
	t.Helper()
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(body)})
	st, err := newTestProvider(t, srv).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if u := f.meta.GetUsage(); u.GetInputTokens() != 38 || u.GetOutputTokens() != 11 {
		t.Errorf("streamed usage %v, want 38 in, 11 out as counted", u)
	}
	return f.meta
}

func r23HasFormatWarning(w []string) bool {
	n := 0
	for _, s := range w {
		if strings.HasPrefix(s, r23FormatWarning) {
			n++
		}
	}
	return n == 1
}

// TestRound23FormatCountStreamed: the streamed twin of the recording gets
// the same warning; the same lines asked without a format do not (a
// thinking model's eval_count counts the thinking then).
func TestRound23FormatCountStreamed(t *testing.T) {
	t.Parallel()
	body := r23Stream(t)
	if m := r23StreamMeta(t, body, r23SchemaRequest("")); !r23HasFormatWarning(m.GetWarnings()) {
		t.Errorf("streamed with a schema: warnings %q", m.GetWarnings())
	}
	plain := r23SchemaRequest("")
	plain.Options = nil
	if m := r23StreamMeta(t, body, plain); len(m.GetWarnings()) != 0 {
		t.Errorf("streamed without a format: warnings %q", m.GetWarnings())
	}
}

// TestRound23FormatCountExtraBody: the format read from the body sent,
// so extra_body's counts; "format": "" too (Ollama's ChatHandler tests
// req.Format != nil and takes the two runs), not null.
func TestRound23FormatCountExtraBody(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma4_e2b_thinking_json_schema"
	for extra, want := range map[string]bool{`{"format":"json"}`: true, `{"format":""}`: true, `{"format":null}`: false, `{"seed":1}`: false} {
		srv := providertest.ReplayFile(t, td(name+".http"))
		res, err := newTestProvider(t, srv).Generate(context.Background(), r23SchemaRequest(extra))
		if err != nil {
			t.Fatal(err)
		}
		if got := r23HasFormatWarning(res.Meta.GetWarnings()); got != want {
			t.Errorf("extra_body %s: warnings %q, want the format one %v", extra, res.Meta.GetWarnings(), want)
		}
	}
}

// TestRound23FormatCountCloud: ollama.com counts the thinking with the
// answer (real_lcg_cloud_structured_output_glm: an 814-byte thinking and
// "{\"capital\": \"Paris\"}" counted 247 tokens) and its done line has no
// load_duration: no warning.
func TestRound23FormatCountCloud(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_cloud_structured_output_glm"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "glm-5.2",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("capital of France"))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"type":"object","properties":{"capital":{"type":"string"}}}`}}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, srv).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	content, thinking, done := r22Recorded(t, name, false)
	if len(thinking) != 814 || content != `{"capital": "Paris"}` || string(done["eval_count"]) != "247" || done["load_duration"] != nil {
		t.Fatalf("recording: %d bytes thinking, content %q, done %v", len(thinking), content, done)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("ollama.com's answer: warnings %q", w)
	}
	if u := res.Meta.GetUsage(); u.GetOutputTokens() != 247 {
		t.Errorf("usage %v", u)
	}
}

// TestRound23MaruelGemma3JSONSchema: the same prompt and schema to
// gemma3:4b, which does not think (maruel/genai's GenSync-JSONSchema, August
// 2025; testdata/README.md, "Round 23"): one run, `{"is_fruit": true}` and a
// line break in 9 tokens counted whole; a format, a local runner's counters
// (load_duration), but no thinking: no warning. The request is the recorded
// one (rmgOurs).
func TestRound23MaruelGemma3JSONSchema(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma3_4b_json_schema"
	res, srv := rmgUnary(t, name, &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma3:4b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`}}})
	rmgCheck(t, name, res, false, []*llmrelayv1.Part{text("{\"is_fruit\": true}\n")}, 26, 0, 9)
	checkCounters(t, res.Meta, rmgLocal(608993500, 85538166, 26, 18129875, 9, 175381083))
	rmgSameRequest(t, srv, name, rmgOurs)
}

// TestRound23MaruelGemma4JSONSchemaArray: gemma4:e2b with think false and a
// JSON schema whose root is an array (maruel/genai's GenSync-JSONSchemaArray,
// September 2026; testdata/README.md, "Round 23"): Ollama takes any JSON
// schema as format (OpenAI's structured outputs want an object root; Ollama
// does not), and answers the indented array as content. think false on
// gemma4 applies the format at once (ChatHandler's forceImmediate): one run,
// no thinking, 48 tokens counted whole, no warning. The request is the
// recorded one (rmgOurs): the schema byte for byte, think false.
func TestRound23MaruelGemma4JSONSchemaArray(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma4_e2b_json_schema_array"
	off := false
	res, srv := rmgUnary(t, name, &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Name two fruits with their color. Do not include an explanation. Reply ONLY as JSON."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","items":{"properties":{"name":{"type":"string"},"color":{"type":"string"}},"additionalProperties":false,"type":"object","required":["name","color"]},"type":"array"}`}},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: &off}}}})
	rmgCheck(t, name, res, false, []*llmrelayv1.Part{text("[\n  {\n    \"name\": \"Apple\",\n    \"color\": \"Red\"\n  },\n  {\n    \"name\": \"Banana\",\n    \"color\": \"Yellow\"\n  }\n]")}, 27, 0, 48)
	checkCounters(t, res.Meta, rmgLocal(6370588668, 4166555065, 27, 193942099, 48, 1655118647))
	rmgSameRequest(t, srv, name, rmgOurs)
}

// TestRound23MaruelGemma4JSONSchemaStream: the same prompt and schema
// streamed to gemma4:e2b with think false (maruel/genai's
// gemma4-e2b/GenStream-JSONSchema, May 2026; testdata/README.md, "Round
// 23"): the format applied at once, seven content lines `{"is_fruit":
// true}`, eval_count 8, no warning. The thinking stream of the same request
// (gemma4-e2b_thinking/GenStream-JSONSchema, over a hundred thinking
// lines before the same seven) counts 8 too: its count leaves the thinking
// out, as the warning says. The request is the recorded one (rmgOurs).
func TestRound23MaruelGemma4JSONSchemaStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma4_e2b_json_schema_stream"
	off := false
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma4:e2b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`}},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: &off}}}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	st, err := newTestProvider(t, srv).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, err))
	f := foldEvents(t, evs)
	if !proto.Equal(f.msg, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{text(`{"is_fruit": true}`)}}) {
		t.Errorf("message %v", f.msg)
	}
	m := f.meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 {
		t.Errorf("finish %v warnings %q", m.GetFinishReason(), m.GetWarnings())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 26 || u.GetOutputTokens() != 8 {
		t.Errorf("usage %v", u)
	}
	checkCounters(t, m, rmgLocal(420473916, 93824916, 26, 10305250, 8, 67680917))
	rmgSameRequest(t, srv, name, rmgOurs)
}
