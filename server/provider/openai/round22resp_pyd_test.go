package openai

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/protobuf/proto"
)

// r22Body reads the JSON body of a unary recording (after the blank line
// ending its headers).
func r22Body(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), "\n\n")
	if i < 0 {
		t.Fatalf("%s: no blank line after the headers", name)
	}
	var body map[string]any
	if err := json.Unmarshal(raw[i+2:], &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// TestRound22WebSearchPreview: pydantic-ai's cassette of gpt-4o with
// web_search_preview (August 2025), unary: one web_search_call (a search
// with its query), then the message whose five url_citation annotations
// index the text by code point (it has "–", "ú", "ó", "ð": byte offsets
// would cut the citations). The annotations are relayed as OpenAI sent
// them, the search as a warning.
func TestRound22WebSearchPreview(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_web_search_tool"
	res := r21Unary(t, name, r21Request("gpt-4o", "What are the latest news in Iceland?"))
	body := r22Body(t, name)
	msg := body["output"].([]any)[1].(map[string]any)
	content := msg["content"].([]any)[0].(map[string]any)
	want := content["text"].(string)
	parts := r23Parts(t, res.Message, "web_search_call")
	if len(parts) != 1 || parts[0].GetText() != want || parts[0].GetItemId() != "msg_68ac1e3616548192bc0265a336983d12014ed998995dd5ee" {
		t.Fatalf("parts %v", parts)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if m.GetResponseId() != "resp_68ac1e32b0108192973c8cfec29c2e61014ed998995dd5ee" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
		m.GetServiceTier() != "default" || m.GetToolCallCount() != 0 {
		t.Errorf("meta %v", m)
	}
	if u := (&llmrelayv1.Usage{InputTokens: 319, OutputTokens: 556, TotalTokens: 875}); !proto.Equal(m.GetUsage(), u) {
		t.Errorf("usage %v, want %v", m.GetUsage(), u)
	}
	// The annotations, exactly as sent, each citing the markdown link
	// it spans (counted in code points).
	var anns []map[string]any
	if err := json.Unmarshal([]byte(extendedJSON(t, m, extAnnotations)), &anns); err != nil {
		t.Fatal(err)
	}
	sent := content["annotations"].([]any)
	if len(anns) != len(sent) {
		t.Fatalf("annotations %v", anns)
	}
	runes := []rune(want)
	for i, a := range anns {
		s := sent[i].(map[string]any)
		for _, k := range []string{"type", "title", "url", "start_index", "end_index"} {
			if a[k] != s[k] {
				t.Errorf("annotation %d %s: %v, want %v", i, k, a[k], s[k])
			}
		}
		cited := string(runes[int(s["start_index"].(float64)):int(s["end_index"].(float64))])
		if !strings.HasPrefix(cited, "([") || !strings.Contains(cited, s["url"].(string)) {
			t.Errorf("annotation %d spans %q", i, cited)
		}
	}
	if w := []string(nil); strings.Join(m.GetWarnings(), "\n") != strings.Join(w, "\n") {
		t.Errorf("warnings %q, want %q", m.GetWarnings(), w)
	}
}

// TestRound22ModerationStream: pydantic-ai's cassette of gpt-5 with
// moderation asked for (July 2026), streamed: an encrypted reasoning item
// (its encrypted_content differs between added, done and completed; the
// item as done is relayed), the answer "Paris." in two deltas, and the
// moderation results of input and output only in response.completed
// (null in created), relayed as sent in meta.extended["moderation"].
// 13 in, 59 out of which 0 reasoning although a reasoning item came (as
// sent: the usage is the provider's); service tier auto, then default;
// no request id (the cassette kept none).
func TestRound22ModerationStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_moderation_stream"
	f := r21Stream(t, name, r21Request("gpt-5", "What is the capital of France?"))
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[1].GetText() != "Paris." || parts[1].GetItemId() != "msg_06fe400e17c64daf006a5fa35428b0819c9409e8d48bd8d1a2" {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	if r.GetId() != "rs_06fe400e17c64daf006a5fa35397e8819c87342597af84fde1" || r.GetText() != "" ||
		!strings.HasPrefix(r.GetSignature(), "gAAAAABqX6NUUH7IHn_J7IsD") || !strings.HasSuffix(r.GetSignature(), "pzT8ZU=") {
		t.Errorf("reasoning %v", r)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 59, TotalTokens: 72}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_06fe400e17c64daf006a5fa35305c0819c9417367f9fcf2e5e" || m.GetResolvedModel() != "gpt-5-2025-08-07" ||
		m.GetServiceTier() != "default" || m.GetProviderRequestId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	var mod struct {
		Input, Output struct {
			Type    string             `json:"type"`
			Flagged *bool              `json:"flagged"`
			Model   string             `json:"model"`
			Scores  map[string]float64 `json:"category_scores"`
		}
	}
	if err := json.Unmarshal([]byte(extendedJSON(t, m, extModeration)), &mod); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		side     string
		got      float64
		want     float64
		typ, mdl string
		flagged  *bool
	}{
		{"input", mod.Input.Scores["illicit"], 0.005284363395662242, mod.Input.Type, mod.Input.Model, mod.Input.Flagged},
		{"output", mod.Output.Scores["violence"], 0.0005852836038915696, mod.Output.Type, mod.Output.Model, mod.Output.Flagged},
	} {
		if r.got != r.want || r.typ != "moderation_result" || r.mdl != "omni-moderation-latest" || r.flagged == nil || *r.flagged {
			t.Errorf("%s moderation %+v", r.side, mod)
		}
	}
}

// TestRound22WebSearchAllowedDomains: pydantic-ai's cassette of gpt-5
// with web_search limited to wikipedia.org (January 2026), unary: five
// encrypted reasoning items, each of the first four followed by a
// web_search_call (two searches with several queries, two open_page
// actions), the fifth by the message "14195730". The reasoning items are
// relayed with their ids and encrypted contents, each search as a
// provider item (round 23; before, a warning); 22,013 in, 1,737 out of
// which 1,728 reasoning.
//
// Sent back in a next turn, each of the first four reasoning items goes
// with its web_search_call, as the answer had them (before round 23 they
// were left out with a warning each: the request could not carry the
// search); the fifth goes with the message it led to, both with their
// ids, as the API pairs them.
func TestRound22WebSearchAllowedDomains(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_web_search_tool_with_allowed_domains"
	res := r21Unary(t, name, r21Request("gpt-5", "Search Google for the current population of Tokyo prefecture. Give me just the number."))
	body := r22Body(t, name)
	output := body["output"].([]any)
	var rs, ws []string
	for _, o := range output {
		it := o.(map[string]any)
		switch it["type"] {
		case "reasoning":
			rs = append(rs, it["id"].(string))
		case "web_search_call":
			ws = append(ws, it["id"].(string))
		}
	}
	parts := r23Parts(t, res.Message, "web_search_call", "web_search_call", "web_search_call", "web_search_call")
	if len(rs) != 5 || len(ws) != 4 || len(parts) != 6 {
		t.Fatalf("%d reasoning, %d searches in the body; parts %d", len(rs), len(ws), len(parts))
	}
	for i, id := range rs {
		want := output[2*i].(map[string]any)["encrypted_content"].(string)
		if r := parts[i].GetReasoning(); r.GetId() != id || r.GetSignature() != want || r.GetText() != "" {
			t.Errorf("part %d: %.80v, want reasoning %s", i, parts[i], id)
		}
	}
	if parts[5].GetText() != "14195730" || parts[5].GetItemId() != "msg_08e7da464e3f8cf70069780c28d520819b8df668fee3b5be9a" {
		t.Errorf("text part %v", parts[5])
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 22013, OutputTokens: 1737, TotalTokens: 23750, ReasoningTokens: 1728}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_08e7da464e3f8cf70069780c019ccc819b9d7a3f4d04a52f83" || m.GetResolvedModel() != "gpt-5-2025-08-07" || m.GetServiceTier() != "default" {
		t.Errorf("meta %v", m)
	}
	// Round 23: each search is a provider item (before, a warning).
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}

	// The next turn.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	req := r21Request("gpt-5", "Search Google for the current population of Tokyo prefecture. Give me just the number.")
	req.Reasoning = true
	req.Messages = append(req.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("And of Osaka?")))
	raw, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(raw, &sent); err != nil {
		t.Fatal(err)
	}
	// Round 23: every reasoning item goes with the item it led to, as
	// the answer had them: the first four with their web_search_call (a
	// provider item, as sent), the fifth with the message. Before, the
	// four were left out with a warning each.
	if len(sent.Input) != 12 {
		t.Fatalf("input %d items", len(sent.Input))
	}
	for i := 0; i < 5; i++ {
		if in := sent.Input[1+2*i]; in["type"] != "reasoning" || in["id"] != rs[i] || in["encrypted_content"] != parts[i].GetReasoning().GetSignature() {
			t.Errorf("input[%d] %.200v", 1+2*i, in)
		}
		if i < 4 {
			if in := sent.Input[2+2*i]; in["type"] != "web_search_call" || in["id"] != ws[i] || !jsonEqualAny(in, output[2*i+1]) {
				t.Errorf("input[%d] %.200v, want %.200v", 2+2*i, in, output[2*i+1])
			}
		}
	}
	if in := sent.Input[10]; in["type"] != "message" || in["role"] != "assistant" || in["id"] != "msg_08e7da464e3f8cf70069780c28d520819b8df668fee3b5be9a" || in["status"] != "completed" {
		t.Errorf("input[10] %v", in)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
}

// TestRound22MCPListToolsBackfill: pydantic-ai's cassette of gpt-4.1 with
// three hosted MCP servers (June 2026), streamed: an mcp_list_tools item
// is added for each server (tools: []) with its in_progress and completed
// events, but only gitmcp's has an output_item.done; deepwiki's and
// microsoft_learn's tools come only in response.completed. Then the
// answer listing all ten tools.
//
// Each of the three items is reported in one warning, as the unary
// answer of the same final response reports them: the stream reported
// gitmcp's alone (at its done event) and dropped the other two without a
// word, because their output indexes had been seen in the stream.
func TestRound22MCPListToolsBackfill(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_mcp_list_tools_stream_backfills_missing_results"
	f := r21Stream(t, name, r21Request("gpt-4.1", "List the names of the tools available from each connected MCP server, then stop. Do not call any tools."))
	warn := func(id, server string) string {
		return `ignored output item of type "mcp_list_tools" (id ` + id + `; MCP server "` + server + `"; run by the provider)`
	}
	deepwiki := warn("mcpl_034c5e93e2fa45ad006a2c2b74d53c819dbb0f25635141142d", "deepwiki")
	learn := warn("mcpl_034c5e93e2fa45ad006a2c2b74d640819d9ec49d5fdfab8a5c", "microsoft_learn")
	gitmcp := warn("mcpl_034c5e93e2fa45ad006a2c2b74d794819da28402187d7e0600", "gitmcp")
	m := f.Meta
	// Round 23: provider items, gitmcp's at its done event, the two
	// others from the final response, after the text.
	msg, ww := r23Hosted(t, f.Message, m.GetWarnings(), []string{gitmcp, deepwiki, learn})
	if len(ww) != 0 || len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
	const text = "Here are the available tools from each connected MCP server:\n\n---\n\n**mcp_deepwiki**\n- read_wiki_structure\n- read_wiki_contents\n- ask_question\n\n---\n\n" +
		"**mcp_microsoft_learn**\n- microsoft_docs_search\n- microsoft_code_sample_search\n- microsoft_docs_fetch\n\n---\n\n" +
		"**mcp_gitmcp**\n- fetch_pydantic_ai_documentation\n- search_pydantic_ai_documentation\n- search_pydantic_ai_code\n- fetch_generic_url_content\n\n---"
	if p := msg.GetParts(); len(p) != 1 || p[0].GetText() != text || p[0].GetItemId() != "msg_034c5e93e2fa45ad006a2c2b77483c819dbedc979fa0978d17" {
		t.Errorf("parts %v", p)
	}
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 1199, OutputTokens: 103, TotalTokens: 1302}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_034c5e93e2fa45ad006a2c2b74c2e4819dafbd93fcd1b49697" || m.GetResolvedModel() != "gpt-4.1-2025-04-14" || m.GetServiceTier() != "default" {
		t.Errorf("meta %v", m)
	}

	// The unary answer of the same final response reports the same items.
	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	const marker = `data: {"type":"response.completed","response":`
	i := strings.LastIndex(string(raw), marker)
	if i < 0 {
		t.Fatal("no response.completed")
	}
	final := strings.TrimSpace(string(raw[i+len(marker):]))
	final = final[:strings.LastIndex(final, `,"sequence_number":`)]
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseResponsesResponse([]byte(final), "gpt-4.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ww := r23Hosted(t, res.Message, res.Meta.GetWarnings(), []string{deepwiki, learn, gitmcp}); len(ww) != 0 || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("unary warnings %q", res.Meta.GetWarnings())
	}
}

// TestRound22HostedItemReportedOnce (hand-built streams): a hosted item is
// reported in exactly one warning, whatever its events name. A done event
// naming the item by id only (no output_index, as OpenAI-compatible
// servers send them) was reported again from the final response; items
// the final response alone carries, or whose done event named neither id
// nor index, are reported once each.
func TestRound22HostedItemReportedOnce(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const completed = `{"type":"response.completed","response":{"status":"completed","output":[` +
		`{"id":"ws_1","type":"web_search_call","status":"completed"},{"id":"ws_2","type":"web_search_call","status":"completed"},` +
		`{"type":"web_search_call","status":"completed"},{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"ok"}]}]}}`
	for _, tc := range []struct {
		name, body string
	}{
		{"done by id only", sseEvent("response.output_item.done", `{"type":"response.output_item.done","item":{"id":"ws_1","type":"web_search_call","status":"completed"}}`) +
			sseEvent("response.output_item.done", `{"type":"response.output_item.done","item":{"id":"ws_2","type":"web_search_call","status":"completed"}}`) +
			sseEvent("response.output_item.done", `{"type":"response.output_item.done","item":{"type":"web_search_call","status":"completed"}}`)},
		{"done by index", sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"completed"}}`) +
			sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"id":"ws_2","type":"web_search_call","status":"completed"}}`) +
			sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":2,"item":{"type":"web_search_call","status":"completed"}}`)},
		{"added only", sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}}`) +
			sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"ws_2","type":"web_search_call","status":"in_progress"}}`) +
			sseEvent("response.web_search_call.completed", `{"type":"response.web_search_call.completed","output_index":2,"item_id":"ws_3"}`)},
		{"final response only", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := respStreamFrom(p, tc.body+sseEvent("response.completed", completed))
			defer s.Close()
			evs, _, err := providertest.Drain(t, s, 1000)
			if err != nil {
				t.Fatal(err)
			}
			// Round 23: each item is one provider item event (before, one
			// warning), and no warning.
			n := map[string]int{}
			for _, ev := range evs {
				switch ev.Kind {
				case provider.EventProviderItem:
					n[ev.Item.JSON]++
				case provider.EventMeta:
					for _, w := range ev.Meta.GetWarnings() {
						n[w]++
					}
				}
			}
			want := map[string]int{
				`{"id":"ws_1","type":"web_search_call","status":"completed"}`: 1,
				`{"id":"ws_2","type":"web_search_call","status":"completed"}`: 1,
				`{"type":"web_search_call","status":"completed"}`:             1,
			}
			if len(n) != len(want) {
				t.Errorf("warnings %v", n)
			}
			for w, c := range want {
				if n[w] != c {
					t.Errorf("%q reported %d times, want %d (all: %v)", w, n[w], c, n)
				}
			}
		})
	}
}

// TestRound22HostedMCPUnary: pydantic-ai's cassette of gpt-4o with a
// hosted MCP server (October 2025), unary: the server's mcp_list_tools
// (one tool), the mcp_call OpenAI made (arguments "{}", its output, no
// approval), then the answer. Both items are reported in one warning
// each, naming server and tool; 107 in, 37 out. The request's MCP tool is
// what the live API took (pydantic-ai's recorded request): type mcp, the
// label and URL, require_approval never, and the bearer token in
// authorization without "Bearer " (pydantic-ai's test token; the
// response echoes it redacted); the server_description it also sent has
// no place in the contract.
func TestRound22HostedMCPUnary(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_mcp_server_tool"
	req := r21Request("gpt-4o", "What games do I have?")
	req.HostedMCP = []provider.HostedMCP{{Label: "test_server", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x-api-key"}}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	var sent struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "mcp", "server_label": "test_server", "server_url": "https://example.com/mcp", "require_approval": "never", "authorization": "x-api-key"}
	if len(sent.Tools) != 1 || len(sent.Tools[0]) != len(want) {
		t.Fatalf("tools %v", sent.Tools)
	}
	for k, v := range want {
		if sent.Tools[0][k] != v {
			t.Errorf("tool %s = %v, want %v", k, sent.Tools[0][k], v)
		}
	}
	r21Answer{text: "You have the following games:\n\n1. Lies of P\n2. Bloodborne\n3. Sekiro",
		usage: &llmrelayv1.Usage{InputTokens: 107, OutputTokens: 37, TotalTokens: 144},
		id:    "resp_0c3be32e7b19011f0068e6366a9940819790b232e2d6ea6dc5", model: "gpt-4o-2024-08-06",
		warnings: []string{
			`ignored output item of type "mcp_list_tools" (id mcpl_0c3be32e7b19011f0068e6366acbc08197bdaac474f6888ab5; MCP server "test_server"; run by the provider)`,
			`ignored output item of type "mcp_call" (id mcp_0c3be32e7b19011f0068e6366da4988197a325bc65a409fc2b; MCP server "test_server"; tool "get_my_games"; run by the provider)`,
		}}.check(t, res.Message, res.Meta)
}
