package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 14: the Gemini response fixtures of microsoft/semantic-kernel's
// .NET Google connector (dotnet/src/Connectors/Connectors.Google.UnitTests/
// TestData). They are written by hand by the SDK's authors (placeholder
// function names with %nameSeparator%, signatures such as
// "test-thought-signature-abc123", the same 9/27/36 usage in every file),
// hence sk_*, not real_*: see testdata/README.md, "Round 14". Every
// expectation below is read off the fixture by hand.

var round14Recordings = []string{
	"sk_chat_finish_reason_other", "sk_chat_function_second_part", "sk_chat_function_with_thought_signature",
	"sk_chat_multiple_function_calls", "sk_chat_text_with_thought_signature", "sk_chat_stream",
	"sk_vertex_embed_content",
}

// skSafety is the safetyRatings array every semantic-kernel fixture has,
// on the candidate and in promptFeedback, as the extended meta holds it.
var skSafety = []any{
	map[string]any{"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
	map[string]any{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
	map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
	map[string]any{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
}

const skNoIDWarning = "gemini sent no responseId: tool call ids derived from the call's name, arguments and position"

// skCheckMeta checks what every unary semantic-kernel fixture says besides
// its message: no responseId and no modelVersion (so neither is reported),
// the finish reason, the usage as written, both safety rating arrays kept.
func skCheckMeta(t *testing.T, m *llmrelayv1.ResponseMeta, finish llmrelayv1.FinishReason, provFinish string,
	usage *llmrelayv1.Usage, calls int32, warnings ...string) {
	t.Helper()
	if m.GetResponseId() != "" || m.GetResolvedModel() != "" || m.GetFinishReason() != finish ||
		m.GetProviderFinishReason() != provFinish || m.GetToolCallCount() != calls || m.GetServiceTier() != "" {
		t.Errorf("meta %v", m)
	}
	if !proto.Equal(m.GetUsage(), usage) {
		t.Errorf("usage %v, want %v", m.GetUsage(), usage)
	}
	if len(m.GetWarnings()) != len(warnings) {
		t.Errorf("warnings %q, want %q", m.GetWarnings(), warnings)
	} else {
		for i, w := range warnings {
			if m.GetWarnings()[i] != w {
				t.Errorf("warning %d %q, want %q", i, m.GetWarnings()[i], w)
			}
		}
	}
	ext := m.GetExtended().AsMap()
	for _, k := range []string{extPromptSafetyRatings, "gemini.safety_ratings"} {
		if b, a := jsonOf(t, ext[k]), jsonOf(t, skSafety); b != a {
			t.Errorf("%s %s, want %s", k, b, a)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func skToolRequest(prompt string) *provider.Request {
	req := crewRequest(prompt)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	return req
}

// TestRound14SKFinishReasonOther: a candidate whose content is only
// {"role": "model"} (no parts) with finishReason OTHER: an empty assistant
// message, finish OTHER with the provider's reason, usage as written.
func TestRound14SKFinishReasonOther(t *testing.T) {
	t.Parallel()
	const name = "sk_chat_finish_reason_other"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), crewRequest("How are you?"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT); !proto.Equal(res.Message, want) {
		t.Errorf("message %v, want an empty assistant message", res.Message)
	}
	skCheckMeta(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_OTHER, "OTHER",
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 27, TotalTokens: 36}, 0)
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
}

// TestRound14SKCalls: the fixtures with function calls. None has a
// responseId, so each call's id is derived from its name, arguments and
// position (with the warning that says so); the arguments are the
// fixture's args object, compact; STOP with a call is a tool-call finish.
// The answer sent back gives each call as the fixture had it (no id: a
// derived id never goes to Gemini; the thoughtSignature byte for byte,
// though it is not base64 as the API's are) and the results by name, in
// the calls' order, in one user turn.
func TestRound14SKCalls(t *testing.T) {
	t.Parallel()
	type call struct{ name, args, sig string }
	cases := []struct {
		name     string
		text     string
		calls    []call
		usage    *llmrelayv1.Usage
		sentBack string
	}{
		{
			name:  "sk_chat_function_second_part",
			text:  "I'm fine, thanks. How are you?",
			calls: []call{{"TimePlugin%nameSeparator%Now", `{"param1":"hello"}`, ""}},
			usage: &llmrelayv1.Usage{InputTokens: 9, OutputTokens: 27, TotalTokens: 36},
			sentBack: `[{"text":"I'm fine, thanks. How are you?"},` +
				`{"functionCall":{"name":"TimePlugin%nameSeparator%Now","args":{"param1":"hello"}}}]`,
		},
		{
			name:     "sk_chat_function_with_thought_signature",
			calls:    []call{{"TimePlugin%nameSeparator%Now", `{"param1":"hello"}`, "test-thought-signature-abc123"}},
			usage:    &llmrelayv1.Usage{InputTokens: 9, OutputTokens: 27, TotalTokens: 36},
			sentBack: `[{"functionCall":{"name":"TimePlugin%nameSeparator%Now","args":{"param1":"hello"}},"thoughtSignature":"test-thought-signature-abc123"}]`,
		},
		{
			name: "sk_chat_multiple_function_calls",
			text: "I'll help you get the current time and date. Let me call both functions for you.",
			calls: []call{
				{"TimePlugin%nameSeparator%Now", `{"param1":"current time"}`, ""},
				{"TimePlugin%nameSeparator%Date", `{"format":"yyyy-MM-dd"}`, ""},
			},
			usage: &llmrelayv1.Usage{InputTokens: 50, OutputTokens: 25, TotalTokens: 75},
			sentBack: `[{"text":"I'll help you get the current time and date. Let me call both functions for you."},` +
				`{"functionCall":{"name":"TimePlugin%nameSeparator%Now","args":{"param1":"current time"}}},` +
				`{"functionCall":{"name":"TimePlugin%nameSeparator%Date","args":{"format":"yyyy-MM-dd"}}}]`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, tc.name)
			req := skToolRequest("How are you?")
			res, err := p.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			want := msg(llmrelayv1.Role_ROLE_ASSISTANT)
			if tc.text != "" {
				want.Parts = append(want.Parts, text(tc.text))
			}
			ids := map[string]bool{}
			for i, c := range tc.calls {
				part := toolCallPart(generatedID("", i, c.name, c.args), c.name, c.args)
				part.GetToolCall().Signature = c.sig
				want.Parts = append(want.Parts, part)
				ids[part.GetToolCall().CallId] = true
			}
			if len(ids) != len(tc.calls) {
				t.Fatalf("derived ids %v are not distinct", ids)
			}
			if !proto.Equal(res.Message, want) {
				t.Errorf("message\n got %v\nwant %v", res.Message, want)
			}
			skCheckMeta(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "STOP", tc.usage,
				int32(len(tc.calls)), skNoIDWarning)
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderResult(t, res))

			// The next turn: the answer, a result per call, a user question.
			p2, srv2 := replay(t, "sk_chat_text_with_thought_signature")
			req.Messages = append(req.Messages, res.Message)
			var results []*llmrelayv1.Part
			wantResults := "["
			for _, part := range res.Message.GetParts() {
				if c := part.GetToolCall(); c != nil {
					results = append(results, toolResultPart(c.CallId, `{"time":"12:00"}`))
					if len(results) > 1 {
						wantResults += ","
					}
					wantResults += `{"functionResponse":{"name":"` + tc.calls[len(results)-1].name + `","response":{"time":"12:00"}}}`
				}
			}
			wantResults += "]"
			req.Messages = append(req.Messages, msg(llmrelayv1.Role_ROLE_TOOL, results...), msg(llmrelayv1.Role_ROLE_USER, text("Thanks")))
			if _, err := p2.Generate(context.Background(), req); err != nil {
				t.Fatalf("Generate (next turn): %v", err)
			}
			sent, body := r13Request(t, srv2)
			if len(sent.Contents) != 4 || sent.Contents[1].Role != "model" || sent.Contents[2].Role != "user" || sent.Contents[3].Role != "user" {
				t.Fatalf("next turn %s", body)
			}
			if got := jsonOf(t, sent.Contents[1].Parts); !jsonTextEqual(t, json.RawMessage(got), tc.sentBack) {
				t.Errorf("model turn sent back\n got %s\nwant %s", got, tc.sentBack)
			}
			if got := jsonOf(t, sent.Contents[2].Parts); !jsonTextEqual(t, json.RawMessage(got), wantResults) {
				t.Errorf("results sent\n got %s\nwant %s", got, wantResults)
			}
		})
	}
}

// TestRound14SKTextSignature: a text part carrying a thoughtSignature
// ("text-response-thought-signature-xyz789", not base64): the text, then a
// reasoning part holding only the signature; sent back, the signature is
// on the text part again, as Gemini requires (a signature belongs to the
// part it came with).
func TestRound14SKTextSignature(t *testing.T) {
	t.Parallel()
	const name = "sk_chat_text_with_thought_signature"
	p, _ := replay(t, name)
	req := crewRequest("How are you?")
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("This is a text response with thinking enabled."),
		reasoningPart(&llmrelayv1.Reasoning{Signature: "text-response-thought-signature-xyz789"}))
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	skCheckMeta(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "STOP",
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 27, TotalTokens: 36}, 0)
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))

	p2, srv2 := replay(t, name)
	req.Messages = append(req.Messages, res.Message, msg(llmrelayv1.Role_ROLE_USER, text("And now?")))
	if _, err := p2.Generate(context.Background(), req); err != nil {
		t.Fatalf("Generate (next turn): %v", err)
	}
	sent, body := r13Request(t, srv2)
	if len(sent.Contents) != 3 || sent.Contents[1].Role != "model" {
		t.Fatalf("next turn %s", body)
	}
	const wantModel = `[{"text":"This is a text response with thinking enabled.","thoughtSignature":"text-response-thought-signature-xyz789"}]`
	if got := jsonOf(t, sent.Contents[1].Parts); !jsonTextEqual(t, json.RawMessage(got), wantModel) {
		t.Errorf("model turn sent back\n got %s\nwant %s", got, wantModel)
	}
}

// TestRound14SKStream: semantic-kernel's stream fixture (a JSON array of
// five chunks, replayed as five SSE events): every chunk has
// finishReason STOP and the same usage (9/27/36), only the first has
// promptFeedback, none a responseId or modelVersion. The text is the five
// pieces in order; the usage is reported once; the finish is STOP.
//
// Bug found: the prompt's safety ratings were only kept on the meta event
// sent for the first chunk with a responseId, modelVersion or createTime,
// so a stream without them (this one; the API before it sent those) lost
// promptFeedback.safetyRatings, which the unary answer keeps. They are now
// delivered with the chunk that carries them.
func TestRound14SKStream(t *testing.T) {
	t.Parallel()
	const name = "sk_chat_stream"
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), crewRequest("Tell me about the world"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	pieces := []string{
		"The world is a vast and complex place, full of wonder and beauty, but",
		" also of challenges and difficulties. It is a place of infinite diversity, where countless cultures, languages, and beliefs coexist. It is a place of stunning natural beauty",
		", from towering mountains to sparkling oceans, from lush rainforests to arid deserts. It is also a place of great human achievement, from towering skyscrapers to intricate works of art, from scientific discoveries to technological marvels.\n\nThe world is a place of both opportunity and inequality. It is a place where dreams can come true,",
		" but also where poverty, hunger, and disease are all too common. It is a place where people can live in peace and harmony, but also where conflict, violence, and war are all too frequent.\n\nThe world is a place of great beauty and wonder, but it is also a place of great challenge and difficulty. It is a place where we can find both the best and the worst of humanity. It is a place where we can make a difference, for better or for worse.\n\nThe world is a place of infinite possibilities. It is a place where anything can happen, where anything is possible. It is a place where",
		" we can create the future we want to see, a future of peace, justice, and equality for all.\n\nThe world is a place of wonder and beauty, a place of challenge and difficulty, a place of opportunity and inequality, a place of infinite possibilities. It is a place that is constantly changing, constantly evolving. It is a place that is full of surprises, both good and bad.\n\nThe world is a place that is worth exploring, worth fighting for, worth protecting. It is a place that we should all cherish and care for, a place that we should all strive to make a better place for all.",
	}
	var texts []string
	usages := 0
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			texts = append(texts, ev.Text)
		case provider.EventUsage:
			usages++
		case provider.EventToolCall, provider.EventReasoning:
			t.Errorf("unexpected event %s", renderEvent(t, ev))
		}
	}
	if jsonOf(t, texts) != jsonOf(t, pieces) {
		t.Errorf("text pieces\n got %q\nwant %q", texts, pieces)
	}
	if usages != 1 {
		t.Errorf("%d usage events, want 1 (every chunk has the same counts)", usages)
	}
	f := foldEvents(evs)
	if !proto.Equal(f.usage, &llmrelayv1.Usage{InputTokens: 9, OutputTokens: 27, TotalTokens: 36}) {
		t.Errorf("usage %v", f.usage)
	}
	m := f.meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
		m.GetResponseId() != "" || m.GetResolvedModel() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	ext := m.GetExtended().AsMap()
	for _, k := range []string{extPromptSafetyRatings, "gemini.safety_ratings"} {
		if b, a := jsonOf(t, ext[k]), jsonOf(t, skSafety); b != a {
			t.Errorf("%s %s, want %s", k, b, a)
		}
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
}

// TestRound14SKVertexEmbedContent: the Vertex AI embedContent fixture, two
// embeddings of three values each (0.1 … 0.6, written by hand) and no
// usageMetadata, as the answer to a batch of two inputs: both vectors in
// order, indexed 0 and 1, as float32; no usage (none was sent).
func TestRound14SKVertexEmbedContent(t *testing.T) {
	t.Parallel()
	const name = "sk_vertex_embed_content"
	p, srv := replay(t, name)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"First", "Second"}})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	want := []*llmrelayv1.Embedding{{Index: 0, Values: []float32{0.1, 0.2, 0.3}}, {Index: 1, Values: []float32{0.4, 0.5, 0.6}}}
	if len(res.Embeddings) != len(want) {
		t.Fatalf("%d embeddings", len(res.Embeddings))
	}
	for i := range want {
		if !proto.Equal(res.Embeddings[i], want[i]) {
			t.Errorf("embedding %d %v, want %v", i, res.Embeddings[i], want[i])
		}
	}
	if res.Meta.GetEmbeddingsCount() != 2 || res.Meta.GetUsage() != nil || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", res.Meta)
	}
	c := srv.Last(t)
	if c.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" {
		t.Errorf("request to %s", c.Path)
	}
	const wantBody = `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"First"}]}},` +
		`{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"Second"}]}}]}`
	if !jsonTextEqual(t, c.Body, wantBody) {
		t.Errorf("request %s, want %s", c.Body, wantBody)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
}
