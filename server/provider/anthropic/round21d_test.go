package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 21d: pydantic-ai's large server-tool recordings (web search,
// web fetch, MCP servers) transcribed page by page and checked against
// what the provider sent (testdata/README.md, "Round 21d"). Every
// expectation is read off the recording by hand.

// r21dWebSearchTools is the tool list pydantic-ai sent for WebSearchTool:
// the server tool with its unset options as nulls, through extra_body.
const r21dWebSearchTools = `[{"allowed_domains":null,"blocked_domains":null,"max_uses":null,"name":"web_search","type":"web_search_20250305","user_location":null}]`

// TestRound21dWebSearchStream: claude-sonnet-4-20250514 (September 2025),
// streamed, thinking at budget 3000 with web_search_20250305: a signed
// thinking block (a ping inside it), a server_tool_use web_search whose
// query streams in nine input_json_delta pieces, its web_search_tool_result
// (ten results), a text block ("… Let me search for more current
// information."), a second search (twelve pieces) and its ten results,
// then eleven text blocks (6 to 16), five of them cited (7, 9, 11, 13, 15;
// 9, 11 cite the same sentence twice with different encrypted_index).
// Two text parts: the first text block follows a server block, and so does
// the run of eleven, which is one part. message_delta raises input_tokens
// 2068 → 22397, 637 out, server_tool_use web_search_requests 2 and
// web_fetch_requests 0. Four warnings (two searches, two results).
func TestRound21dWebSearchStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_model_web_search_tool_stream"
	req := r21Request("claude-sonnet-4-0", "What is the weather in San Francisco today?", 4096, 3000)
	req.ProviderOptions.ExtraBody = `{"tool_choice":{"type":"auto"},"tools":` + r21dWebSearchTools + `}`
	evs, f, srv := r21Stream(t, name, req)
	const (
		accu     = "today (September 16) shows a high of 76°F and low of 59°F"
		chron    = "average mid-September highs in San Francisco are around 70 degrees"
		daytime  = "Daytime temperatures usually reach 22°C (72°F) in San Francisco in September, falling to 13°C (55°F) at night"
		sun      = "There are normally 9 hours of bright sunshine each day in San Francisco in September"
		rain     = "San Francisco experiences minimal rainfall in September, with an average precipitation of just 3mm. Typically, there are no rainy days during this month"
		chronURL = "https://www.sfchronicle.com/weather-forecast/article/weather-forecast-san-francisco-21043269.php"
		w2t      = "https://www.weather2travel.com/california/san-francisco/september/"
	)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "The user is asking about the weather in San Francisco today. This is clearly a request for current, real-time information that changes daily, " +
					"so I should use web search to get up-to-date weather information. According to the guidelines, today's date is September 16, 2025.\n\n" +
					"I should search for current weather in San Francisco. I'll include \"today\" in the search query to get the most current information.",
				Signature: "Er8ECkYIBxgCKkDp29haxwUos3j9hg3HNQI8e4jcFtinIsLxpzaQR/MhPnIpHkUpSNPatD/C2EVyiEGg2LIO1lhkU/P8XLgiyejFEgzinYyrRtGe03DeFEIaDL63CVUOAo1v/57lpSIw+msm1NHv1h+xLzkbu2YqlXPwjza0tVjwAj7RLUFwB1HpPbdv6hlityaMFb/SwKZZKqYDwbYu36cdPpUcpirpZaKZ/DITzfWJkX93BXmRl5au50mxAiFe9B8XxreADaofra5cmevEaaLH0b5Ze/IC0ja/cJdo9NoVlyHlqdXmex22CAkg0Y/HnsZr8MbnE6GyG9bOqAEhwb6YgKHMaMLDVmElbNSsD7luWtsbw5BDvRaqSSROzTxH4s0dqjUqJsoOBeUXuUqWHSl2KwQi8akELKUnvlDz15ZwFI1yVTHA5nSMFIhjB0jECs1g8PjFkAYTHkHddYR5/SLruy1ENpKU0xjc/hd/O41xnI3PxHBGDKv/hdeSVBKjJ0SDYIwXW96QS5vzlKxYGCqtibj2VxPzUlDITvhn1oO+cjCXClo1lE+ul//+nk7jk7fRkvl1/+pscYCpBoGKprA7CU1kpiggO9pAVUrpZM9vC2jF5/VVVYEoY3CyC+hrNpDWXTUdGdCTofhp2wdWVZzCmO7/+L8SUnlu64YYe9PWsRDuHRe8Lvl0M9EyBrhWnGWQkkk9b+O5uNU5xgE0sjbuGzgYswhwSd7Powb8XbtbW6h7lTbo1M2IQ3Ok0kdt0RAYAQ==",
			}),
			text("Based on the search results, I can see that the information is a bit dated (most results are from about 6 days to a week ago), " +
				"but I can provide you with the available weather information for San Francisco. Let me search for more current information."),
			text("Based on the search results, I can provide you with information about San Francisco's weather today (September 16, 2025):\n\n" +
				"According to AccuWeather's forecast, " + accu + " for San Francisco.\n\nFrom the recent San Francisco Chronicle weather report, " + chron +
				", so today's forecast of 76°F is slightly above the typical temperature for this time of year.\n\nThe general weather pattern for San Francisco in September includes:\n- " +
				daytime + "\n- " + sun + "\n- " + rain +
				"\n\nSo for today, you can expect partly sunny to sunny skies with a high around 76°F (24°C) and a low around 59°F (15°C), with very little chance of rain. " +
				"It's shaping up to be a pleasant day in San Francisco!"),
		},
		responseID: "msg_01QmxBSdEbD9ZeBWDVgFDoQ5", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(22397, 637, 0, 0, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"server_tool_use.web_search_requests":2}`,
			"service_tier":           `"standard"`,
		},
		items: []string{"server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result"},
		cited: []citedWant{
			{accu, []citeWant{{wsrl, "San Francisco, CA Weather Today WinterCast Local {stormName} Tracker Hourly Daily Radar MinuteCast® Monthly Air Quality Health & Activities · News · F...",
				"https://www.accuweather.com/en/us/san-francisco/94103/september-weather/347629"}}},
			{chron, []citeWant{
				{wsrl, "Average mid-September highs in San Francisco are around 70 degrees. ", chronURL},
				{wsrl, "Average mid-September highs in San Francisco are around 70 degrees. ", chronURL},
			}},
			{daytime, []citeWant{
				{wsrl, "... Daytime temperatures usually reach 22°C in San Francisco in September, falling to 13°C at night. ", w2t},
				{wsrl, "... Daytime temperatures usually reach 22°C in San Francisco in September, falling to 13°C at night. ", w2t},
			}},
			{sun, []citeWant{{wsrl, "There are normally 9 hours of bright sunshine each day in San Francisco in September - that's 73% of daylight hours. ", w2t}}},
			{rain, []citeWant{{wsrl, "San Francisco experiences minimal rainfall in September, with an average precipitation of just 3mm. Typically, there are no rainy days during this mon...",
				"https://en.climate-data.org/north-america/united-states-of-america/california/san-francisco-385/t/september-9/"}}},
		},
	})
	checkRecordedCitations(t, name, f.meta)
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran both searches)", n)
	}
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"What is the weather in San Francisco today?","type":"text"}],"role":"user"}],`+
		`"model":"claude-sonnet-4-0","stream":true,"thinking":{"budget_tokens":3000,"type":"enabled"},"tool_choice":{"type":"auto"},"tools":`+r21dWebSearchTools+`}`)
}

// TestRound21dWebFetch: claude-sonnet-4-20250514 (December 2025), unary,
// thinking at budget 3000 with web_fetch_20250910: a signed thinking
// block, a server_tool_use web_fetch ({"url": "https://ai.pydantic.dev"}),
// its web_fetch_tool_result (the page as a text document, 30 KB, retrieved
// 2025-12-08T15:05:59.571Z), then the one-line answer. 11471 in, 167 out,
// server_tool_use web_fetch_requests 1 (web_search_requests 0, not
// repeated). The response's retry-after: 45 on a 200 is no error's and no
// rate limit's: nothing reads it. The request is the recorded one (we send
// no stream:false: the field's absence means the same).
func TestRound21dWebFetch(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_web_fetch_tool"
	const tools = `[{"allowed_domains":null,"blocked_domains":null,"citations":null,"max_content_tokens":null,"max_uses":null,"name":"web_fetch","type":"web_fetch_20250910"}]`
	const prompt = "What is the first sentence on the page https://ai.pydantic.dev? Reply with only the sentence."
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-sonnet-4-0", prompt, 4096, 3000)
	req.ProviderOptions.ExtraBody = `{"tool_choice":{"type":"auto"},"tools":` + tools + `}`
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := r19bBody(t, name)
	th := r19bBlock(t, body, 0)
	if !strings.HasPrefix(th["signature"].(string), "EowECkYIChgCKkARi719") {
		t.Fatalf("recorded signature %q", th["signature"])
	}
	fetched, _ := r19bBlock(t, body, 2)["content"].(map[string]any)
	if fetched["url"] != "https://ai.pydantic.dev" || fetched["retrieved_at"] != "2025-12-08T15:05:59.571000+00:00" {
		t.Fatalf("recorded fetch result %v", fetched)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "The user is asking me to fetch the content from https://ai.pydantic.dev and provide only the first sentence from that page. " +
					"I need to use the web_fetch tool to get the content from this URL, then identify the first sentence and return only that sentence.\n\n" +
					"The URL provided is https://ai.pydantic.dev which appears to be a valid URL with the proper schema.",
				Signature: th["signature"].(string),
			}),
			text("GenAI Agent Framework, the Pydantic way"),
		},
		responseID: "msg_0177v8DerW2JTUpKSNyE1J5n", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(11471, 167, 0, 0, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"server_tool_use.web_fetch_requests":1}`,
			"service_tier":           `"standard"`,
		},
		items: []string{"server_tool_use", "web_fetch_tool_result"},
	})
	sent := r19bJSON(t, srv.Last(t).Body)
	if s, ok := sent["stream"]; ok && s != false {
		t.Errorf("stream %v in a unary request", s)
	}
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"`+prompt+`","type":"text"}],"role":"user"}],`+
		`"model":"claude-sonnet-4-0","thinking":{"budget_tokens":3000,"type":"enabled"},"tool_choice":{"type":"auto"},"tools":`+tools+`}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// r21dMCPServers is the mcp_servers list pydantic-ai sent (its
// authorization token scrubbed by the cassette), through extra_body.
const r21dMCPServers = `[{"authorization_token":"<redacted>","name":"test-server","tool_configuration":{"allowed_tools":["search_repositories"],"enabled":true},"type":"url","url":"https://api.githubcopilot.com/mcp/"}]`

// TestRound21dMCPServers: claude-sonnet-4-20250514 (October 2025), unary,
// thinking at budget 3000 with an MCP server (mcp_servers through
// extra_body), a two-turn conversation.
//
// Turn 1: a signed thinking block, an mcp_tool_use (search_repositories of
// server "test-server", {"query": "pydantic-ai in:name"}), its
// mcp_tool_result (is_error false, the GitHub search's 30 repositories as
// one text block), then the answer. 6529 in, 269 out; server_tool_use
// counts all zero (no usage_details). A warning per MCP block.
//
// Turn 2: the answer sent back with a second question. pydantic-ai sent the
// thinking, the two MCP blocks (renamed: name mcp_server, server_name
// mcp_call) and the text; ours sends the thinking, the two MCP blocks as
// the answer had them (provider items, round 23; before, they were
// dropped with a warning) and the text; the recording shows the API
// taking a turn with the blocks. Everything else is the recorded
// request. The answer: a signed thinking block and text, 5962
// in, 296 out, no server_tool_use object at all.
func TestRound21dMCPServers(t *testing.T) {
	t.Parallel()
	const (
		q1 = "Can you tell me more about pydantic-ai repo? Keep your answer short"
		q2 = "What is the latest commit hash in that repo?"
	)
	extra := `{"mcp_servers":` + r21dMCPServers + `}`

	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_mcp_servers_1.http")
	req1 := r21Request("claude-sonnet-4-0", q1, 4096, 3000)
	req1.ProviderOptions.ExtraBody = extra
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), req1)
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	body1 := r19bBody(t, "real_pyd_anthropic_mcp_servers_1")
	th1 := r19bBlock(t, body1, 0)
	if !strings.HasPrefix(th1["signature"].(string), "EvECCkYICBgCKkCeuCUV") {
		t.Fatalf("recorded signature %q", th1["signature"])
	}
	if use := r19bBlock(t, body1, 1); use["server_name"] != "test-server" || use["name"] != "search_repositories" {
		t.Fatalf("recorded mcp_tool_use %v", use)
	}
	const answer1 = "**Pydantic AI** is a GenAI Agent Framework by the Pydantic team. It's a Python library for building AI agents using the familiar " +
		"Pydantic approach with type safety and validation.\n\nKey details:\n- **12.9K stars** on GitHub \n- Created in June 2024, actively maintained\n" +
		"- Focuses on **agent frameworks, GenAI, and LLM integration**\n- Built by the creators of Pydantic for type-safe AI agent development\n" +
		"- Has spawned numerous tutorials and example projects in the community\n\n" +
		"The framework emphasizes the \"Pydantic way\" of building AI agents with structured data validation and type hints."
	const thinking1 = "The user is asking about the \"pydantic-ai\" repository. I need to search for this specific repository using the search function. " +
		"I'll search for \"pydantic-ai\" to find information about this repository."
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinking1, Signature: th1["signature"].(string)}),
			text(answer1),
		},
		responseID: "msg_018AXFcpDGpwqaT6LrN7cZVF", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(6529, 269, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
		items:    []string{"mcp_tool_use", "mcp_tool_result"},
	})
	if _, ok := res1.Meta.GetExtended().GetFields()[provider.ExtUsageDetails]; ok {
		t.Errorf("usage_details %v from all-zero server_tool_use counts", res1.Meta.GetExtended().GetFields()[provider.ExtUsageDetails])
	}
	r20SameFields(t, srv1.Last(t).Body, `{"max_tokens":4096,"mcp_servers":`+r21dMCPServers+`,"messages":[{"content":[{"text":"`+q1+`","type":"text"}],"role":"user"}],`+
		`"model":"claude-sonnet-4-0","thinking":{"budget_tokens":3000,"type":"enabled"}}`)
	providertest.Golden(t, "testdata/real_pyd_anthropic_mcp_servers_1.golden", renderResult(t, res1))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_mcp_servers_2.http")
	req2 := r21Request("claude-sonnet-4-0", q1, 4096, 3000)
	req2.ProviderOptions.ExtraBody = extra
	req2.Messages = append(req2.Messages, res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(q2)))
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), req2)
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	// The MCP blocks go back as the answer had them, in their place (as
	// pydantic-ai's turn had them).
	sentTurn := `{"content":[{"signature":` + r21dQuote(t, th1["signature"].(string)) + `,"thinking":` + r21dQuote(t, thinking1) + `,"type":"thinking"},` +
		itemBlocks(t, res1.Message, 2) + `{"text":` + r21dQuote(t, answer1) + `,"type":"text"}],"role":"assistant"}`
	r20SameFields(t, srv2.Last(t).Body, `{"max_tokens":4096,"mcp_servers":`+r21dMCPServers+`,"messages":[{"content":[{"text":"`+q1+`","type":"text"}],"role":"user"},`+
		sentTurn+`,{"content":[{"text":"`+q2+`","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-0","thinking":{"budget_tokens":3000,"type":"enabled"}}`)
	body2 := r19bBody(t, "real_pyd_anthropic_mcp_servers_2")
	th2 := r19bBlock(t, body2, 0)
	if !strings.HasPrefix(th2["signature"].(string), "ErwGCkYICBgCKkBFPz7O") {
		t.Fatalf("recorded signature %q", th2["signature"])
	}
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "The user is asking for the latest commit hash in the pydantic-ai repository. However, the search function I have access to only returns " +
					"basic repository information like stars, forks, description, etc. It doesn't provide commit information or the latest commit hash.\n\n" +
					"Looking at the function schema, the search_repositories function returns minimal repository information by default, and even when " +
					"minimal_output is set to false, it returns \"full GitHub API repository objects\" but based on the current results, I don't see commit hash information included.\n\n" +
					"I need to let the user know that I cannot retrieve commit hash information with the available tools.",
				Signature: th2["signature"].(string),
			}),
			text("I don't have access to commit information through the available search function. The repository search tool only provides basic metadata " +
				"like stars, forks, description, and last updated date, but doesn't include commit hashes or detailed commit history.\n\n" +
				"To get the latest commit hash, you would need to:\n1. Visit the repository directly at https://github.com/pydantic/pydantic-ai\n" +
				"2. Use Git commands like `git log -1 --format=\"%H\"` if you have the repo cloned\n3. Use GitHub's API directly with endpoints that provide commit information\n\n" +
				"The repo was last updated on October 13, 2025 according to the search results, but I can't provide the specific commit hash."),
		},
		responseID: "msg_012GhUvN5n6KVUZwxg9AarJd", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(5962, 296, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_mcp_servers_2.golden", renderResult(t, res2))
}

// r21dQuote is s as a JSON string literal.
func r21dQuote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRound21dSearchFirstStream: claude-sonnet-4-5-20250929 (September
// 2026), streamed, with web_search_20250305 and a system prompt: the
// answer opens with the server_tool_use web_search (its query in six
// input_json_delta pieces, a ping inside the block), its ten results (the
// block with caller direct), then one cited text block (CERN, 1954).
// message_start has container, stop_details and diagnostics null and
// inference_geo "not_available"; message_delta raises input_tokens 2232 →
// 10195, 106 out, one search. One text part (nothing before the server
// blocks), two warnings, the citation whole.
func TestRound21dSearchFirstStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_text_parts_ahead_of_built_in_tool_call"
	const prompt = "Briefly mention 1 event that happened today in history?"
	req := r21Request("claude-sonnet-4-5", prompt, 64000, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be very concise."))}, req.Messages...)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":` + r21dWebSearchTools + `}`}
	evs, f, srv := r21Stream(t, name, req)
	const answer = "On September 29, 1954, CERN (the European Organization for Nuclear Research) was established by 12 European governments."
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_011CfY3xKWz4wdu1A1if4oLf", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(10195, 106, 0, 0, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"inference_geo":"not_available","server_tool_use.web_search_requests":1}`,
			"service_tier":           `"standard"`,
		},
		items: []string{"server_tool_use", "web_search_tool_result"},
		cited: []citedWant{{answer, []citeWant{{wsrl,
			"1954 – CERN established\n\nThe European Organization for Nuclear Research, popularly known as CERN, was established by 12 European governments.\n\n",
			"https://www.timeanddate.com/on-this-day/september/29"}}}},
	})
	checkRecordedCitations(t, name, f.meta)
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran the search)", n)
	}
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-5","max_tokens":64000,"stream":true,"system":"Be very concise.",`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]}],"tools":`+r21dWebSearchTools+`}`)
}

// TestRound21dNineteenRedactedStream: claude-sonnet-4-5-20250929
// (September 2026), streamed, thinking at budget 1024, asked Anthropic's
// magic string that triggers redacted thinking: nineteen redacted_thinking
// blocks in a row (each whole in its content_block_start, a ping after the
// first; the last two differ in their length prefix and then agree for
// 213 base64 characters, so each is kept apart), then the text. message_delta: 93 in, 103 out of which 47 thinking tokens
// (output_tokens_details), inference_geo "not_available" from
// message_start. Nineteen redacted reasoning parts, their data byte for
// byte in order, then one text part; sent back, they are the nineteen
// redacted_thinking blocks in order before the text.
func TestRound21dNineteenRedactedStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_model_thinking_part_redacted_19_stream"
	const prompt = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
	raw, err := os.ReadFile("testdata/" + name + ".http")
	if err != nil {
		t.Fatal(err)
	}
	var data []string
	for _, line := range strings.Split(string(raw), "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			ContentBlock struct {
				Type string `json:"type"`
				Data string `json:"data"`
			} `json:"content_block"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("recording: %v", err)
		}
		if ev.Type == "content_block_start" && ev.ContentBlock.Type == "redacted_thinking" {
			data = append(data, ev.ContentBlock.Data)
		}
	}
	if len(data) != 19 || !strings.HasPrefix(data[0], "EooCCpsBCBIYAipAH9yM") || !strings.HasPrefix(data[18], "Ev4BCpsBCBIYAipAj2VE") {
		t.Fatalf("recording has %d redacted_thinking blocks", len(data))
	}
	req := r21Request("claude-sonnet-4-5-20250929", prompt, 64000, 1024)
	_, f, srv := r21Stream(t, name, req)
	var parts []*llmrelayv1.Part
	for _, d := range data {
		parts = append(parts, reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: d}))
	}
	parts = append(parts, text("I don't have any special response to that string. It appears to be a test or trigger phrase, but I don't have hidden modes "+
		"or secret instructions that can be activated by specific strings.\n\nIs there something I can help you with today?"))
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      parts,
		responseID: "msg_011CfY3rnnuVjmSHr8jV6m4t", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(93, 103, 0, 0, 47),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
			"service_tier":           `"standard"`,
		},
	})
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":64000,"messages":[{"role":"user","content":[{"text":"`+prompt+`","type":"text"}]}],`+
		`"model":"claude-sonnet-4-5-20250929","stream":true,"thinking":{"type":"enabled","budget_tokens":1024}}`)

	next := r21Request("claude-sonnet-4-5-20250929", prompt, 64000, 1024)
	next.Messages = append(next.Messages, f.message, msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks.")))
	body, _, _, err := newTestProvider(t, "http://unused.invalid").buildRequest(next, true)
	if err != nil {
		t.Fatalf("buildRequest: %v", err)
	}
	var sent struct {
		Messages []struct {
			Content []struct {
				Type string `json:"type"`
				Data string `json:"data"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 3 || len(sent.Messages[1].Content) != 20 || sent.Messages[1].Content[19].Type != "text" {
		t.Fatalf("request %s", body)
	}
	for i, d := range data {
		if b := sent.Messages[1].Content[i]; b.Type != "redacted_thinking" || b.Data != d {
			t.Errorf("block %d: %s %q, recorded redacted_thinking %q", i, b.Type, b.Data, d)
		}
	}
}

// TestRound21dAdvisorRedacted: claude-sonnet-5 (2026), unary, the advisor
// tool backed by claude-fable-5, whose advice comes back redacted: a
// thinking block with empty text and a signature, a text block, the
// server_tool_use advisor ({} input), its advisor_tool_result whose
// content is an advisor_redacted_result (encrypted_content, stop_reason
// end_turn), then "2 + 2 = 4". usage: 2482 in, 166 out (the two message
// iterations, 1128 + 1354 and 155 + 11), the advisor's own iteration
// (claude-fable-5, 2564 in, 99 out) kept in usage_details with
// inference_geo global; 71 thinking tokens; stop_details null. Two text
// parts (the server blocks between them), two warnings, no failure named
// for the redacted result.
func TestRound21dAdvisorRedacted(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_advisor_tool_redacted"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	const tools = `[{"max_tokens":1024,"model":"claude-fable-5","name":"advisor","type":"advisor_20260301"}]`
	req := r21Request("claude-sonnet-5", "What's 2+2? Consult your advisor first.", 4096, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":` + tools + `}`}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := r19bBody(t, name)
	th := r19bBlock(t, body, 0)
	if th["thinking"] != "" || !strings.HasPrefix(th["signature"].(string), "ErMDCokBCA8YAipARPs8") {
		t.Fatalf("recorded thinking %v", th)
	}
	if c, _ := r19bBlock(t, body, 3)["content"].(map[string]any); c["type"] != "advisor_redacted_result" {
		t.Fatalf("recorded advisor result %v", c)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Signature: th["signature"].(string)}),
			text("The task asks a simple arithmetic question (2+2), and my initial read is that the answer is straightforwardly 4; " +
				"I'll consult the advisor as instructed before finalizing."),
			text("2 + 2 = 4"),
		},
		responseID: "msg_011CdD8kymr8deshk2jea6kJ", model: "claude-sonnet-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(2482, 166, 0, 0, 71),
		extended: map[string]string{"service_tier": `"standard"`},
		items:    []string{"server_tool_use", "advisor_tool_result"},
	})
	details, _ := res.Meta.GetExtended().AsMap()[provider.ExtUsageDetails].(map[string]any)
	its, _ := details["iterations"].([]any)
	if details["inference_geo"] != "global" || len(its) != 3 || its[1].(map[string]any)["model"] != "claude-fable-5" ||
		its[1].(map[string]any)["input_tokens"] != float64(2564) || its[1].(map[string]any)["output_tokens"] != float64(99) {
		t.Errorf("usage details %v", details)
	}
	r20SameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-5","max_tokens":4096,"tools":`+tools+`,`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"What's 2+2? Consult your advisor first."}]}]}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// r21dPrefixRequest is pydantic-ai's response-prefix request: a system
// prompt, the question, and the assistant's "Su nombre es" to continue.
func r21dPrefixRequest() *provider.Request {
	req := r21Request("claude-sonnet-4-0", "What is the name of color #FF0000", 4096, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be concise."))}, req.Messages...)
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Su nombre es")))
	return req
}

const r21dPrefixRecorded = `{"max_tokens":4096,"messages":[{"content":[{"text":"What is the name of color #FF0000","type":"text"}],"role":"user"},` +
	`{"content":[{"text":"Su nombre es","type":"text"}],"role":"assistant"}],"model":"claude-sonnet-4-0","system":"Be concise."}`

// TestRound21dResponsePrefix: claude-sonnet-4-20250514 (2025) continuing
// the assistant's "Su nombre es", unary then streamed. The answer is the
// continuation only, starting with its space (" **rojo** (o \"red\" en
// inglés). …", 24 in, 39 out; streamed " **r" … "0 (sin azul)", 24 in, 82
// out): the prefix is not repeated, as Anthropic sends it. Both requests
// are the recorded ones (a last assistant turn, a string system prompt).
func TestRound21dResponsePrefix(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_response_prefix_1.http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), r21dPrefixRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(" **rojo** (o \"red\" en inglés). Este es el valor hexadecimal para el color rojo puro en el espacio de color RGB.")},
		responseID: "msg_01AsJ8x22wZUZK43ebDwD12n", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(24, 39, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r20SameFields(t, srv.Last(t).Body, r21dPrefixRecorded)
	providertest.Golden(t, "testdata/real_pyd_anthropic_response_prefix_1.golden", renderResult(t, res))

	_, f, srv2 := r21Stream(t, "real_pyd_anthropic_response_prefix_2", r21dPrefixRequest())
	checkLLMWant(t, "stream", f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{text(" **rojo** (o **red** en inglés).\n\nEl color #FF0000 es rojo puro en el sistema hexadecimal RGB, donde:\n" +
			"- FF = 255 (máximo valor de rojo)\n- 00 = 0 (sin verde)\n- 00 = 0 (sin azul)")},
		responseID: "msg_01CAZPvhQ5cuSvKdgBBvi7ev", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(24, 82, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r20SameFields(t, srv2.Last(t).Body, strings.Replace(r21dPrefixRecorded, `"model"`, `"stream":true,"model"`, 1))
}

// TestRound21dOpus48NoThinking: claude-opus-4-8 (2026), unary, adaptive
// thinking (display summarized) at effort xhigh, which the model chose not
// to use: one text block, output_tokens_details.thinking_tokens 0 (no
// reasoning tokens), stop_details null, inference_geo global; 13 in, 11
// out. reasoning_effort HIGH builds adaptive thinking for this model and
// xhigh goes through extra_body (the contract's effort stops at HIGH), with
// the warning that it replaced the gateway's output_config; the request is
// then the recorded one.
func TestRound21dOpus48NoThinking(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_opus_48_features"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-opus-4-8", "What is 2+2?", 4096, 0)
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"output_config":{"effort":"xhigh"}}`}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("2 + 2 = 4")},
		responseID: "msg_013gJ9JNi7RMJWcTwrEqYKdm", model: "claude-opus-4-8",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(13, 11, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"global"}`},
		warnings: []string{"extra_body.output_config replaced the value the gateway built from the request"},
	})
	const recorded = `{"max_tokens":4096,"messages":[{"content":[{"text":"What is 2+2?","type":"text"}],"role":"user"}],"model":"claude-opus-4-8",` +
		`"output_config":{"effort":"xhigh"},"thinking":{"display":"summarized","type":"adaptive"}}`
	if !sameJSON(t, string(srv.Last(t).Body), recorded) {
		t.Errorf("request %s, recorded %s", srv.Last(t).Body, recorded)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21dContainerReuse: claude-sonnet-4-5-20250929 (April 2026),
// unary, code_execution_20250522 with a system prompt, two turns in one
// container. Turn 1: a server_tool_use code_execution, its
// code_execution_tool_result (stdout "37170", abort_reason null), then
// "3 × 12,390 = **37,170**"; the container (id, expires_at) in
// meta.extended; 1983 in, 85 out; inference_geo "not_available". Turn 2
// asks again in the same container: pydantic-ai sent the container id at
// the top level (we send it through extra_body: the contract has no field
// for it) and the turn's server blocks; ours sends the server blocks too
// (provider items, round 23; before, they were dropped with their
// warnings) and the text, the rest as recorded. The
// answer runs in the same container, its expiry pushed to 08:17:17; 2219
// in, 85 out.
func TestRound21dContainerReuse(t *testing.T) {
	t.Parallel()
	const (
		system = "Always use the code execution tool for math."
		q1     = "How much is 3 * 12390?"
		q2     = "And what about 4 * 12390?"
		tools  = `[{"name":"code_execution","type":"code_execution_20250522"}]`
	)
	request := func(extra string, msgs ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-sonnet-4-5", q1, 4096, 0)
		req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, append(req.Messages, msgs...)...)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{` + extra + `"tool_choice":{"type":"auto"},"tools":` + tools + `}`}
		return req
	}
	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_code_execution_tool_container_reuse_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), request(""))
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("3 × 12,390 = **37,170**")},
		responseID: "msg_01CSsc4t4e4ThJfJp8nsPxc5", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(1983, 85, 0, 0, 0),
		extended: map[string]string{
			"container":              `{"expires_at":"2026-04-23T08:17:13.199245Z","id":"container_011CaLHz8ZTgxUq8TeCULao8"}`,
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
	})
	const head = `{"max_tokens":4096,"model":"claude-sonnet-4-5","system":"` + system + `","tool_choice":{"type":"auto"},"tools":` + tools + `,` +
		`"messages":[{"content":[{"text":"` + q1 + `","type":"text"}],"role":"user"}`
	r20SameFields(t, srv1.Last(t).Body, head+`]}`)
	providertest.Golden(t, "testdata/real_pyd_anthropic_code_execution_tool_container_reuse_1.golden", renderResult(t, res1))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_code_execution_tool_container_reuse_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(),
		request(`"container":"container_011CaLHz8ZTgxUq8TeCULao8",`, res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(q2))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("4 × 12,390 = **49,560**")},
		responseID: "msg_016hgHtSKi8fEDBmSkEtL364", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(2219, 85, 0, 0, 0),
		extended: map[string]string{
			"container":              `{"expires_at":"2026-04-23T08:17:17.120973Z","id":"container_011CaLHz8ZTgxUq8TeCULao8"}`,
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
		items: []string{"server_tool_use", "code_execution_tool_result"},
	})
	r20SameFields(t, srv2.Last(t).Body, strings.Replace(head, `{"max_tokens"`, `{"container":"container_011CaLHz8ZTgxUq8TeCULao8","max_tokens"`, 1)+
		`,{"content":[`+itemBlocks(t, res1.Message, 2)+`{"text":"3 × 12,390 = **37,170**","type":"text"}],"role":"assistant"},{"content":[{"text":"`+q2+`","type":"text"}],"role":"user"}]}`)
	providertest.Golden(t, "testdata/real_pyd_anthropic_code_execution_tool_container_reuse_2.golden", renderResult(t, res2))
}

// TestRound21dCompactionUnary: claude-sonnet-4-6 (2026), unary, with
// server-side compaction (compact_20260112 at 50000 input tokens) over a
// 55k-token prompt: a compaction block (its summary) then "Hello! 👋";
// context_management with no applied edits; the top-level usage (180 in,
// 8 out, nothing cached) leaves out the compaction iteration, which
// wrote the prompt to the 5-minute cache (100 in + 55096 written, 82 out).
// The usage adds that iteration, as the streamed recording's
// (TestUsageIterations): 180 + 100 + 55096 in of which 55096 cache
// writes, 8 + 82 out. The compaction block has no place in the contract:
// it is dropped with a warning, as in the stream (so a next turn cannot
// send it back), and the empty context_management adds nothing.
// The request (the prompt of 250 KB, which the cassette keeps) is not
// rebuilt here: only the answer is replayed.
func TestRound21dCompactionUnary(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_compaction_usage_with_cache"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), r21Request("claude-sonnet-4-6", "Now say hello.", 4096, 0))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	summary, _ := r19bBlock(t, r19bBody(t, name), 0)["content"].(string)
	if !strings.HasPrefix(summary, "The user provided a very long context") || !strings.HasSuffix(summary, "Next step: Say hello to the user.") {
		t.Fatalf("recorded compaction %q", summary)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Hello! 👋")},
		responseID: "msg_01WhrmimdvExAsAeWRBgMmaF", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(180+100, 8+82, 0, 55096, 0),
		extended: map[string]string{
			"service_tier": `"standard"`,
		},
		items: []string{"compaction"},
	})
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21dMCPServersStream: claude-sonnet-4-5-20250929 (October 2025),
// streamed, thinking at budget 3000 with the MCP server (mcp_servers
// through extra_body), one turn: a signed thinking block (a ping inside
// it), an mcp_tool_use search_repositories of server "test-server" whose
// input streams in eight input_json_delta pieces (the first empty:
// {"query": "pydantic-ai in:name", "minimal_output": false}), its
// mcp_tool_result whole in its content_block_start (is_error false, the
// GitHub search's full repository objects as one 187 KB text block: the
// stream's longest line, read whole), then the answer (a "⭐" delta of its
// own). message_delta raises input_tokens 861 → 64084, 384 out, cache 0
// and server_tool_use counts all zero (no usage_details). One thinking
// part, one text part, a warning per MCP block, no tool-call events.
func TestRound21dMCPServersStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_mcp_servers_stream"
	const q = "Can you tell me more about pydantic-ai repo? Keep your answer short"
	req := r21Request("claude-sonnet-4-5", q, 4096, 3000)
	req.ProviderOptions.ExtraBody = `{"mcp_servers":` + r21dMCPServers + `}`
	evs, f, srv := r21Stream(t, name, req)
	raw, err := os.ReadFile("testdata/" + name + ".http")
	if err != nil {
		t.Fatal(err)
	}
	var sig strings.Builder
	longest := 0
	for _, line := range strings.Split(string(raw), "\n") {
		longest = max(longest, len(line))
		if !strings.HasPrefix(line, `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta"`) {
			continue
		}
		var d struct {
			Delta struct {
				Signature string `json:"signature"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
			t.Fatal(err)
		}
		sig.WriteString(d.Delta.Signature)
	}
	if sig.Len() != 780 || !strings.HasPrefix(sig.String(), "EsQECkYICBgCKkCK82+n") {
		t.Fatalf("recorded signature %q", sig.String())
	}
	if longest < 180000 {
		t.Fatalf("longest line %d bytes, the recording has one of over 180000", longest)
	}
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "The user is asking about a specific repository called \"pydantic-ai\". I should search for this repository on GitHub to get information about it.\n\n" +
					"I'll use the search_repositories function with a query for \"pydantic-ai\". To be more specific, I might want to search for it in the name or as part of " +
					"a specific organization if I know it. Let me search for \"pydantic-ai in:name\" to find repositories with that name.",
				Signature: sig.String(),
			}),
			text("**Pydantic AI** is a GenAI agent framework from Pydantic. Here's the quick overview:\n\n- **Repository**: `pydantic/pydantic-ai`\n" +
				"- **Stars**: 12,928 ⭐\n- **License**: MIT\n- **Language**: Python\n- **Website**: https://ai.pydantic.dev\n\n" +
				"**What it does**: It's an agent framework that leverages Pydantic's data validation capabilities to build LLM-powered agents with structured outputs. " +
				"Think of it as building AI agents \"the Pydantic way\" - with type safety and validation built in.\n\n" +
				"**Key topics**: GenAI, LLM, agent framework, Python, Pydantic\n\n" +
				"It's actively maintained with recent pushes and has a growing community with 1,300+ forks and 331 open issues."),
		},
		responseID: "msg_013pK5B4RBV3QPRTSENdtiLV", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(64084, 384, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
		items:    []string{"mcp_tool_use", "mcp_tool_result"},
	})
	if _, ok := f.meta.GetExtended().GetFields()[provider.ExtUsageDetails]; ok {
		t.Errorf("usage_details %v from all-zero server_tool_use counts", f.meta.GetExtended().GetFields()[provider.ExtUsageDetails])
	}
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API called the MCP server)", n)
	}
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"mcp_servers":`+r21dMCPServers+`,"messages":[{"content":[{"text":"`+q+`","type":"text"}],"role":"user"}],`+
		`"model":"claude-sonnet-4-5","stream":true,"thinking":{"budget_tokens":3000,"type":"enabled"}}`)
}

// r21dHumanRequest is pydantic-ai's "Create a person" request: thinking at
// budget 10000, max_tokens 50000, temperature 1, tool choice auto (sent as
// pydantic-ai sent it), the output tool final_result (the Human schema with
// its title).
func r21dHumanRequest(more ...*llmrelayv1.Message) *provider.Request {
	req := r21Request("claude-sonnet-4-0", "Create a person", 50000, 10000)
	req.Messages = append(req.Messages, more...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Options.Temperature = ptr[float64](1)
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	req.Tools = []*llmrelayv1.Tool{{Name: "final_result", Description: "A human with a name and age",
		Parameters: `{"properties":{"age":{"type":"integer"},"name":{"type":"string"}},"required":["name","age"],"title":"Human","type":"object"}`}}
	return req
}

// r21dHumanBody is that request as recorded, with these messages.
const r21dHumanBody = `{"max_tokens":50000,"messages":%s,"model":"claude-sonnet-4-0","temperature":1.0,"thinking":{"budget_tokens":10000,"type":"enabled"},` +
	`"tool_choice":{"type":"auto"},"tools":[{"description":"A human with a name and age","input_schema":{"properties":{"age":{"type":"integer"},"name":{"type":"string"}},` +
	`"required":["name","age"],"title":"Human","type":"object"},"name":"final_result"}]}`

// TestRound21dThinkingToolRetry: claude-sonnet-4-20250514 (2025), unary,
// thinking at budget 10000 with an output tool, two turns of pydantic-ai's
// extended-thinking cassette (its third and fourth interactions, _3 and
// _4 beside an earlier round's _2).
//
// Turn 1: asked to "Create a person" without a name or age, the model
// thinks (a signed block) and asks for them in text: end_turn, 426 in,
// 175 out.
//
// Turn 2: pydantic-ai sends the answer back (the thinking block with its
// signature, the text) with its validation feedback as a user message;
// ours is that request field for field. The answer: a signed thinking
// block (2.1 KB of signature, whole by its protobuf length prefix), then a
// final_result call {"age": 30, "name": "John Doe"} with no text between;
// tool_use; 525 in, 500 out.
func TestRound21dThinkingToolRetry(t *testing.T) {
	t.Parallel()
	const feedback = "Validation feedback:\nPlain text responses are not permitted, please include your response in a tool call\n\nFix the errors and try again."
	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_extended_thinking_with_tool_use_3.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), r21dHumanRequest())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	th1 := r19bBlock(t, r19bBody(t, "real_pyd_anthropic_extended_thinking_with_tool_use_3"), 0)
	sig1 := th1["signature"].(string)
	if len(sig1) != 844 || !strings.HasPrefix(sig1, "EvMECkYIBhgCKkDpAEPm") || !strings.HasSuffix(sig1, "uVszaQcfjty22WqJSNQ8zKSArKnCUBZ9mLD+cH5G//4btek1GNH0HQgfCyRGAE=") {
		t.Fatalf("recorded signature %q", sig1)
	}
	const (
		thinking1 = "The user is asking me to create a person. I have access to a function called \"final_result\" that takes a name (string) and age (integer) as required parameters to create a human.\n\n" +
			"However, the user hasn't provided specific values for the name or age. According to the instructions, if there are missing values for required parameters, I should ask the user to supply these values rather than making them up.\n\n" +
			"Let me ask the user for the required information."
		answer1 = "I can help you create a person, but I need some information first. The person needs:\n\n1. **Name** - What would you like the person's name to be?\n" +
			"2. **Age** - How old should this person be?\n\nPlease provide these details so I can create the person for you."
	)
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: thinking1, Signature: sig1}), text(answer1)},
		responseID: "msg_01LLofLw3PyTku1cDSfXvEe8", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(426, 175, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	user := `{"content":[{"text":"Create a person","type":"text"}],"role":"user"}`
	r20SameFields(t, srv1.Last(t).Body, fmt.Sprintf(r21dHumanBody, "["+user+"]"))
	providertest.Golden(t, "testdata/real_pyd_anthropic_extended_thinking_with_tool_use_3.golden", renderResult(t, res1))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_extended_thinking_with_tool_use_4.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), r21dHumanRequest(res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(feedback))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	sentTurn := `{"content":[{"signature":` + r21dQuote(t, sig1) + `,"thinking":` + r21dQuote(t, thinking1) + `,"type":"thinking"},{"text":` + r21dQuote(t, answer1) + `,"type":"text"}],"role":"assistant"}`
	r20SameFields(t, srv2.Last(t).Body, fmt.Sprintf(r21dHumanBody, "["+user+","+sentTurn+`,{"content":[{"text":`+r21dQuote(t, feedback)+`,"type":"text"}],"role":"user"}]`))
	th2 := r19bBlock(t, r19bBody(t, "real_pyd_anthropic_extended_thinking_with_tool_use_4"), 0)
	sig2, thinking2 := th2["signature"].(string), th2["thinking"].(string)
	if len(sig2) != 2888 || !strings.HasPrefix(sig2, "EvEQCkYIBhgCKkAl6iRi") || !strings.HasSuffix(sig2, "bo5josbhyqz07xgB") ||
		!strings.HasPrefix(thinking2, "The user wants me to create a person, but I need a name and age. However, the validation feedback indicates that I must use a tool call") ||
		!strings.HasSuffix(thinking2, "Since I can't provide a plain text response, I'll need to create a person with some default values.") {
		t.Fatalf("recorded thinking %v", th2)
	}
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinking2, Signature: sig2}),
			toolCallValid("toolu_01CiDGGbWTx5u93eq1LDZRH7", "final_result", `{"age":30,"name":"John Doe"}`),
		},
		responseID: "msg_01524kkeMBEk4Rw6igYkTzRC", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(525, 500, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_extended_thinking_with_tool_use_4.golden", renderResult(t, res2))
}

// r21dCapitalRequest is pydantic-ai's mixed-strict request: the system
// prompt, the question, then the turns given; country_source strict (no
// parameters), capital_lookup not (one string parameter); tool choice auto
// as pydantic-ai sent it.
func r21dCapitalRequest(more ...*llmrelayv1.Message) *provider.Request {
	req := r21Request("claude-sonnet-4-5", "Use the registered tools and respond exactly as `Capital: <city>`.", 4096, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM,
		text("Always call `country_source` first, then call `capital_lookup` with that result before replying."))}, append(req.Messages, more...)...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	strict := true
	req.Tools = []*llmrelayv1.Tool{
		{Name: "country_source", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`, Strict: &strict},
		{Name: "capital_lookup", Parameters: `{"additionalProperties":false,"properties":{"country":{"type":"string"}},"required":["country"],"type":"object"}`},
	}
	return req
}

// r21dCapitalBody is that request as recorded with these messages (the
// empty descriptions left out: ours sends none, the same to the API).
const r21dCapitalBody = `{"max_tokens":4096,"messages":%s,"model":"claude-sonnet-4-5",` +
	`"system":"Always call ` + "`country_source`" + ` first, then call ` + "`capital_lookup`" + ` with that result before replying.","tool_choice":{"type":"auto"},` +
	`"tools":[{"input_schema":{"additionalProperties":false,"properties":{},"type":"object"},"name":"country_source","strict":true},` +
	`{"input_schema":{"additionalProperties":false,"properties":{"country":{"type":"string"}},"required":["country"],"type":"object"},"name":"capital_lookup"}]}`

// TestRound21dMixedStrictToolRun: claude-sonnet-4-5-20250929 (March 2026),
// unary, a three-request tool loop with one strict tool beside a plain
// one. Turn 1: a text ("I'll help you find the capital city using the
// available tools.") then country_source {}; 628 in, 50 out. Turn 2, after
// its result "Japan": capital_lookup {"country": "Japan"} alone; 691 in,
// 53 out. Turn 3, after "Tokyo": "Capital: Tokyo", end_turn; 757 in, 6
// out. The cache_creation split is all zeros each time; the retry-after
// headers on the 200s (4, 52, 36) are nobody's limit. Each request is the
// recorded one: strict only on country_source, the turns and tool results
// as pydantic-ai sent them but for its "is_error": false, which ours leaves
// out (false is the default).
func TestRound21dMixedStrictToolRun(t *testing.T) {
	t.Parallel()
	const q = `{"content":[{"text":"Use the registered tools and respond exactly as ` + "`Capital: <city>`" + `.","type":"text"}],"role":"user"}`
	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_mixed_strict_tool_run_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), r21dCapitalRequest())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll help you find the capital city using the available tools."),
			toolCallValid("toolu_01Ttepb9joVoQFHP568v7UAL", "country_source", `{}`),
		},
		responseID: "msg_01CTV3rhAAYCrzRGTEoJbJt7", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(628, 50, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r20SameFields(t, srv1.Last(t).Body, fmt.Sprintf(r21dCapitalBody, "["+q+"]"))
	providertest.Golden(t, "testdata/real_pyd_anthropic_mixed_strict_tool_run_1.golden", renderResult(t, res1))

	japan := msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Ttepb9joVoQFHP568v7UAL", "Japan", false))
	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_mixed_strict_tool_run_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), r21dCapitalRequest(res1.Message, japan))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	turn1 := `{"content":[{"text":"I'll help you find the capital city using the available tools.","type":"text"},` +
		`{"id":"toolu_01Ttepb9joVoQFHP568v7UAL","input":{},"name":"country_source","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"Japan","tool_use_id":"toolu_01Ttepb9joVoQFHP568v7UAL","type":"tool_result"}],"role":"user"}`
	r20SameFields(t, srv2.Last(t).Body, fmt.Sprintf(r21dCapitalBody, "["+q+","+turn1+"]"))
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_011j5uC2Tg3TZJo3nmLtJ8Mm", "capital_lookup", `{"country":"Japan"}`)},
		responseID: "msg_01KgnnRwGgZEK3kvEGM5nbW8", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(691, 53, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_mixed_strict_tool_run_2.golden", renderResult(t, res2))

	tokyo := msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_011j5uC2Tg3TZJo3nmLtJ8Mm", "Tokyo", false))
	srv3 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_mixed_strict_tool_run_3.http")
	res3, err := newTestProvider(t, srv3.URL).Generate(context.Background(), r21dCapitalRequest(res1.Message, japan, res2.Message, tokyo))
	if err != nil {
		t.Fatalf("Generate 3: %v", err)
	}
	turn2 := `{"content":[{"id":"toolu_011j5uC2Tg3TZJo3nmLtJ8Mm","input":{"country":"Japan"},"name":"capital_lookup","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"Tokyo","tool_use_id":"toolu_011j5uC2Tg3TZJo3nmLtJ8Mm","type":"tool_result"}],"role":"user"}`
	r20SameFields(t, srv3.Last(t).Body, fmt.Sprintf(r21dCapitalBody, "["+q+","+turn1+","+turn2+"]"))
	checkLLMWant(t, "turn 3", res3.Message, res3.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Capital: Tokyo")},
		responseID: "msg_0111CmwjQHh6LerTTnrW2GPi", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(757, 6, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_mixed_strict_tool_run_3.golden", renderResult(t, res3))
}

// TestRound21dCacheMessages: claude-sonnet-4-5-20250929 (March 2026),
// unary, two turns of pydantic-ai's message-caching cassette, a system
// prompt and a 5400-byte question (one sentence a hundred times).
// pydantic-ai marked the last user block of each request with
// cache_control (ephemeral, ttl 5m); the contract has no cache breakpoint,
// so ours sends the same requests without it (the recorded requests'
// compact lengths, 5617 and 7343, are their content-lengths, so the rest
// is as recorded).
//
// Turn 1 writes the prompt to the cache: input_tokens 3,
// cache_creation_input_tokens 1111 (all ephemeral_5m), 391 out. Turn 2,
// the answer sent back with "Can you summarize that in one sentence?",
// reads those 1111 and writes 403 more: 3 + 1111 read + 403 written in,
// 33 out. The input token count is the three summed; the 5m/1h split
// goes to usage_details where it is not all zero.
func TestRound21dCacheMessages(t *testing.T) {
	t.Parallel()
	question := strings.Repeat("Please explain what Python is and its main use cases. ", 100)
	const system = `"system":"You are a helpful assistant."`
	req := func(more ...*llmrelayv1.Message) *provider.Request {
		r := r21Request("claude-sonnet-4-5", question, 4096, 0)
		r.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant."))}, append(r.Messages, more...)...)
		return r
	}
	user := `{"content":[{"text":` + r21dQuote(t, question) + `,"type":"text"}],"role":"user"}`

	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_cache_messages_real_api_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	answer1 := r19bBlock(t, r19bBody(t, "real_pyd_anthropic_cache_messages_real_api_1"), 0)["text"].(string)
	if !strings.HasPrefix(answer1, "# What is Python?\n\n**Python** is a high-level, interpreted programming language") ||
		!strings.HasSuffix(answer1, "used by companies like Google, Netflix, NASA, and many others.") {
		t.Fatalf("recorded answer %q", answer1)
	}
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer1)},
		responseID: "msg_01FdUT99HgS9cAzcv4ztTDYJ", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(3, 391, 0, 1111, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"cache_creation.ephemeral_5m_input_tokens":1111}`,
			"service_tier":           `"standard"`,
		},
	})
	r20SameFields(t, srv1.Last(t).Body, `{"max_tokens":4096,"messages":[`+user+`],"model":"claude-sonnet-4-5",`+system+`}`)
	providertest.Golden(t, "testdata/real_pyd_anthropic_cache_messages_real_api_1.golden", renderResult(t, res1))

	const q2 = "Can you summarize that in one sentence?"
	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_cache_messages_real_api_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), req(res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(q2))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	r20SameFields(t, srv2.Last(t).Body, `{"max_tokens":4096,"messages":[`+user+`,{"content":[{"text":`+r21dQuote(t, answer1)+`,"type":"text"}],"role":"assistant"},`+
		`{"content":[{"text":"`+q2+`","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-5",`+system+`}`)
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("Python is a beginner-friendly, versatile programming language widely used for web development, data science, " +
			"machine learning, automation, and scientific computing.")},
		responseID: "msg_01PYfyaNS7Rysss2xMNqQgy9", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(3, 33, 1111, 403, 0),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"cache_creation.ephemeral_5m_input_tokens":403}`,
			"service_tier":           `"standard"`,
		},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_cache_messages_real_api_2.golden", renderResult(t, res2))
}

// TestRound21dToolWithThinking: claude-sonnet-4-20250514 (2026), unary,
// thinking at budget 3000 with a tool of no parameters, two requests
// (turn 1 replays real_pyd_anthropic_tool_with_thinking_1, an earlier
// round's transcription of the same first interaction; its golden is that
// round's). Turn 1: a signed thinking block, a text ("I'll help you find the largest
// city in your country. …") and the get_user_country call; tool_use; 398
// in, 155 out; inference_geo "not_available", the cache_creation split all
// zeros. Turn 2: the three blocks sent back in order, then the result
// "Mexico"; ours is the recorded request but for "is_error": false. The
// answer: one text ("… **Mexico City** (Ciudad de México). …"), end_turn,
// 566 in, 126 out.
func TestRound21dToolWithThinking(t *testing.T) {
	t.Parallel()
	const q = "What is the largest city in the user country?"
	req := func(more ...*llmrelayv1.Message) *provider.Request {
		r := r21Request("claude-sonnet-4-0", q, 4096, 3000)
		r.Messages = append(r.Messages, more...)
		r.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
		r.Tools = []*llmrelayv1.Tool{{Name: "get_user_country", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`}}
		return r
	}
	const body = `{"max_tokens":4096,"messages":%s,"model":"claude-sonnet-4-0","thinking":{"budget_tokens":3000,"type":"enabled"},"tool_choice":{"type":"auto"},` +
		`"tools":[{"input_schema":{"additionalProperties":false,"properties":{},"type":"object"},"name":"get_user_country"}]}`
	user := `{"content":[{"text":"` + q + `","type":"text"}],"role":"user"}`

	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_tool_with_thinking_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	var body1 struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(providertest.Load(t, "testdata/real_pyd_anthropic_tool_with_thinking_1.http").Body, &body1); err != nil || len(body1.Content) != 3 {
		t.Fatalf("recorded body: %v", err)
	}
	th := body1.Content[0]
	sig, thinking := th["signature"].(string), th["thinking"].(string)
	if len(sig) != 736 || !strings.HasPrefix(sig, "EqEECkYICxgCKkAo3UA4") || !strings.HasSuffix(sig, "ze9H9oDR9WtGspFUsKYkAHvHeBlXKVa+SkcXhw9EK5/JwYAQ==") ||
		thinking != "The user is asking about the largest city in \"the user country\". To answer this question, I first need to determine what country the user is from. "+
			"I have access to a function called \"get_user_country\" that can help me find out the user's country. Once I know the country, I can then provide information about its largest city.\n\n"+
			"Let me call the get_user_country function first." {
		t.Fatalf("recorded thinking %v", th)
	}
	const text1 = "I'll help you find the largest city in your country. First, let me determine which country you're from."
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinking, Signature: sig}),
			text(text1),
			toolCallValid("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", `{}`),
		},
		responseID: "msg_01WvueFjZVbHcj4H4zUzeGv2", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(398, 155, 0, 0, 0),
		extended: map[string]string{provider.ExtUsageDetails: `{"inference_geo":"not_available"}`, "service_tier": `"standard"`},
	})
	r20SameFields(t, srv1.Last(t).Body, fmt.Sprintf(body, "["+user+"]"))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_tool_with_thinking_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), req(res1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01YGzqpRE16Vricda3Aqcejo", "Mexico", false))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	turn := `{"content":[{"signature":` + r21dQuote(t, sig) + `,"thinking":` + r21dQuote(t, thinking) + `,"type":"thinking"},{"text":` + r21dQuote(t, text1) + `,"type":"text"},` +
		`{"id":"toolu_01YGzqpRE16Vricda3Aqcejo","input":{},"name":"get_user_country","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"Mexico","tool_use_id":"toolu_01YGzqpRE16Vricda3Aqcejo","type":"tool_result"}],"role":"user"}`
	r20SameFields(t, srv2.Last(t).Body, fmt.Sprintf(body, "["+user+","+turn+"]"))
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("Based on the information that you're from Mexico, the largest city in your country is **Mexico City** (Ciudad de México). \n\n" +
			"Mexico City is not only the largest city in Mexico but also one of the largest metropolitan areas in the world. The city proper has a population of " +
			"approximately 9.2 million people, while the greater Mexico City metropolitan area (which includes surrounding municipalities) has over 21 million inhabitants, " +
			"making it one of the most populous urban agglomerations globally.\n\nMexico City serves as the country's capital and is the political, economic, and cultural center of Mexico.")},
		responseID: "msg_01SZ8KP8HhB1TxP6Ybbv6iKz", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(566, 126, 0, 0, 0),
		extended: map[string]string{provider.ExtUsageDetails: `{"inference_geo":"not_available"}`, "service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_tool_with_thinking_2.golden", renderResult(t, res2))
}

// TestRound21dOpus46AdaptiveThinking: claude-opus-4-6 (2026), unary,
// adaptive thinking: the answer opens with a text block of two line breaks
// before the thinking block (thinking "4", a short signature whole by its
// protobuf length prefix), then "2 + 2 = **4**"; inference_geo global; 31
// in, 30 out. Three parts in the answer's order: the blank text is kept
// (it is what the model wrote; dropping it would change what goes back).
// pydantic-ai asked {"type": "adaptive"} alone; reasoning_effort HIGH
// builds adaptive thinking with effort high in output_config (the API's
// default) and display summarized (the gateway always asks for the
// thinking text).
func TestRound21dOpus46AdaptiveThinking(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_opus_46_features_adaptive_thinking"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-opus-4-6", "What is 2+2?", 4096, 0)
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := r19bBody(t, name)
	if b := r19bBlock(t, body, 0); b["type"] != "text" || b["text"] != "\n\n" {
		t.Fatalf("recorded block 0 %v", b)
	}
	th := r19bBlock(t, body, 1)
	sig, _ := th["signature"].(string)
	if th["thinking"] != "4" || len(sig) != 232 || !strings.HasPrefix(sig, "EqkBCkYICxgCKkDo5w3B") {
		t.Fatalf("recorded thinking %v", th)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("\n\n"), reasoningPart(&llmrelayv1.Reasoning{Text: "4", Signature: sig}), text("2 + 2 = **4**")},
		responseID: "msg_01UwaEfFWx4eWMCsjmVZsjaY", model: "claude-opus-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(31, 30, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"global"}`},
	})
	const ours = `{"max_tokens":4096,"messages":[{"content":[{"text":"What is 2+2?","type":"text"}],"role":"user"}],"model":"claude-opus-4-6",` +
		`"output_config":{"effort":"high"},"thinking":{"display":"summarized","type":"adaptive"}}`
	if !sameJSON(t, string(srv.Last(t).Body), ours) {
		t.Errorf("request %s, want %s", srv.Last(t).Body, ours)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21dHistoryOpensWithAssistant: claude-sonnet-4-5-20250929 (March
// 2026), unary: a system prompt ending in two line breaks and a history
// that opens with the assistant ("Hello, how can I help you?", pydantic-ai
// having dropped an empty user message before it), then the user. The API
// takes the assistant-first history: one text answer, end_turn, 41 in, 88
// out, the cache_creation split all zeros. Ours sends the recorded request:
// the system prompt as given (its line breaks kept), the assistant turn
// first.
func TestRound21dHistoryOpensWithAssistant(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_model_empty_message_on_history"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-sonnet-4-5", "I need a potato!", 4096, 0)
	req.Messages = append([]*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant.\n\n")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello, how can I help you?")),
	}, req.Messages...)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("I can't physically give you a potato since I'm a digital assistant. However, I can:\n\n" +
			"1. Help you find recipes that use potatoes\n2. Give you tips on how to select, store, or prepare potatoes\n" +
			"3. Share information about different types of potatoes\n4. Suggest where you might buy potatoes locally\n\n" +
			"What specific information about potatoes would be most helpful to you?")},
		responseID: "msg_01PAZFa5ciacA9ptgEDMbkZM", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(41, 88, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"Hello, how can I help you?","type":"text"}],"role":"assistant"},`+
		`{"content":[{"text":"I need a potato!","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-5","system":"You are a helpful assistant.\n\n"}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21dSamplingSettings: claude-haiku-4-5-20251001 (2026), unary,
// temperature 0.2 and top_k 40: the answer "Hello! 👋 How can I help you
// today?" (the emoji outside the BMP, whole), end_turn, stop_details
// null, inference_geo "not_available"; 8 in, 16 out. The traceresponse
// header is nobody's request id. The request is the recorded one.
func TestRound21dSamplingSettings(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_sampling_settings_reach_the_wire"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-haiku-4-5", "hello", 4096, 0)
	req.Options.Temperature = ptr(0.2)
	req.Options.TopK = ptr[int32](40)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Hello! \U0001F44B How can I help you today?")},
		responseID: "msg_011CeEgv4QcC6bo2wwJgepD6", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(8, 16, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"not_available"}`},
	})
	if id := res.Meta.GetProviderRequestId(); id != "" {
		t.Errorf("request id %q from a traceresponse header", id)
	}
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"hello","type":"text"}],"role":"user"}],"model":"claude-haiku-4-5","temperature":0.2,"top_k":40}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21dPromptedOutputWithThinking: claude-sonnet-4-20250514 (2026),
// unary, thinking at budget 3000 with pydantic-ai's prompted output (the
// int schema in the system prompt, opening and ending with a line break):
// a signed thinking block (whole by its protobuf length prefix) that
// works the sum out, then the JSON alone as text, end_turn; 107 in, 81
// out. The request is the recorded one.
func TestRound21dPromptedOutputWithThinking(t *testing.T) {
	t.Parallel()
	const (
		name   = "real_pyd_anthropic_output_tool_with_thinking"
		system = "\nAlways respond with a JSON object that's compatible with this schema:\n\n" +
			`{"properties": {"response": {"type": "integer"}}, "required": ["response"], "type": "object", "title": "int"}` +
			"\n\nDon't include any text or Markdown fencing before or after.\n"
	)
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-sonnet-4-0", "What is 3 + 3?", 4096, 3000)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	th := r19bBlock(t, r19bBody(t, name), 0)
	sig, _ := th["signature"].(string)
	if !strings.HasPrefix(sig, "EvQCCkYICxgCKkAxVzJt") || !strings.HasSuffix(sig, "kyKneGAE=") {
		t.Fatalf("recorded signature %q", sig)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "The user is asking for the result of 3 + 3, which is 6. I need to respond with a JSON object that has a \"response\" field containing an integer value.\n\n" +
				"3 + 3 = 6\n\nSo my response should be:\n{\"response\": 6}", Signature: sig}),
			text(`{"response": 6}`),
		},
		responseID: "msg_012EKbxpbKsr7K8TLbpqzZPZ", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(107, 81, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"What is 3 + 3?","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-0",`+
		`"system":`+r21dQuote(t, system)+`,"thinking":{"budget_tokens":3000,"type":"enabled"}}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// r21dGPTTurn is the assistant turn of pydantic-ai's recorded request
// (compact): gpt-5's five reasoning summaries as <thinking> text blocks,
// then its answer.
const r21dGPTTurn = "{\"content\":[{\"text\":\"<thinking>\\n**Considering street crossing safety**\\n\\nThe user is asking for guidance on how to cross the street, which is a general instruction scenario -- likely aimed at pedestrian advice. Since this relates to safety, I need to ensure I'm providing broad suggestions without making assumptions about their specific situation. I'll include important safety tips: use crosswalks, obey signals, stop at the curb, look left-right-left, make eye contact with drivers, and avoid distractions. Keeping kids and pets close, especially at night, is crucial too!\\n</thinking>\",\"type\":\"text\"},{\"text\":\"<thinking>\\n**Providing street crossing guidance**\\n\\nI want to ensure I'm not giving overly specific or professional disclaimers since the user's question is simple. It's important to keep in mind that while there's no image involved, I can still include some high-level safety guidance. I'll aim for accessible language for both children and adults. I'll outline concise steps: look for a safe crossing point, stop at the curb, check for vehicles, and ensure to wait for signals or safe gaps in traffic.\\n</thinking>\",\"type\":\"text\"},{\"text\":\"<thinking>\\n**Crossing safely with median islands**\\n\\nI'm considering how to advise crossing streets safely, especially at median islands. First, I should recommend looking left-right-left (or the opposite for left-driving countries) and listening for vehicles, bicycles, or e-scooters. Making eye contact with drivers is crucial. I'll suggest crossing straight while keeping watch. At night, bright or reflective clothing is good, and holding hands with kids or pets is essential. For multi-lane roads, ensure all lanes see you and stop! Stay aware of the weather too, like slippery surfaces.\\n</thinking>\",\"type\":\"text\"},{\"text\":\"<thinking>\\n**Considering accessibility in crossing**\\n\\nI want to ensure I'm being inclusive in advising about crossing streets. I should mention that if someone is using a wheelchair, they should look for curb cuts. For those visually impaired, using audible signals or a mobility cane can help, and it's always okay to ask for assistance. I'll keep bullet points concise, including tips for rural roads like walking facing traffic and crossing in clear, visible spots. Finally, I can remind users to follow local laws and suggest asking a crossing guard if unsure!\\n</thinking>\",\"type\":\"text\"},{\"text\":\"<thinking>\\n**Crafting safe crossing steps**\\n\\nHere's a simple, safe process for crossing streets:  \\n\\n- Cross at a designated spot like a crosswalk or intersection; avoid bending around parked cars.  \\n- Stop at the curb and put away distractions such as headphones and phones.  \\n- Look for traffic: check left-right-left and behind for turning vehicles; listen carefully.  \\n- If there's a signal, wait for the WALK indicator; ensure cars have stopped and watch for turning vehicles.  \\n- If there's no signal, wait for a large gap in traffic, checking each lane before crossing.  \\n- Make eye contact with drivers before stepping out.  \\n- Cross straight at a steady pace; keep scanning and, if needed, use a median.  \\n\\nExtra tips: Be visible at night with reflective clothing, allow extra time in bad weather, hold children's hands, and keep pets leashed. Follow local rules!\\n</thinking>\",\"type\":\"text\"},{\"text\":\"Here's a simple, safe way to cross a street:\\n\\n- Choose a safe spot: a crosswalk or intersection is best. Avoid crossing from between parked cars or on a curve.\\n- Stop at the curb. Put your phone away and remove headphones.\\n- Look and listen for traffic and bikes: left-right-left, and also check for turning vehicles. Keep scanning.\\n- If there's a pedestrian signal, wait for WALK/green person. Even then, confirm traffic has stopped and watch for turning cars.\\n- If there's no signal, wait for a big gap in both directions. On multi‐lane roads, make sure each lane is clear--don't go just because one driver stopped.\\n- Make eye contact with drivers before stepping out.\\n- Walk straight across at a steady pace; keep looking as you go. Use a median/refuge island to cross in two stages if available.\\n\\nExtra tips:\\n- Be more visible at night or in rain (light/reflective clothing, a small light).\\n- In bad weather, allow more time--vehicles need longer to stop.\\n- Hold children's hands and keep pets leashed.\\n- Follow local traffic rules and signals.\\n\\nIf you describe your specific crossing (signals, number of lanes, visibility), I can tailor this to your situation.\",\"type\":\"text\"}],\"role\":\"assistant\"}"

// TestRound21dThinkingFromOtherModel: claude-sonnet-4-20250514 (2026),
// unary, thinking at budget 1024 with a system prompt, continuing a
// conversation gpt-5 began (the cassette's second interaction; the first
// is gpt-5's on the OpenAI Responses API). The history holds gpt-5's
// answer as our OpenAI adapter reads it: one reasoning item (its id, its
// five summaries joined by a blank line, its encrypted_content; a stand-in
// here, the item being dropped either way) and the answer text.
//
// pydantic-ai sent the summaries as five text blocks wrapped in
// <thinking> tags before the answer, and the API answered; ours drops the
// reasoning item with a warning (an id marks another provider's
// reasoning; Anthropic verifies every thinking signature) and sends the
// answer alone, the rest as recorded. The answer: a signed thinking block
// (whole by its protobuf length prefix), then the text; end_turn; 1061
// in, 546 out; inference_geo "not_available". The body is the cassette's
// (compact 4373 bytes against the recorded 4379: this cassette's
// serializer folds smart punctuation to ASCII, such as — to --, so a few
// characters are not the API's; the text is otherwise whole).
func TestRound21dThinkingFromOtherModel(t *testing.T) {
	t.Parallel()
	const (
		name = "real_pyd_anthropic_model_thinking_part_from_other_model"
		q1   = "How do I cross the street?"
		q2   = "Considering the way to cross the street, analogously, how do I cross the river?"
	)
	var turn struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r21dGPTTurn), &turn); err != nil || len(turn.Content) != 6 {
		t.Fatalf("recorded turn %v: %v", turn, err)
	}
	var summaries []string
	for _, c := range turn.Content[:5] {
		s, okPrefix := strings.CutPrefix(c.Text, "<thinking>\n")
		s, okSuffix := strings.CutSuffix(s, "\n</thinking>")
		if !okPrefix || !okSuffix {
			t.Fatalf("recorded block %q", c.Text)
		}
		summaries = append(summaries, s)
	}
	gptAnswer := turn.Content[5].Text
	gpt := msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoningPart(&llmrelayv1.Reasoning{Id: "rs_gpt5_reasoning_item", Text: strings.Join(summaries, "\n\n"), Signature: "gAAAAA-stand-in"}),
		text(gptAnswer))
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := r21Request("claude-sonnet-4-0", q1, 4096, 1024)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant."))},
		append(req.Messages, gpt, msgOf(llmrelayv1.Role_ROLE_USER, text(q2)))...)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	th := r19bBlock(t, r19bBody(t, name), 0)
	sig, thinking := th["signature"].(string), th["thinking"].(string)
	if !strings.HasPrefix(sig, "Es4ICkYICxgCKkAqrTRz") || !strings.HasSuffix(sig, "61QLyDJnYJEte5CmLhUtxRgB") ||
		!strings.HasPrefix(thinking, "The user is asking about crossing a river, using the street crossing analogy.") ||
		!strings.HasSuffix(thinking, "suggest alternatives like bridges, ferries, etc.") {
		t.Fatalf("recorded thinking %v", th)
	}
	answer := r19bBlock(t, r19bBody(t, name), 1)["text"].(string)
	if !strings.HasPrefix(answer, "Great analogy! Here's how to safely cross a river") || !strings.HasSuffix(answer, "What type of river crossing are you considering?") {
		t.Fatalf("recorded answer %q", answer)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: thinking, Signature: sig}), text(answer)},
		responseID: "msg_01LbeEgfkZoBZDUa38s8Nk9o", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(1061, 546, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"not_available"}`},
		warnings: []string{`reasoning item "rs_gpt5_reasoning_item" not sent (an id marks another provider's reasoning`},
	})
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"`+q1+`","type":"text"}],"role":"user"},`+
		`{"content":[{"text":`+r21dQuote(t, gptAnswer)+`,"type":"text"}],"role":"assistant"},{"content":[{"text":"`+q2+`","type":"text"}],"role":"user"}],`+
		`"model":"claude-sonnet-4-0","system":"You are a helpful assistant.","thinking":{"budget_tokens":1024,"type":"enabled"}}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound21dToolExamples: claude-opus-4-6 (2026), unary, a two-request
// tool loop. Turn 1: the add_one call {"x": 5} alone, its tool_use block
// carrying caller {"type": "direct"} (the call was the model's own, not
// made from code execution: nothing for the contract to keep);
// tool_use; 654 in, 54 out; inference_geo global. Turn 2, after the
// result "6": "The result of calling `add_one` with 5 is **6**.", end_turn,
// 721 in, 20 out. pydantic-ai sent the tool with input_examples ([{"x":
// 5}]), which the contract has no field for: ours sends the tool without
// them; otherwise each request is the recorded one but for "is_error":
// false (and the caller, which pydantic-ai did not send back either).
func TestRound21dToolExamples(t *testing.T) {
	t.Parallel()
	const q = "Call the add_one tool with 5"
	req := func(more ...*llmrelayv1.Message) *provider.Request {
		r := r21Request("claude-opus-4-6", q, 4096, 0)
		r.Messages = append(r.Messages, more...)
		r.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
		r.Tools = []*llmrelayv1.Tool{{Name: "add_one", Description: "Add one to x.",
			Parameters: `{"additionalProperties":false,"properties":{"x":{"type":"integer"}},"required":["x"],"type":"object"}`}}
		return r
	}
	const body = `{"max_tokens":4096,"messages":%s,"model":"claude-opus-4-6","tool_choice":{"type":"auto"},"tools":[{"description":"Add one to x.",` +
		`"input_schema":{"additionalProperties":false,"properties":{"x":{"type":"integer"}},"required":["x"],"type":"object"},"name":"add_one"}]}`
	user := `{"content":[{"text":"` + q + `","type":"text"}],"role":"user"}`
	extended := map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"global"}`}

	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_tool_examples_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	if b := r19bBlock(t, r19bBody(t, "real_pyd_anthropic_tool_examples_1"), 0); b["caller"].(map[string]any)["type"] != "direct" {
		t.Fatalf("recorded block %v", b)
	}
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01XE97gtdZfLkH7P4z6ZkiBh", "add_one", `{"x":5}`)},
		responseID: "msg_013BmxhaxB7wge7cDRcUAk9A", model: "claude-opus-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(654, 54, 0, 0, 0), extended: extended,
	})
	r20SameFields(t, srv1.Last(t).Body, fmt.Sprintf(body, "["+user+"]"))
	providertest.Golden(t, "testdata/real_pyd_anthropic_tool_examples_1.golden", renderResult(t, res1))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_tool_examples_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), req(res1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01XE97gtdZfLkH7P4z6ZkiBh", "6", false))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	r20SameFields(t, srv2.Last(t).Body, fmt.Sprintf(body, "["+user+`,{"content":[{"id":"toolu_01XE97gtdZfLkH7P4z6ZkiBh","input":{"x":5},"name":"add_one","type":"tool_use"}],"role":"assistant"},`+
		`{"content":[{"content":"6","tool_use_id":"toolu_01XE97gtdZfLkH7P4z6ZkiBh","type":"tool_result"}],"role":"user"}]`))
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The result of calling `add_one` with 5 is **6**.")},
		responseID: "msg_01DjPTCYUvoYpnDCRNnCCMag", model: "claude-opus-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(721, 20, 0, 0, 0), extended: extended,
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_tool_examples_2.golden", renderResult(t, res2))
}

// TestRound21dMemoryTool: claude-sonnet-4-5-20250929 (March 2026), unary,
// Anthropic's memory tool (memory_20250818, a tool the client runs: sent
// through extra_body, the contract having no typed tools), two requests.
// Turn 1: a text, then a memory call {"command": "view", "path":
// "/memories"}: a plain tool_use the caller answers like any other;
// context_management with no applied edits (nothing to keep); tool_use;
// 1577 in, 86 out. Turn 2, after "The user lives in Mexico City.": the
// answer opening with two line breaks, kept; end_turn; 1679 in, 16 out.
// Each request is the recorded one but for "is_error": false.
func TestRound21dMemoryTool(t *testing.T) {
	t.Parallel()
	const q = "Where do I live?"
	req := func(more ...*llmrelayv1.Message) *provider.Request {
		r := r21Request("claude-sonnet-4-5", q, 4096, 0)
		r.Messages = append(r.Messages, more...)
		r.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tool_choice":{"type":"auto"},"tools":[{"name":"memory","type":"memory_20250818"}]}`}
		return r
	}
	const body = `{"max_tokens":4096,"messages":%s,"model":"claude-sonnet-4-5","tool_choice":{"type":"auto"},"tools":[{"name":"memory","type":"memory_20250818"}]}`
	user := `{"content":[{"text":"` + q + `","type":"text"}],"role":"user"}`
	const text1 = "I'll check my memory to see if I have information about where you live."

	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_memory_tool_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(text1), toolCallValid("toolu_01YC8RhZeDTZRbb8n1gUFTmb", "memory", `{"command":"view","path":"/memories"}`)},
		responseID: "msg_01QAHQ47smZ47jGdCgd1rjE1", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(1577, 86, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r20SameFields(t, srv1.Last(t).Body, fmt.Sprintf(body, "["+user+"]"))
	providertest.Golden(t, "testdata/real_pyd_anthropic_memory_tool_1.golden", renderResult(t, res1))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_memory_tool_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), req(res1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01YC8RhZeDTZRbb8n1gUFTmb", "The user lives in Mexico City.", false))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	r20SameFields(t, srv2.Last(t).Body, fmt.Sprintf(body, "["+user+`,{"content":[{"text":"`+text1+`","type":"text"},`+
		`{"id":"toolu_01YC8RhZeDTZRbb8n1gUFTmb","input":{"command":"view","path":"/memories"},"name":"memory","type":"tool_use"}],"role":"assistant"},`+
		`{"content":[{"content":"The user lives in Mexico City.","tool_use_id":"toolu_01YC8RhZeDTZRbb8n1gUFTmb","type":"tool_result"}],"role":"user"}]`))
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("\n\nAccording to my memory, you live in **Mexico City**.")},
		responseID: "msg_01Ebk1VHiZxdtUojFrcDJGxX", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(1679, 16, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/real_pyd_anthropic_memory_tool_2.golden", renderResult(t, res2))
}

// TestRound21dAdvisorReplay: claude-sonnet-5 (2026), unary, the advisor
// tool backed by claude-opus-4-8, two requests. Turn 1: a thinking block
// with empty text and a signature, a text ("Task: answer …"), the
// server_tool_use advisor and its advisor_tool_result (an advisor_result
// whose text is the advice, stop_reason end_turn), then "2 + 2 = 4.".
// usage: 2417 in and 133 out, the two message iterations (1128 + 1289,
// 121 + 12), the advisor's iteration (claude-opus-4-8, 2529 in, 38 out)
// kept in usage_details; 55 thinking tokens; server_tool_use zeros. Two
// text parts (the server blocks between them), two warnings.
//
// Turn 2 sends the answer back with "And what is that plus one?".
// pydantic-ai replayed the whole turn, server blocks included; ours sends
// the thinking block (empty text, its signature) and the two texts, the
// advisor blocks having been dropped with their warnings, the rest as
// recorded. The answer: "2 + 2 + 1 = 5.", one message iteration, 1311 in,
// 16 out, thinking_tokens 0.
func TestRound21dAdvisorReplay(t *testing.T) {
	t.Parallel()
	const (
		tools = `[{"max_tokens":1024,"model":"claude-opus-4-8","name":"advisor","type":"advisor_20260301"}]`
		q1    = "What's 2+2? Consult your advisor first."
		q2    = "And what is that plus one?"
		task  = `Task: answer "What's 2+2?" -- trivial arithmetic; initial read is that the answer is simply 4.`
	)
	req := func(more ...*llmrelayv1.Message) *provider.Request {
		r := r21Request("claude-sonnet-5", q1, 4096, 0)
		r.Messages = append(r.Messages, more...)
		r.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":` + tools + `}`}
		return r
	}
	user := `{"content":[{"text":` + r21dQuote(t, q1) + `,"type":"text"}],"role":"user"}`

	srv1 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_advisor_tool_message_replay_1.http")
	res1, err := newTestProvider(t, srv1.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatalf("Generate 1: %v", err)
	}
	body := r19bBody(t, "real_pyd_anthropic_advisor_tool_message_replay_1")
	th := r19bBlock(t, body, 0)
	sig, _ := th["signature"].(string)
	if th["thinking"] != "" || !strings.HasPrefix(sig, "EooDCokBCA8YAipArdh/") {
		t.Fatalf("recorded thinking %v", th)
	}
	if c, _ := r19bBlock(t, body, 3)["content"].(map[string]any); c["type"] != "advisor_result" || !strings.HasPrefix(c["text"].(string), "4.\n\nThe answer is 4.") {
		t.Fatalf("recorded advisor result %v", c)
	}
	checkLLMWant(t, "turn 1", res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Signature: sig}), text(task), text("2 + 2 = 4.")},
		responseID: "msg_011CdD8mgfyYuTXcsUEmsshh", model: "claude-sonnet-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(2417, 133, 0, 0, 55),
		extended: map[string]string{"service_tier": `"standard"`},
		items:    []string{"server_tool_use", "advisor_tool_result"},
	})
	details, _ := res1.Meta.GetExtended().AsMap()[provider.ExtUsageDetails].(map[string]any)
	its, _ := details["iterations"].([]any)
	if details["inference_geo"] != "global" || len(its) != 3 || its[1].(map[string]any)["model"] != "claude-opus-4-8" ||
		its[1].(map[string]any)["input_tokens"] != float64(2529) || its[1].(map[string]any)["output_tokens"] != float64(38) {
		t.Errorf("usage details %v", details)
	}
	r20SameFields(t, srv1.Last(t).Body, `{"max_tokens":4096,"messages":[`+user+`],"model":"claude-sonnet-5","tools":`+tools+`}`)
	providertest.Golden(t, "testdata/real_pyd_anthropic_advisor_tool_message_replay_1.golden", renderResult(t, res1))

	srv2 := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_advisor_tool_message_replay_2.http")
	res2, err := newTestProvider(t, srv2.URL).Generate(context.Background(), req(res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(q2))))
	if err != nil {
		t.Fatalf("Generate 2: %v", err)
	}
	r20SameFields(t, srv2.Last(t).Body, `{"max_tokens":4096,"messages":[`+user+`,{"content":[{"signature":"`+sig+`","thinking":"","type":"thinking"},`+
		`{"text":`+r21dQuote(t, task)+`,"type":"text"},`+itemBlocks(t, res1.Message, 2)+`{"text":"2 + 2 = 4.","type":"text"}],"role":"assistant"},`+
		`{"content":[{"text":"`+q2+`","type":"text"}],"role":"user"}],"model":"claude-sonnet-5","tools":`+tools+`}`)
	checkLLMWant(t, "turn 2", res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("2 + 2 + 1 = 5.")},
		responseID: "msg_011CdD8n4mGArzCeXbsaLqEc", model: "claude-sonnet-5",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(1311, 16, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	details2, _ := res2.Meta.GetExtended().AsMap()[provider.ExtUsageDetails].(map[string]any)
	if its2, _ := details2["iterations"].([]any); details2["inference_geo"] != "global" || len(its2) != 1 ||
		its2[0].(map[string]any)["input_tokens"] != float64(1311) || its2[0].(map[string]any)["output_tokens"] != float64(16) {
		t.Errorf("turn 2 usage details %v", details2)
	}
	providertest.Golden(t, "testdata/real_pyd_anthropic_advisor_tool_message_replay_2.golden", renderResult(t, res2))
}

// TestRound21dContainerAsObjectRefused: claude-sonnet-4-5 (April 2026),
// the second request of pydantic-ai's container-setting cassette: the
// container named as an object ({"id": "container_…"}) beside
// code_execution_20250522, which the API refused with a 400
// invalid_request_error "container: Input should be a valid string", its
// request id only in the body (no request-id header recorded). Both
// Generate and Stream report it as an invalid request with the body's
// request id. Ours sends the recorded request (the container through
// extra_body as pydantic-ai sent it) but for the system prompt as a
// string instead of one text block (the same to the API).
func TestRound21dContainerAsObjectRefused(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_container_setting_explicit_dict_form_live_2"
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, "testdata/"+name+".http")
		req := r21Request("claude-sonnet-4-5", "And what about 4 * 12390?", 4096, 0)
		req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Always use the code execution tool for math."))}, req.Messages...)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"container":{"id":"container_011CaLKZmKLkhAjfCGCJFBVS"},"tool_choice":{"type":"auto"},` +
			`"tools":[{"name":"code_execution","type":"code_execution_20250522"}]}`}
		p := newTestProvider(t, srv.URL)
		var err error
		if streaming {
			var s provider.Stream
			s, err = p.Stream(context.Background(), req)
			if s != nil {
				t.Fatal("Stream returned a stream with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("stream=%v: error %T %v is not a *provider.Error", streaming, err, err)
		}
		if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "invalid_request_error" || pe.RequestID != "req_011CaLKaWmWgKXmnFr89FWBM" ||
			pe.Message != "container: Input should be a valid string" || pe.RetryAfter != 0 {
			t.Errorf("stream=%v: got kind=%v status=%d code=%q rid=%q msg=%q retry=%v", streaming, pe.Kind, pe.HTTPStatus, pe.Code, pe.RequestID, pe.Message, pe.RetryAfter)
		}
		recorded := `{"container":{"id":"container_011CaLKZmKLkhAjfCGCJFBVS"},"max_tokens":4096,"messages":[{"content":[{"text":"And what about 4 * 12390?","type":"text"}],"role":"user"}],` +
			`"model":"claude-sonnet-4-5","system":"Always use the code execution tool for math.","tool_choice":{"type":"auto"},"tools":[{"name":"code_execution","type":"code_execution_20250522"}]}`
		if streaming {
			recorded = strings.Replace(recorded, `"model"`, `"stream":true,"model"`, 1)
		}
		r20SameFields(t, srv.Last(t).Body, recorded)
	}
}

// TestRound21dHaikuCodeExecutionStream: claude-haiku-4-5-20251001 (April
// 2026), streamed, code_execution_20260120 with tool_choice any (both
// through extra_body): the answer opens with the server_tool_use
// bash_code_execution (its command in eight input_json_delta pieces, the
// first empty, an escaped quote split across two, a ping inside), its
// bash_code_execution_tool_result (stdout "4\n"), then one text block
// ("The result is **4**. \n\n2 + 2 = 4 ✓"). message_start has stop_details
// null and inference_geo "not_available"; message_delta raises
// input_tokens 2347 → 4765, 78 out, server_tool_use zeros, and names the
// container (kept in meta.extended). One text part, two warnings, no
// tool-call events. The request is the recorded one.
func TestRound21dHaikuCodeExecutionStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_anthropic_code_execution_tool_haiku_4_5_support"
	req := r21Request("claude-haiku-4-5-20251001", "Use code execution to print 2 + 2.", 4096, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tool_choice":{"type":"any"},"tools":[{"name":"code_execution","type":"code_execution_20260120"}]}`}
	evs, f, srv := r21Stream(t, name, req)
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The result is **4**. \n\n2 + 2 = 4 ✓")},
		responseID: "msg_013MHZsYySGJZbcwL2xJvWku", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(4765, 78, 0, 0, 0),
		extended: map[string]string{
			"container":              `{"expires_at":"2026-04-24T11:13:13.798784Z","id":"container_011CaNRDYzaGZf7MqisNEVxQ"}`,
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
		items: []string{"server_tool_use", "bash_code_execution_tool_result"},
	})
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran the code)", n)
	}
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":4096,"messages":[{"content":[{"text":"Use code execution to print 2 + 2.","type":"text"}],"role":"user"}],`+
		`"model":"claude-haiku-4-5-20251001","stream":true,"tool_choice":{"type":"any"},"tools":[{"name":"code_execution","type":"code_execution_20260120"}]}`)
}

// itemBlocks is the JSON of msg's provider items, each followed by a
// comma, as a request sends them back; there must be n.
func itemBlocks(t *testing.T, msg *llmrelayv1.Message, n int) string {
	t.Helper()
	var b strings.Builder
	got := 0
	for _, p := range msg.GetParts() {
		if it := p.GetProviderItem(); it != nil {
			b.WriteString(it.GetJson() + ",")
			got++
		}
	}
	if got != n {
		t.Fatalf("%d provider items, want %d", got, n)
	}
	return b.String()
}
