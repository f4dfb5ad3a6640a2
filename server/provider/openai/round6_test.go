package openai

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound6ResponsesStreams replays Responses API streams recorded by
// sources not used before (testdata/README.md, "Round 6"), with what
// their own tests assert, checked by hand against the recorded events.
func TestRound6ResponsesStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check func(t *testing.T, f folded)
	}{
		// OpenRouter's Responses API relaying openai/gpt-5-nano
		// (llm-openrouter's reasoning test, store false, effort minimal):
		// a lone ": " comment first, data-only events, a reasoning item
		// whose encrypted_content (OpenRouter's, a "." and a base64 suffix
		// naming the endpoint, with "format": "openai-responses-v1") first
		// comes in output_item.done, a msg_tmp_ message with "4", cost in
		// the usage, and "data: [DONE]" after response.completed.
		{"real_llm_openrouter_reasoning_2", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 2 || parts[1].GetText() != "4" {
				t.Fatalf("parts %v", parts)
			}
			if r := parts[0].GetReasoning(); r.GetId() != "rs_067d9e9761f303d7016a72684624808192a8620d7939381d57" || r.GetText() != "" ||
				!strings.HasPrefix(r.GetSignature(), "gAAAAABqcmhGUY8i3WwdW_uOby4") || !strings.HasSuffix(r.GetSignature(), "rfE=.eyJlbmRwb2ludF9zbHVnIjoib3BlbmFpL2dwdC01LW5hbm8tMjAyNS0wOC0wN3xvcGVuYWkifQ") {
				t.Errorf("reasoning %v", r)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 20, OutputTokens: 19, TotalTokens: 39}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "gen-1785882693-G0Ba9AGVEVeNhHohmw0g" || f.Meta.GetResolvedModel() != "openai/gpt-5-nano" || f.Meta.GetServiceTier() != "default" {
				t.Errorf("meta %v", f.Meta)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkRespStreamInvariants(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
}

// TestRound6ChatUnary replays unary Chat Completions answers recorded by
// sources not used before (testdata/README.md, "Round 6").
func TestRound6ChatUnary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, req string
		check     func(t *testing.T, res *provider.Result)
	}{
		// OpenRouter relaying deepseek/deepseek-chat on Novita with the
		// web plugin: the text, then five url_citation annotations
		// (url, title, the page's content, start and end index 0) beside
		// it in the message. The contract has no citation part: the
		// annotations are kept as sent in meta.extended["annotations"]
		// (they were dropped without a word), the text is untouched.
		{"real_pyd_openrouter_web_search_annotations", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 1 || parts[0].GetText() != "The URL for Pydantic AI's GitHub repository is:\n\nhttps://github.com/pydantic/pydantic-ai" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 1829, OutputTokens: 25, TotalTokens: 1854}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			anns := res.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
			if len(anns) != 5 {
				t.Fatalf("annotations %v", res.Meta.GetExtended().GetFields()["annotations"])
			}
			wantURLs := []string{"https://github.com/pydantic/pydantic-ai", "https://github.com/pydantic/pydantic-ai/tree/v1.84.0",
				"https://pydantic.dev/pydantic-ai", "https://github.com/pydantic/pydantic-ai/blob/main/AGENTS.md", "https://github.com/pydantic/pydantic-ai/tree/v1.67.0"}
			for i, a := range anns {
				m := a.GetStructValue().AsMap()
				c, _ := m["url_citation"].(map[string]any)
				if m["type"] != "url_citation" || c["url"] != wantURLs[i] || c["start_index"] != 0.0 || c["end_index"] != 0.0 {
					t.Errorf("annotation %d: %v", i, m)
				}
			}
			if c := anns[1].GetStructValue().AsMap()["url_citation"].(map[string]any); c["title"] != "GitHub - pydantic/pydantic-ai at v1.84.0 · GitHub" ||
				!strings.HasPrefix(c["content"].(string), "GitHub - pydantic/pydantic-ai at v1.84.0 · GitHub\n\n...\n\nv1.84.0") {
				t.Errorf("annotation 1: %v", c)
			}
			if res.Meta.GetResponseId() != "gen-1787214053-j0C19nKOzhE6FyfPg7iK" || res.Meta.GetResolvedModel() != "deepseek/deepseek-chat" || len(res.Meta.GetWarnings()) != 0 {
				t.Errorf("meta %v", res.Meta)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// TestRound6ChatStreams replays Chat Completions streams recorded by
// sources not used before (testdata/README.md, "Round 6").
func TestRound6ChatStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, req string
		check     func(t *testing.T, f folded)
	}{
		// The streamed counterpart of real_pyd_openrouter_web_search_annotations
		// (deepseek-chat on Novita through OpenRouter's web plugin): six
		// ": OPENROUTER PROCESSING" comments, five deltas with
		// "content": "" each carrying one url_citation annotation, the
		// text in seven deltas, then two chunks finishing with "stop"
		// (the second with the usage). The five annotations are kept in
		// order in meta.extended["annotations"], each once; one finish.
		{"real_pyd_openrouter_web_search_annotations_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "https://github.com/pydantic/pydantic-ai" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 1854, OutputTokens: 13, TotalTokens: 1867}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			anns := f.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
			wantURLs := []string{"https://github.com/pydantic/pydantic-ai", "https://github.com/pydantic/pydantic-ai/tree/v1.84.0",
				"https://pydantic.dev/pydantic-ai", "https://github.com/pydantic/pydantic-ai/blob/main/AGENTS.md", "https://github.com/pydantic/pydantic-ai/tree/v1.67.0"}
			if len(anns) != len(wantURLs) {
				t.Fatalf("annotations %v", f.Meta.GetExtended().GetFields()["annotations"])
			}
			for i, a := range anns {
				m := a.GetStructValue().AsMap()
				c, _ := m["url_citation"].(map[string]any)
				if m["type"] != "url_citation" || c["url"] != wantURLs[i] || c["start_index"] != 0.0 || c["end_index"] != 0.0 {
					t.Errorf("annotation %d: %v", i, m)
				}
			}
			if c := anns[2].GetStructValue().AsMap()["url_citation"].(map[string]any); c["title"] != "" ||
				!strings.Contains(c["content"].(string), `"Pydantic AI" (agent framework)`) || !strings.HasSuffix(c["content"].(string), "Jobs index\n\n...\n\noverview") {
				t.Errorf("annotation 2: %v", c)
			}
			if f.Meta.GetResponseId() != "gen-1787214057-m5qwGsS4Ch5mE2yf3G49" || f.Meta.GetResolvedModel() != "deepseek/deepseek-chat" || len(f.Meta.GetWarnings()) != 0 {
				t.Errorf("meta %v", f.Meta)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
}

// TestStreamAnnotationsMerged: annotations repeated in a later delta are
// kept once, and annotations after the finish are reported at [DONE].
func TestStreamAnnotationsMerged(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	a := `{"type":"url_citation","url_citation":{"url":"https://a.example","title":"A","start_index":0,"end_index":1}}`
	b := `{"type":"url_citation","url_citation":{"url":"https://b.example","title":"B","start_index":1,"end_index":2}}`
	s := streamFrom(p, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\",\"annotations\":["+a+"]}}]}\n\n"+
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\",\"annotations\":["+a+"]},\"finish_reason\":\"stop\"}]}\n\n"+
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"annotations\":["+a+","+b+"]}}]}\n\n"+
		"data: [DONE]\n\n")
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]string
	for _, ev := range evs {
		if ev.Kind != provider.EventMeta {
			continue
		}
		if l := ev.Meta.GetExtended().GetFields()["annotations"]; l != nil {
			var urls []string
			for _, v := range l.GetListValue().GetValues() {
				urls = append(urls, v.GetStructValue().AsMap()["url_citation"].(map[string]any)["url"].(string))
			}
			lists = append(lists, urls)
		}
	}
	if len(lists) != 2 || strings.Join(lists[0], " ") != "https://a.example" || strings.Join(lists[1], " ") != "https://a.example https://b.example" {
		t.Errorf("annotation reports %v, want [a] at the finish, then [a b] at [DONE]", lists)
	}
}

// TestRound6ResponsesUnary replays unary Responses API answers recorded by
// sources not used before (testdata/README.md, "Round 6").
func TestRound6ResponsesUnary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check func(t *testing.T, res *provider.Result)
	}{
		// gpt-5.2 with the hosted web_search tool (pydantic-ai's
		// include-raw-annotations test, first interaction): a
		// web_search_call item (not a client call), then a message whose
		// output_text part carries one url_citation annotation (start
		// 126, end 211). The annotation is kept as sent in
		// meta.extended["annotations"]; it was dropped without a word.
		{"real_pyd_openai_include_raw_annotations_non_streaming_1", func(t *testing.T, res *provider.Result) {
			parts := r23Parts(t, res.Message, "web_search_call")
			if len(parts) != 1 || parts[0].GetText() != "The tallest mountain in Alberta is **Mount Columbia**, which rises to **3,747 m (12,294 ft)** and is Alberta's highest point. "+
				"([britannica.com](https://www.britannica.com/place/Mount-Columbia?utm_source=openai))" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 8530, OutputTokens: 98, TotalTokens: 8628, ReasoningTokens: 49}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			anns := res.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
			if len(anns) != 1 {
				t.Fatalf("annotations %v", res.Meta.GetExtended().GetFields()["annotations"])
			}
			if m := anns[0].GetStructValue().AsMap(); m["type"] != "url_citation" || m["start_index"] != 126.0 || m["end_index"] != 211.0 ||
				m["url"] != "https://www.britannica.com/place/Mount-Columbia?utm_source=openai" || m["title"] != "Mount Columbia | mountain, Alberta, Canada | Britannica" {
				t.Errorf("annotation %v", m)
			}
			if res.Meta.GetResponseId() != "resp_057daac88567bde400696c45fa056c81909529fd4ebb2a9760" || res.Meta.GetResolvedModel() != "gpt-5.2-2025-12-11" ||
				res.Meta.GetToolCallCount() != 0 || res.Meta.GetServiceTier() != "default" {
				t.Errorf("meta %v", res.Meta)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// TestGeneratedImages: an OpenRouter image model answers with the
// image in message.images beside the text (the shape of pydantic-ai's
// test_openrouter_image_generation cassette, whose 2 MB body is not kept:
// testdata/openrouter_image_generation.http is hand-built with a 1x1 PNG).
// Round 6 reported the images in a warning (they were dropped without a
// word); round 24 gives them to the caller, each as a provider item of
// its type after the text, unary and streamed, as Gemini's generated
// media are.
func TestGeneratedImages(t *testing.T) {
	t.Parallel()
	const image = `{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}`
	srv := providertest.ReplayFile(t, td("openrouter_image_generation.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetText() != "Here is a cat for you! " || parts[1].GetProviderItem().GetType() != "image_url" ||
		!strings.HasPrefix(parts[1].GetProviderItem().GetJson(), `{"type":"image_url","image_url":{"url":"data:image/png;base64,`) {
		t.Fatalf("parts %v", parts)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")

	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := streamFrom(p, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Here\",\"images\":[]}}]}\n\n"+
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" it is\",\"images\":["+image+"]},\"finish_reason\":\"stop\"}]}\n\n"+
		"data: [DONE]\n\n")
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	if parts := f.Message.GetParts(); len(parts) != 2 || parts[0].GetText() != "Here it is" || parts[1].GetProviderItem().GetJson() != image {
		t.Fatalf("parts %v", parts)
	}
	if w := f.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	// A shape that is not a list of objects is still said.
	s = streamFrom(p, "data: {\"id\":\"c2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\",\"images\":\"cat.png\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	if evs, _, err = collect(t, s); err != nil {
		t.Fatal(err)
	}
	if w := accFold(t, evs).Meta.GetWarnings(); len(w) != 1 || w[0] != "message images have an unrecognized shape; ignored" {
		t.Errorf("warnings %q", w)
	}
}

// TestRound6GroqToolUseFailed: Groq's 400 when tool_choice is required and
// the model wrote text instead (pydantic-ai's tool-use-failed-with-text
// cassette, first interaction): code tool_use_failed, type
// invalid_request_error, and failed_generation, what the model wrote
// ("maybe"), which pydantic-ai sends back in its retry. It is kept in the
// error's extended details (it was dropped), unary and streamed.
func TestRound6GroqToolUseFailed(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_groq_tool_use_failed_error_with_text_1"
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td(name+".http"))
		p := newTestProvider(t, kOpenAI, srv.URL)
		var err error
		if streaming {
			var s provider.Stream
			if s, err = p.Stream(context.Background(), chatRequests(t)["tools_parallel"]); s != nil {
				t.Fatal("stream returned with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), chatRequests(t)["tools_parallel"])
		}
		pe := providerError(t, err)
		if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "tool_use_failed" || pe.Param != "" ||
			pe.Message != "Tool choice is required, but model did not call a tool" || pe.RequestID != "" {
			t.Errorf("streaming %v: %s", streaming, renderErr(err))
		}
		if len(pe.Extended) != 1 || pe.Extended[extFailedGeneration] != "maybe" {
			t.Errorf("streaming %v: extended %v, want failed_generation \"maybe\"", streaming, pe.Extended)
		}
	}
}

// TestFailedGenerationRedacted: a failed generation that echoes the API
// key (as a model told the key might) is redacted like the message.
func TestFailedGenerationRedacted(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	e := p.errorFromObject([]byte(`{"message":"bad","code":"tool_use_failed","failed_generation":"the key is `+testKey+`"}`), 400, "m", nil)
	secrets{testKey}.redactError(e)
	if fg, _ := e.Extended[extFailedGeneration].(string); fg == "" || strings.Contains(fg, testKey) {
		t.Errorf("failed_generation %q", fg)
	}
}

// TestQuotaViolationRedacted: the QuotaFailure violation a rate-limit
// message gives (rateLimitQuota copies the message into its description)
// is redacted like the message: the call's credentials (an Entra ID
// token the gateway's own redactor does not know) must not reach the
// client through it.
func TestQuotaViolationRedacted(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	e := p.errorFromObject([]byte(`{"message":"Rate limit reached for key `+testKey+` on tokens per min (TPM): Limit 30000, Requested 31538.","type":"tokens","code":"rate_limit_exceeded"}`), 429, "m", nil)
	secrets{testKey}.redactError(e)
	if len(e.Quota) != 1 || e.Quota[0].GetQuotaValue() != 30000 {
		t.Fatalf("quota %v", e.Quota)
	}
	if d := e.Quota[0].GetDescription(); d == "" || strings.Contains(d, testKey) {
		t.Errorf("violation description %q", d)
	}
}
