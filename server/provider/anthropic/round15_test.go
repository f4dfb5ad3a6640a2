package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

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
		// Two parts: content[2], then the server blocks (not parts), then
		// the text blocks 5 to 11 in a row (one per cited span), one part.
		parts:      vercelWebSearchParts(),
		responseID: "msg_01PHHrjzLH4teUMhgkGgqYYc", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(27118, 600, 0, 0, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"server_tool_use.web_search_requests":2}`,
			"service_tier":           `"standard"`,
		},
		items: []string{"server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result"},
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
			"## Major Tech News for September 26, 2024\n\n**FTX Case Update:**\n" +
			vercelEllison +
			"\n\nUnfortunately, the search results don't show many other specific breaking tech news stories from today, September 26, 2024. " +
			"However, here are some broader tech trends and recent developments that have been making headlines:\n\n## Recent AI Developments:\n- " +
			vercelChrome +
			"\n\n- " +
			vercelDeepSeek +
			"\n\n## Technology Industry Context:\nThe tech industry continues to be dominated by AI developments, " +
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

const (
	vercelGinza  = "https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/"
	vercelFang   = "https://future.forem.com/junyu_fang_a216509a97501d/fang-junyus-technology-weekly-september-26-2025-2ndd"
	vercelOm     = "https://future.forem.com/om_shree_0709/major-tech-news-september-25-2025-5h38"
	vercelIOS261 = "https://9to5mac.com/2025/09/22/ios-26-1-beta-1/"
	wsrl         = "web_search_result_location"

	vercelGinzaText = "Apple today announced the grand reopening of Apple Ginza on Friday, September 26, located in the vibrant Ginza district " +
		"where Apple's retail journey in Japan began more than two decades ago. Apple Ginza opens to customers Friday, September 26, at 10 a.m. JST."
	vercelOpenedText = "Opened in 2003 as Apple's first store outside the U.S., Apple Ginza now returns in an all-new four-story design " +
		"that brings together the best of Apple's products, services, and experiences in one beautifully reimagined space."
	vercelFoldText = "Apple is considering building a pilot production line for a foldable iPhone in Taiwan, with plans to launch the new foldable iPhone in 2026. " +
		"Currently, multiple sources have confirmed that Apple plans to release its first foldable iPhone in 2026 as part of the iPhone 18 lineup."
	vercelPulseText = "OpenAI launches ChatGPT Pulse, proactively writing your morning briefing. OpenAI is rolling out a new feature in ChatGPT called Pulse, " +
		"which generates personalized reports while users sleep. Pulse provides users with a quick overview of their day with 5-10 briefings, " +
		"designed to encourage them to check ChatGPT first thing in the morning."
	vercelSept25Text = "On September 25, 2025, headlines were dominated by seismic shifts in AI infrastructure, potential blockbuster partnerships " +
		"between legacy chip giants, and escalating regulatory battles that could redefine global innovation."
	vercelMicrosoftText = "Microsoft shook up its AI stack by integrating Anthropic's models into Copilot for Microsoft 365, reducing OpenAI dependency " +
		"and boosting productivity tools like real-time analytics."
	vercelOracleText = "Oracle followed with a $15 billion bond raise for cloud expansion, riding AI demand waves."
	vercelGoogleText = "Google launched Mixboard, an AI mood board app with Gemini-powered suggestions for designers, " +
		"and rolled conversational editing to more Android phones in Photos."
	vercelIOSText = "With iOS 26 officially launched, Apple is moving forward with iOS 26.1. Apple released iOS 26 on September 15, " +
		"bringing the Liquid Glass redesign to the iPhone."
)

// TestRound15WebSearchStream: the streamed twin (another answer:
// claude-sonnet-4-20250514, one search whose query comes in four
// input_json_delta pieces, a web_search_tool_result with ten results,
// then nineteen text blocks, nine of them cited: each starts with
// citations [] and gets its citations_delta events before its text_delta
// pieces, two blocks with two citations of the same cited_text). The text
// is the blocks' pieces joined exactly (the text's straight apostrophes,
// the cited_text's curly ones kept apart), the two server blocks are
// warned about and never become client calls, the citations are kept
// whole with their blocks' text and reported once, message_delta's
// input_tokens (15665, up from message_start's 2037) and
// server_tool_use.web_search_requests 1 are the final usage.
func TestRound15WebSearchStream(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_web_search_tool_stream"
	evs, err := r14Stream(t, name, plainRequest())
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	checkLLMWant(t, "stream", f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{text("Based on my search results, here are the key tech news developments from today (September 26, 2025):\n\n## Apple News\n" + // block 2
			vercelGinzaText + " " + vercelOpenedText + // 3 (cited), 4, 5 (cited)
			"\n\n## Recent Apple Product Updates\n" + vercelFoldText + "\n\n" + vercelPulseText + // 6, 7, 8, 9
			"\n\n## Major Tech Industry Developments from Yesterday\n\n" + vercelSept25Text + // 10, 11
			"\n\nKey highlights include:\n- " + vercelMicrosoftText + "\n- " + vercelOracleText + "\n- " + vercelGoogleText + // 12-17
			"\n\n## Recent iOS Updates\n" + vercelIOSText + // 18, 19
			"\n\nThe main tech story today appears to be Apple's significant retail milestone with the reopening of their redesigned flagship " +
			"Ginza store in Tokyo, marking over 20 years since their first international retail expansion.")}, // 20
		responseID: "msg_01LHpEgU4KbfgXGVi3UtHQY1", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(15665, 795, 0, 0, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"server_tool_use.web_search_requests":1}`,
			"service_tier":           `"standard"`,
		},
		items: []string{"server_tool_use", "web_search_tool_result"},
		cited: []citedWant{
			{vercelGinzaText, []citeWant{
				{wsrl, "Apple today announced the grand reopening of Apple Ginza on Friday, September 26, located in the vibrant Ginza district.", vercelGinza},
				{wsrl, "TOKYO Apple today announced the grand reopening of Apple Ginza on Friday, September 26, located in the vibrant Ginza district where Apple’s retail jou...", vercelGinza},
				{wsrl, "Apple Ginza opens to customers Friday, September 26, at 10 a.m. JST. ", vercelGinza},
			}},
			{vercelOpenedText, []citeWant{
				{wsrl, "Opened in 2003 as Apple’s first store outside the U.S., Apple Ginza now returns in an all-new four-story design that brings together the best of Apple...", vercelGinza},
				{wsrl, "Opened in 2003 as Apple’s first store outside the U.S., Apple Ginza now returns in an all-new four-story design that brings together the best of Apple...", vercelGinza},
			}},
			{vercelFoldText, []citeWant{{wsrl, "Apple is considering building a pilot production line for a foldable iPhone in Taiwan, with plans to launch the new foldable iPhone in 2026. Currently...", vercelFang}}},
			{vercelPulseText, []citeWant{{wsrl, "OpenAI launches ChatGPT Pulse, proactively writing your morning briefing. OpenAI is rolling out a new feature in ChatGPT called Pulse, which generates...", vercelFang}}},
			{vercelSept25Text, []citeWant{
				{wsrl, "On September 25, 2025, headlines were dominated by seismic shifts in AI infrastructure, potential blockbuster partnerships between legacy chip giants,...", vercelOm},
				{wsrl, "On September 25, 2025, headlines were dominated by seismic shifts in AI infrastructure, potential blockbuster partnerships between legacy chip giants,...", vercelOm},
			}},
			{vercelMicrosoftText, []citeWant{{wsrl, "Microsoft shook up its AI stack by integrating Anthropic's models into Copilot for Microsoft 365, reducing OpenAI dependency and boosting productivity...", vercelOm}}},
			{vercelOracleText, []citeWant{{wsrl, "Oracle followed with a $15 billion bond raise for cloud expansion, riding AI demand waves. ", vercelOm}}},
			{vercelGoogleText, []citeWant{{wsrl, "Google launched Mixboard, an AI mood board app with Gemini-powered suggestions for designers, and rolled conversational editing to more Android phones...", vercelOm}}},
			{vercelIOSText, []citeWant{
				{wsrl, "With iOS 26 officially launched, Apple is moving forward with iOS 26.1. ", vercelIOS261},
				{wsrl, "Apple released iOS 26 on September 15, bringing the Liquid Glass redesign to the iPhone. ", vercelIOS261},
			}},
		},
	})
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran the search)", n)
	}
	// Reported once, whole, not per delta.
	n := 0
	for _, ev := range evs {
		if _, ok := ev.Meta.GetExtended().GetFields()[extCitations]; ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("citations reported %d times, want once", n)
	}
	checkRecordedCitations(t, name, f.meta)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
}
