package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// providerCase is one provider's recorded answer with two parallel tool
// calls, unary and streamed.
type providerCase struct {
	name         string
	yaml         string
	unary, strm  string
	wantProvider string
}

const keyYAML = `
    base_url: {{URL}}
    api_key: sk-e2e-test-key-000000000000
`

var providerCases = []providerCase{
	{"openai", `
providers:
  - name: oai
    type: openai` + keyYAML + `
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities: {tools: {format: openai-chat}}
`, "openai/testdata/tools_parallel.http", "openai/testdata/tools_parallel_stream.http", "oai"},
	{"openai-responses", `
providers:
  - name: oai
    type: openai` + keyYAML + `
models:
  - name: m
    provider: oai
    upstream_model: gpt-4.1
    capabilities: {tools: {format: openai-responses}}
`, "openai/testdata/responses_tools_parallel.http", "openai/testdata/responses_tools_parallel_stream.http", "oai"},
	{"azure", `
providers:
  - name: az
    type: azure
    api_version: "2024-10-21"` + keyYAML + `
models:
  - name: m
    provider: az
    upstream_model: gpt-4o-deployment
    capabilities: {tools: {format: openai-chat}}
`, "openai/testdata/tools_parallel.http", "openai/testdata/tools_parallel_stream.http", "az"},
	{"anthropic", `
providers:
  - name: claude
    type: anthropic` + keyYAML + `
models:
  - name: m
    provider: claude
    upstream_model: claude-sonnet-4-5
    capabilities: {tools: {format: anthropic-messages}}
`, "anthropic/testdata/tools.http", "anthropic/testdata/tools_stream.http", "claude"},
	{"gemini", `
providers:
  - name: google
    type: gemini` + keyYAML + `
models:
  - name: m
    provider: google
    upstream_model: gemini-2.5-flash
    capabilities: {tools: {format: gemini}}
`, "gemini/testdata/tools_parallel.http", "gemini/testdata/stream_tools.http", "google"},
	{"ollama", `
providers:
  - name: local
    type: ollama
    base_url: {{URL}}
models:
  - name: m
    provider: local
    upstream_model: llama3.2
    capabilities: {tools: {format: ollama}}
`, "ollama/testdata/chat_tools_parallel.http", "ollama/testdata/stream_tools.http", "local"},
}

func compactArgs(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// TestStreamToolsEveryProvider: for every provider, StreamTools with two
// parallel tool calls relays deltas that all carry the right call_id, the
// completed calls equal the unary Tools result, and usage is present in the
// final event.
func TestStreamToolsEveryProvider(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, providertest.Load(t, "provider/"+pc.unary), providertest.Load(t, "provider/"+pc.strm))
			c, logs := startWith(t, pc.yaml, up.URL)
			ctx := context.Background()
			msgs := []*llmrelayv1.Message{user("What's the weather in Paris and London?")}
			tools := weatherTools(t)
			raw := &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}
			unary, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: tools, Call: raw})
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: tools, Call: raw})
			if err != nil {
				t.Fatal(err)
			}
			var acc fold.Accumulator
			deltaIDs := map[string]int{}
			doneIDs := map[string]bool{}
			var end *llmrelayv1.StreamEnd
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if d := ev.GetToolCallDelta(); d != nil {
					if d.GetCallId() == "" {
						t.Fatalf("delta without call_id: %v", d)
					}
					deltaIDs[d.GetCallId()]++
				}
				if d := ev.GetToolCallDone(); d != nil {
					doneIDs[d.GetToolCall().GetCallId()] = true
				}
				if e := ev.GetEnd(); e != nil {
					end = e
				}
				if err := acc.AddTools(ev); err != nil {
					t.Fatal(err)
				}
			}
			streamCalls := acc.ToolCalls()
			var unaryCalls []*llmrelayv1.ToolCall
			for _, p := range unary.GetMessage().GetParts() {
				if tc := p.GetToolCall(); tc != nil {
					unaryCalls = append(unaryCalls, tc)
				}
			}
			if len(streamCalls) != 2 || len(unaryCalls) != 2 {
				t.Fatalf("calls: stream %v, unary %v", streamCalls, unaryCalls)
			}
			for i := range streamCalls {
				sc, uc := streamCalls[i], unaryCalls[i]
				// The two recordings are separate answers with ids of their
				// own (testdata READMEs): names and arguments match.
				if sc.GetCallId() == "" || uc.GetCallId() == "" || sc.GetName() != uc.GetName() || compactArgs(sc.GetArguments()) != compactArgs(uc.GetArguments()) || sc.GetArgumentsValid() != uc.GetArgumentsValid() {
					t.Errorf("call %d: stream %v, unary %v", i, sc, uc)
				}
				if deltaIDs[sc.GetCallId()] == 0 || !doneIDs[sc.GetCallId()] {
					t.Errorf("call %s: %d deltas, done %v", sc.GetCallId(), deltaIDs[sc.GetCallId()], doneIDs[sc.GetCallId()])
				}
			}
			if len(deltaIDs) != 2 {
				t.Errorf("deltas carried %d distinct call ids: %v", len(deltaIDs), deltaIDs)
			}
			if end == nil || end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || unary.GetMeta().GetFinishReason() != end.GetFinishReason() {
				t.Fatalf("end = %v, unary finish %v", end, unary.GetMeta().GetFinishReason())
			}
			if end.GetMeta().GetUsage().GetTotalTokens() == 0 || !proto.Equal(end.GetMeta().GetUsage(), unary.GetMeta().GetUsage()) {
				t.Errorf("usage: stream %v, unary %v", end.GetMeta().GetUsage(), unary.GetMeta().GetUsage())
			}
			if s, u := end.GetMeta().GetExtended().GetFields()["usage_details"], unary.GetMeta().GetExtended().GetFields()["usage_details"]; !proto.Equal(s, u) {
				t.Errorf("usage_details: stream %v, unary %v", s, u)
			}
			m := end.GetMeta()
			if m.GetProvider() != pc.wantProvider || m.GetToolCallCount() != 2 || m.GetTimeToFirstToken() == nil || m.GetAttempts() != 1 ||
				m.GetRaw().GetResponseStatus() != 200 || len(m.GetRaw().GetResponse()) == 0 {
				t.Errorf("stream meta incomplete: %v", m)
			}
			for _, b := range [][]byte{m.GetRaw().GetRequest(), unary.GetMeta().GetRaw().GetRequest(), []byte(logs.String())} {
				if bytes.Contains(b, []byte("sk-e2e-test-key")) {
					t.Fatal("API key leaked into raw data or logs")
				}
			}
		})
	}
}

// TestReasoningOptionsEndToEnd: temperature on a reasoning model fails with
// a clear InvalidArgument; with ignore_invalid_options it is dropped, listed
// in the meta, and absent from what the provider receives. Request options
// override configured ones without leaking into the next call.
func TestReasoningOptionsEndToEnd(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/chat_reasoning.http"))
	c, _ := startWith(t, `
providers:
  - name: oai
    type: openai`+keyYAML+`
models:
  - name: o4-mini
    provider: oai
    capabilities: {chat: {format: openai-chat, options: {max_tokens: 4000, reasoning_effort: medium}}}
`, up.URL)
	ctx := context.Background()
	temp := 0.2
	req := &llmrelayv1.ChatRequest{Model: "o4-mini", Messages: []*llmrelayv1.Message{user("2+2?")}, Options: &llmrelayv1.GenerationOptions{Temperature: &temp}}
	_, err := c.Chat(ctx, req)
	st, info, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_OPTION" || br.GetFieldViolations()[0].GetField() != "options.temperature" ||
		st.Message() != `model "o4-mini": option temperature: not supported by reasoning models unless reasoning_effort is NONE` {
		t.Fatalf("got %v %s %v: %q", st.Code(), info.GetReason(), br, st.Message())
	}
	if len(up.Requests()) != 0 {
		t.Fatal("an invalid request reached the provider")
	}
	req.Call = &llmrelayv1.CallOptions{IgnoreInvalidOptions: true}
	eight := int32(800)
	req.Options.MaxTokens = &eight
	resp, err := c.Chat(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.GetMeta().GetDroppedOptions(); len(d) != 1 || d[0].GetOption() != "temperature" {
		t.Errorf("dropped = %v", d)
	}
	var sent map[string]any
	if err := json.Unmarshal(up.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent["temperature"]; ok || sent["max_completion_tokens"] != float64(800) || sent["reasoning_effort"] != "medium" {
		t.Errorf("sent %v", sent)
	}
	// The next call without overrides gets the configured max_tokens again.
	if _, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "o4-mini", Messages: []*llmrelayv1.Message{user("2+2?")}}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(up.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent["max_completion_tokens"] != float64(4000) {
		t.Errorf("request override leaked into the next call: %v", sent["max_completion_tokens"])
	}
}

// TestUpstreamConnectionsReused: unary calls and streams that end properly
// leave their keep-alive connection to the next call (an adapter that stops
// at [DONE] must not cost a new connection per stream).
func TestUpstreamConnectionsReused(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, providertest.Load(t, "provider/"+pc.unary), providertest.Load(t, "provider/"+pc.strm), providertest.Load(t, "provider/"+pc.unary), providertest.Load(t, "provider/"+pc.strm), providertest.Load(t, "provider/"+pc.unary))
			c, _ := startWith(t, pc.yaml, up.URL)
			for i := 0; i < 2; i++ {
				if _, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")}, Tools: weatherTools(t)}); err != nil {
					t.Fatal(err)
				}
				s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")}, Tools: weatherTools(t)})
				if err != nil {
					t.Fatal(err)
				}
				for {
					if _, err := s.Recv(); err != nil {
						if !errors.Is(err, io.EOF) {
							t.Fatal(err)
						}
						break
					}
				}
			}
			if n := up.Connections(); n != 1 {
				t.Errorf("%d upstream connections for 4 sequential calls, want 1", n)
			}
		})
	}
}

// TestMidStreamErrors: an error event mid-stream, or a stream cut before its
// final event, ends the RPC with the mapped status and the partial meta as a
// FailedCallMeta detail; the events already sent stay valid, and nothing is
// retried once an event went out.
func TestMidStreamErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, rec string
		code            codes.Code
		reason, text    string
	}{
		{"anthropic overloaded", caseNamed("anthropic").yaml, "anthropic/testdata/stream_overloaded.http", codes.Unavailable, "UPSTREAM_UNAVAILABLE", "Once upon"},
		{"openai cut", caseNamed("openai").yaml, "openai/testdata/stream_cut.http", codes.Unavailable, "UPSTREAM_BAD_RESPONSE", "Hello there"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, providertest.Load(t, "provider/"+tc.rec))
			c, _ := startWith(t, strings.Replace(tc.yaml, "capabilities: {tools:", "capabilities: {chat:", 1), up.URL)
			s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("story")}})
			if err != nil {
				t.Fatal(err)
			}
			var text string
			var started bool
			for {
				ev, err := s.Recv()
				if err == nil {
					started = started || ev.GetStart() != nil
					text += ev.GetTextDelta().GetText()
					if ev.GetEnd() != nil {
						t.Fatal("a failed stream must not end with an end event")
					}
					continue
				}
				st, info, _ := statusDetails(t, err)
				if st.Code() != tc.code || info.GetReason() != tc.reason {
					t.Fatalf("got %v %s: %s", st.Code(), info.GetReason(), st.Message())
				}
				var failed *llmrelayv1.FailedCallMeta
				for _, d := range st.Details() {
					if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
						failed = f
					}
				}
				m := failed.GetMeta()
				if m.GetAttempts() != 1 || m.GetRequestId() == "" || m.GetProviderRequestId() == "" || m.GetResponseId() == "" || m.GetTimeToFirstToken() == nil {
					t.Errorf("partial meta = %v", m)
				}
				if tc.name == "anthropic overloaded" {
					// The head's rate-limit windows, once each: the
					// error that carries the state on does not add
					// them again (provider.MergeMeta).
					var headers []string
					for _, w := range m.GetRateLimit().GetWindows() {
						headers = append(headers, w.GetHeader())
					}
					if want := "anthropic-ratelimit-requests anthropic-ratelimit-tokens anthropic-ratelimit-input-tokens anthropic-ratelimit-output-tokens"; strings.Join(headers, " ") != want {
						t.Errorf("rate-limit windows %q, want %s", headers, want)
					}
				}
				break
			}
			if !started || text != tc.text {
				t.Errorf("events before the error: started %v, text %q", started, text)
			}
			if n := len(up.Requests()); n != 1 {
				t.Errorf("upstream saw %d requests: a stream must not be retried after its first event", n)
			}
		})
	}
}

func caseNamed(name string) providerCase {
	for _, pc := range providerCases {
		if pc.name == name {
			return pc
		}
	}
	panic("no provider case " + name)
}

// TestBackpressure: a client that stops reading stops the upstream read
// (no queue between the provider and the client): the provider's writes
// stall at what the transport windows hold, far below what it would send.
func TestBackpressure(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	const limit = 256 << 20 // what an unbounded relay would let through
	chunk := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760433584,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 200) + `"},"finish_reason":null}]}` + "\n\n")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for written.Load() < limit && r.Context().Err() == nil {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer up.Close()
	c, _ := startWith(t, strings.Replace(caseNamed("openai").yaml, "capabilities: {tools:", "capabilities: {chat:", 1), up.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("go")}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	// The client stops reading. Wait until the upstream stalls.
	var last int64 = -1
	for i := 0; i < 100; i++ {
		time.Sleep(100 * time.Millisecond)
		now := written.Load()
		if now == last {
			break
		}
		last = now
	}
	if w := written.Load(); w >= limit/4 {
		t.Fatalf("the upstream wrote %d MiB while the client read nothing: the relay is buffering", w>>20)
	}
	time.Sleep(300 * time.Millisecond)
	if now := written.Load(); now != last {
		t.Errorf("the upstream kept writing (%d -> %d bytes) while the client read nothing", last, now)
	}
	t.Logf("the upstream stalled after %d KiB", last>>10)
	// Reading again resumes the stream.
	for i := 0; i < 100; i++ {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStreamRetriedBeforeContent: Anthropic's overloaded_error right after
// message_start is retried, since no event has reached the client yet.
func TestStreamRetriedBeforeContent(t *testing.T) {
	t.Parallel()
	ok := providertest.Load(t, "provider/anthropic/testdata/plain_stream.http")
	start := ok.Body[bytes.Index(ok.Body, []byte("event: message_start")):]
	start = start[:bytes.Index(start, []byte("\n\n"))+2]
	overloaded := providertest.Recording{Status: ok.Status, Header: ok.Header, Body: append(append([]byte{}, start...),
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"...)}
	up := providertest.Replay(t, overloaded, ok)
	yaml := strings.Replace(caseNamed("anthropic").yaml, "capabilities: {tools:", "capabilities: {chat:", 1)
	c, _ := startWith(t, strings.Replace(yaml, "providers:", "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\nproviders:", 1), up.URL)
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var end *llmrelayv1.StreamEnd
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the overloaded start was not retried: %v", err)
		}
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	m := end.GetMeta()
	if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "unavailable" || len(up.Requests()) != 2 {
		t.Errorf("attempts %d, reasons %v, upstream requests %d", m.GetAttempts(), m.GetRetryReasons(), len(up.Requests()))
	}
}

// TestReasoningAcrossProviders: reasoning comes back tagged with the provider
// type that produced it (unary and streamed), and sent to another provider
// type it keeps only its text: Anthropic's signature never reaches Gemini.
func TestReasoningAcrossProviders(t *testing.T) {
	t.Parallel()
	claude := providertest.Replay(t, providertest.Load(t, "provider/anthropic/testdata/thinking.http"),
		providertest.Load(t, "provider/anthropic/testdata/thinking_stream.http"))
	gem := providertest.Replay(t, providertest.Load(t, "provider/gemini/testdata/plain.http"))
	yaml := strings.ReplaceAll(`
providers:
  - {name: claude, type: anthropic, base_url: CLAUDE, api_key: k-claude-000}
  - {name: google, type: gemini, base_url: {{URL}}, api_key: k-google-000}
models:
  - {name: sonnet, provider: claude, upstream_model: claude-sonnet-4-5, capabilities: {tools: {format: anthropic-messages}}}
  - {name: flash, provider: google, upstream_model: gemini-2.5-flash, capabilities: {tools: {format: gemini}}}
`, "CLAUDE", claude.URL)
	c, _ := startWith(t, yaml, gem.URL)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("What's the weather in Paris?")}
	resp, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "sonnet", Messages: msgs, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	var signed int
	for _, p := range resp.GetMessage().GetParts() {
		if r := p.GetReasoning(); r != nil {
			if r.GetProvider() != "anthropic" {
				t.Errorf("reasoning not tagged: %v", r)
			}
			if r.GetSignature() != "" {
				signed++
			}
		}
	}
	if signed == 0 {
		t.Fatal("the recording should hold signed thinking")
	}
	s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "sonnet", Messages: msgs, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	var acc fold.Accumulator
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.AddTools(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range acc.Message().GetParts() {
		if r := p.GetReasoning(); r != nil && r.GetProvider() != "anthropic" {
			t.Errorf("streamed reasoning not tagged: %v", r)
		}
	}

	// The conversation continues on Gemini.
	next := append(msgs, resp.GetMessage())
	for _, p := range resp.GetMessage().GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			next = append(next, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{
				{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: tc.GetCallId(), Content: `{"temp_c":18}`}}}}})
		}
	}
	out, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "flash", Messages: next, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	body := string(gem.Last(t).Body)
	for _, p := range resp.GetMessage().GetParts() {
		if sig := p.GetReasoning().GetSignature(); sig != "" && strings.Contains(body, sig) {
			t.Fatal("an Anthropic signature reached Gemini")
		}
	}
	if len(out.GetMeta().GetWarnings()) == 0 {
		t.Error("no warning about the stripped reasoning")
	}
}
