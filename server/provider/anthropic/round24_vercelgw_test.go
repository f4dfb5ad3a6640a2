package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 24: opencode's recordings of the Vercel AI Gateway's
// Anthropic-compatible Messages endpoint (ai-gateway.vercel.sh/v1/messages)
// serving a model that is not Claude.

// r24Redirect sends every request to target, whatever its URL's host: the
// provider is configured with the gateway's base URL (which decides how
// the request is written) and the replay server answers.
type r24Redirect struct{ target *url.URL }

func (r r24Redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = r.target.Scheme, r.target.Host
	return http.DefaultTransport.RoundTrip(out)
}

// r24VercelEdit writes opencode's recorded request as ours sends it: the
// system prompt as the string, no providerOptions (the AI SDK's, the
// gateway's options, empty), and thinking with display summarized (ours
// asks for the summary the contract's reasoning parts hold) and without
// opencode's block_binding (no place in the contract).
func r24VercelEdit(m map[string]any) {
	blocks, _ := m["system"].([]any)
	b, _ := blocks[0].(map[string]any)
	m["system"] = b["text"]
	delete(m, "providerOptions")
	th, _ := m["thinking"].(map[string]any)
	th["display"] = "summarized"
	delete(th, "block_binding")
}

// TestRound24VercelGatewayDeepSeekToolLoop: deepseek/deepseek-v4.1-flash
// through the Vercel AI Gateway (October 2026, served by Baseten), a tool
// loop with adaptive thinking at effort high. Turn 1 streams an unsigned
// thinking block, a text block of "\n\n" left open while the tool_use block
// starts (their content_block_stop events come after the call's input), a
// tool_use with an id of the upstream's (chatcmpl-tool-…), and
// message_delta's provider_metadata (the gateway's routing and cost: the
// provider that served it, Baseten, is now meta.extended.upstream_provider,
// as the openai adapter keeps OpenRouter's; it was dropped);
// message_start's usage is 0 and message_delta's the count. Turn 2 answers
// "Paris is sunny.". Bug: the follow-up left the thinking out ("reasoning
// without a signature not sent"); the gateway wrote it unsigned and took it
// back with an empty signature, as the recorded request sends it. Both
// requests are now the recorded ones but for the system prompt as a string,
// the AI SDK's providerOptions and our thinking display.
func TestRound24VercelGatewayDeepSeekToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_vercelgw_deepseek_tool_stream_", "deepseek/deepseek-v4.1-flash"
	const call = "chatcmpl-tool-51e80fcbd5064b6e8bc9b8d0fa1d4e1d"
	f1, f2 := r24VercelToolLoop(t, name, model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, call)
	checkLLMWant(t, name+"1", f1.message, f1.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: `The user wants me to call get_weather once for Paris, then reply exactly "Paris is sunny."`}),
			text("\n\n"),
			toolCallValid(call, "get_weather", `{"city": "Paris"}`),
		},
		responseID: "gen_01M44ZVH1C4678Q0TYP7DRJ7J2", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(324, 61, 0, 0, 0), extended: map[string]string{"upstream_provider": `"baseten"`, "gateway_cost": `"0.0001704"`},
	})
	checkLLMWant(t, name+"2", f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Paris is sunny.")},
		responseID: "gen_01M44ZVHFBW1M2N3JSPQG4PXFG", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(406, 6, 0, 0, 0), extended: map[string]string{"upstream_provider": `"baseten"`, "gateway_cost": `"0.000129"`},
	})
}

// TestRound24VercelGatewayGeminiToolLoop: google/gemini-3.8-flash through
// the Vercel AI Gateway (October 2026, served by Vertex AI), the same tool
// loop at effort low. Turn 1 is a thinking block with no text and one
// signature_delta (Gemini's thought signature, carried as the block's
// signature), then the call; turn 2's text ends with an empty text_delta.
// No bug: the signed block with empty thinking goes back as recorded
// ({"type":"thinking","thinking":"","signature":"AY89…"}), and the served
// provider is vertex. Both requests are the recorded ones but for the
// system prompt as a string, the AI SDK's providerOptions and our thinking
// display.
func TestRound24VercelGatewayGeminiToolLoop(t *testing.T) {
	t.Parallel()
	const name, model, call = "real_vercelgw_gemini_tool_stream_", "google/gemini-3.8-flash", "call_355115"
	f1, f2 := r24VercelToolLoop(t, name, model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, call)
	sig := r24Signature(t, f1.message)
	checkLLMWant(t, name+"1", f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Signature: sig}), toolCallValid(call, "get_weather", `{"city":"Paris"}`)},
		responseID: "gen_01M3XAWAZ6J0VZ2XBQD2GHA031", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(52, 16, 0, 0, 0), extended: map[string]string{"upstream_provider": `"vertex"`, "gateway_cost": `"0.000099"`},
	})
	checkLLMWant(t, name+"2", f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Paris is sunny.")},
		responseID: "gen_01M3XAWC57YKVKCYGSHBPW86GH", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(83, 4, 0, 0, 0), extended: map[string]string{"upstream_provider": `"vertex"`, "gateway_cost": `"0.00007725"`},
	})
}

// r24VercelToolLoop replays opencode's two-turn get_weather loop through
// the Vercel AI Gateway (recordings name+"1", name+"2"): the question under
// the recorded system prompt with adaptive thinking at effort, then the
// first answer and the tool's result for call. Each request is compared
// with the recorded one (r24VercelEdit), each stream folded both ways and
// its golden checked; the follow-up has no warning.
func r24VercelToolLoop(t *testing.T, name, model string, effort llmrelayv1.ReasoningEffort, call string) (folded, folded) {
	t.Helper()
	srv := providertest.Replay(t, providertest.Load(t, "testdata/"+name+"1.http"), providertest.Load(t, "testdata/"+name+"2.http"))
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey, WithBaseURL("https://ai-gateway.vercel.sh"), WithHTTPClient(&http.Client{Transport: r24Redirect{target}}))
	if err != nil {
		t.Fatal(err)
	}
	req := r22System(r21Request(model, "What is the weather in Paris?", 2048, 0), "Use the get_weather tool exactly once. After the tool result, reply exactly: Paris is sunny.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Options.ReasoningEffort = effort
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	turn := func(i string, req *provider.Request) folded {
		t.Helper()
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			t.Fatalf("turn %s: %v", i, err)
		}
		evs, err := collect(s)
		if err != nil {
			t.Fatalf("turn %s: stream error %v", i, err)
		}
		f := foldEvents(t, evs)
		if got := accumulate(t, evs); !proto.Equal(got, f.message) {
			t.Errorf("turn %s: accumulated %v, folded %v", i, got, f.message)
		}
		providertest.Golden(t, "testdata/"+name+i+".golden", renderEvents(t, evs, nil))
		r22SameRequest(t, srv.Last(t).Body, name+i, r24VercelEdit)
		return f
	}
	f1 := turn("1", req)
	req.Messages = append(req.Messages, f1.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call, `{"temperature":22,"condition":"sunny"}`, false)))
	f2 := turn("2", req)
	if len(f2.meta.GetWarnings()) != 0 {
		t.Errorf("turn 2 warnings %q", f2.meta.GetWarnings())
	}
	return f1, f2
}

// TestRound24UnsignedThinkingTakers: which endpoint gets an unsigned
// reasoning part back, and how: Kimi's endpoints (coding, Moonshot's) with
// an empty signature, the only form they take (anomalyco/opencode#44713),
// MiniMax's without one (NousResearch/hermes-agent#75779, against the live
// endpoint), the Vercel AI Gateway with an empty one for a model that is
// not Claude (its recording); the gateway serving Claude, DeepSeek's
// endpoint (which signs its thinking and checks the signature), Anthropic
// and any other base URL never (left out with the warning).
func TestRound24UnsignedThinkingTakers(t *testing.T) {
	t.Parallel()
	const thought = "Call get_weather."
	for _, tc := range []struct {
		base, model, want string
	}{
		{"https://ai-gateway.vercel.sh", "deepseek/deepseek-v4.1-flash", `{"type":"thinking","thinking":"Call get_weather.","signature":""}`},
		{"https://AI-Gateway.Vercel.sh/v1", "zai/glm-5.3", `{"type":"thinking","thinking":"Call get_weather.","signature":""}`},
		{"https://ai-gateway.vercel.sh", "anthropic/claude-sonnet-5.5", ""},
		{"https://api.kimi.com/coding", "kimi-for-coding", `{"type":"thinking","thinking":"Call get_weather.","signature":""}`},
		{"https://api.moonshot.ai/anthropic", "kimi-k2.6", `{"type":"thinking","thinking":"Call get_weather.","signature":""}`},
		{"https://api.moonshot.cn/anthropic/", "kimi-k3", `{"type":"thinking","thinking":"Call get_weather.","signature":""}`},
		{"https://api.minimax.io/anthropic", "MiniMax-M3", `{"type":"thinking","thinking":"Call get_weather."}`},
		{"https://api.minimaxi.com/anthropic", "MiniMax-M2.7", `{"type":"thinking","thinking":"Call get_weather."}`},
		{"https://api.deepseek.com/anthropic", "deepseek-v4-pro", ""},
		{DefaultBaseURL, "deepseek/deepseek-v4.1-flash", ""},
		{"https://gateway.example.com/ai-gateway.vercel.sh", "deepseek/deepseek-v4.1-flash", ""},
	} {
		req := r21Request(tc.model, "Weather in Paris?", 1024, 0)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}}}`}}
		req.Messages = append(req.Messages,
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoningPart(&llmrelayv1.Reasoning{Text: thought}), toolCallValid("call_1", "get_weather", `{"city":"Paris"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_1", "sunny", false)))
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		body, _, warnings, err := p.buildRequest(req, false)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.base, tc.model, err)
		}
		asst, _ := r19bJSON(t, body)["messages"].([]any)[1].(map[string]any)
		blocks, _ := asst["content"].([]any)
		first, _ := json.Marshal(blocks[0])
		warned := len(warnings) > 0
		switch {
		case tc.want == "" && (!warned || len(blocks) != 1):
			t.Errorf("%s %s: blocks %v warnings %q, want the reasoning left out with a warning", tc.base, tc.model, blocks, warnings)
		case tc.want != "" && (warned || !sameJSON(t, string(first), tc.want)):
			t.Errorf("%s %s: first block %s warnings %q, want %s", tc.base, tc.model, first, warnings, tc.want)
		}
	}
}

// TestRound24UpstreamProvider: the provider a Vercel AI Gateway answer was
// served by (provider_metadata.gateway.routing.finalProvider) becomes
// meta.extended.upstream_provider, in a unary body too (its top-level
// provider_metadata, the stream's message_delta field); any other shape
// (no gateway or routing, a name that is not a string or is empty, null)
// sets nothing and fails nothing.
func TestRound24UpstreamProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pm, want string }{
		{`{"gateway":{"routing":{"originalModelId":"google/gemini-3.8-flash","resolvedProvider":"vertex","finalProvider":"vertex"},"cost":"0.000099"}}`, `"vertex"`},
		{`{"anthropic":{"usage":{}},"gateway":{"routing":{"finalProvider":"anthropic"}}}`, `"anthropic"`},
		{`{"gateway":{"routing":{"finalProvider":7}}}`, ""},
		{`{"gateway":{"routing":{"finalProvider":" "}}}`, ""},
		{`{"gateway":{"cost":"0"}}`, ""},
		{`{"gateway":null}`, ""},
		{`null`, ""},
		{`[1]`, ""},
	} {
		body := `{"id":"gen_01R24UPSTREAMPROVIDERTEST0","type":"message","role":"assistant","model":"google/gemini-3.8-flash",` +
			`"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1},"provider_metadata":` + tc.pm + `}`
		res, err := parseResponse([]byte(body), http.Header{})
		if err != nil {
			t.Fatalf("%s: %v", tc.pm, err)
		}
		got := ""
		if v, ok := res.Meta.GetExtended().GetFields()["upstream_provider"]; ok {
			got = valueJSON(t, v)
		}
		if got != tc.want {
			t.Errorf("%s: upstream_provider %s, want %s", tc.pm, got, tc.want)
		}
		if len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("%s: warnings %q", tc.pm, res.Meta.GetWarnings())
		}
	}
}
