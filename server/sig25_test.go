package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// sig25Upstream answers the requests with steps in order (the last
// repeats) and keeps their bodies.
type sig25Upstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

type sig25Step struct {
	status int
	ctype  string
	body   string
}

func sig25Serve(t *testing.T, steps ...sig25Step) *sig25Upstream {
	t.Helper()
	u := &sig25Upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(b))
		s := steps[min(len(u.bodies)-1, len(steps)-1)]
		u.mu.Unlock()
		w.Header().Set("Content-Type", s.ctype)
		w.WriteHeader(s.status)
		_, _ = io.WriteString(w, s.body)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *sig25Upstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

func sig25Yaml(typ, model, format string, attempts string) string {
	return "defaults: {retry: {max_attempts: " + attempts + ", base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n" +
		"providers:\n  - name: up\n    type: " + typ + "\n    base_url: {{URL}}\n    api_key: " + f13Key + "\n" +
		"models:\n  - {name: m, provider: up, upstream_model: " + model + ", capabilities: {tools: {format: " + format + "}}}\n"
}

var sig25Tool = &llmrelayv1.Tool{Name: "get_weather", Description: "Weather for a city",
	Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}

// sig25Loop is a tool loop whose assistant turn holds the given reasoning
// parts and a call with the given signature, as another deployment of
// the provider type answered it (the parts are tagged with the type, as
// the gateway tags them).
func sig25Loop(callSig string, reasoning ...*llmrelayv1.Reasoning) []*llmrelayv1.Message {
	var parts []*llmrelayv1.Part
	for _, r := range reasoning {
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}})
	}
	parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
		CallId: "call_sig25gw", Name: "get_weather", Arguments: `{"city":"Oslo"}`, ArgumentsValid: true, Signature: callSig}}})
	return []*llmrelayv1.Message{
		user("Weather in Oslo?"),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_sig25gw", Content: `{"temp_c":4}`}}}}},
	}
}

func sig25Meta(t *testing.T, m *llmrelayv1.ResponseMeta, warning string) {
	t.Helper()
	rr := m.GetRetryReasons()
	if m.GetAttempts() != 2 || len(rr) != 1 || rr[0].GetReason() != "reasoning_signature_refused" || rr[0].GetAttempt() != 1 ||
		rr[0].GetDelay() != nil || rr[0].GetDeployment() != "up" {
		t.Errorf("attempts %d, retry reasons %v", m.GetAttempts(), rr)
	}
	found := false
	for _, w := range m.GetWarnings() {
		found = found || strings.Contains(w, warning)
	}
	if !found {
		t.Errorf("warnings %q lack %q", m.GetWarnings(), warning)
	}
}

// TestSig25GeminiPlaceholderRetry: a Gemini deployment refuses the tool
// loop's thought signatures as another project's (400 "Corrupted thought
// signature.", google-gemini/gemini-cli#13467); the gateway sends it once
// more, at once and although retries are off (max_attempts 1), with
// Google's placeholder on the call and no other signature, and answers;
// meta.retry_reasons names the refusal and meta.warnings the change.
func TestSig25GeminiPlaceholderRetry(t *testing.T) {
	t.Parallel()
	up := sig25Serve(t,
		sig25Step{400, "application/json; charset=UTF-8", `{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}`},
		sig25Step{200, "application/json", geminiFormat.okBody})
	c := f13Start(t, sig25Yaml("gemini", "gemini-3-flash-preview", "gemini", "1"), up.URL, &f13Clock{})
	res, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Tools: []*llmrelayv1.Tool{sig25Tool},
		Messages: sig25Loop("CsEBsig25gwOtherProjectCall==", &llmrelayv1.Reasoning{Text: "Check the weather.", Signature: "EqQBsig25gwOtherProjectThought==", Provider: "gemini"})})
	if err != nil {
		t.Fatal(err)
	}
	sig25Meta(t, res.GetMeta(), "1 function call(s) with Google's placeholder signature")
	b := up.seen()
	if len(b) != 2 {
		t.Fatalf("upstream saw %d requests", len(b))
	}
	if !strings.Contains(b[0], `"thoughtSignature":"CsEBsig25gwOtherProjectCall=="`) || !strings.Contains(b[0], "EqQBsig25gwOtherProjectThought==") {
		t.Errorf("first request: %s", b[0])
	}
	if strings.Contains(b[1], "sig25gwOtherProject") || !strings.Contains(b[1], `"thoughtSignature":"skip_thought_signature_validator"`) ||
		!strings.Contains(b[1], `"text":"Check the weather.","thought":true}`) {
		t.Errorf("second request: %s", b[1])
	}
}

// TestSig25AnthropicStreamRetry: an Anthropic deployment refuses the
// thinking block (400 "messages.1.content.0: Invalid `signature` in
// `thinking` block", anthropics/claude-code#10627) of a stream request;
// the retry, before anything was relayed, goes without thinking blocks
// and, the tool loop's turn then beginning without one, without thinking.
func TestSig25AnthropicStreamRetry(t *testing.T) {
	t.Parallel()
	f := anthropicFormat
	up := sig25Serve(t,
		sig25Step{400, "application/json", `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid ` + "`signature` in `thinking`" + ` block"},"request_id":"req_011CZsg25gwQ7pVxKm2RtYhB"}`},
		sig25Step{200, "text/event-stream", f.head + f.text(okText) + f.tail})
	c := f13Start(t, sig25Yaml("anthropic", "claude-sonnet-4-5", "anthropic-messages", "3"), up.URL, &f13Clock{})
	s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Tools: []*llmrelayv1.Tool{sig25Tool},
		Messages:        sig25Loop("", &llmrelayv1.Reasoning{Text: "Check the weather.", Signature: "ErUBsig25gwOtherPlatformThinking==", Provider: "anthropic"}),
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](2048)}}},
		Options:         &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096)}})
	if err != nil {
		t.Fatal(err)
	}
	var meta *llmrelayv1.ResponseMeta
	var text strings.Builder
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ev.GetTextDelta().GetText())
		if m := ev.GetEnd().GetMeta(); m != nil {
			meta = m
		}
	}
	if text.String() != okText {
		t.Errorf("text %q", text.String())
	}
	sig25Meta(t, meta, "left out 1 reasoning part(s)")
	b := up.seen()
	if len(b) != 2 || !strings.Contains(b[0], "ErUBsig25gwOtherPlatformThinking==") || !strings.Contains(b[0], `"budget_tokens":2048`) {
		t.Fatalf("requests %q", b)
	}
	if strings.Contains(b[1], `"thinking"`) || strings.Contains(b[1], "sig25gwOtherPlatform") || !strings.Contains(b[1], `"tool_use"`) {
		t.Errorf("second request: %s", b[1])
	}
}

// TestSig25ResponsesRefusedTwice: the Responses API refuses a reasoning
// item it does not hold (404 "Item with id 'rs_…' not found …",
// can1357/oh-my-pi#41) and then the repaired request too: one repair
// only, and the caller gets the second refusal, both attempts named.
func TestSig25ResponsesRefusedTwice(t *testing.T) {
	t.Parallel()
	const notFound = `{"error":{"message":"Item with id 'rs_0e7a3c9d15f84b2a006a1f6c0d4e8b8193f1a5c7e9b2d4f6a8' not found. Items are not persisted when ` +
		"`store` is set to false. Try again with `store` set to true, or remove this item from your input." + `","type":"invalid_request_error","param":"input","code":null}}`
	up := sig25Serve(t, sig25Step{404, "application/json", notFound})
	c := f13Start(t, sig25Yaml("openai", "gpt-5-mini", "openai-responses", "3"), up.URL, &f13Clock{})
	_, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Tools: []*llmrelayv1.Tool{sig25Tool},
		Messages: sig25Loop("", &llmrelayv1.Reasoning{Id: "rs_0e7a3c9d15f84b2a006a1f6c0d4e8b8193f1a5c7e9b2d4f6a8", Signature: "gAAAAABpsig25gwOtherOrg==", Provider: "openai"})})
	if status.Code(err) != codes.NotFound && status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err %v", err)
	}
	m := failedMeta(t, err)
	rr := m.GetRetryReasons()
	if m.GetAttempts() != 2 || len(rr) != 2 || rr[0].GetReason() != "reasoning_signature_refused" || rr[1].GetReason() != "reasoning_signature_refused" ||
		rr[0].GetUpstreamStatus() != 404 {
		t.Errorf("attempts %d, retry reasons %v", m.GetAttempts(), rr)
	}
	b := up.seen()
	if len(b) != 2 || !strings.Contains(b[0], "gAAAAABpsig25gwOtherOrg==") || strings.Contains(b[1], `"reasoning"`) || strings.Contains(b[1], "rs_0e7a") {
		t.Errorf("requests %q", b)
	}
}

// TestSig25FallbackSendsStateWhole: the repair is the refusing
// deployment's: when its repaired attempt fails in a way that falls back
// (a 429), the next deployment, which may be the account that signed the
// conversation, gets the signatures as the caller sent them.
func TestSig25FallbackSendsStateWhole(t *testing.T) {
	t.Parallel()
	first := sig25Serve(t,
		sig25Step{400, "application/json; charset=UTF-8", `{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}`},
		sig25Step{429, "application/json; charset=UTF-8", `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`})
	second := sig25Serve(t, sig25Step{200, "application/json", geminiFormat.okBody})
	yaml := "defaults: {retry: {max_attempts: 1, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n" +
		"providers:\n  - name: first\n    type: gemini\n    base_url: {{URL}}\n    api_key: " + f13Key + "\n" +
		"  - name: second\n    type: gemini\n    base_url: " + second.URL + "\n    api_key: " + f13Key + "\n" +
		"models:\n  - {name: m, deployments: [{provider: first, upstream_model: gemini-3-flash-preview}, {provider: second, upstream_model: gemini-3-flash-preview}], capabilities: {tools: {format: gemini}}}\n"
	c := f13Start(t, yaml, first.URL, &f13Clock{})
	res, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Tools: []*llmrelayv1.Tool{sig25Tool},
		Messages: sig25Loop("CsEBsig25fbSecondProjectCall==")})
	if err != nil {
		t.Fatal(err)
	}
	m := res.GetMeta()
	rr := m.GetRetryReasons()
	if m.GetAttempts() != 3 || len(rr) != 2 || rr[0].GetReason() != "reasoning_signature_refused" || rr[1].GetReason() != "http_429" ||
		m.GetRouting().GetDeployment() != "second" {
		t.Errorf("attempts %d, retry reasons %v, routing %v", m.GetAttempts(), rr, m.GetRouting())
	}
	for _, w := range m.GetWarnings() {
		if strings.Contains(w, "placeholder") {
			t.Errorf("the answering deployment's warnings name the repair: %q", w)
		}
	}
	a, b := first.seen(), second.seen()
	if len(a) != 2 || len(b) != 1 || !strings.Contains(a[1], "skip_thought_signature_validator") || !strings.Contains(b[0], `"thoughtSignature":"CsEBsig25fbSecondProjectCall=="`) {
		t.Errorf("first deployment saw %q, second %q", a, b)
	}
}
