package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 21: grounding, URL context, code execution and finish reasons in
// real recordings the adapter had not seen (testdata/README.md, "Round
// 21"). Every expectation is read off the recording by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_pyd_google_gemini_web_search_citations_1",
		"real_pyd_google_gemini_web_search_citations_2", "real_pyd_google_model_web_fetch_tool_false",
		"real_pyd_google_model_code_execution_tool_1", "real_pyd_google_model_file_search_tool_stream",
		"real_omniroute_gemini_malformed_function_call_stream", "real_pyd_google_model_youtube_video_url_input",
		"real_pyd_google_auto_native_structured_stream_gemini_3", "real_pyd_google_model_retry_1", "real_pyd_google_model_retry_2",
		"real_pyd_google_model_retry_3", "real_pyd_gateway_provider_with_google_vertex",
		"real_pyd_gemini_vertex_url_input_audio_gs")
}

// r21Unary replays a unary recording and writes its golden.
func r21Unary(t *testing.T, name string, req *provider.Request) (*provider.Result, *providertest.Server) {
	t.Helper()
	p, srv := replay(t, name)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	return res, srv
}

func r21User(model, system string, turns ...*llmrelayv1.Message) *provider.Request {
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Messages: turns}
	if system != "" {
		req.Messages = append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, turns...)
	}
	return req
}

// r21Meta checks the ids, finish and usage of an answer's meta.
func r21Meta(t *testing.T, m *llmrelayv1.ResponseMeta, id, model, stop string, finish llmrelayv1.FinishReason, usage *llmrelayv1.Usage) {
	t.Helper()
	if m.GetResponseId() != id || m.GetResolvedModel() != model {
		t.Errorf("ids %q %q, recorded %q %q", m.GetResponseId(), m.GetResolvedModel(), id, model)
	}
	if m.GetFinishReason() != finish || m.GetProviderFinishReason() != stop {
		t.Errorf("finish %v %q, recorded %q (want %v)", m.GetFinishReason(), m.GetProviderFinishReason(), stop, finish)
	}
	if !proto.Equal(m.GetUsage(), usage) {
		t.Errorf("usage %v, want %v", m.GetUsage(), usage)
	}
}

// r21Ext is meta.extended[key] as compact JSON ("" when absent).
func r21Ext(t *testing.T, m *llmrelayv1.ResponseMeta, key string) string {
	t.Helper()
	v, ok := m.GetExtended().GetFields()[key]
	if !ok {
		return ""
	}
	b, err := json.Marshal(v.AsInterface())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// r21SameRequest checks that the request sent is the recorded one, field
// by field (the recorded JSON is the cassette's parsed body). pydantic-ai
// gives its systemInstruction "role": "user", which the API ignores (the
// system instruction has no role); we send none, so the recorded ones here
// are written without it.
func r21SameRequest(t *testing.T, srv *providertest.Server, path, recorded string) {
	t.Helper()
	last := srv.Last(t)
	if last.Path != path {
		t.Errorf("path %s, recorded %s", last.Path, path)
	}
	if sent := r17JSON(t, last.Body); !jsonEqual(sent, r19Decode(t, recorded)) {
		t.Errorf("request\n sent %s\n recorded %s", last.Body, recorded)
	}
}

// r21Search asks what pydantic-ai asked with the googleSearch tool (set
// through extra_body: the contract has no built-in tools).
func r21Search(turns ...*llmrelayv1.Message) *provider.Request {
	req := r21User("gemini-2.5-flash", "", turns...)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"googleSearch":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	return req
}

const (
	r21SearchQuestion = "Use Google Search to find Pydantic AI's documentation and cite it."
	r21SearchAnswer   = "The official documentation for Pydantic AI can be found on the Pydantic website. It provides comprehensive information on Pydantic AI, " +
		"which is described as the Python AI SDK, offering a typed, extensible agent loop. The documentation covers various aspects, including agents, " +
		"realtime voice, image generation, embeddings, and more. Pydantic AI aims to simplify building production-grade generative AI applications, " +
		"bringing a type-safe approach to working with language models."
)

// TestRound21SearchCitations: gemini-2.5-flash (2026) with googleSearch,
// unary, both turns. The first answer: one text part, STOP, a
// groundingMetadata with five web chunks (vertexaisearch redirect URIs),
// four groundingSupports whose segments are the text's byte ranges
// [0,79), [81,215), [217,331), [333,477) (the first has no startIndex),
// a searchEntryPoint's renderedContent (HTML) and two webSearchQueries;
// usage 17 prompt + 87 tool-use prompt tokens in, 115 + 199 thought
// tokens out, 418 total; serviceTier "standard" in usageMetadata. The
// second turn (the answer sent back, then "In one sentence, repeat which
// project you found.") is the request the live API accepted; its answer
// has an empty groundingMetadata ({}), which adds nothing.
func TestRound21SearchCitations(t *testing.T) {
	t.Parallel()
	res, srv := r21Unary(t, "real_pyd_google_gemini_web_search_citations_1", r21Search(msg(llmrelayv1.Role_ROLE_USER, text(r21SearchQuestion))))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(r21SearchAnswer)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "mc6GasacHsf-4-EPtZaJkQk", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 104, OutputTokens: 314, TotalTokens: 418, ReasoningTokens: 199})
	if m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 || r21Ext(t, m, extToolUsePromptTokens) != "87" {
		t.Errorf("meta %v", m)
	}
	g, _ := m.GetExtended().AsMap()[extGroundingMetadata].(map[string]any)
	chunks, _ := g["groundingChunks"].([]any)
	supports, _ := g["groundingSupports"].([]any)
	entry, _ := g["searchEntryPoint"].(map[string]any)
	html, _ := entry["renderedContent"].(string)
	if len(chunks) != 5 || len(supports) != 4 || !strings.HasPrefix(html, "<style>\n.container {") ||
		!strings.HasSuffix(html, "Pydantic AI documentation</a>\n  </div>\n</div>\n") ||
		!jsonEqual(g["webSearchQueries"], []any{"Pydantic AI documentation", "Pydantic AI docs"}) {
		t.Fatalf("grounding %v", g)
	}
	// Each support's segment is the answer's text at its byte range.
	for i, s := range supports {
		seg := s.(map[string]any)["segment"].(map[string]any)
		start, _ := seg["startIndex"].(float64)
		end, _ := seg["endIndex"].(float64)
		if got := r21SearchAnswer[int(start):int(end)]; got != seg["text"] {
			t.Errorf("support %d: text[%v:%v] = %q, segment %q", i, start, end, got, seg["text"])
		}
	}
	if c := chunks[4].(map[string]any)["web"].(map[string]any); c["title"] != "together.ai" {
		t.Errorf("chunk 4 %v", c)
	}
	// And the whole object is the recorded one.
	if rec := r21RecordedCandidate(t, "real_pyd_google_gemini_web_search_citations_1"); !jsonEqual(g, rec["groundingMetadata"]) {
		t.Errorf("grounding is not the recorded one")
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"`+r21SearchQuestion+`"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},"tools":[{"googleSearch":{}}]}`)

	// The second turn.
	res, srv = r21Unary(t, "real_pyd_google_gemini_web_search_citations_2", r21Search(
		msg(llmrelayv1.Role_ROLE_USER, text(r21SearchQuestion)), res.Message,
		msg(llmrelayv1.Role_ROLE_USER, text("In one sentence, repeat which project you found."))))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("I found the documentation for Pydantic AI.")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m = res.Meta
	r21Meta(t, m, "nc6Gaq35FZDEg8UP-ceQ8AM", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 121, OutputTokens: 76, TotalTokens: 197, ReasoningTokens: 66})
	if m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 || r21Ext(t, m, extGroundingMetadata) != "" || r21Ext(t, m, extToolUsePromptTokens) != "" {
		t.Errorf("meta %v", m)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"`+r21SearchQuestion+`"}],"role":"user"},{"parts":[{"text":"`+r21SearchAnswer+`"}],"role":"model"},`+
			`{"parts":[{"text":"In one sentence, repeat which project you found."}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},"tools":[{"googleSearch":{}}]}`)
}

// TestRound21URLContext: gemini-2.5-flash (January 2026) with urlContext,
// unary: two text parts (the first opens with a line break and quotes the
// sentence, the second is the sentence alone), one answer text; the
// groundingSupports' segment [146,212) is the second part's text in the
// two parts joined (the first is 146 bytes), so joining them is what the
// indexes address. urlContextMetadata: https://ai.pydantic.dev retrieved
// (URL_RETRIEVAL_STATUS_SUCCESS). Usage: 32 prompt + 4665 tool-use prompt
// tokens (the page) in, 66 + 45 thought tokens out, 4808 total. The request
// (system instruction, urlContext) is the recorded one.
func TestRound21URLContext(t *testing.T) {
	t.Parallel()
	const (
		name     = "real_pyd_google_model_web_fetch_tool_false"
		sentence = "Join us at the inaugural PyAI Conf in San Francisco on March 10th!"
		first    = "\nThe first meaningful sentence on the page after the title and navigation is \"" + sentence + "\"."
		question = "What is the first sentence on the page https://ai.pydantic.dev? Reply with only the sentence."
	)
	req := r21User("gemini-2.5-flash", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text(question)))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"urlContext":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(first+sentence)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	if len(first) != 146 || (first + sentence)[146:212] != sentence {
		t.Errorf("the segment [146,212) is not the sentence in the joined text")
	}
	m := res.Meta
	r21Meta(t, m, "oDR8af2BMIycz7IPs-_ggQQ", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 4697, OutputTokens: 111, TotalTokens: 4808, ReasoningTokens: 45})
	if len(m.GetWarnings()) != 0 || r21Ext(t, m, extToolUsePromptTokens) != "4665" || m.GetServiceTier() != "" {
		t.Errorf("meta %v", m)
	}
	if got, want := r21Ext(t, m, extURLContextMetadata), `{"urlMetadata":[{"retrievedUrl":"https://ai.pydantic.dev","urlRetrievalStatus":"URL_RETRIEVAL_STATUS_SUCCESS"}]}`; got != want {
		t.Errorf("url context %s, recorded %s", got, want)
	}
	if got, want := r21Ext(t, m, extGroundingMetadata), `{"groundingChunks":[{"web":{"title":"Pydantic AI - Pydantic AI","uri":"https://ai.pydantic.dev"}}],`+
		`"groundingSupports":[{"groundingChunkIndices":[0],"segment":{"endIndex":212,"startIndex":146,"text":"`+sentence+`"}}]}`; got != want {
		t.Errorf("grounding %s, recorded %s", got, want)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"`+question+`"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},"tools":[{"urlContext":{}}]}`)
}

// TestRound21CodeExecution: gemini-2.5-pro (January 2026) with
// codeExecution, unary: an executableCode part (PYTHON, pytz), its
// codeExecutionResult (OUTCOME_OK, "Friday, January 30, 2026\n"), then
// the text. The code and its output are provider items, as they came
// (round 23; before, a warning each), the text kept. Usage: 15 prompt + 429 tool-use prompt
// tokens in, 75 + 343 thought tokens out, 862 total.
func TestRound21CodeExecution(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_code_execution_tool_1"
	req := r21User("gemini-2.5-pro", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("What day is today in Utrecht?")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"codeExecution":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	if p := res.Message.GetParts(); len(p) != 3 || p[0].GetProviderItem().GetType() != "executableCode" || p[1].GetProviderItem().GetType() != "codeExecutionResult" ||
		!strings.Contains(p[1].GetProviderItem().GetJson(), `"outcome":"OUTCOME_OK"`) || p[2].GetText() != "Today in Utrecht is Friday, January 30, 2026." {
		t.Errorf("message %v", res.Message)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Today in Utrecht is Friday, January 30, 2026.")); !proto.Equal(r23NoItems(res.Message), want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "NDt8acncJ_KEz7IPq57X6Ag", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 444, OutputTokens: 418, TotalTokens: 862, ReasoningTokens: 343})
	if r21Ext(t, m, extToolUsePromptTokens) != "429" {
		t.Errorf("tool-use prompt tokens %s", r21Ext(t, m, extToolUsePromptTokens))
	}
	if w := m.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent",
		`{"contents":[{"parts":[{"text":"What day is today in Utrecht?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},"tools":[{"codeExecution":{}}]}`)
}

// TestRound21FileSearchStream: gemini-2.5-pro (November 2025) with
// fileSearch, streamed, five events of one responseId. The first holds an
// executableCode part marked thought (the file_search.query call), the
// second the same call unmarked with finishReason STOP and a
// groundingMetadata of one retrievedContext chunk (the stored document's
// text and store name); the answer's text then comes in three events, the
// last with STOP again and the grounding with two supports (both pointing
// at chunk index 1, as sent). A STOP mid-stream does not end it: every
// text event is kept. The code parts are warned about once (one warning a
// kind). The usage grows: 238 then 526 tool-use prompt tokens; the last is
// 15 + 526 = 541 in, 53 + 211 thought tokens = 264 out, 805 total. The
// request's contents and system instruction are the recorded ones (the
// fileSearch tool is set through extra_body).
func TestRound21FileSearchStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_file_search_tool_stream"
	req := r21User("gemini-2.5-pro", "You are a helpful assistant.", msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"fileSearch":{"file_search_store_names":["fileSearchStores/testfilesearchstream-df5lsen5e6i5"]}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	evs, srv := r20Stream(t, name, req)
	f := foldEvents(evs)
	if f.text != "The capital of France is Paris. A famous landmark in Paris is the Eiffel Tower." || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 541, OutputTokens: 264, TotalTokens: 805, ReasoningTokens: 211}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "RaYfafPuAc63qtsP-bOCyQw" || m.GetResolvedModel() != "gemini-2.5-pro" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" {
		t.Errorf("meta %v", m)
	}
	if w := m.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if got := r21Ext(t, m, extToolUsePromptTokens); got != "526" {
		t.Errorf("tool-use prompt tokens %s, last recorded 526", got)
	}
	const doc = `{"fileSearchStore":"fileSearchStores/testfilesearchstream-df5lsen5e6i5","text":"Paris is the capital of France. The Eiffel Tower is a famous landmark in Paris."}`
	if got, want := r21Ext(t, m, extGroundingMetadata), `{"groundingChunks":[{"retrievedContext":`+doc+`}],"groundingSupports":[`+
		`{"groundingChunkIndices":[1],"segment":{"endIndex":31,"text":"The capital of France is Paris."}},`+
		`{"groundingChunkIndices":[1],"segment":{"endIndex":79,"startIndex":32,"text":"A famous landmark in Paris is the Eiffel Tower."}}]}`; got != want {
		t.Errorf("grounding %s\nrecorded last %s", got, want)
	}
	// The text events come after the first STOP.
	stops, textAfter := 0, false
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
			stops++
		}
		if ev.Kind == provider.EventText && stops == 1 {
			textAfter = true
		}
	}
	if stops != 2 || !textAfter {
		t.Errorf("%d finish metas, text after the first: %v", stops, textAfter)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
		`{"contents":[{"parts":[{"text":"What is the capital of France?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},"tools":[{"fileSearch":{"file_search_store_names":["fileSearchStores/testfilesearchstream-df5lsen5e6i5"]}}]}`)
}

// TestRound21MalformedFunctionCallStream: gemini-3.1-flash-lite (July
// 2026), streamed, six events captured by OmniRoute from a live incident
// (sanitized by its authors: paths, URLs, the responseId and the
// signature replaced). Three thought parts (one reasoning block), an empty
// text with a usage of 167 candidate and 1059 thought tokens, an empty
// text carrying the thoughtSignature (reasoning with the signature only,
// as real_stream_empty_text_signature) and the first
// cachedContentTokenCount (19504), then finishReason
// MALFORMED_FUNCTION_CALL with an empty text and a finishMessage naming
// the call the model could not write. The finish is OTHER with the
// provider's word kept and the finishMessage whole in
// meta.extended["gemini.finish_message"]; no tool call is made up. Usage:
// 24512 in (19504 of them cached), 167 + 1059 = 1226 out, 25738 total.
func TestRound21MalformedFunctionCallStream(t *testing.T) {
	t.Parallel()
	const name = "real_omniroute_gemini_malformed_function_call_stream"
	evs, _ := r20Stream(t, name, r21User("gemini-3.1-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text("Run the search workflow."))))
	f := foldEvents(evs)
	if f.text != "" || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	var reasoning, sig strings.Builder
	blocks := map[int]bool{}
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			reasoning.WriteString(ev.Reasoning.Text)
			sig.WriteString(ev.Reasoning.Signature)
			blocks[ev.Reasoning.Index] = true
		}
	}
	if !strings.HasPrefix(reasoning.String(), "**Initiating the Workflow**\n\n") || !strings.Contains(reasoning.String(), "\n\n\n**Expanding the Search Parameters**") ||
		!strings.HasSuffix(reasoning.String(), "update the search state, and log the results.\n\n\n") || len(blocks) != 2 {
		t.Errorf("reasoning %q in %d blocks", reasoning.String(), len(blocks))
	}
	if !strings.HasPrefix(sig.String(), "FIXTURE_PLACEHOLDER_THOUGHT_SIGNATURE") {
		t.Errorf("signature %q", sig.String())
	}
	if want := (&llmrelayv1.Usage{InputTokens: 24512, OutputTokens: 1226, TotalTokens: 25738, CachedInputTokens: 19504, ReasoningTokens: 1059}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "resp-fixture-malformed-001" || m.GetResolvedModel() != "gemini-3.1-flash-lite" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || m.GetProviderFinishReason() != "MALFORMED_FUNCTION_CALL" ||
		m.GetToolCallCount() != 0 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	msgText, _ := m.GetExtended().AsMap()[extFinishMessage].(string)
	if !strings.HasPrefix(msgText, "Malformed function call: call:default_api:exec{command: cd /home/user/workspace && venv/bin/python run_search.py ,") ||
		!strings.HasSuffix(msgText, "running the scraper and fetching the target sites. }") {
		t.Errorf("finish message %q", msgText)
	}
}

// TestRound21YouTubeVideo: gemini-2.5-flash (February 2026), unary, asked
// about a YouTube URL sent as fileData (video/mp4): one text part, STOP;
// the prompt's 17713 tokens by modality (16 TEXT, 15780 VIDEO, 1917 AUDIO:
// the video's sound track is counted apart), 100 + 1176 thought tokens
// out, 18989 total. The split reaches usage_details whole. The request (a
// text part, then the fileData part with the URL and MIME type as given)
// is the recorded one.
func TestRound21YouTubeVideo(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_youtube_video_url_input"
	req := r21User("gemini-2.5-flash", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("Explain me this video in a few sentences"),
		fileOf(&llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://youtu.be/lCdaVNyHtjU"}, MimeType: "video/mp4"})))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	const answer = "This video demonstrates using an AI agent to analyze recent 404 HTTP responses from a service. The user asks the agent, \"Logfire,\" " +
		"to identify patterns in these errors. The agent then queries a Logfire database, extracts relevant information like URL paths, HTTP methods, " +
		"and timestamps, and presents a detailed analysis covering common error-prone endpoints, request patterns, timeline-related issues, and potential " +
		"configuration or authentication problems. Finally, it offers a list of actionable recommendations to address these issues."
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(answer)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "nA-BaaeuIMSfz7IPlMvnkQU", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 17713, OutputTokens: 1276, TotalTokens: 18989, ReasoningTokens: 1176})
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
	if got, want := r21Ext(t, m, "usage_details"), `{"promptTokensDetails.AUDIO":1917,"promptTokensDetails.TEXT":16,"promptTokensDetails.VIDEO":15780}`; got != want {
		t.Errorf("usage details %s, recorded %s", got, want)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"Explain me this video in a few sentences"},{"fileData":{"fileUri":"https://youtu.be/lCdaVNyHtjU","mimeType":"video/mp4"}}],"role":"user"}],`+
			`"generationConfig":{"responseModalities":["TEXT"]},"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]}}`)
}

// TestRound21StructuredStreamGemini3: gemini-3-flash-preview (February
// 2026), streamed with a response JSON schema (CityLocation): the JSON
// answer in one event with no finish, then an empty text carrying the
// thoughtSignature (1512 base64 characters; its protobuf length prefix,
// 1131, is the rest of the 1134 decoded bytes, so the transcription is
// whole) with STOP. The text is the JSON as sent; the signature becomes a
// reasoning part with no text (real_stream_empty_text_signature's rule);
// 9 in, 10 + 261 thought tokens out, 280 total. The request (the schema
// with its title, as responseJsonSchema, and the JSON MIME type) is the
// recorded one.
func TestRound21StructuredStreamGemini3(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_auto_native_structured_stream_gemini_3"
	const schema = `{"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"title":"CityLocation","type":"object"}`
	req := r21User("gemini-3-flash-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("What is the largest city in Mexico?")))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	evs, srv := r20Stream(t, name, req)
	f := foldEvents(evs)
	if f.text != `{"city":"Mexico City","country":"Mexico"}` || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	var sig strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			if ev.Reasoning.Text != "" {
				t.Errorf("reasoning text %q", ev.Reasoning.Text)
			}
			sig.WriteString(ev.Reasoning.Signature)
		}
	}
	if s := sig.String(); len(s) != 1512 || !strings.HasPrefix(s, "EusICugIAb4+9vvTPy2U") || !strings.HasSuffix(s, "tO0ohM5spWTSfHEs") {
		t.Errorf("signature %d characters: %q", len(s), s)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 271, TotalTokens: 280, ReasoningTokens: 261}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "HrGQaZONJZjHvdIPrvyJuAk" || m.GetResolvedModel() != "gemini-3-flash-preview" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-3-flash-preview:streamGenerateContent",
		`{"contents":[{"parts":[{"text":"What is the largest city in Mexico?"}],"role":"user"}],"generationConfig":{"responseJsonSchema":`+schema+
			`,"responseMimeType":"application/json","responseModalities":["TEXT"]}}`)
}

// r21CapitalTool is pydantic-ai's get_capital declaration.
const r21CapitalSchema = `{"additionalProperties":false,"properties":{"country":{"description":"The country name.","type":"string"}},"required":["country"],"type":"object"}`

// r21CapitalRequest is the request of pydantic-ai's retry test, with
// messages after the question.
func r21CapitalRequest(more ...*llmrelayv1.Message) *provider.Request {
	req := r21User("gemini-2.5-pro", "You are a helpful chatbot.", append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?"))}, more...)...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_capital", Description: "Get the capital of a country.", Parameters: r21CapitalSchema}}
	zero := 0.0
	req.Options = &llmrelayv1.GenerationOptions{Temperature: &zero}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	return req
}

// r21SameSignature checks that two base64 spellings (standard, URL-safe)
// hold the same bytes.
func r21SameSignature(t *testing.T, got, recorded string) {
	t.Helper()
	a, err1 := base64.StdEncoding.DecodeString(got)
	b, err2 := base64.URLEncoding.DecodeString(recorded)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		t.Errorf("signature %q is not the recorded %q (%v, %v)", got, recorded, err1, err2)
	}
}

// TestRound21ToolRetryLoop: gemini-2.5-pro (January 2026), unary, three
// turns of a tool loop at temperature 0. Each call comes without an id
// (keyed by an id made from the response id) and with a thoughtSignature
// on the functionCall part (482 and 728 bytes once decoded, their
// protobuf length prefixes whole); finishMessage "Model generated function
// call(s)." with STOP, a tool-call finish. The first call asks
// get_capital("France"), the tool's error result makes the model retry
// with "La France", whose result "Paris" gives the final text, which
// carries a signature of its own. The requests pydantic-ai sent were
// accepted by the API; ours hold the same turns (the call parts with
// their signatures, the error as {"error": ...}) with three differences
// the API takes either way: no functionCall/functionResponse id (the API
// gave none; pydantic-ai made its own), the signatures in standard
// base64 as received (pydantic-ai re-encoded them URL-safe: the same
// bytes), and a plain result as {"result": ...} (pydantic-ai writes
// "return_value").
func TestRound21ToolRetryLoop(t *testing.T) {
	t.Parallel()
	res1, srv := r21Unary(t, "real_pyd_google_model_retry_1", r21CapitalRequest())
	const sig1 = "Ct8DAXLI2nzyZB3noFDSNOb6UxXhwYEZNwj0eyNt8xD_C3YOxs2KMqvO6uA1ux65clnUkIdRVv2IqT2xF5L1I5E_N3o7RgM_2GmM_LrTfzYOM7ydWxaBAmgyecJtWmDBz9tTabdIYzktJqMoXWpMZdZuMGp8mwW-uOrzMTrvv-rPvaxuNX2Rm8Zzk82bnoBfbWCoxV5UfWbUTVuM9H8wEGyD2s2XKUnoUd26GBMLCNOqVrTJK_J2ONjAY9jllPCbAhelziGDAsuuwEQVdlvmE_H6PvaNBP5GTxfI0y0BG_IYOQUgepHsU65Ok63dXD1cmS0bDM8unjnGD0apctRNOQS93I48j3MpLkbTnjoGidBAonI0UpClMxGU8ND7J4lurr_K-7-0hkOT1vyo0d6wJ5-9FRIXaR7_HZFVQVFB5gHZbtimeG-JtC5Ebs1o7BHa4ANRCA7NQyDSYGiL2ejKd5wFb-6LEpvDkxAxysKayMAddAZaQ81S_7J8f5pGRusCI-3rrxJo-QlAMF9ere-4ZnTEsZErenYjXQhsZjbomw7Ak_DwVOJgb2TcQd-hsYyPQ0kEpAgTJBClXgyTn0e9tWzc3zH-kiwlIud41V_iAHpleWZF4OQga0WGsjPVCE7VwVA="
	const sig2 = "CtUFAXLI2nxgt22EiUCfSwcU1wo3pJK6Bowq5Xk__KMUvV1rQrJVEucURHd7XVEAAxoGXfbMjNzrrAzSftCyBS7351SA9_xu5_odnjjFizPSn5gWYVMgON_qobXE7CXBvHwI5e8fR-BApvZKQsQC-70AmLFdAHgoV6aX2lo7wU7zxaAee0zTRDh9QjSKngUZ1_-H7a_8MxFSsnpoJ3uHwsE6ogbZE_C5Guk_S_5CqeozTJ4ZbWz6HuFgBHhLy8etMH2QAHpdd8MWnoIOHuLTiQ4-8c0op0fI8OQZfoix21MWjjSEAwqta5eKEd-qHMCgI2zodld57b7DaSdht_b2Q43fFriTsEJ15aIXlkCPMrA6ed4abDtUuLYl26aGnWmUYZqDkGR78vcJccThxYgEwM4Y8OlKg_kPuNstt5gMnENKpjXrBQaLQ_tAnXhNyJUSHJw9GvcVv9sus2MOL8TdWOhleKs8vu270fU_jGv3cVkK_SLzkXMlvjKvoDrXXJ5FaXLJBuE6J8cWexIamV02tE3DBYXcN5gNCHb5Rf532uBR_na1m_cHNerxOSxOpDdXy0lcPhyyWGVVB5Vdu1d7skVcRWN4Z37Yy6nXnFiixbPcUH61l2OxErWXWYNwfdQF-nKquJYEIroDAEbVof9luS6ITwH-ffe6bV1zY6NeUyilKwCqu1X6ioE-qO7RwRvQJT936BQqIsDDzdHF-GSQ2qwUOsHxbDZagmJHDwzqQEwdDK43srgxRXfi5JvfU6G_IExnlBaemR18fcqTuLCBo5ov5mvGyoexuxetJMm-3b_RYlju1xx81Sxz0l47wFTkLLhr8EtXEa6E0w0XioTRYaHsz-oLKsjdVYIMo5x6wTpoNxDq_-si4p-iNd0WwxgmBMEKvmFxr-WzAqb3QG1OcjgwfxC634THId_dqU_A9f6YLXZfE5gSgi4PGcAFC8cVXXgkS_gff60="
	call1 := r21OneCall(t, res1.Message, "get_capital", `{"country":"France"}`)
	r21SameSignature(t, call1.GetSignature(), sig1)
	r21Meta(t, res1.Meta, "SVd8aaP0E4etz7IPqonx0A8", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 57, OutputTokens: 126, TotalTokens: 183, ReasoningTokens: 111})
	if got := r21Ext(t, res1.Meta, extFinishMessage); got != `"Model generated function call(s)."` {
		t.Errorf("finish message %s", got)
	}
	const tools = `"tools":[{"functionDeclarations":[{"description":"Get the capital of a country.","name":"get_capital","parametersJsonSchema":` + r21CapitalSchema + `}]}]`
	const head = `{"contents":[{"parts":[{"text":"What is the capital of France?"}],"role":"user"}`
	const tail = `],"generationConfig":{"responseModalities":["TEXT"],"temperature":0},"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},` + tools + `}`
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent", head+tail)

	// The second turn: the call sent back with its signature, the error.
	const errText = "The country is not supported. Use \"La France\" instead.\n\nFix the errors and try again."
	result1 := msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: call1.GetCallId(), Content: errText, IsError: true}}})
	res2, srv := r21Unary(t, "real_pyd_google_model_retry_2", r21CapitalRequest(res1.Message, result1))
	call2 := r21OneCall(t, res2.Message, "get_capital", `{"country":"La France"}`)
	r21SameSignature(t, call2.GetSignature(), sig2)
	r21Meta(t, res2.Meta, "TFd8aajpJNifz7IPuJq08AE", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 109, OutputTokens: 163, TotalTokens: 272, ReasoningTokens: 147})
	errJSON, _ := json.Marshal(errText)
	turn1 := `,{"parts":[{"functionCall":{"args":{"country":"France"},"name":"get_capital"},"thoughtSignature":"` + call1.GetSignature() + `"}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"get_capital","response":{"error":` + string(errJSON) + `}}}],"role":"user"}`
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent", head+turn1+tail)

	// The third turn: "Paris", then the final text with its signature.
	result2 := msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call2.GetCallId(), "Paris"))
	res3, srv := r21Unary(t, "real_pyd_google_model_retry_3", r21CapitalRequest(res1.Message, result1, res2.Message, result2))
	r21Meta(t, res3.Meta, "T1d8aYMZ_tfPsg-V08HBDw", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 142, OutputTokens: 108, TotalTokens: 250, ReasoningTokens: 101})
	var answer string
	var sig3 string
	for _, p := range res3.Message.GetParts() {
		answer += p.GetText()
		sig3 += p.GetReasoning().GetSignature()
	}
	if answer != "The capital of France is Paris." || !strings.HasPrefix(sig3, "CtMDAXLI2nwxeQ/v3e6EHAjLin/y91gLUDFWAYiTSofX") || !strings.HasSuffix(sig3, "EfzKbuhEF9GM7O4M=") {
		t.Errorf("answer %q, signature %q", answer, sig3)
	}
	turn2 := `,{"parts":[{"functionCall":{"args":{"country":"La France"},"name":"get_capital"},"thoughtSignature":"` + call2.GetSignature() + `"}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"get_capital","response":{"result":"Paris"}}}],"role":"user"}`
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent", head+turn1+turn2+tail)
}

// r21OneCall is the one tool call of an answer, checked against the
// recorded name and arguments.
func r21OneCall(t *testing.T, m *llmrelayv1.Message, name, args string) *llmrelayv1.ToolCall {
	t.Helper()
	var calls []*llmrelayv1.ToolCall
	for _, p := range m.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			calls = append(calls, tc)
		} else if p.GetText() != "" {
			t.Errorf("text part %q beside the call", p.GetText())
		}
	}
	if len(calls) != 1 || calls[0].GetName() != name || calls[0].GetArguments() != args || !calls[0].GetArgumentsValid() || calls[0].GetCallId() == "" {
		t.Fatalf("calls %v, recorded one %s(%s)", calls, name, args)
	}
	return calls[0]
}

// TestRound21PydanticGatewayPlainError: the Pydantic AI Gateway (a proxy)
// answering a Vertex AI request with a 400 in plain text ("No providers
// found compatible with google-vertex requests"), not Google's JSON error:
// an invalid request with the proxy's sentence whole as the message, no
// code, no request id, nothing made up.
func TestRound21PydanticGatewayPlainError(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_pyd_gateway_provider_with_google_vertex")
	_, err := p.Generate(context.Background(), r21User("gemini-2.5-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?"))))
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v, want a provider error", err)
	}
	if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Message != "No providers found compatible with google-vertex requests" ||
		pe.Code != "" || pe.RequestID != "" {
		t.Errorf("error %+v", pe)
	}
}

// TestRound21VertexAudioGS: Vertex AI gemini-2.0-flash (May 2025), unary,
// asked about a Cloud Storage audio file (gs://…/openai-alloy.wav,
// audio/wav) sent as fileData: one text part, STOP, avgLogprobs, the
// response's createTime, 159 prompt tokens of which 150 AUDIO and 9
// TEXT, 23 candidate tokens (candidatesTokensDetails TEXT), 182 total,
// trafficType ON_DEMAND. The request's contents (the text, then the
// fileData with the gs:// URI as given) are the recorded ones.
func TestRound21VertexAudioGS(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_gemini_vertex_url_input_audio_gs"
	req := r21User("gemini-2.0-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("What is the main content of this URL?"),
		fileOf(&llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "gs://pydantic-ai-dev/openai-alloy.wav"}, MimeType: "audio/wav"})))
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The URL's main content is about the observation that the sun rises in the east and sets in the west.")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "c3o7aMbYOdWLmecPzZeogQw", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 159, OutputTokens: 23, TotalTokens: 182})
	if len(m.GetWarnings()) != 0 || r21Ext(t, m, extAvgLogprobs) != "-0.257239756376847" {
		t.Errorf("meta %v", m)
	}
	if got, want := r21Ext(t, m, "usage_details"), `{"candidatesTokensDetails.TEXT":23,"promptTokensDetails.AUDIO":150,"promptTokensDetails.TEXT":9,"trafficType":"ON_DEMAND"}`; got != want {
		t.Errorf("usage details %s, recorded %s", got, want)
	}
	if got := m.GetCreateTime().AsTime(); !got.Equal(time.Date(2025, 5, 31, 21, 53, 55, 945222000, time.UTC)) {
		t.Errorf("create time %v, recorded 2025-05-31T21:53:55.945222Z", got)
	}
	if sent := r17JSON(t, srv.Last(t).Body); !jsonEqual(sent["contents"], r19Decode(t,
		`[{"parts":[{"text":"What is the main content of this URL?"},{"fileData":{"fileUri":"gs://pydantic-ai-dev/openai-alloy.wav","mimeType":"audio/wav"}}],"role":"user"}]`)) {
		t.Errorf("contents %v", sent["contents"])
	}
}

// r21RecordedCandidate is the first candidate of a unary recording's body.
func r21RecordedCandidate(t *testing.T, name string) map[string]any {
	t.Helper()
	body := r17JSON(t, providertest.Load(t, filepath.Join("testdata", name+".http")).Body)
	cands, _ := body["candidates"].([]any)
	if len(cands) == 0 {
		t.Fatalf("%s: no candidate", name)
	}
	c, _ := cands[0].(map[string]any)
	return c
}
