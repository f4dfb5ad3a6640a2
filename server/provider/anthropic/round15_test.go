package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 15: the Vercel AI SDK's real web search recordings
// (anthropic-web-search-tool.1.json and its streamed twin), skipped before
// for their size.

const (
	// The three citation sources of real_vercel_web_search_tool.
	vercelAceComments = "https://acecomments.mu.nu/?post=411647"
	vercelCrescendo   = "https://www.crescendo.ai/news/latest-ai-news-and-updates"
)

// TestRound15WebSearchUnary: claude-sonnet-4-20250514 ran two web searches
// (the first with ten results, the second with none) and answered in eight
// text blocks, three of them cited, each with one web_search_result_location.
// The text is the blocks' text joined exactly (the source's straight
// apostrophes, "$11 billion", markdown), the four server blocks are warned
// about one by one and never become client calls (tool_call_count 0, STOP),
// the citations are kept whole with their blocks' text, and
// server_tool_use.web_search_requests 2 is in usage_details (web_fetch 0 and
// the zero cache counts are not).
func TestRound15WebSearchUnary(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_web_search_tool"
	res := r14Generate(t, name, plainRequest())
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		// One part per text block, as sent (content[2], 5, 6, 7, 8, 9, 10, 11).
		parts:      vercelWebSearchParts(),
		responseID: "msg_01PHHrjzLH4teUMhgkGgqYYc", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(27118, 600, 0, 0, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"server_tool_use.web_search_requests":2}`,
			"service_tier":           `"standard"`,
		},
		warnings: []string{
			`content[0]: content block type "server_tool_use" (tool "web_search", id srvtoolu_01Qxbje4duKBes3Nj42MkZug: a tool the provider ran itself)`,
			`content[1]: content block type "web_search_tool_result" (result of srvtoolu_01Qxbje4duKBes3Nj42MkZug, a tool the provider ran itself)`,
			`content[3]: content block type "server_tool_use" (tool "web_search", id srvtoolu_01HyorfKHSCsjCUVH6WHcNUC: a tool the provider ran itself)`,
			`content[4]: content block type "web_search_tool_result" (result of srvtoolu_01HyorfKHSCsjCUVH6WHcNUC, a tool the provider ran itself)`,
		},
		cited: vercelWebSearchCited,
	})
	if n := res.Meta.GetToolCallCount(); n != 0 {
		t.Errorf("tool_call_count %d, want 0 (the API ran both searches)", n)
	}
	checkRecordedCitations(t, name, res.Meta)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// vercelWebSearchParts are the unary recording's eight text blocks.
func vercelWebSearchParts() []*llmrelayv1.Part {
	return []*llmrelayv1.Part{
		text("Let me search for more specific tech news from today (September 26, 2024)."),
		text("Based on the search results, here are the key tech news highlights for today, September 26, 2024:\n\n" +
			"## Major Tech News for September 26, 2024\n\n**FTX Case Update:**\n"),
		text(vercelEllison),
		text("\n\nUnfortunately, the search results don't show many other specific breaking tech news stories from today, September 26, 2024. " +
			"However, here are some broader tech trends and recent developments that have been making headlines:\n\n## Recent AI Developments:\n- "),
		text(vercelChrome),
		text("\n\n- "),
		text(vercelDeepSeek),
		text("\n\n## Technology Industry Context:\nThe tech industry continues to be dominated by AI developments, " +
			"with companies making significant investments and breakthroughs in artificial intelligence capabilities. " +
			"The FTX case sentencing represents ongoing fallout from the cryptocurrency sector's challenges.\n\n" +
			"For the most current breaking tech news today, I'd recommend checking major tech news sources directly, " +
			"as my search results primarily showed more general or older tech news rather than specific breaking stories from September 26, 2024."),
	}
}

const (
	vercelEllison = "Caroline Ellison, Sam Bankman-Fried's right-hand woman in the FTX kerfuffle, has been sentenced to two years in prison " +
		"for her part in the fuffling and ordered to pay $11 billion in restitution."
	vercelChrome = "Anthropic has launched a Chrome extension enabling its Claude AI agent to interact directly with the browser, " +
		"manipulating webpages, retrieving content, and automating tasks. This marks the company's first move toward agentic AI with real-time web control."
	vercelDeepSeek = "Chinese AI firm DeepSeek has unveiled its R1 model, a significant leap in AI performance trained at a cost 70% lower " +
		"than comparable U.S. models. The company attributes its efficiency to custom hardware, proprietary optimization techniques, " +
		"and low energy costs in China. Analysts see this as a direct challenge to Western dominance in large language models, especially OpenAI and Anthropic."
)

// vercelWebSearchCited are the unary recording's three cited blocks
// (content[6], [8], [10]), read by hand from the recording.
var vercelWebSearchCited = []citedWant{
	{vercelEllison, []citeWant{{"web_search_result_location",
		"Daily Tech News 26 September 2024 · Top Story Caroline Ellison, Sam Bankman-Fried&#x27;s right-hand woman in the FTX kerfuffle, has been sentenced to ...",
		vercelAceComments}}},
	{vercelChrome, []citeWant{{"web_search_result_location",
		"Date: August 26, 2025 Summary: Anthropic has launched a Chrome extension enabling its Claude AI agent to interact directly with the browser, manipulat...",
		vercelCrescendo}}},
	{vercelDeepSeek, []citeWant{{"web_search_result_location",
		"Date: September 19, 2025 Summary: Chinese AI firm DeepSeek has unveiled its R1 model, a significant leap in AI performance trained at a cost 70% lower...",
		vercelCrescendo}}},
}

// checkRecordedCitations compares meta.extended.citations with the
// recording read independently of the adapter (recordedCitations): every
// citation object whole (type, cited_text, url, title, encrypted_index), in
// order, with its block's text.
func checkRecordedCitations(t *testing.T, name string, m *llmrelayv1.ResponseMeta) {
	t.Helper()
	want := recordedCitations(t, name)
	if len(want) == 0 {
		t.Fatalf("%s has no citations", name)
	}
	var got []any
	if err := json.Unmarshal([]byte(valueJSON(t, m.GetExtended().GetFields()[extCitations])), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("extended.citations\n got %v\nwant %v", got, want)
	}
}
