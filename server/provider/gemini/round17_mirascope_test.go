package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17: Mirascope's e2e cassettes (testdata/README.md, "Round 17").

// TestRound17MirascopeAudio: gemini-2.5-flash hearing an MP3: the prompt's
// 91 tokens are 7 of text and 84 of audio (promptTokensDetails by
// modality, kept per modality in the usage details; the contract's usage
// has no audio count); 8 candidate + 354 thought tokens out, 453 total.
func TestRound17MirascopeAudio(t *testing.T) {
	t.Parallel()
	const name = "real_mirascope_google_audio"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Repeat exactly what you hear:"))},
	})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("LLM abstractions that aren't abstractions")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "lp75aOXLOu3pz7IPierukQs" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 91, OutputTokens: 8 + 354, TotalTokens: 453, ReasoningTokens: 354}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if got, want := r17Ext(m)["usage_details"], map[string]any{"promptTokensDetails.AUDIO": 84.0, "promptTokensDetails.TEXT": 7.0}; !jsonEqual(got, want) {
		t.Errorf("usage details %v, want %v", got, want)
	}
}

// The six thought summaries of real_mirascope_google_thinking_stream_1, in
// order, as the stream sent them (and as Mirascope sent them back).
var r17MiraThoughts = []string{
	"**Calculating Prime Substrings**\n\nI'm currently working on identifying prime numbers below 400 and determining which ones contain the substring \"79\". The plan involves generating a list of primes and then iterating through them, checking for the substring. My approach focuses on efficiency to ensure a quick result.\n\n\n",
	"**Identifying Patterns and Numbers**\n\nI've systematically generated prime numbers below 400 and checked for the substring \"79.\" So far, I've found it in 79 and 179. I'm now verifying the final prime numbers between 300 and 400. Once complete, I can confidently provide the final count of primes containing \"79.\"\n\n\n",
	"**Confirming Prime Number Counts**\n\nNow, I've methodically listed all primes under 400 and meticulously checked for the presence of the substring \"79\". I confirmed that 79, 179 and 379 are the only primes that satisfy the condition. The work is checked, so I am confident that I have provided an accurate count.\n\n\n",
	"**Verifying Prime Number Substrings**\n\nI've carefully listed all primes below 400 and exhaustively checked for \"79\" as a substring in each. The primes containing \"79\" are definitively 79, 179, and 379. My thorough verification involved a systematic check of various digit combinations. I'm now confident in the completeness of the search.\n\n\n",
	"**Confirming the Prime Count**\n\nI've rigorously checked all primes below 400 for the substring \"79\". The only ones that meet the criteria are 79, 179 and 379. This exhaustive search confirms the final count of 3 primes. The approach used here is fully verified.\n\n\n",
	"**Counting Primes with Substrings**\n\nI've completed my systematic listing and checking of all primes below 400 for the substring \"79\". I'm now certain that only 79, 179 and 379 contain this substring. The process involved a careful examination of digit combinations. I am ready to provide the final count, which is 3.\n\n\n",
}

// Mirascope's two requests, as the cassette recorded them.
const (
	r17MiraQuestion = "How many primes below 400 contain 79 as a substring? Answer ONLY with the number, not sharing which primes they are."
	r17MiraFollowUp = "If you remember what the primes were, then share them, or say 'I don't remember.'"
	r17MiraRequest1 = `{"contents": [{"parts": [{"text": "How many primes below 400 contain 79 as a substring? Answer ONLY with the number, not sharing which primes they are."}], "role": "user"}], "generationConfig": {"thinkingConfig": {"include_thoughts": true, "thinking_budget": 6400}}}`
	r17MiraRequest2 = `{"contents": [{"parts": [{"text": "How many primes below 400 contain 79 as a substring? Answer ONLY with the number, not sharing which primes they are."}], "role": "user"}, {"parts": [{"text": "**Calculating Prime Substrings**\n\nI'm currently working on identifying prime numbers below 400 and determining which ones contain the substring \"79\". The plan involves generating a list of primes and then iterating through them, checking for the substring. My approach focuses on efficiency to ensure a quick result.\n\n\n", "thought": true}, {"text": "**Identifying Patterns and Numbers**\n\nI've systematically generated prime numbers below 400 and checked for the substring \"79.\" So far, I've found it in 79 and 179. I'm now verifying the final prime numbers between 300 and 400. Once complete, I can confidently provide the final count of primes containing \"79.\"\n\n\n", "thought": true}, {"text": "**Confirming Prime Number Counts**\n\nNow, I've methodically listed all primes under 400 and meticulously checked for the presence of the substring \"79\". I confirmed that 79, 179 and 379 are the only primes that satisfy the condition. The work is checked, so I am confident that I have provided an accurate count.\n\n\n", "thought": true}, {"text": "**Verifying Prime Number Substrings**\n\nI've carefully listed all primes below 400 and exhaustively checked for \"79\" as a substring in each. The primes containing \"79\" are definitively 79, 179, and 379. My thorough verification involved a systematic check of various digit combinations. I'm now confident in the completeness of the search.\n\n\n", "thought": true}, {"text": "**Confirming the Prime Count**\n\nI've rigorously checked all primes below 400 for the substring \"79\". The only ones that meet the criteria are 79, 179 and 379. This exhaustive search confirms the final count of 3 primes. The approach used here is fully verified.\n\n\n", "thought": true}, {"text": "**Counting Primes with Substrings**\n\nI've completed my systematic listing and checking of all primes below 400 for the substring \"79\". I'm now certain that only 79, 179 and 379 contain this substring. The process involved a careful examination of digit combinations. I am ready to provide the final count, which is 3.\n\n\n", "thought": true}, {"text": "3"}], "role": "model"}, {"parts": [{"text": "If you remember what the primes were, then share them, or say 'I don't remember.'"}], "role": "user"}], "generationConfig": {"thinkingConfig": {"include_thoughts": false, "thinking_budget": 0}}}`
)

func r17MiraOptions(include bool, budget int32) *llmrelayv1.ProviderOptions {
	return &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: &include, ThinkingBudget: &budget}}}
}

// TestRound17MirascopeThinkingStream: gemini-2.5-flash streamed with
// includeThoughts and a 6400-token budget: six chunks each holding one
// thought summary (usage without candidatesTokenCount, the thought count
// growing 67 to 2455), then the answer "3" with STOP in a chunk whose usage
// still has no candidatesTokenCount: 30 in, 2455 out, all thinking, 2485
// total as recorded. No signature anywhere (Gemini 2.5 without tools). The
// summaries are one reasoning part (index 0), the text after it.
//
// Mirascope sent the answer back with a follow-up and thinking off
// (include_thoughts false, budget 0); the API answered (stream _2: "I
// don't remember." in two chunks, 517 in, 6 out). Our request from the
// folded answer has the same contents except that the six summaries are
// one thought part holding their text joined (the stream gave no
// boundary between them: they are deltas of one reasoning part), and the
// same generationConfig.
func TestRound17MirascopeThinkingStream(t *testing.T) {
	t.Parallel()
	const first, second = "real_mirascope_google_thinking_stream_1", "real_mirascope_google_thinking_stream_2"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
		Messages:        []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(r17MiraQuestion))},
		ProviderOptions: r17MiraOptions(true, 6400),
	}
	p, srv := replay(t, first)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderStream(t, evs, end))
	c := srv.Last(t)
	if c.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("request to %s?%s", c.Path, c.Query)
	}
	want1 := r17Camel(r17JSON(t, []byte(r17MiraRequest1))).(map[string]any)
	if got := r17JSON(t, c.Body); !jsonEqual(got, want1) {
		t.Errorf("request\n got %v\nwant %v", got, want1)
	}
	answer := foldMessage(t, evs)
	thought := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: strings.Join(r17MiraThoughts, "")}}}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, thought, text("3")); !proto.Equal(answer, want) {
		t.Errorf("message\n got %v\nwant %v", answer, want)
	}
	f := foldEvents(evs)
	if want := (&llmrelayv1.Usage{InputTokens: 30, OutputTokens: 2455, TotalTokens: 2485, ReasoningTokens: 2455}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	var usages []int32
	for _, ev := range evs {
		if ev.Kind == provider.EventUsage {
			usages = append(usages, ev.Usage.GetReasoningTokens())
		}
	}
	if want := []int32{67, 753, 1299, 1691, 2331, 2455}; !jsonEqual(usages, want) {
		t.Errorf("thought counts %v, want %v (one usage event per chunk that changed it)", usages, want)
	}
	m := f.meta
	if m.GetResponseId() != "HVJgacGnLYKymtkPktiSkAY" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	// The follow-up.
	req.Messages = append(req.Messages, answer, msg(llmrelayv1.Role_ROLE_USER, text(r17MiraFollowUp)))
	req.ProviderOptions = r17MiraOptions(false, 0)
	next, srv2 := replay(t, second)
	s2, err := next.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs2, end2 := drain(t, s2)
	if !errors.Is(end2, io.EOF) {
		t.Fatalf("stream ended with %v", end2)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderStream(t, evs2, end2))
	got := r17JSON(t, srv2.Last(t).Body)
	want2 := r17Camel(r17JSON(t, []byte(r17MiraRequest2))).(map[string]any)
	if !jsonEqual(got["generationConfig"], want2["generationConfig"]) {
		t.Errorf("generationConfig %v, want %v", got["generationConfig"], want2["generationConfig"])
	}
	// Mirascope's six thought parts, joined into the one we send.
	contents := want2["contents"].([]any)
	model := contents[1].(map[string]any)
	parts := model["parts"].([]any)
	var joined strings.Builder
	for _, pt := range parts[:len(parts)-1] {
		joined.WriteString(pt.(map[string]any)["text"].(string))
	}
	if joined.String() != strings.Join(r17MiraThoughts, "") {
		t.Fatalf("the recorded thought parts are not the streamed summaries")
	}
	model["parts"] = []any{map[string]any{"text": joined.String(), "thought": true}, parts[len(parts)-1]}
	if !jsonEqual(got["contents"], contents) {
		t.Errorf("contents\n got %v\nwant %v", got["contents"], contents)
	}

	f2 := foldEvents(evs2)
	if f2.text != "I don't remember." || f2.meta.GetResponseId() != "KFJgaajLGcO2qtsP-dSxyQ8" ||
		f2.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(f2.meta.GetWarnings()) != 0 {
		t.Errorf("answer %q, meta %v", f2.text, f2.meta)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 517, OutputTokens: 6, TotalTokens: 523}); !proto.Equal(f2.usage, want) {
		t.Errorf("usage %v, want %v", f2.usage, want)
	}
}

// Mirascope's parallel tool calls (test_call_with_tools, stream.yaml).
const (
	r17MiraToolSig = "CikB0e2Kbw5tJ9dwYB9m1I9W28H1Pvbhg7iFnlQJMZT9ndxhy/OJBT3V9QptAdHtim+b6IrcZhtF6O6xQkkPMDhjrvwL3icXkpwLLWkm7JJ3R234Bd2U3pZ5l5u4roaEWO893S7XXaCgzKHLjxhFjN2sHgLLE/Hsi8UryVlawsmJhHEry727TP6p3fXGfoHF4P3+NwX0aRVDaQrOAQHR7YpvcZTnUyY/7cZcudNT4WukK1q1cnMx8pjpKbBWrByVhsOkQ9acocfYVirn1/iCK2QINNmt6lwFfDqQOr4KVY1cj1YwDRUeRN6QawgKKk0+IfpgCintbyvglLQVvA0K+FrW8l7OEqDU/ROKkwMm4g4uEHsoA2BgR0CAHd9Tnx1SsmdXOdPvXOM1FdrZGq1JQpE8r7fSBCEbhN2wHHHjAHR11O2iex12if4qjFmaxk0WD6e32VVE/ocsvy+BTeSxsfFo6v4VRanbbnKg"
	// The follow-up Mirascope sent, which the API answered (stream _2).
	r17MiraToolRequest2 = `{"contents": [{"parts": [{"text": "Please retrieve the secrets associated with each of these passwords: mellon,radiance"}], "role": "user"}, {"parts": [{"thoughtSignature": "CikB0e2Kbw5tJ9dwYB9m1I9W28H1Pvbhg7iFnlQJMZT9ndxhy_OJBT3V9QptAdHtim-b6IrcZhtF6O6xQkkPMDhjrvwL3icXkpwLLWkm7JJ3R234Bd2U3pZ5l5u4roaEWO893S7XXaCgzKHLjxhFjN2sHgLLE_Hsi8UryVlawsmJhHEry727TP6p3fXGfoHF4P3-NwX0aRVDaQrOAQHR7YpvcZTnUyY_7cZcudNT4WukK1q1cnMx8pjpKbBWrByVhsOkQ9acocfYVirn1_iCK2QINNmt6lwFfDqQOr4KVY1cj1YwDRUeRN6QawgKKk0-IfpgCintbyvglLQVvA0K-FrW8l7OEqDU_ROKkwMm4g4uEHsoA2BgR0CAHd9Tnx1SsmdXOdPvXOM1FdrZGq1JQpE8r7fSBCEbhN2wHHHjAHR11O2iex12if4qjFmaxk0WD6e32VVE_ocsvy-BTeSxsfFo6v4VRanbbnKg", "functionCall": {"args": {"password": "mellon"}, "name": "secret_retrieval_tool"}}, {"functionCall": {"args": {"password": "radiance"}, "name": "secret_retrieval_tool"}}], "role": "model"}, {"parts": [{"functionResponse": {"name": "secret_retrieval_tool", "response": {"output": "Welcome to Moria!"}}}, {"functionResponse": {"name": "secret_retrieval_tool", "response": {"output": "Life before Death"}}}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Use parallel tool calling."}], "role": "user"}, "tools": [{"functionDeclarations": [{"description": "A tool that requires a password to retrieve a secret.", "name": "secret_retrieval_tool", "parameters": {"properties": {"password": {"title": "Password", "type": "STRING"}}, "required": ["password"], "type": "OBJECT"}}]}], "generationConfig": {}}`
)

// TestRound17MirascopeParallelToolsStream: gemini-2.5-flash (a Gemini 2
// model, yet signing) streams two calls of one tool in one chunk, without
// ids, the thoughtSignature on the first only, finishReason STOP with
// finishMessage: a tool-call finish, two calls with ids of their own
// derived from the responseId, the signature on the first; 70 in,
// 40 + 61 thought tokens out, 171 total.
//
// Mirascope sent both calls back with the two results and the API
// answered (stream _2). Ours sends the same model turn, the signature
// on the first call only, byte for byte the same (Mirascope re-encoded it
// as URL-safe base64, which the API's bytes field takes as well), and the
// two results in one user turn, by name, in the calls' order (ours under
// "result" where Mirascope wrote "output": the API takes any object).
func TestRound17MirascopeParallelToolsStream(t *testing.T) {
	t.Parallel()
	const first, second = "real_mirascope_google_parallel_tools_stream_1", "real_mirascope_google_parallel_tools_stream_2"
	const respID = "G5nyaJuGE-yrqtsPmJHUoAs"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("Use parallel tool calling.")),
			msg(llmrelayv1.Role_ROLE_USER, text("Please retrieve the secrets associated with each of these passwords: mellon,radiance")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "secret_retrieval_tool", Description: "A tool that requires a password to retrieve a secret.",
			Parameters: `{"properties":{"password":{"title":"Password","type":"string"}},"required":["password"],"type":"object"}`}},
	}
	p, _ := replay(t, first)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderStream(t, evs, end))
	answer := foldMessage(t, evs)
	mellon := toolCallPart(generatedID(respID, 0, "", ""), "secret_retrieval_tool", `{"password":"mellon"}`)
	mellon.GetToolCall().Signature = r17MiraToolSig
	radiance := toolCallPart(generatedID(respID, 1, "", ""), "secret_retrieval_tool", `{"password":"radiance"}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, mellon, radiance); !proto.Equal(answer, want) {
		t.Errorf("message\n got %v\nwant %v", answer, want)
	}
	f := foldEvents(evs)
	if want := (&llmrelayv1.Usage{InputTokens: 70, OutputTokens: 40 + 61, TotalTokens: 171, ReasoningTokens: 61}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != respID || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got, _ := r17Ext(m)[extFinishMessage].(string); got != "Model generated function call(s)." {
		t.Errorf("finish message %q", got)
	}

	// The follow-up.
	req.Messages = append(req.Messages, answer, msg(llmrelayv1.Role_ROLE_TOOL,
		toolResultPart(mellon.GetToolCall().GetCallId(), "Welcome to Moria!"),
		toolResultPart(radiance.GetToolCall().GetCallId(), "Life before Death")))
	next, srv := replay(t, second)
	s2, err := next.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs2, end2 := drain(t, s2)
	if !errors.Is(end2, io.EOF) {
		t.Fatalf("stream ended with %v", end2)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderStream(t, evs2, end2))
	got := r17JSON(t, srv.Last(t).Body)
	want := r17JSON(t, []byte(r17MiraToolRequest2))
	gc, wc := got["contents"].([]any), want["contents"].([]any)
	if len(gc) != 3 || !jsonEqual(gc[0], wc[0]) {
		t.Fatalf("contents %v, want three turns opening with %v", gc, wc[0])
	}
	// The model turn: the signature's bytes, then the rest as recorded.
	gm, wm := gc[1].(map[string]any), wc[1].(map[string]any)
	gp, wp := gm["parts"].([]any), wm["parts"].([]any)
	if len(gp) != 2 {
		t.Fatalf("model turn %v, want two parts", gm)
	}
	gs, _ := gp[0].(map[string]any)["thoughtSignature"].(string)
	ws, _ := wp[0].(map[string]any)["thoughtSignature"].(string)
	gb, err1 := base64.StdEncoding.DecodeString(gs)
	wb, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(ws, "="))
	if err1 != nil || err2 != nil || !bytes.Equal(gb, wb) || gs != r17MiraToolSig {
		t.Errorf("signature %q (%v), want the bytes of %q (%v)", gs, err1, ws, err2)
	}
	delete(gp[0].(map[string]any), "thoughtSignature")
	delete(wp[0].(map[string]any), "thoughtSignature")
	if !jsonEqual(gm, wm) {
		t.Errorf("model turn\n got %v\nwant %v", gm, wm)
	}
	// The results, by name, in order.
	gu, wu := gc[2].(map[string]any), wc[2].(map[string]any)
	gr, wr := gu["parts"].([]any), wu["parts"].([]any)
	if gu["role"] != "user" || len(gr) != len(wr) {
		t.Fatalf("results turn %v, want %v", gu, wu)
	}
	for i := range wr {
		g := gr[i].(map[string]any)["functionResponse"].(map[string]any)
		w := wr[i].(map[string]any)["functionResponse"].(map[string]any)
		gv, _ := g["response"].(map[string]any)
		if g["name"] != w["name"] || len(gv) != 1 || gv["result"] != w["response"].(map[string]any)["output"] || g["id"] != nil {
			t.Errorf("result %d: %v, want %v", i, g, w)
		}
	}
	if si, _ := got["systemInstruction"].(map[string]any); !jsonEqual(si["parts"], want["systemInstruction"].(map[string]any)["parts"]) {
		t.Errorf("systemInstruction %v", si)
	}

	f2 := foldEvents(evs2)
	if f2.text != `The secrets associated with the passwords "mellon" and "radiance" are "Welcome to Moria!" and "Life before Death" respectively.` ||
		f2.meta.GetResponseId() != "HJnyaMGYMrKyqtsPvNjS0AY" || f2.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		len(f2.calls) != 0 || len(f2.meta.GetWarnings()) != 0 {
		t.Errorf("answer %q, meta %v", f2.text, f2.meta)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 211, OutputTokens: 30, TotalTokens: 241}); !proto.Equal(f2.usage, want) {
		t.Errorf("usage %v, want %v", f2.usage, want)
	}
}
