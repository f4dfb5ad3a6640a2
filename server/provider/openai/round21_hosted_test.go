package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 21: real Responses API answers with the items of OpenAI's hosted
// and built-in tools (testdata/README.md, "Round 21"). The expectations
// are read off the recordings by hand.

// r21Request is a one-question Responses request for model.
func r21Request(model, question string) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(question))}}
}

// r21Unary replays a unary recording, checks its golden and the result
// invariants.
func r21Unary(t *testing.T, name string, req *provider.Request) *provider.Result {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	return res
}

// r21Stream replays a streamed recording, checks its golden and the
// stream invariants, and folds it as the server does.
func r21Stream(t *testing.T, name string, req *provider.Request) folded {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkRespStreamInvariants(t, evs)
	return accFold(t, evs)
}

// r21Answer is what a recording's answer must be: the reasoning items' ids
// (none of them has a summary or encrypted content), the text, the
// usage, the ids, and the warnings, exactly.
type r21Answer struct {
	reasoning []string
	text      string
	usage     *llmrelayv1.Usage
	id, model string
	warnings  []string
}

// check compares an answer, its parts in order: the reasoning items,
// then the text (every recording here ends in one message, or none).
func (w r21Answer) check(t *testing.T, msg *llmrelayv1.Message, m *llmrelayv1.ResponseMeta) {
	t.Helper()
	msg, w.warnings = r23Hosted(t, msg, m.GetWarnings(), w.warnings)
	parts := msg.GetParts()
	n := len(w.reasoning)
	if w.text != "" {
		n++
	}
	if len(parts) != n {
		t.Fatalf("parts %v", parts)
	}
	for i, id := range w.reasoning {
		if r := parts[i].GetReasoning(); r.GetId() != id || r.GetText() != "" || r.GetSignature() != "" {
			t.Errorf("part %d: %v, want reasoning %s", i, parts[i], id)
		}
	}
	if w.text != "" && parts[n-1].GetText() != w.text {
		t.Errorf("text %q, want %q", parts[n-1].GetText(), w.text)
	}
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if !proto.Equal(m.GetUsage(), w.usage) {
		t.Errorf("usage %v, want %v", m.GetUsage(), w.usage)
	}
	if m.GetResponseId() != w.id || m.GetResolvedModel() != w.model || m.GetServiceTier() != "default" || m.GetToolCallCount() != 0 {
		t.Errorf("meta %v", m)
	}
	if got := m.GetWarnings(); strings.Join(got, "\n") != strings.Join(w.warnings, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", got, w.warnings)
	}
}

// TestRound21CodeInterpreter: gpt-5-nano with the hosted code_interpreter
// (the AI SDK's openai-code-interpreter-tool.1.json, October 2025): four
// reasoning items (empty summaries, no encrypted content) around three
// code_interpreter_call items in one container, the first and third with
// a "logs" output, the second with none; then the message, whose
// container_file_citation (the file the code wrote, characters 195 to
// 236) is kept in meta.extended["annotations"] as sent. The three calls
// ran on OpenAI's side: one warning each naming its ci_ id, no client
// call, finish STOP; 2283 in, 1928 out of which 1792 reasoning.
func TestRound21CodeInterpreter(t *testing.T) {
	t.Parallel()
	const ci = "ignored output item of type \"code_interpreter_call\" (id %s; a tool the provider ran itself)"
	res := r21Unary(t, "real_responses_code_interpreter", r21Request("gpt-5-nano", "Simulate rolling two dice 10000 times and give me the file."))
	r21Answer{
		reasoning: []string{"rs_024ee52fc1900767006903bf2cf8348193be2e9dedeedfd7eb", "rs_024ee52fc1900767006903bf381cec8193a48068baa82e17a3",
			"rs_024ee52fc1900767006903bf3ddb0881939e1af28db8fb9f17", "rs_024ee52fc1900767006903bf40cd488193b3a36868bf31054a"},
		text: "I ran 10,000 trials of rolling two dice and summed the results.\n\n- Total sum across all 10,000 rolls: 70024\n" +
			"- Per-trial sums were saved to a file. You can download it here:\n  [Download the file](sandbox:/mnt/data/two_dice_sums_10000.txt)\n\n" +
			"The file contains 10,000 lines (one sum per line) followed by a final line with the total, e.g., \"TOTAL: 70024\".\n\n" +
			"If you’d like the file in a different format (CSV, JSON) or with only the total, I can adjust and re-upload.",
		usage: &llmrelayv1.Usage{InputTokens: 2283, OutputTokens: 1928, TotalTokens: 4211, ReasoningTokens: 1792},
		id:    "resp_024ee52fc1900767006903bf276a60819395647a8a01d4a3d8", model: "gpt-5-nano-2025-08-07",
		warnings: []string{
			fmt.Sprintf(ci, "ci_024ee52fc1900767006903bf34e2b08193a689f71dcc3724f7"),
			fmt.Sprintf(ci, "ci_024ee52fc1900767006903bf38f1f08193a0b46ddc935fa028"),
			fmt.Sprintf(ci, "ci_024ee52fc1900767006903bf3e05b48193bbb2367cbc9a299e"),
		},
	}.check(t, res.Message, res.Meta)
	anns := res.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
	if len(anns) != 1 {
		t.Fatalf("annotations %v", anns)
	}
	a := anns[0].GetStructValue().GetFields()
	if a["type"].GetStringValue() != "container_file_citation" || a["container_id"].GetStringValue() != "cntr_6903bf2c0470819090b2b1e63e0b66800c139a5d654a42ec" ||
		a["file_id"].GetStringValue() != "cfile_6903bf45e3288191af3d56e6d23c3a4d" || a["filename"].GetStringValue() != "two_dice_sums_10000.txt" ||
		a["start_index"].GetNumberValue() != 195 || a["end_index"].GetNumberValue() != 236 {
		t.Errorf("annotation %v", a)
	}
}

// TestRound21ImageGeneration: the hosted image_generation tool, unary
// (gpt-5-nano, a 1024x1024 WebP) and streamed (gpt-5, 1536x1024, one
// partial_image event, the image in output_item.done and again in
// response.completed). The answer's message is an empty output_text: the
// answer is the image, which the contract has no place for (its Image
// part is an input). The warning names it, its format, size and the
// length of its base64 result, so the image is never lost without a
// word. The AI SDK authors shortened both results to a few hundred
// characters joined by "...": the lengths are those of the recordings
// (244 and 327). No text part, finish STOP.
func TestRound21ImageGeneration(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "real_responses_image_generation", r21Request("gpt-5-nano", "Generate an image of a cat."))
	r21Answer{
		reasoning: []string{"rs_0a33d15155cb126d0068c96c5527808195a933b468ccb5dfd9", "rs_0a33d15155cb126d0068c96c6c0ef48195bc73e30faf832ba3"},
		usage:     &llmrelayv1.Usage{InputTokens: 3151, OutputTokens: 1970, TotalTokens: 5121, ReasoningTokens: 1920},
		id:        "resp_0a33d15155cb126d0068c96c54970481958484dea31f07926d", model: "gpt-5-nano-2025-08-07",
		warnings: []string{`ignored output item of type "image_generation_call" (id ig_0a33d15155cb126d0068c96c59bc14819599154c9988b82996; ` +
			`a generated image (webp, 1024x1024) of 244 bytes of base64, which the answer has no place for)`},
	}.check(t, res.Message, res.Meta)

	f := r21Stream(t, "real_responses_image_generation_stream", r21Request("gpt-5", "Generate an image of an echidna swimming across the Mozambique channel."))
	r21Answer{
		reasoning: []string{"rs_0df93c0bb83a72f20068c979db90b4819e94cedbfda2d49af6"},
		usage:     &llmrelayv1.Usage{InputTokens: 2941, OutputTokens: 1249, TotalTokens: 4190, CachedInputTokens: 1920, ReasoningTokens: 1024},
		id:        "resp_0df93c0bb83a72f20068c979db26ac819e8b5a444fad3f0d7f", model: "gpt-5-2025-08-07",
		warnings: []string{`ignored output item of type "image_generation_call" (id ig_0df93c0bb83a72f20068c979f589c0819e9f0fc2d1a27aa1b8; ` +
			`a generated image (webp, 1536x1024) of 327 bytes of base64, which the answer has no place for)`},
	}.check(t, f.Message, f.Meta)
}

// TestRound21ClientRunCalls: calls of OpenAI's built-in tools that the
// client is to run: local_shell_call (gpt-5-codex, unary and streamed:
// the streamed item is added with an empty command, done with
// ["ls","-a","~"]) and shell_call (gpt-5.1, three commands). They are not
// function calls (they are answered with local_shell_call_output /
// shell_call_output, not function_call_output), so they are not relayed
// as ToolCalls a client would answer with a ToolResult the API rejects;
// the warning names the item and its call_id and says the client was to
// run it. The response ends there: no text, finish STOP as the status
// says, no tool call counted.
func TestRound21ClientRunCalls(t *testing.T) {
	t.Parallel()
	const what = "a call of OpenAI's built-in tool for the client to run, which the contract has no place for)"
	res := r21Unary(t, "real_responses_local_shell", r21Request("gpt-5-codex", "List the files in my home directory."))
	r21Answer{
		reasoning: []string{"rs_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799"},
		usage:     &llmrelayv1.Usage{InputTokens: 407, OutputTokens: 24, TotalTokens: 431},
		id:        "resp_68da74aaae58819ca776fbd20244e8df0fdbc19a07110799", model: "gpt-5-codex",
		warnings: []string{`ignored output item of type "local_shell_call" (id lsh_68da74abdaec819c9aa19c124308f4600fdbc19a07110799; call_id call_XWgeTylovOiS8xLNz2TONOgO: ` + what},
	}.check(t, res.Message, res.Meta)

	f := r21Stream(t, "real_responses_local_shell_stream", r21Request("gpt-5-codex", "List the files in my home directory."))
	r21Answer{
		reasoning: []string{"rs_68da7fd65a3481948bbb35ff2c79c6c20faf5df54b42d9a6"},
		usage:     &llmrelayv1.Usage{InputTokens: 407, OutputTokens: 151, TotalTokens: 558, ReasoningTokens: 128},
		id:        "resp_68da7fd5d24481949fc2cf1cc60377050faf5df54b42d9a6", model: "gpt-5-codex",
		warnings: []string{`ignored output item of type "local_shell_call" (id lsh_68da7fd99b3c8194bd624b18c0c0851b0faf5df54b42d9a6; call_id call_h3nm8hUG0KO9tVNuRACkL1ri: ` + what},
	}.check(t, f.Message, f.Meta)

	res = r21Unary(t, "real_responses_shell_call", r21Request("gpt-5.1", "Create dec1.txt on my desktop."))
	r21Answer{
		usage: &llmrelayv1.Usage{InputTokens: 157, OutputTokens: 73, TotalTokens: 230},
		id:    "resp_0f0d479976b1e9a600692f61be5948819783b655c7a54af2a2", model: "gpt-5.1-2025-11-13",
		warnings: []string{`ignored output item of type "shell_call" (id sh_0f0d479976b1e9a600692f61bec0e08197a0864dc5ddf1d38c; call_id call_udkLUvR8lWvG8cDO2B6GNpvZ: ` + what},
	}.check(t, res.Message, res.Meta)
}

// TestRound21HostedMCP: gpt-5-mini with a hosted MCP server
// (require_approval "always") after the client denied the call
// (openai-mcp-tool-approval.2.json): the server's tool list
// (mcp_list_tools, server "zip1"), a reasoning item, then the model's
// answer that the call was not approved. The tool list is one warning
// naming the server; the text is the message's.
func TestRound21HostedMCP(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "real_responses_mcp_denied", r21Request("gpt-5-mini", "Shorten https://ai-sdk.dev with max clicks 100."))
	r21Answer{
		reasoning: []string{"rs_04f6b17429cf2b02006949a67543c88196ad1f56cb7c8fe476"},
		text: "I couldn't create the short link because the shortening tool call was not approved. Do you want me to proceed and create a short URL on zip1.io with max clicks = 100? " +
			"If yes, please confirm and optionally provide:\n- a custom alias (alphanumeric and hyphens only), and/or\n- a password, and/or\n- a short description.\n\n" +
			"If you don't want me to use the tool, I can give instructions so you can shorten it yourself.",
		usage: &llmrelayv1.Usage{InputTokens: 592, OutputTokens: 421, TotalTokens: 1013, ReasoningTokens: 320},
		id:    "resp_04f6b17429cf2b02006949a673effc8196bc0d00ce027d3bdc", model: "gpt-5-mini-2025-08-07",
		warnings: []string{`ignored output item of type "mcp_list_tools" (id mcpl_04f6b17429cf2b02006949a673fd08819695f8f57cdb9bed6f; MCP server "zip1"; run by the provider)`},
	}.check(t, res.Message, res.Meta)
}

// TestRound21LargeImageEvent: an image_generation_call whose base64
// result passes the chat chunk bound (maxStreamEventBytes, 4 MiB), as a
// high-quality 1536x1024 PNG's does, in output_item.done and again in
// response.completed: the stream is not failed for it; the text before
// it and the usage are relayed, and the warning gives the result's
// length.
func TestRound21LargeImageEvent(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const n = maxStreamEventBytes + 1<<20
	img := strings.Repeat("A", n)
	item := `{"id":"ig_1","type":"image_generation_call","status":"completed","output_format":"png","size":"1536x1024","result":"` + img + `"}`
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Here it is.","annotations":[]}]}`
	body := sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`) +
		sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"Here it is."}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+msg+`}`) +
		sseEvent("response.image_generation_call.partial_image", `{"type":"response.image_generation_call.partial_image","output_index":1,"item_id":"ig_1","partial_image_index":0,"partial_image_b64":"`+img+`"}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":`+item+`}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[`+msg+`,`+item+`],"usage":{"input_tokens":10,"output_tokens":20,"total_tokens":30}}}`)
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	// The image is a provider item, whole (round 23: before, a warning
	// named its size).
	if parts := f.Message.GetParts(); len(parts) != 2 || parts[0].GetText() != "Here it is." || parts[1].GetProviderItem().GetJson() != item {
		t.Errorf("parts %d", len(parts))
	}
	if w := f.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if u := f.Meta.GetUsage(); u.GetTotalTokens() != 30 {
		t.Errorf("usage %v", u)
	}
}

// TestHostedItemWarning: what the warning for an item the contract has no
// place for says of the item's state: a status other than completed, an
// error (a string, or another value as JSON, cut at maxItemErrorBytes on
// a character boundary), an image without a result or with one that is
// not a string, an approval request, a client-run call without call_id.
func TestHostedItemWarning(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxItemErrorBytes)
	cases := []struct{ item, want string }{
		{`{"type":"web_search_call","id":"ws_1","status":"failed","action":{"type":"search"}}`,
			`ignored output item of type "web_search_call" (id ws_1; a tool the provider ran itself; status "failed")`},
		{`{"type":"mcp_call","id":"mcp_1","server_label":"exa","name":"search","status":"failed","error":"Error calling tool: timeout"}`,
			`ignored output item of type "mcp_call" (id mcp_1; MCP server "exa"; tool "search"; run by the provider; status "failed"; error: Error calling tool: timeout)`},
		{`{"type":"mcp_call","id":"mcp_2","error":{"type":"http_error","code":424}}`,
			`ignored output item of type "mcp_call" (id mcp_2; run by the provider; error: {"type":"http_error","code":424})`},
		{`{"type":"mcp_call","id":"mcp_3","error":"` + long + `"}`,
			`ignored output item of type "mcp_call" (id mcp_3; run by the provider; error: ` + long[:maxItemErrorBytes] + `…)`},
		{`{"type":"image_generation_call","id":"ig_1","status":"generating","result":null}`,
			`ignored output item of type "image_generation_call" (id ig_1; a generated image without a result; status "generating")`},
		{`{"type":"image_generation_call","id":"ig_2","result":7}`,
			`ignored output item of type "image_generation_call" (id ig_2; a generated image whose result is not a string)`},
		{`{"type":"image_generation_call","id":"ig_3","result":""}`,
			`ignored output item of type "image_generation_call" (id ig_3; a generated image with an empty result)`},
		{`{"type":"computer_call","id":"cu_1","status":"completed"}`,
			`ignored output item of type "computer_call" (id cu_1; a call of OpenAI's built-in tool for the client to run, which the contract has no place for)`},
		{"{\"type\":\"mcp_call\",\"id\":\"mcp_4\",\"error\":{\"m\":\"\xff\"}}",
			"ignored output item of type \"mcp_call\" (id mcp_4; run by the provider; error: {\"m\":\"\uFFFD\"})"},
		{`{"type":"compaction"}`, `ignored output item of type "compaction" (an item the contract has no place for)`},
		// The shape of the AI SDK's openai-mcp-tool-approval.1.json.
		{`{"id":"mcpr_1","type":"mcp_approval_request","arguments":"{\"query\":\"latest news Japan today headlines\"}","name":"web_search_exa","server_label":"exa"}`,
			`ignored output item of type "mcp_approval_request" (id mcpr_1; OpenAI asks the client to approve the call of MCP tool "web_search_exa" on server "exa" ` +
				`before it runs it (an mcp_approval_response in the next request), which the contract has no place for)`},
		{`{"id":"sh_1","type":"shell_call","status":"completed","call_id":"call_1","environment":null}`,
			`ignored output item of type "shell_call" (id sh_1; call_id call_1: a call of OpenAI's built-in tool for the client to run, which the contract has no place for)`},
	}
	for _, c := range cases {
		var it respOutputItem
		if warn, err := decodeLenient([]byte(c.item), &it); err != nil || warn != "" {
			t.Fatalf("%s: %v %s", c.item, err, warn)
		}
		if got := hostedItemWarning(&it); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.item, got, c.want)
		}
	}
}

// TestRound21HostedMCPStream: pydantic-ai's cassette of gpt-4o with a
// hosted MCP server (require_approval "never"), streamed (October 2025):
// mcp_list_tools added with no tools and done with one
// (response.mcp_list_tools.in_progress/.completed between), an mcp_call
// whose arguments "{}" come in response.mcp_call_arguments.delta and
// .done (not function-call argument events: no client call is opened),
// its output in output_item.done, then the text in eighteen deltas with
// obfuscation. Each MCP item is one warning, on its output_item.done;
// the server's tool is not relayed as a client call. 107 in, 34 out;
// service_tier auto while in progress, default at the end; the cassette
// kept no x-request-id (the pydantic-ai authors redacted the tool's
// authorization and server_url in the echoed tools).
func TestRound21HostedMCPStream(t *testing.T) {
	t.Parallel()
	f := r21Stream(t, "real_pyd_openai_responses_model_mcp_server_tool_stream", r21Request("gpt-4o", "What games do I have?"))
	r21Answer{
		text:  "You have the following games:\n\n- Lies of P\n- Bloodborne\n- Sekiro",
		usage: &llmrelayv1.Usage{InputTokens: 107, OutputTokens: 34, TotalTokens: 141},
		id:    "resp_064f1d59f12b340a0068e64bff307c81a0994e722ca45245f2", model: "gpt-4o-2024-08-06",
		warnings: []string{
			`ignored output item of type "mcp_list_tools" (id mcpl_064f1d59f12b340a0068e64bff3f2881a0b78ef57fd1c76f32; MCP server "test_server"; run by the provider)`,
			`ignored output item of type "mcp_call" (id mcp_064f1d59f12b340a0068e64c01557881a0ad7e41daf9c7a8b7; MCP server "test_server"; tool "get_my_games"; run by the provider)`,
		},
	}.check(t, f.Message, f.Meta)
	if f.Meta.GetProviderRequestId() != "" || f.Meta.GetExtended().GetFields()["openai_processing_ms"].GetNumberValue() != 66 {
		t.Errorf("meta %v", f.Meta)
	}
}

// TestRound21FileSearchStream: pydantic-ai's cassette of gpt-4o with the
// hosted file_search tool, streamed (December 2025), its fourth
// interaction (the first three upload the file and make the vector
// store): a file_search_call (in_progress, searching, completed events;
// done with one query and "results": null), then "The capital of France
// is Paris." with a file_citation (index 30) announced by
// response.output_text.annotation.added before the last delta, then
// repeated in content_part.done, output_item.done and
// response.completed: kept once in meta.extended["annotations"]. The
// search is one warning; 1177 in, 37 out.
func TestRound21FileSearchStream(t *testing.T) {
	t.Parallel()
	f := r21Stream(t, "real_pyd_openai_responses_model_file_search_tool_stream", r21Request("gpt-4o", "What is the capital of France?"))
	r21Answer{
		text:  "The capital of France is Paris.",
		usage: &llmrelayv1.Usage{InputTokens: 1177, OutputTokens: 37, TotalTokens: 1214},
		id:    "resp_006dcb10dc68b990006931d756c6fc819ba28a90e19a504ee0", model: "gpt-4o-2024-08-06",
		warnings: []string{`ignored output item of type "file_search_call" (id fs_006dcb10dc68b990006931d758d64c819b8936fb07f31c09d4; a tool the provider ran itself)`},
	}.check(t, f.Message, f.Meta)
	anns := f.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
	if len(anns) != 1 {
		t.Fatalf("annotations %v", anns)
	}
	if a := anns[0].GetStructValue().GetFields(); a["type"].GetStringValue() != "file_citation" || a["file_id"].GetStringValue() != "file-9RhPAs9YqVajpGXRfcgavJ" ||
		a["filename"].GetStringValue() != "tmp8l5_2pzy.txt" || a["index"].GetNumberValue() != 30 || len(a) != 4 {
		t.Errorf("annotation %v", a)
	}
}

// TestRound21NamespaceUnary: a function_call made in a namespace (the
// item of the AI SDK's openai-tool-search.1.json, gpt-5.4 with
// tool_search over deferred tools: "namespace": "get_weather", beside a
// server-run tool_search_call and its tool_search_output) is relayed
// keyed by its call_id with its exact arguments, and its namespace, which
// a ToolCall has no place for and without which OpenAI refuses the call
// sent back ("Missing namespace for function_call"), is a warning; the
// two search items are one warning each.
func TestRound21NamespaceUnary(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5.4-2026-03-05","output":[` +
		`{"id":"tsc_1","type":"tool_search_call","status":"completed","arguments":{"paths":["get_weather"]},"call_id":null,"execution":"server"},` +
		`{"id":"tso_1","type":"tool_search_output","status":"completed","call_id":null,"execution":"server","tools":[]},` +
		`{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}",` +
		`"call_id":"call_ytqozXvUXG8NN1b0IODxzUaE","name":"get_weather","namespace":"get_weather"}],` +
		`"usage":{"input_tokens":640,"output_tokens":46,"total_tokens":686,"output_tokens_details":{"reasoning_tokens":20}}}`
	res, err := p.parseResponsesResponse([]byte(body), "gpt-5.4")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := r23Hosted(t, res.Message, nil, []string{`ignored output item of type "tool_search_call" (id tsc_1`, `ignored output item of type "tool_search_output" (id tso_1`})
	parts := msg.GetParts()
	want := &llmrelayv1.ToolCall{CallId: "call_ytqozXvUXG8NN1b0IODxzUaE", Name: "get_weather",
		Arguments: `{"location":"San Francisco, CA","unit":"fahrenheit"}`, ArgumentsValid: true}
	if len(parts) != 1 || !proto.Equal(parts[0].GetToolCall(), want) {
		t.Fatalf("parts %v", parts)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	wantWarnings := []string{
		`tool call call_ytqozXvUXG8NN1b0IODxzUaE was made in namespace "get_weather", which the contract has no place for: ` +
			`sent back without it, OpenAI refuses the call unless the function is also in the default namespace`,
	}
	if got := res.Meta.GetWarnings(); strings.Join(got, "\n") != strings.Join(wantWarnings, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", got, wantWarnings)
	}
}

// TestRound21ApplyPatch: gpt-5.1 with the apply_patch tool (the AI SDK's
// openai-apply-patch-tool.1.json, November 2025): a lone apply_patch_call
// (create_file shopping-checklist.md with its diff) for the client to
// apply and answer with apply_patch_call_output: a warning naming its
// call_id, no text, finish STOP; 642 in, 67 out.
func TestRound21ApplyPatch(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "real_responses_apply_patch", r21Request("gpt-5.1", "Create a shopping checklist."))
	r21Answer{
		usage: &llmrelayv1.Usage{InputTokens: 642, OutputTokens: 67, TotalTokens: 709},
		id:    "resp_0b04c5f8dfc43af500692749bc5b288197b45e830995fd32d3", model: "gpt-5.1-2025-11-13",
		warnings: []string{`ignored output item of type "apply_patch_call" (id apc_0b04c5f8dfc43af500692749bd60908197b0e453c38f30191a; ` +
			`call_id call_CdXiGtcRl49Q6Ek20tG9lYOr: a call of OpenAI's built-in tool for the client to run, which the contract has no place for)`},
	}.check(t, res.Message, res.Meta)
}

// TestRound21NamespaceStream: a streamed function_call made in a
// namespace (the item shape of TestRound21NamespaceUnary, streamed as
// OpenAI streams calls: added, one argument delta, done) is relayed keyed
// by its call_id with one namespace warning, whether the namespace comes
// in output_item.added, .done or only in response.completed.
func TestRound21NamespaceStream(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const ns = `,"namespace":"tools_ns"`
	item := func(status, args, extra string) string {
		return `{"id":"fc_1","type":"function_call","status":"` + status + `","arguments":"` + args + `","call_id":"call_1","name":"f"` + extra + `}`
	}
	for _, where := range []string{"added", "done", "completed"} {
		added, done, final := "", "", ""
		switch where {
		case "added":
			added = ns
		case "done":
			done = ns
		default:
			final = ns
		}
		body := sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":`+item("in_progress", "", added)+`}`) +
			sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{}"}`) +
			sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+item("completed", "{}", done)+`}`) +
			sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[`+item("completed", "{}", final)+`]}}`)
		evs, _, err := collect(t, respStreamFrom(p, body))
		if err != nil {
			t.Fatal(err)
		}
		f := accFold(t, evs)
		if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetToolCall().GetCallId() != "call_1" || parts[0].GetToolCall().GetArguments() != "{}" {
			t.Errorf("%s: parts %v", where, parts)
		}
		want := namespaceWarning("call_1", "tools_ns")
		if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != want {
			t.Errorf("%s: warnings %q", where, w)
		}
	}
}

// TestRound21FollowUpDropsOrphanedReasoning: the request built from an
// answer whose reasoning items led to hosted tools' calls. In
// real_responses_code_interpreter the first three reasoning items were
// each followed by a code_interpreter_call. Before round 23 the answer had
// no place for those calls: sent back, each reasoning item would have
// been followed by the next one, which OpenAI refuses ("provided without
// its required following item"), so they were left out with a warning
// each. Now each call is a provider item, sent back as it was, in its
// place: every reasoning item goes with the item it led to, the fourth
// with the message (by id: the request is stored and the items carry no
// encrypted content). In real_responses_image_generation the first
// reasoning item goes with its image_generation_call; the second led to a
// message whose only text was empty, which is not in the answer: it is
// left out with its warning.
func TestRound21FollowUpDropsOrphanedReasoning(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	followUp := func(answer *llmrelayv1.Message) (string, []string) {
		t.Helper()
		r := &provider.Request{Model: "gpt-5-nano", Format: formatResponses, Reasoning: true,
			Messages:        []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Go on.")), answer, msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks."))},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}}
		body, warnings, err := p.buildResponsesRequest(r, false)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		return string(m.Input), warnings
	}
	const user = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Go on."}]}`
	const thanks = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Thanks."}]}`
	dropped := func(id, follows string) string {
		return "reasoning item " + id + " was not sent: " + follows + ", not the message or call it led to " +
			"(a hosted tool's call or an empty message, which the contract has no place for), and OpenAI refuses a reasoning item without its following item"
	}

	res := r21Unary(t, "real_responses_code_interpreter", r21Request("gpt-5-nano", "Simulate rolling two dice 10000 times and give me the file."))
	input, warnings := followUp(res.Message)
	txt, err := json.Marshal(res.Message.GetParts()[len(res.Message.GetParts())-1].GetText())
	if err != nil {
		t.Fatal(err)
	}
	// Each reasoning item goes back with the code_interpreter_call that
	// followed it (a provider item, as sent), the last with the message.
	items := func(m *llmrelayv1.Message) []string {
		var out []string
		for _, p := range m.GetParts() {
			if it := p.GetProviderItem(); it != nil {
				out = append(out, it.GetJson())
			}
		}
		return out
	}
	rs := func(id string) string { return `{"type":"reasoning","id":"` + id + `","summary":[]}` }
	ci := items(res.Message)
	if len(ci) != 3 {
		t.Fatalf("%d provider items, want the 3 code_interpreter_call", len(ci))
	}
	want := `[` + user + `,` + rs("rs_024ee52fc1900767006903bf2cf8348193be2e9dedeedfd7eb") + `,` + ci[0] + `,` +
		rs("rs_024ee52fc1900767006903bf381cec8193a48068baa82e17a3") + `,` + ci[1] + `,` +
		rs("rs_024ee52fc1900767006903bf3ddb0881939e1af28db8fb9f17") + `,` + ci[2] + `,` +
		rs("rs_024ee52fc1900767006903bf40cd488193b3a36868bf31054a") + `,` +
		`{"type":"message","id":"msg_024ee52fc1900767006903bf43b66081939b669e0ce1deb286","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + string(txt) + `,"annotations":[]}]},` + thanks + `]`
	if !r23SameJSON(t, input, want) {
		t.Errorf("input\n%s\nwant\n%s", input, want)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}

	// The image: the first reasoning item goes with its
	// image_generation_call; the second led to a message whose only text
	// was empty, which is not in the answer.
	res = r21Unary(t, "real_responses_image_generation", r21Request("gpt-5-nano", "Generate an image of a cat."))
	input, warnings = followUp(res.Message)
	ig := items(res.Message)
	if len(ig) != 1 {
		t.Fatalf("%d provider items, want the image_generation_call", len(ig))
	}
	if want := `[` + user + `,` + rs("rs_0a33d15155cb126d0068c96c5527808195a933b468ccb5dfd9") + `,` + ig[0] + `,` + thanks + `]`; !r23SameJSON(t, input, want) {
		t.Errorf("input\n%s\nwant\n%s", input, want)
	}
	wantWarnings := []string{
		dropped("rs_0a33d15155cb126d0068c96c6c0ef48195bc73e30faf832ba3", "a user message follows it"),
	}
	if strings.Join(warnings, "\n") != strings.Join(wantWarnings, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, wantWarnings)
	}
}

// TestRound21HostedShell: pydantic-ai's cassette of gpt-5.2 with OpenAI's
// hosted shell (a container_auto environment with an uploaded CSV; March
// 2026), its second interaction: a shell_call whose environment is the
// container OpenAI made (container_reference), its shell_call_output
// (two commands' outcomes, the second printing "2"; status "in_progress"
// as sent), then the answer "2". Unlike the client's shell_call
// (real_responses_shell_call, no environment), this one OpenAI ran: the
// warning says so and names the container; the output is one warning
// too. 963 in, 108 out of which 103 reasoning (no reasoning item was
// returned).
func TestRound21HostedShell(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "real_pyd_openai_responses_hosted_shell_with_uploaded_file_1",
		r21Request("gpt-5.2", "Use the hosted shell to inspect the mounted CSV and return only the number of data rows."))
	r21Answer{
		text:  "2",
		usage: &llmrelayv1.Usage{InputTokens: 963, OutputTokens: 108, TotalTokens: 1071, ReasoningTokens: 103},
		id:    "resp_0d66f6a1627a2ba90169ad9b64f5d4819ab423cf0479c91a34", model: "gpt-5.2-2025-12-11",
		warnings: []string{
			`ignored output item of type "shell_call" (id sh_0d66f6a1627a2ba90169ad9b718d80819abbdddc6131a7c5d9; call_id call_LLTmZCt0MSFJPP6a1fwmjcPv; ` +
				`run by the provider in container cntr_69ad9b6b67b081988faeac9ccd1f89980b63242b06aab4d9)`,
			`ignored output item of type "shell_call_output" (id sho_0d66f6a1627a2ba90169ad9b75e29c819a8d00de4654860e51; the output of a tool the provider ran itself; status "in_progress")`,
		},
	}.check(t, res.Message, res.Meta)
}

// TestRound21ProgrammaticToolCalling: gpt-5.6-sol with programmatic tool
// calling (the AI SDK's programmatic-tool-calling.1.json, July 2026): a
// reasoning item with encrypted content and an empty content array, a
// program item (cm_, its code and fingerprint, call_id
// call_O2IvSLQcJ0bwIvJZ2ovGV69M), then the first function_call its code
// made, status "in_progress", with "caller": {type: "program",
// caller_id: the program's call_id}. The call is relayed keyed by its
// call_id with its exact arguments (finish TOOL_CALLS); the program item
// and the call's caller, which the contract has no place for, are a
// warning each; the reasoning keeps its encrypted content as signature.
// tool_usage counts nothing and is not kept; 631 in, 139 out of which
// 55 reasoning.
func TestRound21ProgrammaticToolCalling(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "real_responses_programmatic_tool_calling", r21Request("gpt-5.6-sol", "Is there enough inventory of sku_123?"))
	msg, _ := r23Hosted(t, res.Message, nil, []string{`ignored output item of type "program" (id cm_0742d30c1d273351016a6145f1d2d0819faa3ecfc950fceec4`})
	parts := msg.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetId() != "rs_0742d30c1d273351016a6145f02f90819f8f697ae6397b30ca" || r.GetText() != "" ||
		!strings.HasPrefix(r.GetSignature(), "gAAAAABqYUXyB9UqAPDyJjuQ") || !strings.HasSuffix(r.GetSignature(), "pUnNopSBjug==") {
		t.Errorf("reasoning %v", r)
	}
	want := &llmrelayv1.ToolCall{CallId: "call_rj6LW6NEyodD5YVKeoexoLNz", Name: "getInventory", Arguments: `{"sku":"sku_123"}`, ArgumentsValid: true}
	if !proto.Equal(parts[1].GetToolCall(), want) {
		t.Errorf("call %v, want %v", parts[1].GetToolCall(), want)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if u := (&llmrelayv1.Usage{InputTokens: 631, OutputTokens: 139, TotalTokens: 770, ReasoningTokens: 55}); !proto.Equal(m.GetUsage(), u) {
		t.Errorf("usage %v", m.GetUsage())
	}
	if m.GetResponseId() != "resp_0742d30c1d273351016a6145ef9a28819fa909a12fb4ce083c" || m.GetResolvedModel() != "gpt-5.6-sol" || m.GetToolCallCount() != 1 ||
		m.GetServiceTier() != "default" || m.GetExtended().GetFields()["tool_usage"] != nil {
		t.Errorf("meta %v", m)
	}
	wantWarnings := []string{
		`tool call call_rj6LW6NEyodD5YVKeoexoLNz was made by a program (caller_id call_O2IvSLQcJ0bwIvJZ2ovGV69M), not by the model directly ` +
			`(programmatic tool calling), which the contract has no place for: the call goes back without its caller (the program item goes back as a provider item)`,
	}
	if got := m.GetWarnings(); strings.Join(got, "\n") != strings.Join(wantWarnings, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", got, wantWarnings)
	}
}

// TestRound21CallerStream: a streamed function_call that a program made
// (the caller of real_responses_programmatic_tool_calling's call) is
// relayed with one caller warning, though its output_item.added,
// output_item.done and response.completed all carry the caller.
func TestRound21CallerStream(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	item := func(status, args string) string {
		return `{"id":"fc_1","type":"function_call","status":"` + status + `","arguments":"` + args + `","call_id":"call_1","name":"getInventory",` +
			`"caller":{"type":"program","caller_id":"call_prog"}}`
	}
	body := sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":`+item("in_progress", "")+`}`) +
		sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{}"}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+item("in_progress", "{}")+`}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[`+item("in_progress", "{}")+`]}}`)
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetToolCall().GetCallId() != "call_1" || parts[0].GetToolCall().GetArguments() != "{}" {
		t.Errorf("parts %v", parts)
	}
	want := callerWarning("call_1", []byte(`{"type":"program","caller_id":"call_prog"}`))
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != want || want == "" {
		t.Errorf("warnings %q", w)
	}
}

// r23SameJSON reports whether two JSON texts hold the same value (the
// request encoder escapes <, > and & in a provider item, which the item
// as received may hold unescaped).
func r23SameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return jsonEqualAny(va, vb)
}
