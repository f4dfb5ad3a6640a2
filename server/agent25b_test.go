package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// changingMCP is an MCP server (the official Go SDK, protocol 2025-11-25
// over streamable HTTP, tools.listChanged declared as the SDK does) whose
// lookup_population tool, once called, takes itself away and adds
// lookup_area: the SDK sends notifications/tools/list_changed.
func changingMCP(t *testing.T) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "population", Version: "test"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	type in struct {
		City string `json:"city"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "lookup_population", Description: "Population of a city"},
		func(ctx context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			s.RemoveTools("lookup_population")
			sdk.AddTool(s, &sdk.Tool{Name: "lookup_area", Description: "Area of a city"},
				func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"km2":47.87}`}}}, nil, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"population":522000}`}}}, nil, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// requestTools names the tools of an OpenAI Chat Completions request body.
func requestTools(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

// TestAgentMCPToolsChange: the tools an MCP server offered were listed
// once per run; a server that took a tool away and added another mid-run
// (as tools.listChanged allows) left the model calling the removed one and
// never offered the new one. The list is taken again between rounds: round
// 2 offers lookup_area and no longer lookup_population, the model's second
// call of lookup_population gets an error result saying the server removed
// it (not sent to the server), and the run warns of the change.
func TestAgentMCPToolsChange(t *testing.T) {
	t.Parallel()
	mcpSrv := changingMCP(t)
	// The model calls lookup_population in rounds 1 and 2 (the same
	// answer twice), then answers.
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round1.http"),
		providertest.Load(t, "testdata/agent/openai_round1.http"), providertest.Load(t, "testdata/agent/openai_round2.http"))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", mcpSrv.URL), up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t),
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
	reqs := up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	if got := requestTools(t, reqs[0].Body); !slices.Contains(got, "lookup_population") || slices.Contains(got, "lookup_area") {
		t.Errorf("round 1 tools %v", got)
	}
	for i := 1; i < 3; i++ {
		if got := requestTools(t, reqs[i].Body); slices.Contains(got, "lookup_population") || !slices.Contains(got, "lookup_area") {
			t.Errorf("round %d tools %v, want lookup_area instead of lookup_population", i+1, got)
		}
	}
	// Round 2's call of the removed tool: an error result naming why,
	// in round 3's request; no MCP execution for it.
	got := toolResults(t, reqs[2].Body, "tool_call_id", "content")
	if r := got["call_AgtC3pLs1ZcX7vBn4QwE9tGh"]; !strings.Contains(r, `is no longer available: MCP server pop removed it before round 2`) {
		t.Errorf("result for the removed tool's call: %s", r)
	}
	execs := 0
	for _, ev := range evs {
		if ev.GetMcpToolExecution() != nil {
			execs++
		}
	}
	if execs != 1 {
		t.Errorf("%d MCP executions, want 1 (round 1's)", execs)
	}
	warnings := strings.Join(end.GetMeta().GetWarnings(), "\n")
	for _, w := range []string{"round 2: setup.mcp_servers[0]: MCP server pop changed its tools (added lookup_area; removed lookup_population)",
		`round 2: the model called "lookup_population" (call call_AgtC3pLs1ZcX7vBn4QwE9tGh), which is no longer available (MCP server pop removed it before round 2)`} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings %q\nwant %q", warnings, w)
		}
	}
}

const smallSendYAML = "limits: {max_recv_message_bytes: 8000, max_send_message_bytes: 8000}\n"

// lastFailure returns the run's failure event, failing the test without one.
func lastFailure(t *testing.T, evs []*llmrelayv1.AgentResponse) *llmrelayv1.AgentFailure {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].GetFailure() == nil {
		t.Fatalf("no failure event; last %v", evs[len(evs)-1:])
	}
	return evs[len(evs)-1].GetFailure()
}

// TestAgentResultsOutgrowEnd: client tool results each under
// limits.max_recv_message_bytes, together over
// limits.max_send_message_bytes, made a conversation no end event could
// carry: the run paid for round 2's model call, then failed sending end,
// with no failure event (the client had nothing to continue from). It
// fails once the results are in, before the next model call, with the
// conversation up to round 1's model call in the failure event and a
// status naming the limit.
func TestAgentResultsOutgrowEnd(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round1.http"), providertest.Load(t, "testdata/agent/openai_round2.http"))
	c, _ := startWith(t, smallSendYAML+strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", "http://127.0.0.1:1"), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t)},
		func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
			return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: strings.Repeat("x", 3900)}
		})
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.ResourceExhausted || info.GetMetadata()["limit"] != "limits.max_send_message_bytes" ||
		!strings.Contains(st.Message(), "the run stopped before the next model call") {
		t.Fatalf("status %v %v", st, info)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	if f := lastFailure(t, evs); f.GetRound() != 1 || len(f.GetMessages()) != 1 {
		t.Errorf("failure round %d, %d messages", f.GetRound(), len(f.GetMessages()))
	}
}

// textPieces is an OpenAI Chat Completions stream answering text in
// pieces (each its own event).
func textPieces(id string, pieces []string) providertest.Recording {
	rec := chatStream(id, "", nil, 50, 2000)
	var b strings.Builder
	for _, p := range pieces {
		t, _ := json.Marshal(p)
		fmt.Fprintf(&b, `data: {"id":%q,"object":"chat.completion.chunk","created":1763900000,"model":"gpt-4o-mini-2024-07-18",`+
			`"choices":[{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", id, t)
	}
	// After the role chunk (the first event), before the finish.
	body := string(rec.Body)
	cut := strings.Index(body, "\n\n") + 2
	rec.Body = []byte(body[:cut] + b.String() + body[cut:])
	return rec
}

// TestAgentEndTooLarge: a final answer streamed in pieces that each fit
// limits.max_send_message_bytes, whose end event (the whole conversation)
// does not, failed the run with no failure event: end had been marked sent
// before the send was refused. The failure event now goes out with the
// conversation up to the last whole round.
func TestAgentEndTooLarge(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, chatStream("chatcmpl-EndBig1", "", []chatCall{{"call_endbig_1", "get_time", `{"city":"Oslo"}`}}, 40, 10),
		textPieces("chatcmpl-EndBig2", []string{strings.Repeat("a", 3000), strings.Repeat("b", 3000), strings.Repeat("c", 3000)}))
	c, _ := startWith(t, smallSendYAML+strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", "http://127.0.0.1:1"), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Oslo?")}, Tools: agentTools(t)}, answerAll)
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.ResourceExhausted || info.GetMetadata()["limit"] != "limits.max_send_message_bytes" {
		t.Fatalf("status %v %v", st, info)
	}
	if f := lastFailure(t, evs); f.GetRound() != 2 || len(f.GetMessages()) != 3 || f.GetMeta().GetModelCalls() != 2 {
		t.Errorf("failure round %d, %d messages, meta %v", f.GetRound(), len(f.GetMessages()), f.GetMeta())
	}
}

// TestAgentMCPToolsRelistFails: a server whose tools/list fails between
// rounds (here a JSON-RPC error; a server that does not answer is bounded
// by the connect timeout) keeps the tools it offered, with a warning; the
// run goes on.
func TestAgentMCPToolsRelistFails(t *testing.T) {
	t.Parallel()
	inner := changingMCP(t) // declares tools.listChanged on 2025-11-25: listed again before round 2
	lists := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		if m.Method == "tools/list" {
			lists++
		}
		n := lists
		mu.Unlock()
		if m.Method == "tools/list" && n > 1 {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"tool registry unavailable"}}`, m.ID)
			return
		}
		req, _ := http.NewRequest(r.Method, inner.URL, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(srv.Close)
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round1.http"), providertest.Load(t, "testdata/agent/openai_round2.http"))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", srv.URL), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t),
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	if got := requestTools(t, up.Requests()[1].Body); !slices.Contains(got, "lookup_population") || slices.Contains(got, "lookup_area") {
		t.Errorf("round 2 tools %v, want round 1's", got)
	}
	want := `round 2: setup.mcp_servers[0]: the tools of MCP server pop could not be listed again (mcp server pop: list tools: calling "tools/list": tool registry unavailable (JSON-RPC error -32603: internal error)): they stay as offered before`
	if !slices.Contains(end.GetMeta().GetWarnings(), want) {
		t.Errorf("warnings %q\nwant %q", end.GetMeta().GetWarnings(), want)
	}
}

// TestAgentMCPToolsAllRemoved: a server that took away the run's only
// tool made round 2's model call fail as a setup without tools
// (InvalidArgument on setup.tools). Its earlier tools stay offered, with a
// warning; the model's call of one gets the server's answer.
func TestAgentMCPToolsAllRemoved(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "population", Version: "test"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	type in struct {
		City string `json:"city,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "big_tool"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		s.RemoveTools("big_tool")
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(mcpSrv.Close)
	up := providertest.Replay(t,
		chatStream("chatcmpl-AllGone1", "", []chatCall{{"call_allgone_1", "big_tool", `{}`}}, 40, 10),
		chatStream("chatcmpl-AllGone2", "", []chatCall{{"call_allgone_2", "big_tool", `{}`}}, 60, 10),
		chatStream("chatcmpl-AllGone3", "Done.", nil, 80, 3))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", mcpSrv.URL), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("go")},
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	if got := requestTools(t, up.Requests()[1].Body); !slices.Equal(got, []string{"big_tool"}) {
		t.Errorf("round 2 tools %v", got)
	}
	want := "round 2: setup.mcp_servers[0]: MCP server pop lists no tools any more, which would leave the run none to offer: its earlier tools stay offered (a call of one gets the server's answer)"
	if !slices.Contains(end.GetMeta().GetWarnings(), want) {
		t.Errorf("warnings %q", end.GetMeta().GetWarnings())
	}
	// Round 2's call reached the server, which no longer has the tool.
	if r := toolResults(t, up.Requests()[2].Body, "tool_call_id", "content")["call_allgone_2"]; !strings.Contains(r, "big_tool") {
		t.Errorf("round 2 result %q", r)
	}
}

// TestAgentMCPToolsForcedRemoved: a server that took away the tool the
// setup's tool_choice names made round 2's model call fail
// (options.tool_choice.function_name names no offered tool). That tool
// stays offered, with a warning; the others change.
func TestAgentMCPToolsForcedRemoved(t *testing.T) {
	t.Parallel()
	mcpSrv := changingMCP(t)
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round1.http"), providertest.Load(t, "testdata/agent/openai_round2.http"))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", mcpSrv.URL), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t),
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}},
		Options:    &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "lookup_population"}}}}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	if got := requestTools(t, up.Requests()[1].Body); !slices.Contains(got, "lookup_population") || !slices.Contains(got, "lookup_area") {
		t.Errorf("round 2 tools %v", got)
	}
	want := "round 2: setup.mcp_servers[0]: MCP server pop no longer lists lookup_population, which options.tool_choice names: it stays offered (a call of it gets the server's answer)"
	if w := evs[len(evs)-1].GetEnd().GetMeta().GetWarnings(); !slices.Contains(w, want) {
		t.Errorf("warnings %q", w)
	}
}
