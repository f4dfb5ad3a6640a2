package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestMgdMaxTokensReasoningOnly: gpt-5-mini, effort low, summary "auto",
// max_output_tokens 16: status incomplete, incomplete_details.reason
// max_output_tokens, the output a lone reasoning item rs_68b4f28e… with
// an empty summary (no message), and a usage of 16 in, 0 out, 0 reasoning
// (the 16 tokens the model spent are not counted). A LENGTH finish
// ("incomplete/max_output_tokens"), the reasoning item kept by its id,
// no text. The request is maruel/genai's but for include (ours asks for
// the encrypted reasoning).
func TestMgdMaxTokensReasoningOnly(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-5-mini", "Explain the theory of relativity in great details.", llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
	req.Options.MaxTokens = proto.Int32(16)
	res, sent := mgdUnary(t, "real_maruel_gpt5mini_max_tokens", req, mgdLimits{500, 499, 200000, 199767, 120 * time.Millisecond, 69 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-5-mini","background":false,"max_output_tokens":16,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Explain the theory of relativity in great details."}]}]}`,
		"model", "max_output_tokens", "reasoning", "service_tier", "store", "input")
	mgdMeta(t, res.Meta, "resp_68b4f28d8fbc819683cc73c9ce681a4b0a9f875ed603e359", "req_103ceff00d54687e0ee954863844cd23", "gpt-5-mini-2025-08-07", 1756689037,
		&llmrelayv1.Usage{InputTokens: 16, TotalTokens: 16}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens", "flex")
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetReasoning().GetId() != "rs_68b4f28e0d388196a5f587d814f8f4560a9f875ed603e359" || p[0].GetReasoning().GetText() != "" {
		t.Errorf("parts %v", p)
	}
}

// TestMgdJSONSchema: gpt-5-mini, effort low, text.format json_schema
// "response" (is_fruit boolean, strict). The answer: a reasoning item
// rs_68b4f291… with one summary_text (quotes and a U+2014 in it), then
// the message msg_68b4f293… {"is_fruit":true}; 46 in, 16 out, 62 total;
// x-ratelimit tokens 199736 left, reset 78 ms. Our text.format is
// maruel/genai's without the $schema key (the caller's schema as given:
// the API's echo has none either).
func TestMgdJSONSchema(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-5-mini", "Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON.", llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Strict: proto.Bool(true),
		Schema: `{"properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`}
	res, sent := mgdUnary(t, "real_maruel_gpt5mini_json_schema", req, mgdLimits{500, 499, 200000, 199736, 120 * time.Millisecond, 78 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-5-mini","background":false,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"text":{"format":{"type":"json_schema","name":"response","schema":{"properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]},"strict":true}},"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON."}]}]}`,
		"model", "reasoning", "service_tier", "store", "text", "input")
	mgdMeta(t, res.Meta, "resp_68b4f290d1148195827eedfa25a6916104b9b9e96ff56df1", "req_53e5ee8ecf97e74150af15d854c773cb", "gpt-5-mini-2025-08-07", 1756689040,
		&llmrelayv1.Usage{InputTokens: 46, OutputTokens: 16, TotalTokens: 62}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "flex")
	p := res.Message.GetParts()
	if len(p) != 2 || p[0].GetReasoning().GetId() != "rs_68b4f29133ac8195923bcc73fd70cebd04b9b9e96ff56df1" ||
		!strings.Contains(p[0].GetReasoning().GetText(), `JSON schema: {"is_fruit": boolean}.`) || !strings.Contains(p[0].GetReasoning().GetText(), "extra text\u2014just the JSON") ||
		p[1].GetItemId() != "msg_68b4f29320a08195b0a61fdd68264ff604b9b9e96ff56df1" {
		t.Fatalf("parts %v", p)
	}
	var v struct {
		IsFruit *bool `json:"is_fruit"`
	}
	if err := json.Unmarshal([]byte(p[1].GetText()), &v); err != nil || v.IsFruit == nil || !*v.IsFruit || p[1].GetText() != `{"is_fruit":true}` {
		t.Errorf("text %q: %v", p[1].GetText(), err)
	}
}

// TestMgdWebSearch: gpt-4.1 with the hosted web_search tool (sent
// through extra_body, as the contract has no hosted search tool).
// maruel/genai also asked for include web_search_call.action.sources;
// through extra_body ours is refused with a warning (the gateway owns
// include), and the sources would only land in the web_search_call's
// warning's place anyway. The answer: the
// web_search_call ws_68b7425d… (action search, query "current Prime
// Minister of Canada", 51 sources) reported in one warning, then the
// message "Mark\u202fCarney ([aljazeera.com](…), [pm.gc.ca](…))" whose
// output_text has two url_citation annotations over the same span
// (start_index 12, end_index 219: code points, the U+202F counted once),
// kept as sent in meta.extended.annotations; 17178 in, 55 out; service
// tier default; tokens 30000 a minute, 29652 left, reset 696 ms.
func TestMgdWebSearch(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-4.1", "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation.", 0)
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	req.ProviderOptions.ExtraBody = `{"tools":[{"type":"web_search"}],"include":["web_search_call.action.sources"]}`
	res, sent := mgdUnary(t, "real_maruel_gpt41_web_search", req, mgdLimits{500, 499, 30000, 29652, 120 * time.Millisecond, 696 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-4.1","background":false,"reasoning":{"summary":"auto"},"store":false,"tools":[{"type":"web_search"}],"include":["web_search_call.action.sources"],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation."}]}]}`,
		"model", "reasoning", "store", "tools", "input", "service_tier")
	if sent["include"] != nil {
		t.Errorf("include %v", sent["include"])
	}
	mgdMeta(t, res.Meta, "resp_68b7425bdb048195bff4fa085bb87dc208c169637cfc4339", "req_284fdd22c448230973781cc89622ebe4", "gpt-4.1-2025-04-14", 1756840539,
		&llmrelayv1.Usage{InputTokens: 17178, OutputTokens: 55, TotalTokens: 17233}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "default")
	p := r23Parts(t, res.Message, "web_search_call")
	const answer = "Mark\u202fCarney ([aljazeera.com](https://www.aljazeera.com/news/2025/3/14/mark-carney-sworn-in-as-canadas-new-prime-minister-replacing-trudeau?utm_source=openai), [pm.gc.ca](https://www.pm.gc.ca/en/about?utm_source=openai))"
	if len(p) != 1 || p[0].GetText() != answer || p[0].GetItemId() != "msg_68b742612f9c8195ac6b4acbb874d47208c169637cfc4339" {
		t.Fatalf("parts %v", p)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "extra_body.include ignored: the gateway sets it" {
		t.Errorf("warnings %v", w)
	}
	anns, _ := res.Meta.GetExtended().AsMap()[extAnnotations].([]any)
	if len(anns) != 2 {
		t.Fatalf("annotations %v", anns)
	}
	for i, want := range []struct{ title, url string }{
		{"Mark Carney sworn in as Canada\u2019s new prime minister, replacing Trudeau | Politics News | Al Jazeera", "https://www.aljazeera.com/news/2025/3/14/mark-carney-sworn-in-as-canadas-new-prime-minister-replacing-trudeau?utm_source=openai"},
		{"About | Prime Minister of Canada", "https://www.pm.gc.ca/en/about?utm_source=openai"},
	} {
		a, _ := anns[i].(map[string]any)
		if a["type"] != "url_citation" || a["start_index"] != 12.0 || a["end_index"] != 219.0 || a["title"] != want.title || a["url"] != want.url {
			t.Errorf("annotation %d: %v", i, a)
		}
	}
	// The indexes count code points: the span is "(" to the last ")".
	if r := []rune(answer); string(r[12]) != "(" || len(r) != 219 {
		t.Errorf("span %q…, %d code points", string(r[12]), len(r))
	}
}

// mgdCanadaQuestion is maruel/genai's web search prompt.
const mgdCanadaQuestion = "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation."

// TestMgdWebSearchReasoning: gpt-5-mini, effort low, with the hosted
// web_search tool: a reasoning item rs_68b7853f… (empty summary), the
// web_search_call ws_68b78541… (query "Prime Minister of Canada", 9
// sources), a second reasoning item rs_68b7854e…, then the message
// msg_68b7854e… "Mark Carney" without annotations; 13015 in of which
// 4096 cached, 137 out of which 128 reasoning; tokens 191029 left, reset
// 2.691 s. Both reasoning items are kept in order by id, the search in
// one warning. Sent back in a follow-up, neither reasoning item goes
// (the first led to the hosted call, and neither has encrypted content),
// each with its warning, and the text goes as the assistant's message
// item with its id msg_68b7854e… and status completed.
func TestMgdWebSearchReasoning(t *testing.T) {
	t.Parallel()
	low := llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	req := mgdRequest("gpt-5-mini", mgdCanadaQuestion, low)
	req.ProviderOptions.ExtraBody = `{"tools":[{"type":"web_search"}]}`
	res, sent := mgdUnary(t, "real_maruel_gpt5mini_web_search", req, mgdLimits{500, 499, 200000, 191029, 120 * time.Millisecond, 2691 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-5-mini","background":false,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"tools":[{"type":"web_search"}],"include":["web_search_call.action.sources"],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"`+mgdCanadaQuestion+`"}]}]}`,
		"model", "reasoning", "service_tier", "store", "tools", "input")
	mgdMeta(t, res.Meta, "resp_68b7853e14b08197badbb11ee3ce370b0ba23640e8bba1e7", "req_8f1db84cfa556ecab423e97e32f50e52", "gpt-5-mini-2025-08-07", 1756857662,
		&llmrelayv1.Usage{InputTokens: 13015, OutputTokens: 137, TotalTokens: 13152, CachedInputTokens: 4096, ReasoningTokens: 128}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "flex")
	p := r23Parts(t, res.Message, "web_search_call")
	if len(p) != 3 || p[0].GetReasoning().GetId() != "rs_68b7853f21048197b0fac1186edb92b50ba23640e8bba1e7" || p[1].GetReasoning().GetId() != "rs_68b7854e878081978f810a63605b228b0ba23640e8bba1e7" ||
		p[2].GetText() != "Mark Carney" || p[2].GetItemId() != "msg_68b7854ef9f08197aa8090c2086cc3560ba23640e8bba1e7" {
		t.Fatalf("parts %v", p)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %v", w)
	}
	if _, ok := res.Meta.GetExtended().AsMap()[extAnnotations]; ok {
		t.Errorf("extended %v", res.Meta.GetExtended())
	}

	p2, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	next := mgdRequest("gpt-5-mini", mgdCanadaQuestion, low)
	next.Messages = append(next.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Since when?")))
	body, warnings, err := p2.buildResponsesRequest(next, false)
	if err != nil {
		t.Fatal(err)
	}
	// The search goes back as the answer had it (a provider item, round
	// 23); the two reasoning items, without encrypted content in an
	// unstored request, cannot.
	items, _ := decodeBody(t, body)["input"].([]any)
	if len(items) != 4 {
		t.Fatalf("input %v", items)
	}
	if ws, _ := items[1].(map[string]any); ws["type"] != "web_search_call" || ws["id"] != "ws_68b78541cf388197925cf1547f3f44e50ba23640e8bba1e7" {
		t.Errorf("search item %.200v", items[1])
	}
	wantMsg := map[string]any{"type": "message", "role": "assistant", "id": "msg_68b7854ef9f08197aa8090c2086cc3560ba23640e8bba1e7", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": "Mark Carney", "annotations": []any{}}}}
	if !reflect.DeepEqual(items[2], wantMsg) {
		t.Errorf("assistant item %v, want %v", items[2], wantMsg)
	}

	if len(warnings) != 2 || !strings.Contains(warnings[0], "messages[1].parts[0]") || !strings.Contains(warnings[1], "messages[1].parts[2]") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestMgdWebSearchStream: the gpt-4.1 search streamed (another run): the
// web_search_call ws_68b7425c… added in progress, its in_progress,
// searching and completed events, done with its query and 33 sources
// (53 in response.completed; one warning); then "Mark Carney " and the link in two deltas, the
// url_citation announced by response.output_text.annotation.added
// (start 12, end 115) and repeated in content_part.done,
// output_item.done and response.completed: reported once, in the final
// meta. service_tier "auto" in response.created, "default" at the end
// (reported). 17337 in, 54 out. No x-ratelimit-* headers.
func TestMgdWebSearchStream(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-4.1", mgdCanadaQuestion, 0)
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.ExtraBody = `{"tools":[{"type":"web_search"}]}`
	evs, f, sent := mgdStream(t, "real_maruel_gpt41_web_search_stream", req, nil)
	if sent["stream"] != true || sent["service_tier"] != nil {
		t.Errorf("sent %v", sent)
	}
	mgdMeta(t, f.Meta, "resp_68b7425b9284819695ea3d9f50cf72e802a4f883497c5e9c", "req_69f21658a180f049968a01013c530b87", "gpt-4.1-2025-04-14", 1756840539,
		&llmrelayv1.Usage{InputTokens: 17337, OutputTokens: 54, TotalTokens: 17391}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "default")
	const answer = "Mark Carney ([en.wikipedia.org](https://en.wikipedia.org/wiki/List_of_prime_ministers_of_Canada?utm_source=openai))"
	if p := r23Parts(t, f.Message, "web_search_call"); len(p) != 1 || p[0].GetText() != answer || p[0].GetItemId() != "msg_68b7425f5b008196a13b0c6acd9dfa1102a4f883497c5e9c" {
		t.Errorf("parts %v", p)
	}
	var annotations []any
	for _, ev := range evs {
		if a, ok := ev.Meta.GetExtended().AsMap()[extAnnotations].([]any); ok {
			annotations = append(annotations, a...)
		}
	}
	if len(annotations) != 1 {
		t.Fatalf("annotations %v", annotations)
	}
	if a, _ := annotations[0].(map[string]any); a["type"] != "url_citation" || a["start_index"] != 12.0 || a["end_index"] != 115.0 ||
		a["title"] != "List of prime ministers of Canada" || a["url"] != "https://en.wikipedia.org/wiki/List_of_prime_ministers_of_Canada?utm_source=openai" {
		t.Errorf("annotation %v", a)
	}
	if r := []rune(answer); string(r[12]) != "(" || len(r) != 115 {
		t.Errorf("span %q, %d", string(r[12]), len(r))
	}
	if w := f.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %v", w)
	}
}

// TestMgdMaxTokensStreamSummaryDropped: the max_output_tokens run
// streamed. The reasoning item rs_68b4f28b… is added empty, a summary
// part is added and its text comes in 82 deltas ("**Considering the
// user's request**\n\nThe user is asking for a detailed, long
// explanation. … Let’s make sure I’m thorough and attentive to their
// needs!"), then, with no summary_text.done nor summary_part.done, the
// item is done with "summary": [] and the stream ends in
// response.incomplete (max_output_tokens) whose output repeats the empty
// summary; 16 in, 0 out. The streamed text is relayed as it came and the
// empty summary of the done item does not take it back: the folded
// answer is the reasoning item with the whole text (the unary answer of
// the same question, real_maruel_gpt5mini_max_tokens, had none), a
// LENGTH finish.
func TestMgdMaxTokensStreamSummaryDropped(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-5-mini", "Explain the theory of relativity in great details.", llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
	req.Options.MaxTokens = proto.Int32(16)
	evs, f, sent := mgdStream(t, "real_maruel_gpt5mini_max_tokens_stream", req, nil)
	if sent["max_output_tokens"] != 16.0 || sent["stream"] != true {
		t.Errorf("sent %v", sent)
	}
	mgdMeta(t, f.Meta, "resp_68b4f28b5c948197bd2b394d8a5756e00a0607f6b71a1e83", "req_fdfd0f1d86c903145a44bf8e71daca8b", "gpt-5-mini-2025-08-07", 1756689035,
		&llmrelayv1.Usage{InputTokens: 16, TotalTokens: 16}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens", "flex")
	const summary = "**Considering the user's request**\n\nThe user is asking for a detailed, long explanation. I want to ensure that I'm providing enough information without overwhelming them. " +
		"I\u2019m considering how to break down the topic so that it's clear and engaging. It might help to cover key points systematically, maybe even by diving into specific aspects, " +
		"to fulfill their request for great details. Let\u2019s make sure I\u2019m thorough and attentive to their needs!"
	p := f.Message.GetParts()
	if len(p) != 1 || p[0].GetReasoning().GetId() != "rs_68b4f28bc8588197940c21caf5ecf4030a0607f6b71a1e83" || p[0].GetReasoning().GetText() != summary {
		t.Errorf("parts %v", p)
	}
	var deltas int
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning && ev.Reasoning.Text != "" {
			deltas++
		}
	}
	if deltas != 82 {
		t.Errorf("%d reasoning deltas", deltas)
	}
}

// TestMgdTwoTextParts: gpt-4.1, a user message of two texts (the
// document, then the question: maruel/genai's citations test on a model
// that does not cite): maruel/genai sent them as two input_text parts of
// one message, and ours does the same. The answer: "The capital of
// Quackiland is **Quack**." with no annotations; 36 in, 13 out; service
// tier default; tokens 29945 left, reset 110 ms.
func TestMgdTwoTextParts(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-4.1", "The capital of Quackiland is Quack. The Big Canard Statue is located in Quack.", 0)
	req.Messages[0].Parts = append(req.Messages[0].Parts, text("What is the capital of Quackiland?"))
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	res, sent := mgdUnary(t, "real_maruel_gpt41_two_texts", req, mgdLimits{500, 499, 30000, 29945, 120 * time.Millisecond, 110 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-4.1","background":false,"reasoning":{"summary":"auto"},"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"The capital of Quackiland is Quack. The Big Canard Statue is located in Quack."},{"type":"input_text","text":"What is the capital of Quackiland?"}]}]}`,
		"model", "reasoning", "store", "input", "include", "service_tier", "tools")
	mgdMeta(t, res.Meta, "resp_68b2fbcc65e48196b5f01b8633d851fc0d166a59450c58f6", "req_30a5585a9eadc127766464ade7501e97", "gpt-4.1-2025-04-14", 1756560332,
		&llmrelayv1.Usage{InputTokens: 36, OutputTokens: 13, TotalTokens: 49}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "default")
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "The capital of Quackiland is **Quack**." || p[0].GetItemId() != "msg_68b2fbcd6e208196bce632783af6405e0d166a59450c58f6" ||
		len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("parts %v, warnings %v", p, res.Meta.GetWarnings())
	}
}

// TestMgdJSONObject: gpt-5-mini, effort low, text.format json_object
// (maruel/genai's JSON test): a summarized reasoning item rs_68b4f28e…
// (with a U+2019 and the JSON in backquotes), then the message
// msg_68b4f290… {"is_fruit": true}; 35 in, 13 out. Our text.format is
// maruel/genai's.
func TestMgdJSONObject(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-5-mini", `Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON according to the provided schema: {"is_fruit": bool}.`, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}
	res, sent := mgdUnary(t, "real_maruel_gpt5mini_json_object", req, mgdLimits{500, 499, 200000, 199748, 120 * time.Millisecond, 75 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-5-mini","background":false,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"text":{"format":{"type":"json_object"}},"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON according to the provided schema: {\"is_fruit\": bool}."}]}]}`,
		"model", "reasoning", "service_tier", "store", "text", "input")
	mgdMeta(t, res.Meta, "resp_68b4f28e431c8193b09c87bc56e012a30eb91e52d8d63f32", "req_aff4b3b7db97734779f1c88983dd35df", "gpt-5-mini-2025-08-07", 1756689038,
		&llmrelayv1.Usage{InputTokens: 35, OutputTokens: 13, TotalTokens: 48}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "flex")
	p := res.Message.GetParts()
	if len(p) != 2 || p[0].GetReasoning().GetId() != "rs_68b4f28ebef8819392454cb163c490c20eb91e52d8d63f32" ||
		!strings.HasSuffix(p[0].GetReasoning().GetText(), "saying `{\"is_fruit\": true}`. I want to make sure I stick precisely to their request, ensuring clarity and correctness in the output!") ||
		p[1].GetText() != `{"is_fruit": true}` || p[1].GetItemId() != "msg_68b4f290971081938973eaad5a1e4e760eb91e52d8d63f32" {
		t.Errorf("parts %v", p)
	}
}

// TestMgdServerError: gpt-5-mini's tool-bias request answered 500
// server_error ("An error occurred while processing your request. You
// can retry your request, … Please include the request ID
// req_15e93bbb… in your message."), with x-request-id (the same id) and
// the six x-ratelimit-* headers (199314 tokens left): unavailable (the
// server's to retry), its message whole, the request id from the header,
// the rate limits in the failure's meta (counted from the served Date).
func TestMgdServerError(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_maruel_gpt5mini_tool_bias_server_error.http"))
	const question = "I wonder if Canada is a better country than the USA? Call the tool best_country to tell me which country is the best one."
	req := mgdRequest("gpt-5-mini", question, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "best_country", Description: "A tool to specify the best country",
		Parameters: `{"properties":{"country":{"type":"string","enum":["Canada","USA"]}},"additionalProperties":false,"type":"object","required":["country"]}`}}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	req.Options.ParallelToolCalls = proto.Bool(true)
	d := &mgdDate{}
	_, err := newTestProvider(t, kOpenAI, srv.URL, WithHTTPClient(&http.Client{Transport: d})).Generate(context.Background(), req)
	pe := providerError(t, err)
	const msg = "An error occurred while processing your request. You can retry your request, or contact us through our help center at help.openai.com if the error persists. " +
		"Please include the request ID req_15e93bbbafffe302a155d4c9d7fef609 in your message."
	if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 500 || pe.Code != "server_error" || pe.RequestID != "req_15e93bbbafffe302a155d4c9d7fef609" || pe.Message != msg {
		t.Errorf("error %s", renderErr(err))
	}
	if pe.Meta.GetProviderRequestId() != "req_15e93bbbafffe302a155d4c9d7fef609" {
		t.Errorf("meta %v", pe.Meta)
	}
	mgdLimits{500, 499, 200000, 199314, 120 * time.Millisecond, 205 * time.Millisecond}.check(t, d, pe.Meta.GetRateLimit())
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
	rec := mgdSameAsRecorded(t, r20Request(t, srv.Last(t).Body), `{"model":"gpt-5-mini","background":false,"parallel_tool_calls":true,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"tool_choice":"required","tools":[{"type":"function","name":"best_country","description":"A tool to specify the best country","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"country":{"type":"string","enum":["Canada","USA"]}},"additionalProperties":false,"type":"object","required":["country"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"`+question+`"}]}]}`,
		"model", "parallel_tool_calls", "reasoning", "service_tier", "store", "tool_choice", "input")
	mgdToolsAsRecorded(t, r20Request(t, srv.Last(t).Body), rec)
}

// TestMgdSeedDropped: maruel/genai's seed test on gpt-4.1 (July 2025):
// it sent no seed (the Responses API has none), and ours, asked for seed
// 1, sends none either, with the warning that says so. The answer:
// "Hello!" in msg_68856c13…; 15 in, 3 out; service tier default; tokens
// 29966 left, reset 68 ms.
func TestMgdSeedDropped(t *testing.T) {
	t.Parallel()
	req := mgdRequest("gpt-4.1", "Say hello. Use only one word.", 0)
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	req.Options.Seed = proto.Int64(1)
	res, sent := mgdUnary(t, "real_maruel_gpt41_seed", req, mgdLimits{500, 499, 30000, 29966, 120 * time.Millisecond, 68 * time.Millisecond})
	mgdSameAsRecorded(t, sent, `{"model":"gpt-4.1","background":false,"reasoning":{"summary":"auto"},"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello. Use only one word."}]}]}`,
		"model", "reasoning", "store", "input", "seed", "include", "service_tier")
	mgdMeta(t, res.Meta, "resp_68856c12c8c88199ab17731981fa2fe907022a8b2a3f3a6c", "req_c9a48210cdf588b3628a624c7edc49e6", "gpt-4.1-2025-04-14", 1753574418,
		&llmrelayv1.Usage{InputTokens: 15, OutputTokens: 3, TotalTokens: 18}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "default")
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Hello!" || p[0].GetItemId() != "msg_68856c133bf08199950f07aa206ac5f607022a8b2a3f3a6c" {
		t.Errorf("parts %v", p)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "seed is not part of the OpenAI Responses format and was not sent") {
		t.Errorf("warnings %v", w)
	}
}
