package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// simonw/llm-gemini's VCR cassettes (testdata/README.md, "Real recordings
// from simonw/llm-gemini's cassettes"). llm-gemini streams without alt=sse
// (a JSON array); each element is replayed as one SSE event, its bytes
// unchanged. The expectations below are read off the recordings by hand.
type simonwCall struct{ id, name, args, sigPrefix string }

type simonwWant struct {
	req        string // generateCases key
	model      string
	responseID string
	text       string
	reasoning  string // the thought text, all blocks joined
	sigPrefix  string // the start of the first reasoning block's signature
	calls      []simonwCall
	finish     llmrelayv1.FinishReason
	finishMsg  string
	// in, out, total, thoughts: the last chunk's usageMetadata
	// (out = candidatesTokenCount + thoughtsTokenCount).
	in, out, total, thoughts int32
}

var simonwStreams = map[string]simonwWant{
	// gemini-3-flash-preview: one chunk with a whole call carrying the
	// provider's own call id and a thoughtSignature, then an empty text
	// part with finishReason; 19 candidate + 248 thought tokens.
	"real_llm_stream_events_tool_calls": {req: "tools_parallel", model: "gemini-3-flash-preview", responseID: "znLSafGoDoPUjMcPwMnh0AE",
		calls:  []simonwCall{{"c9bjmkfz", "pelican_name_generator", `{"type":"funny"}`, "EosJCogJAb4+9vvm5UYU"}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, in: 28, out: 19 + 248, total: 295, thoughts: 248},
	// The same model without a call id: the gateway derives one.
	"real_llm_tools_with_gemini_3_thought_signatures_1": {req: "tools_parallel", model: "gemini-3-flash-preview", responseID: "6XJFadi3PJOx-sAPgJ3S6Qs",
		calls:  []simonwCall{{"", "multiply", `{"y":3,"x":5}`, "Et0BCtoBAXLI2nwMB4mo"}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, in: 60, out: 16 + 32, total: 108, thoughts: 32},
	// After the tool result: the last chunk raises promptTokenCount (89 to 121).
	"real_llm_tools_with_gemini_3_thought_signatures_2": {req: "plain", model: "gemini-3-flash-preview", responseID: "6nJFaZPBLriWjMcPkf_q8Ac",
		text: "5 times 3 is 15.", finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 121, out: 9, total: 130},
	// The signature comes on a final empty text part.
	"real_llm_parts_text": {req: "plain", model: "gemini-3-flash-preview", responseID: "wXLSafLFIfuI-sAPoNOEqQE",
		text: "Hello", sigPrefix: "ErgCCrUCAb4+9vuE3OBR",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 4, out: 1 + 58, total: 63, thoughts: 58},
	// gemini-1.5-flash-latest (February 2025): no responseId, no candidate
	// index; the first chunk says 10 prompt tokens, the last 9.
	"real_llm_prompt": {req: "plain", model: "gemini-1.5-flash-latest",
		text: "Percy\n", finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 9, out: 2, total: 11},
	// gemini-2.5-flash with includeThoughts: a thought summary, then a
	// signed no-argument call with finishMessage.
	"real_llm_tools_1": {req: "thinking_tools", model: "gemini-2.5-flash", responseID: "OYpyaqycKd2V_uMP65TsgA0",
		reasoning: "**Generating Pelican Names**\n\nOkay, I'm thinking I should use the `pelican_name_generator` tool to address the user's request. It seems straightforward: call it twice to get two different names for the pet pelican. It's a quick plan.\n\n\n",
		calls:     []simonwCall{{"", "pelican_name_generator", `{}`, "ClgBEU0yD8z3tYzbgjZ1"}},
		finish:    llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, finishMsg: "Model generated function call(s).",
		in: 32, out: 12 + 42, total: 86, thoughts: 42},
	"real_llm_tools_3": {req: "plain", model: "gemini-2.5-flash", responseID: "O4pyaoO6FrXO_uMPga2X6QY",
		text: "How about Charles and Sammy?", finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 137, out: 6, total: 143},
	// Asked for gemini-flash-latest, answered by the model it resolves to.
	"real_llm_resolved_model": {req: "plain", model: "gemini-2.5-flash-preview-09-2025", responseID: "lonVaNDgJMnUz7IPh9_DqQo",
		text: "Hi there! How can I help you today?", finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 2, out: 10, total: 12},
	// gemini-3.6-flash: a call with nested object arguments and its own
	// id; then the answer, its signature on a final empty text part whose
	// chunk raises promptTokenCount (284 to 467).
	"real_llm_tools_with_nested_pydantic_models_1": {req: "thinking_tools", model: "gemini-3.6-flash", responseID: "l4pyarrSEcupjrEPvJaO4A0",
		calls: []simonwCall{{"whZntcQw", "add_person",
			`{"age":30,"name":"Alice","address":{"street":"123 Main St","city":"San Francisco","zipcode":"94102"}}`, "EsYFCsMFARFNMg/JPnxo"}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, in: 201, out: 51 + 183, total: 435, thoughts: 183},
	"real_llm_tools_with_nested_pydantic_models_2": {req: "thinking_tools", model: "gemini-3.6-flash", responseID: "mIpyao-GM5rVjMcPg8X9oA4",
		text:      "Alice (age 30) living at 123 Main St, San Francisco, CA 94102 has been successfully added to the database.",
		sigPrefix: "EoEBCn8BEU0yD/faeXJs",
		finish:    llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 467, out: 34 + 13, total: 514, thoughts: 13},
	// JSON mode with a schema: the object is streamed in four pieces.
	"real_llm_prompt_with_pydantic_schema": {req: "plain", model: "gemini-1.5-flash-latest",
		text:   `{"age": 3, "bio": "A fluffy Samoyed with exceptional intelligence and a love for belly rubs. He's mastered several tricks, including fetching the newspaper and opening doors.", "name": "Cloud"}`,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 10, out: 46, total: 56},
}

func TestSimonwStreams(t *testing.T) {
	t.Parallel()
	for name, w := range simonwStreams {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, name)
			s, err := p.Stream(context.Background(), generateCases(t)[w.req])
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			if !errors.Is(end, io.EOF) {
				t.Fatalf("stream ended with %v", end)
			}
			providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
			checkSimonw(t, w, evs)
		})
	}
}

func checkSimonw(t *testing.T, w simonwWant, evs []*provider.Event) {
	t.Helper()
	f := foldEvents(evs)
	var reasoning, sig strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			reasoning.WriteString(ev.Reasoning.Text)
			if ev.Reasoning.Index == 0 {
				sig.WriteString(ev.Reasoning.Signature)
			}
		}
	}
	if f.text != w.text {
		t.Errorf("text %q, want %q", f.text, w.text)
	}
	if reasoning.String() != w.reasoning {
		t.Errorf("reasoning %q, want %q", reasoning.String(), w.reasoning)
	}
	if !strings.HasPrefix(sig.String(), w.sigPrefix) || (w.sigPrefix == "") != (sig.Len() == 0) {
		t.Errorf("reasoning signature %.30q, want one starting %q", sig.String(), w.sigPrefix)
	}
	if len(f.calls) != len(w.calls) {
		t.Fatalf("%d calls, want %d: %v", len(f.calls), len(w.calls), f.calls)
	}
	for i, c := range w.calls {
		got := f.calls[i]
		wantID := c.id
		if wantID == "" {
			wantID = generatedID(w.responseID, i, "", "")
		}
		if got.GetCallId() != wantID || got.GetName() != c.name || !got.GetArgumentsValid() || !strings.HasPrefix(got.GetSignature(), c.sigPrefix) {
			t.Errorf("call %d = %v, want id %s name %s signature %s…", i, got, wantID, c.name, c.sigPrefix)
		}
		var gotArgs, wantArgs any
		if json.Unmarshal([]byte(got.GetArguments()), &gotArgs) != nil || json.Unmarshal([]byte(c.args), &wantArgs) != nil ||
			!jsonEqual(gotArgs, wantArgs) {
			t.Errorf("call %d arguments %s, want %s", i, got.GetArguments(), c.args)
		}
	}
	m := f.meta
	if m.GetResolvedModel() != w.model || m.GetResponseId() != w.responseID {
		t.Errorf("model %q id %q, want %q %q", m.GetResolvedModel(), m.GetResponseId(), w.model, w.responseID)
	}
	if m.GetFinishReason() != w.finish || m.GetProviderFinishReason() != "STOP" {
		t.Errorf("finish %v / %q, want %v / STOP", m.GetFinishReason(), m.GetProviderFinishReason(), w.finish)
	}
	if got, _ := m.GetExtended().AsMap()[extFinishMessage].(string); got != w.finishMsg {
		t.Errorf("finish message %q, want %q", got, w.finishMsg)
	}
	u := f.usage
	if u.GetInputTokens() != w.in || u.GetOutputTokens() != w.out || u.GetTotalTokens() != w.total || u.GetReasoningTokens() != w.thoughts {
		t.Errorf("usage %v, want in %d out %d total %d reasoning %d", u, w.in, w.out, w.total, w.thoughts)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestSimonwEmbeddingBatch: gemini-embedding-2 embedding "First text" and
// "Second text" at 768 dimensions (testdata/real_llm_embedding_batch.http).
// The answer's usageMetadata (promptTokenCount 4 for both inputs) is the
// input usage; every value is the recorded one as float32.
func TestSimonwEmbeddingBatch(t *testing.T) {
	t.Parallel()
	const name = "real_llm_embedding_batch"
	dims := int32(768)
	p, srv := replay(t, name)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-2", Inputs: []string{"First text", "Second text"}, Dimensions: &dims})
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if c := srv.Last(t); c.Path != "/v1beta/models/gemini-embedding-2:batchEmbedContents" {
		t.Errorf("path %s", c.Path)
	}
	var rec struct {
		Embeddings []struct{ Values []float64 } `json:"embeddings"`
	}
	if err := json.Unmarshal(providertest.Load(t, filepath.Join("testdata", name+".http")).Body, &rec); err != nil {
		t.Fatal(err)
	}
	if len(res.Embeddings) != 2 || len(rec.Embeddings) != 2 || res.Meta.GetEmbeddingsCount() != 2 {
		t.Fatalf("%d embeddings (count %d), recorded %d", len(res.Embeddings), res.Meta.GetEmbeddingsCount(), len(rec.Embeddings))
	}
	for i, e := range res.Embeddings {
		if e.GetIndex() != int32(i) || len(e.GetValues()) != 768 || len(rec.Embeddings[i].Values) != 768 {
			t.Fatalf("embedding %d: index %d, %d values", i, e.GetIndex(), len(e.GetValues()))
		}
		for j, v := range rec.Embeddings[i].Values {
			if e.GetValues()[j] != float32(v) {
				t.Fatalf("embedding %d value %d = %v, recorded %v", i, j, e.GetValues()[j], v)
			}
		}
	}
	// Read off the recording by hand.
	if v := res.Embeddings[0].GetValues(); v[0] != -0.011345503 || v[1] != -0.011202878 || v[2] != 0.05836822 {
		t.Errorf("first values %v", v[:3])
	}
	if v := res.Embeddings[1].GetValues(); v[766] != -0.022146842 || v[767] != -0.0006047033 {
		t.Errorf("last values %v", v[766:])
	}
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 4 || u.GetOutputTokens() != 0 || u.GetTotalTokens() != 4 {
		t.Errorf("usage %v, want 4 input tokens", u)
	}
	if got := res.Meta.GetExtended().AsMap()["usage_details"]; !jsonEqual(got, map[string]any{"promptTokenDetails.TEXT": 4.0}) {
		t.Errorf("usage details %v", got)
	}
}
