package openai

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Round 22 (mga): maruel/genai's go-vcr recordings of api.perplexity.ai
// (providers/perplexity/testdata/TestClient/Scoreboard/..., September 2025;
// testdata/README.md, "Round 22: maruel/genai's recordings"). Perplexity
// sends no request id (Cf-Ray is Cloudflare's); its bodies are Python's
// json.dumps (", " and ": " separators), the usage carries its cost, and
// a unary choice carries an empty "delta" beside its message (ignored).

// TestRound22mgaPerplexityReasoningThinkTags: sonar-reasoning-pro with
// return_images and disable_search (maruel/genai's extra fields, sent here
// through extra_body), unary: the reasoning as a <think> block opening
// content, split off as the reasoning part ("\nThe user wants me to say
// hello …\n"), the text the rest as sent ("\n\nHello."); 8 in, 37 out
// (Perplexity counts no reasoning tokens); search_context_size low and
// the cost's non-zero members in usage_details; empty citations and
// search_results (nothing to report) and five images from return_images,
// kept as search_images.
func TestRound22mgaPerplexityReasoningThinkTags(t *testing.T) {
	t.Parallel()
	req := r22Ask("sonar-reasoning-pro", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"return_images":true,"disable_search":true}`}
	res, body := r22Unary(t, "real_maruel_perplexity_sonar_reasoning_pro_text", r21cPerplexity, req, false)
	r22Meta(t, res.Meta, "bbc49743-96da-4073-af8f-78ef6c9f27da", "", "sonar-reasoning-pro", 1756687417,
		r22mgaUsage(8, 37, 45, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res.Message); r != "\nThe user wants me to say hello using only one word. This is straightforward - I just need to respond with \"Hello\" and nothing else.\n" ||
		a != "\n\nHello." {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	ext := res.Meta.GetExtended().AsMap()
	imgs, _ := ext["search_images"].([]any)
	img0, _ := imgs[0].(map[string]any)
	if len(imgs) != 5 || img0["origin_url"] != "https://www.istockphoto.com/photos/say-hello" || img0["height"] != float64(612) {
		t.Errorf("images %v", imgs)
	}
	if _, ok := ext["citations"]; ok {
		t.Errorf("empty citations reported: %v", ext["citations"])
	}
	r22Ext(t, res.Meta, map[string]any{"usage_details": map[string]any{"cost.request_cost": 0.006, "cost.total_cost": 0.006, "search_context_size": "low"}})
	if body["return_images"] != true || body["disable_search"] != true || body["model"] != "sonar-reasoning-pro" {
		t.Errorf("request %v", body)
	}
}

// TestRound22mgaPerplexityWebSearch: sonar-pro with return_images and
// return_related_questions, unary: "**Mark Carney**[1]." whose [1] is the
// first of five citations; the five search_results (title, url, date,
// last_updated, snippet, apostrophes as sent), five images and five
// related questions, each kept in meta.extended as sent; 28 in, 8 out.
func TestRound22mgaPerplexityWebSearch(t *testing.T) {
	t.Parallel()
	req := r22Ask("sonar-pro", "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"return_images":true,"return_related_questions":true}`}
	res, body := r22Unary(t, "real_maruel_perplexity_sonar_pro_web_search", r21cPerplexity, req, false)
	r22Meta(t, res.Meta, "7962908b-fa9f-418a-bca4-744906d29bc7", "", "sonar-pro", 1756858706,
		r22mgaUsage(28, 8, 36, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res.Message); r != "" || a != "**Mark Carney**[1]." {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	ext := res.Meta.GetExtended().AsMap()
	cites, _ := ext["citations"].([]any)
	results, _ := ext["search_results"].([]any)
	related, _ := ext["related_questions"].([]any)
	imgs, _ := ext["search_images"].([]any)
	if len(cites) != 5 || cites[0] != "https://abcnews.go.com/International/canada-new-prime-minister/story?id=119606459" || cites[4] != "https://www.pm.gc.ca/en/about" {
		t.Errorf("citations %v", cites)
	}
	r0, _ := results[0].(map[string]any)
	if len(results) != 5 || r0["title"] != "Mark Carney named as Canada's prime minister-elect amid US ..." || r0["url"] != cites[0] ||
		r0["date"] != "2025-03-09" || r0["last_updated"] != "2025-09-01" || r0["snippet"] == nil {
		t.Errorf("search results %v", results)
	}
	if len(related) != 5 || related[0] != "What are Mark Carney's key policies" || len(imgs) != 5 {
		t.Errorf("related %v, %d images", related, len(imgs))
	}
	r22Ext(t, res.Meta, map[string]any{"usage_details": map[string]any{"cost.request_cost": 0.006, "cost.total_cost": 0.006, "search_context_size": "low"}})
	if body["return_images"] != true || body["return_related_questions"] != true {
		t.Errorf("request %v", body)
	}
}

// TestRound22mgaPerplexityReasoningStreamCut: sonar-reasoning-pro
// streamed with max_tokens 16 (September 2025): Perplexity's chunks are
// "chat.completion" objects framed with CRLF and no [DONE], each carrying
// the whole message so far beside the delta, and the usage (2, 8, 16
// tokens; the cost on the last one only). The deltas open a <think> block
// that max_tokens cuts before it closes: all of it is reasoning ("\nThe
// user is asking for a detailed explanation of the theory of
// relativity."), no text, finish length; the cumulative "message" is not
// read again (the text would double).
func TestRound22mgaPerplexityReasoningStreamCut(t *testing.T) {
	t.Parallel()
	req := r22Ask("sonar-reasoning-pro", "Explain the theory of relativity in great details.")
	req.Options.MaxTokens = proto.Int32(16)
	f, body := r21cStream(t, "real_maruel_perplexity_sonar_reasoning_pro_max_tokens_stream", r21cPerplexity, req)
	if r, a := r21cParts(t, f.Message); r != "\nThe user is asking for a detailed explanation of the theory of relativity." || a != "" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	r22Meta(t, f.Meta, "0dfa782c-6218-4c82-b717-0b0cd559476d", "", "sonar-reasoning-pro", 1756687420,
		r22mgaUsage(9, 16, 25, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	r22Ext(t, f.Meta, map[string]any{"usage_details": map[string]any{"cost.request_cost": 0.006, "cost.total_cost": 0.006, "search_context_size": "low"}})
	if body["max_tokens"] != float64(16) || body["stream"] != true {
		t.Errorf("request %v", body)
	}
}

// TestRound22mgaPerplexityDeepResearchUsage: sonar-deep-research, unary
// (August 2025): "<think>…</think>\n\nHello!" and a usage of 8 prompt
// tokens, 40 completion tokens, total_tokens 48 and reasoning_tokens 1879
// beside them, the cost billing each apart (output_tokens_cost 0.00032 =
// 40 tokens at $8 a million, reasoning_tokens_cost 0.005637 = 1879 at $3).
// **Bug:** read as SGLang's count (a part of completion_tokens), the
// usage said 40 output tokens of which 1879 reasoning, 48 in all: the
// contract's output includes the reasoning, so the answer cost 1919 output
// tokens, 1927 in all. A top-level reasoning count above the completion
// count is now added to it, and on Perplexity (whose pricing bills
// reasoning tokens at their own price) any top-level reasoning count.
func TestRound22mgaPerplexityDeepResearchUsage(t *testing.T) {
	t.Parallel()
	req := r22Ask("sonar-deep-research", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"return_images":true,"disable_search":true}`}
	res, _ := r22Unary(t, "real_maruel_perplexity_sonar_deep_research_text", r21cPerplexity, req, false)
	r22Meta(t, res.Meta, "40017172-6586-4f19-b5e0-ed3333ab3e8c", "", "sonar-deep-research", 1754746392,
		r22mgaUsage(8, 1919, 1927, 1879, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res.Message); r != "\nThe user is asking me to say hello using only one word. This is a simple request. The most appropriate one-word greeting would be \"Hello\" itself.\n" ||
		a != "\n\nHello!" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	r22Ext(t, res.Meta, map[string]any{"usage_details": map[string]any{"cost.input_tokens_cost": 0.000016, "cost.output_tokens_cost": 0.00032,
		"cost.reasoning_tokens_cost": 0.005637, "cost.total_cost": 0.005973}})

	// On Perplexity a smaller reasoning count is apart as well; SGLang's
	// count elsewhere, within completion_tokens, is left as it is.
	body := []byte(`{"id":"u","model":"sonar-reasoning-pro","created":1,"object":"chat.completion","usage":{"prompt_tokens":10,"completion_tokens":50,"total_tokens":60,"reasoning_tokens":30},` +
		`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"x"}}]}`)
	for base, want := range map[string]*llmrelayv1.Usage{r21cPerplexity: r22mgaUsage(10, 80, 90, 30, 0), "https://sglang.example.com/v1": r22mgaUsage(10, 50, 60, 30, 0)} {
		res, err := newHostProvider(t, base, "http://unused").parseChatResponse(body)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("%s: usage %v, want %v", base, res.Meta.GetUsage(), want)
		}
	}
}
