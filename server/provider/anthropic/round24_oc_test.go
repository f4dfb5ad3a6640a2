package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 24, second wave: the rest of opencode's recordings of
// Anthropic-shaped Messages endpoints (testdata/README.md, "Round 24:
// opencode's recordings"): OpenCode Zen's recovery turns, DigitalOcean's
// tool loop, signed thinking replay and prompt cache, the Vercel AI
// Gateway serving Claude (tool loop, two system blocks, a refused key).

// r24NoCacheControl drops opencode's cache_control marks (the contract
// has none) from a recorded request: on system blocks, content blocks and
// tools.
func r24NoCacheControl(m map[string]any) {
	strip := func(v any) {
		list, _ := v.([]any)
		for _, rb := range list {
			b, _ := rb.(map[string]any)
			delete(b, "cache_control")
		}
	}
	strip(m["system"])
	strip(m["tools"])
	msgs, _ := m["messages"].([]any)
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		strip(msg["content"])
	}
}

// r24MergeUsers writes consecutive user messages of a recorded request as
// one, their blocks in order: ours sends a tool's results and the user's
// next text in one user message (tool_result blocks first, as the API
// asks), which the API reads as the recorded two ("consecutive user or
// assistant turns in your request will be combined into a single turn",
// the Messages API reference).
func r24MergeUsers(m map[string]any) {
	msgs, _ := m["messages"].([]any)
	var out []any
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		if n := len(out); n > 0 && msg["role"] == "user" {
			if prev, _ := out[n-1].(map[string]any); prev["role"] == "user" {
				a, _ := prev["content"].([]any)
				b, _ := msg["content"].([]any)
				prev["content"] = append(a, b...)
				continue
			}
		}
		out = append(out, msg)
	}
	m["messages"] = out
}

// r24SystemString writes a recorded system of one text block as the
// string ours sends.
func r24SystemString(m map[string]any) {
	blocks, _ := m["system"].([]any)
	if len(blocks) == 1 {
		b, _ := blocks[0].(map[string]any)
		m["system"] = b["text"]
	}
}

// TestRound24ZenRecoveryContinuation: opencode's recovery recordings
// against OpenCode Zen's Messages endpoint (opencode.ai/zen/v1/messages,
// claude-sonnet-4-6, August 2026): a conversation whose tool calls were
// settled by the client (results given), then a user message asking to
// continue, tool_choice none. The recorded request sends the tool results
// and the continuation as two consecutive user messages, the results in
// the calls' order, and the API took it; ours sends them as one
// (r24MergeUsers), the results first, which the API reads the same. The stream is padded JSON with a
// "ping" before the first delta and one more ping, carrying "cost", after
// message_stop (Zen's); the answer ends at message_stop, the trailing ping
// changes nothing.
func TestRound24ZenRecoveryContinuation(t *testing.T) {
	t.Parallel()
	const cont = "The previous response was interrupted. Continue from where you left off without repeating completed content."
	weather := &llmrelayv1.Tool{Name: "lookup_weather", Description: "Return benign weather data for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}
	clock := &llmrelayv1.Tool{Name: "lookup_time", Description: "Return the benign local time for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}
	extended := map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"global"}`}
	for _, tc := range []struct {
		name, question, preamble string
		tools                    []*llmrelayv1.Tool
		calls, results           []*llmrelayv1.Part
		id, answer               string
		usage                    *llmrelayv1.Usage
	}{
		{"real_zen_recovery_settled_tool_stream", "Look up the weather in Paris.", "I should use the weather tool.",
			[]*llmrelayv1.Tool{weather},
			[]*llmrelayv1.Part{toolCallValid("call_weather", "lookup_weather", `{"city":"Paris"}`)},
			[]*llmrelayv1.Part{toolResultPart("call_weather", "sunny", false)},
			"msg_011CeGx6WkAQP5ULyRRbRwRw", "The weather in Paris is currently **sunny**! It looks like a great day to enjoy the city. ☀️", usageOf(664, 28, 0, 0, 0)},
		{"real_zen_recovery_parallel_tools_stream", "Look up the weather and local time in Paris.", "I should use both lookup tools.",
			[]*llmrelayv1.Tool{weather, clock},
			[]*llmrelayv1.Part{toolCallValid("call_weather", "lookup_weather", `{"city":"Paris"}`), toolCallValid("call_time", "lookup_time", `{"city":"Paris"}`)},
			[]*llmrelayv1.Part{toolResultPart("call_weather", "sunny", false), toolResultPart("call_time", "12:00", false)},
			"msg_011CeGz56HhX4x8LT1HGmLfn", "Here are the results for Paris:\n\n- **Weather:** It is currently sunny in Paris.\n- **Local Time:** The current local time in Paris is 12:00 PM (noon).\n\nLet me know if you need any other information!", usageOf(814, 55, 0, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := r21Request("claude-sonnet-4-6", tc.question, 128, 0)
			req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
			req.Options.Temperature = ptr(0.0)
			req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
			req.Tools = tc.tools
			req.Messages = append(req.Messages,
				msgOf(llmrelayv1.Role_ROLE_ASSISTANT, append([]*llmrelayv1.Part{text(tc.preamble)}, tc.calls...)...),
				msgOf(llmrelayv1.Role_ROLE_TOOL, tc.results...),
				msgOf(llmrelayv1.Role_ROLE_USER, text(cont)))
			_, f, srv := r21Stream(t, tc.name, req)
			checkLLMWant(t, tc.name, f.message, f.meta, llmWant{
				parts: []*llmrelayv1.Part{text(tc.answer)}, responseID: tc.id, model: "claude-sonnet-4-6",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: tc.usage, extended: extended,
			})
			r22SameRequest(t, srv.Last(t).Body, tc.name, func(m map[string]any) { r24NoCacheControl(m); r24MergeUsers(m) })
		})
	}
}

// TestRound24DOToolLoop: opencode's "continues an automatic tool call"
// through DigitalOcean (anthropic-claude-haiku-4.5, October 2026). Turn 1:
// a tool_use with caller direct whose input arrives as an empty
// input_json_delta then three pieces; message_start already counts 26 out,
// message_delta 54. Turn 2: "Paris is sunny." Both requests are the
// recorded ones but for the system prompt as a string and opencode's
// cache_control marks.
func TestRound24DOToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_do_tool_loop_haiku45_stream_", "anthropic-claude-haiku-4.5"
	const call = "toolu_01V3F9KT6SZ7pF5d1JHpWePf"
	srv := providertest.Replay(t, providertest.Load(t, "testdata/"+name+"1.http"), providertest.Load(t, "testdata/"+name+"2.http"))
	p := newTestProvider(t, srv.URL)
	req := r22System(r21Request(model, "What is the weather in Paris?", 128, 0), "Use the get_weather tool exactly once. After the tool result, reply exactly: Paris is sunny.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	edit := func(m map[string]any) { r24NoCacheControl(m); r24SystemString(m) }
	extended := map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"not_available"}`}
	f1 := r24Turn(t, p, srv, name+"1", req, edit)
	checkLLMWant(t, name+"1", f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid(call, "get_weather", `{"city": "Paris"}`)},
		responseID: "msg_011CfbzYAu4i3vSHbbsbo5Nv", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(593, 54, 0, 0, 0), extended: extended,
	})
	req.Messages = append(req.Messages, f1.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call, `{"temperature":22,"condition":"sunny"}`, false)))
	f2 := r24Turn(t, p, srv, name+"2", req, edit)
	checkLLMWant(t, name+"2", f2.message, f2.meta, llmWant{
		parts: []*llmrelayv1.Part{text("Paris is sunny.")}, responseID: "msg_011CfbzYEsvpWAknf8prvt3Q", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(668, 7, 0, 0, 0), extended: extended,
	})
}

// TestRound24DOSignedThinkingReplay: opencode's "replays signed visible
// thinking" through DigitalOcean (anthropic-claude-haiku-4.5, thinking
// enabled at a budget of 1024). Turn 1: 75 thinking_delta pieces (×, ÷, ✓
// and newlines split across them), one signature_delta, then "37" "887";
// 410 out of which 403 thinking. Turn 2 sends the first answer back: the
// thinking joined from its pieces with its signature, before the text, as
// the recorded request does (the provider checks the signature against
// the text: one byte off and it is a 400). Both requests are the recorded
// ones but for opencode's cache_control mark and display summarized (ours
// leaves the display to the model: Haiku 4.5's default is summarized).
func TestRound24DOSignedThinkingReplay(t *testing.T) {
	t.Parallel()
	const name, model = "real_do_thinking_haiku45_stream_", "anthropic-claude-haiku-4.5"
	srv := providertest.Replay(t, providertest.Load(t, "testdata/"+name+"1.http"), providertest.Load(t, "testdata/"+name+"2.http"))
	p := newTestProvider(t, srv.URL)
	req := r21Request(model, "Compute 173 multiplied by 219. Verify it, then reply with only the integer.", 2048, 1024)
	edit := func(m map[string]any) {
		r24NoCacheControl(m)
		th, _ := m["thinking"].(map[string]any)
		delete(th, "display")
	}
	extended := map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"not_available"}`}
	f1 := r24Turn(t, p, srv, name+"1", req, edit)
	const thought = "Let me compute 173 × 219.\n\n173 × 219 = 173 × (200 + 19)\n= 173 × 200 + 173 × 19\n= 34,600 + 173 × 19\n\n173 × 19 = 173 × (20 - 1)\n= 173 × 20 - 173\n= 3,460 - 173\n= 3,287\n\n" +
		"So 173 × 219 = 34,600 + 3,287 = 37,887\n\nLet me verify this another way:\n173 × 219\n= (170 + 3) × 219\n= 170 × 219 + 3 × 219\n= 170 × 219 + 657\n\n" +
		"170 × 219 = 17 × 2,190 = 17 × 2,000 + 17 × 190\n= 34,000 + 17 × 190\n= 34,000 + 17 × 200 - 17 × 10\n= 34,000 + 3,400 - 170\n= 37,230\n\n" +
		"So 173 × 219 = 37,230 + 657 = 37,887\n\nLet me double-check: 37,887 ÷ 173 should equal 219\n37,887 ÷ 173 = ?\n173 × 200 = 34,600\n37,887 - 34,600 = 3,287\n173 × 19 = 3,287 ✓\n\nSo 173 × 219 = 37,887"
	checkLLMWant(t, name+"1", f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: thought, Signature: r24Signature(t, f1.message)}), text("37887")},
		responseID: "msg_011Cfc15HcW2d3o2uDoJzQbq", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(58, 410, 0, 0, 403), extended: extended,
	})
	req.Messages = append(req.Messages, f1.message, msgOf(llmrelayv1.Role_ROLE_USER, text("Add 7 to that answer. Reply with only the integer.")))
	f2 := r24Turn(t, p, srv, name+"2", req, edit)
	checkLLMWant(t, name+"2", f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: "The previous answer was 37887.\nAdding 7 to that: 37887 + 7 = 37894", Signature: r24Signature(t, f2.message)}), text("37894")},
		responseID: "msg_011Cfc15Vx9q1xJuRRAPerFh", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(81, 41, 0, 0, 34), extended: extended,
	})
}

// TestRound24DOPromptCache: opencode's "reuses cached input with inclusive
// usage" through DigitalOcean (anthropic-claude-haiku-4.5): twice the same
// request, a system prompt of 250 repeated sentences (5759 tokens).
// Anthropic's input_tokens leave the cache out: the first answer writes
// the cache (3 in, 5759 written, all in the 5-minute cache), the second
// reads it (3 in, 5759 read). Ours counts input as the three together
// (5762 both times), cached 5759 on the second, written 5759 on the first.
func TestRound24DOPromptCache(t *testing.T) {
	t.Parallel()
	const name, model = "real_do_cache_haiku45_stream_", "anthropic-claude-haiku-4.5"
	srv := providertest.Replay(t, providertest.Load(t, "testdata/"+name+"1.http"), providertest.Load(t, "testdata/"+name+"2.http"))
	p := newTestProvider(t, srv.URL)
	system := strings.Repeat("You are a concise, factual assistant. Answer precisely and avoid filler. Cite numbers when known. ", 250)
	req := r22System(r21Request(model, "Reply exactly: OK", 128, 0), system)
	edit := func(m map[string]any) { r24NoCacheControl(m); r24SystemString(m) }
	for i, tc := range []struct {
		id      string
		usage   *llmrelayv1.Usage
		details string
	}{
		{"msg_011CfbzY3iDvBev5hqKYwX9b", usageOf(3, 4, 0, 5759, 0), `{"cache_creation.ephemeral_5m_input_tokens":5759,"inference_geo":"not_available"}`},
		{"msg_011CfbzY7bPKadS3H5jUWDRH", usageOf(3, 4, 5759, 0, 0), `{"inference_geo":"not_available"}`},
	} {
		n := name + string(rune('1'+i))
		f := r24Turn(t, p, srv, n, req, edit)
		checkLLMWant(t, n, f.message, f.meta, llmWant{
			parts: []*llmrelayv1.Part{text("OK")}, responseID: tc.id, model: "claude-haiku-4-5-20251001",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage: tc.usage, extended: map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: tc.details},
		})
	}
}

// r24Turn streams req to p, folds the answer both ways, checks its golden
// and that the request sent is the recorded one (edited).
func r24Turn(t *testing.T, p *Provider, srv *providertest.Server, name string, req *provider.Request, edit func(map[string]any)) folded {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("%s: stream error %v", name, err)
	}
	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("%s: accumulated %v, folded %v", name, got, f.message)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	r22SameRequest(t, srv.Last(t).Body, name, edit)
	return f
}

// TestRound24VercelGatewayClaudeToolLoop: anthropic/claude-sonnet-5.5
// through the Vercel AI Gateway (October 2026, served by Anthropic), the
// get_weather loop at effort low: no thinking block (0 thinking tokens),
// the call, then "Paris is sunny."; provider_metadata names anthropic.
// The follow-up sends the call back alone, as recorded.
func TestRound24VercelGatewayClaudeToolLoop(t *testing.T) {
	t.Parallel()
	const name, model, call = "real_vercelgw_claude_tool_stream_", "anthropic/claude-sonnet-5.5", "toolu_011X7KQPt2EPYDcB88u73nKT"
	f1, f2 := r24VercelToolLoop(t, name, model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, call)
	checkLLMWant(t, name+"1", f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid(call, "get_weather", `{"city": "Paris"}`)},
		responseID: "gen_01M3XAW7ZD2NKJ3EJK6TDJZ2Y7", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(420, 50, 0, 0, 0), extended: map[string]string{"upstream_provider": `"anthropic"`, "gateway_cost": `"0.00134"`},
	})
	checkLLMWant(t, name+"2", f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Paris is sunny.")},
		responseID: "gen_01M3XAW9EQZ6HHBK5J1Y1VATAH", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(493, 10, 0, 0, 0), extended: map[string]string{"upstream_provider": `"anthropic"`, "gateway_cost": `"0.001086"`},
	})
}

// r24VercelProvider is a provider configured with the gateway's base URL
// whose requests go to srv.
func r24VercelProvider(t *testing.T, srv *providertest.Server) *Provider {
	t.Helper()
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey, WithBaseURL("https://ai-gateway.vercel.sh"), WithHTTPClient(&http.Client{Transport: r24Redirect{target}}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRound24VercelGatewaySystemBlocks: opencode's "automatically caches
// distinct Claude system blocks" (anthropic/claude-sonnet-5.5 through the
// gateway with its automatic caching): two system blocks, 250 rules then
// "Reply with OK only.", twice; both answers read 8267 cached tokens (4
// more in). The contract's two system messages go as the recorded two
// blocks, in order (not joined into one text, which would change the
// cached prefix). The request is the recorded one but for the AI SDK's
// providerOptions and opencode's thinking (no effort asked).
func TestRound24VercelGatewaySystemBlocks(t *testing.T) {
	t.Parallel()
	const name, model = "real_vercelgw_system_blocks_stream_", "anthropic/claude-sonnet-5.5"
	srv := providertest.Replay(t, providertest.Load(t, "testdata/"+name+"1.http"), providertest.Load(t, "testdata/"+name+"2.http"))
	p := r24VercelProvider(t, srv)
	var rules []string
	for i := range 250 {
		rules = append(rules, "Rule "+itoa(i)+": Preserve provider reasoning state and keep stable prompt prefixes intact.")
	}
	req := r21Request(model, "Confirm.", 32, 0)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(strings.Join(rules, "\n"))), msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Reply with OK only."))}, req.Messages...)
	edit := func(m map[string]any) { delete(m, "providerOptions"); delete(m, "thinking") }
	for i, id := range []string{"gen_01M3XAX5N6B8Q6P0R5ZEDHMNST", "gen_01M3XAX7CPB1H6DXYGEN0QC59B"} {
		n := name + string(rune('1'+i))
		f := r24Turn(t, p, srv, n, req, edit)
		checkLLMWant(t, n, f.message, f.meta, llmWant{
			parts: []*llmrelayv1.Part{text("OK")}, responseID: id, model: model,
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage: usageOf(4, 4, 8267, 0, 0), extended: map[string]string{"upstream_provider": `"anthropic"`, "gateway_cost": `"0.0017014"`},
		})
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestRound24VercelGateway401: opencode's "rejects invalid credentials
// without retryable classification": the gateway answers a stream request
// with a 401 JSON body in Anthropic's error envelope (authentication_error,
// no "type":"error" wrapper, no request id). It is an authentication
// error (KindUnauthenticated, which the retry policy never retries), with
// the gateway's message.
func TestRound24VercelGateway401(t *testing.T) {
	t.Parallel()
	const name = "real_vercelgw_401_stream"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	p := r24VercelProvider(t, srv)
	_, err := p.Stream(context.Background(), r21Request("anthropic/claude-sonnet-5.5", "Hello", 32, 0))
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a provider error", err, err)
	}
	if pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 401 || pe.Code != "authentication_error" ||
		!strings.HasPrefix(pe.Message, "Authentication failed. Create an API key and set in AI_GATEWAY_API_KEY") {
		t.Errorf("error %+v", pe)
	}
}

// TestRound24MiniMaxThinkingBudget: MiniMax's Anthropic-compatible
// endpoint takes thinking.type adaptive or disabled only; a budget (type
// enabled) is refused: "invalid params, invalid thinking.type: "enabled"
// (allowed: adaptive, disabled) (2013)" (its answer to MiniMax-M3 quoted in
// HenriGrimm/Minnow#364; the two values are those its Anthropic API page
// lists, datacurve-ai/pier#20). provider_options' thinking budget goes to
// it as adaptive thinking, with a warning; any other endpoint still gets
// the budget.
func TestRound24MiniMaxThinkingBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base, model, want string
		warned            bool
	}{
		{"https://api.minimax.io/anthropic", "MiniMax-M3", `{"type":"adaptive"}`, true},
		{"https://API.MiniMaxi.com/anthropic/", "MiniMax-M2.7", `{"type":"adaptive"}`, true},
		{DefaultBaseURL, "claude-sonnet-4-5", `{"type":"enabled","budget_tokens":2048}`, false},
		{"https://api.z.ai/api/anthropic", "glm-5.3", `{"type":"enabled","budget_tokens":2048}`, false},
	} {
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		req := r21Request(tc.model, "Compute 173 × 219.", 4096, 2048)
		body, _, warnings, err := p.buildRequest(req, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.base, err)
		}
		got, _ := json.Marshal(r19bJSON(t, body)["thinking"])
		if !sameJSON(t, string(got), tc.want) || (len(warnings) == 1) != tc.warned || len(warnings) > 1 {
			t.Errorf("%s %s: thinking %s warnings %q, want %s (warned %v)", tc.base, tc.model, got, warnings, tc.want, tc.warned)
		}
	}
}

// TestRound24GatewayCost: the Vercel AI Gateway's charge for a call,
// provider_metadata.gateway.cost, a decimal string in every recording of
// its Messages and Chat Completions endpoints (July to October 2026), is
// kept as sent in meta.extended.gateway_cost, with or without the routing
// beside it; a cost that is not a non-negative decimal string (a number,
// a sign, an exponent, a bare point, empty) sets nothing and fails
// nothing.
func TestRound24GatewayCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pm, cost, upstream string }{
		{`{"gateway":{"routing":{"finalProvider":"anthropic"},"cost":"0.00134","marketCost":"0.00134"}}`, `"0.00134"`, `"anthropic"`},
		{`{"gateway":{"cost":"0"}}`, `"0"`, ""},
		{`{"gateway":{"cost":"12"}}`, `"12"`, ""},
		{`{"gateway":{"cost":0.5}}`, "", ""},
		{`{"gateway":{"cost":"-1"}}`, "", ""},
		{`{"gateway":{"cost":"1e-5"}}`, "", ""},
		{`{"gateway":{"cost":".5"}}`, "", ""},
		{`{"gateway":{"cost":"5."}}`, "", ""},
		{`{"gateway":{"cost":"1.2.3"}}`, "", ""},
		{`{"gateway":{"cost":""}}`, "", ""},
		{`{"gateway":{"cost":null,"routing":{"finalProvider":"vertex"}}}`, "", `"vertex"`},
	} {
		body := `{"id":"gen_01R24GATEWAYCOSTTESTANSWER0","type":"message","role":"assistant","model":"anthropic/claude-sonnet-5.5",` +
			`"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1},"provider_metadata":` + tc.pm + `}`
		res, err := parseResponse([]byte(body), http.Header{})
		if err != nil {
			t.Fatalf("%s: %v", tc.pm, err)
		}
		got := func(k string) string {
			if v, ok := res.Meta.GetExtended().GetFields()[k]; ok {
				return valueJSON(t, v)
			}
			return ""
		}
		if got("gateway_cost") != tc.cost || got("upstream_provider") != tc.upstream || len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("%s: gateway_cost %s upstream %s warnings %q, want %s %s", tc.pm, got("gateway_cost"), got("upstream_provider"), res.Meta.GetWarnings(), tc.cost, tc.upstream)
		}
	}
}

// TestRound24ToolsetName: a tool_use block naming a client toolset
// (toolset_name, on ToolUseBlock and on the ToolUseBlockParam and
// ToolResultBlockParam sent back, in Anthropic's SDKs' generated models:
// anthropic-sdk-java) cannot keep it in the contract's tool call: the call
// is read as any other, with a warning saying the toolset is not sent
// back, in the unary answer and the stream alike. No toolset, no warning.
func TestRound24ToolsetName(t *testing.T) {
	t.Parallel()
	for _, toolset := range []string{"browser", ""} {
		block := `{"type":"tool_use","id":"toolu_01R24ToolsetNameTestCall","name":"navigate","input":{"url":"https://example.com"}` + map[bool]string{true: `,"toolset_name":"` + toolset + `"`, false: ``}[toolset != ""] + `}`
		body := `{"id":"msg_01R24ToolsetNameTestAnswer","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[` + block +
			`],"stop_reason":"tool_use","usage":{"input_tokens":9,"output_tokens":5}}`
		res, err := parseResponse([]byte(body), http.Header{})
		if err != nil {
			t.Fatal(err)
		}
		sse := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01R24ToolsetNameTestStream\",\"model\":\"claude-sonnet-5-5\",\"usage\":{\"input_tokens\":9}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":" + strings.Replace(block, `{"url":"https://example.com"}`, `{}`, 1) + "}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"url\\\":\\\"https://example.com\\\"}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		evs, err := collect(streamFromBody([]byte(sse)))
		if err != nil {
			t.Fatal(err)
		}
		f := foldEvents(t, evs)
		call := toolCallValid("toolu_01R24ToolsetNameTestCall", "navigate", `{"url":"https://example.com"}`)
		for what, got := range map[string]struct {
			msg  *llmrelayv1.Message
			meta *llmrelayv1.ResponseMeta
		}{"unary": {res.Message, res.Meta}, "stream": {f.message, f.meta}} {
			if !proto.Equal(got.msg, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, call)) {
				t.Errorf("%s %q: message %v", what, toolset, got.msg)
			}
			w := got.meta.GetWarnings()
			switch {
			case toolset == "" && len(w) != 0:
				t.Errorf("%s: warnings %q, want none", what, w)
			case toolset != "" && (len(w) != 1 || !strings.Contains(w[0], `toolset "browser"`) || !strings.Contains(w[0], "without its toolset_name")):
				t.Errorf("%s: warnings %q, want one naming the toolset", what, w)
			}
		}
	}
}
