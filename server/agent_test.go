package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// mcpServer starts an in-process MCP server (the official Go SDK over
// streamable HTTP) with one tool, lookup_population; delay slows each call.
func mcpServer(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "population", Version: "test"}, nil)
	type in struct {
		City string `json:"city"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "lookup_population", Description: "Population of a city"},
		func(ctx context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			if args.City != "Lyon" {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "unknown city " + args.City}}}, nil, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"population":522000}`}}}, nil, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// clientResults are the client tools' answers.
var clientResults = map[string]string{"get_weather": `{"temp_c":21,"sky":"sunny"}`, "get_time": `{"time":"14:05"}`}

type agentCase struct {
	name   string
	yaml   string
	prefix string // testdata/agent/<prefix>_round{1,2}.http
	// idField and contentField name the round-2 body's tool result object
	// fields (keyed by call id, or by name where the provider has no ids).
	idField, contentField string
	byName                bool
	// reasoning is the state that must go back in round 2.
	reasoning string
}

var agentCases = []agentCase{
	{"openai-chat", providerYAML("openai", "gpt-4o-mini", "openai-chat"), "openai", "tool_call_id", "content", false, ""},
	{"openai-responses", providerYAML("openai", "o4-mini", "openai-responses"), "responses", "call_id", "output", false,
		"gAAAAABpAgtEncRound1Xq2Lm9Rt4Vz7Kp1Yw8Nc3Hb6Js0Df5Gu2Ei9Ao4Bs7Ct1Dv3Ex5Fy8Gz0Ha2Ib4Jc6Kd"},
	{"anthropic", providerYAML("anthropic", "claude-sonnet-4-5", "anthropic-messages"), "anthropic", "tool_use_id", "content", false,
		"EqQDCkYIBxgCKkAgtSigRound1Lq8Xv3Nc6Bz1Km5Wt9Yp2Hr4Jd7Fs0Ge3Ua6Ib9Oc2Pd5Qe8Rf1Sg4Th7Ui0Vj3Wk6Xl"},
	{"gemini", providerYAML("gemini", "gemini-2.5-flash", "gemini"), "gemini", "name", "response", true,
		"CtwBAgtThoughtSig0Yq3Wm8Rn2Bv6Xc1Lk5Hj9Gf4Ds7Ap0Oi3Uy6Tr9Ee2Ww5Qq8"},
	{"ollama", providerYAML("ollama", "qwen3:8b", "ollama"), "ollama", "tool_call_id", "content", false, ""},
}

func providerYAML(typ, model, format string) string {
	key := "\n    api_key: sk-agent-test-key-0000000000"
	if typ == "ollama" {
		key = ""
	}
	return fmt.Sprintf(`
providers:
  - name: up
    type: %s
    base_url: {{URL}}%s
models:
  - name: m
    provider: up
    upstream_model: %s
    capabilities: {tools: {format: %s}}
mcp_servers:
  - name: pop
    url: {{MCP}}
`, typ, key, model, format)
}

func agentTools(t *testing.T) []*llmrelayv1.Tool {
	t.Helper()
	return weatherTools(t)
}

// agentRun drives an Agent stream: answer returns the result of a client
// tool call (nil: no answer). It returns the events and the final error.
func agentRun(ctx context.Context, t *testing.T, c llmrelayv1.GatewayServiceClient, setup *llmrelayv1.AgentSetup,
	answer func(*llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult) ([]*llmrelayv1.AgentResponse, error) {
	t.Helper()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: setup}}); err != nil {
		t.Fatal(err)
	}
	var evs []*llmrelayv1.AgentResponse
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if r := ev.GetToolCallRequest(); r != nil && answer != nil {
			if res := answer(r); res != nil {
				// io.EOF: the server has already ended the run (a result it
				// refused before this one was sent); Recv returns its status.
				if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: res}}); err != nil && !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
			}
		}
	}
}

func answerAll(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
	return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: clientResults[r.GetName()]}
}

// toolResults walks a request body and returns, for every object with
// idField, the text of its contentField.
func toolResults(t *testing.T, body []byte, idField, contentField string) map[string]string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("request body: %v", err)
	}
	out := map[string]string{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if id, ok := x[idField].(string); ok {
				if c, ok := x[contentField]; ok {
					b, _ := json.Marshal(c)
					out[id] = string(b)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// jsonContains reports whether a result (a JSON value, or a JSON string
// holding one) equals the JSON want.
func jsonContains(got, want string) bool {
	var g, w any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	if s, ok := g.(string); ok && json.Unmarshal([]byte(s), &g) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// TestAgentEveryProvider: an agent run with two client tools and one MCP
// tool (in-process MCP server) completes over two rounds on each provider's
// stream format, with the round-2 request carrying every result keyed by its
// call id, the reasoning state, and no previous_response_id.
func TestAgentEveryProvider(t *testing.T) {
	t.Parallel()
	for _, ac := range agentCases {
		t.Run(ac.name, func(t *testing.T) {
			t.Parallel()
			mcpSrv := mcpServer(t, 0)
			up := providertest.Replay(t, providertest.Load(t, "testdata/agent/"+ac.prefix+"_round1.http"),
				providertest.Load(t, "testdata/agent/"+ac.prefix+"_round2.http"))
			c, _ := startWith(t, strings.ReplaceAll(ac.yaml, "{{MCP}}", mcpSrv.URL), up.URL)
			setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Weather, time and population of Lyon?")},
				Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
			evs, err := agentRun(context.Background(), t, c, setup, answerAll)
			if err != nil {
				t.Fatal(err)
			}
			var (
				requests []*llmrelayv1.AgentToolCallRequest
				execs    []*llmrelayv1.AgentMcpToolExecution
				roundEnd int
				end      *llmrelayv1.AgentEnd
				text     strings.Builder
				done     = map[string]string{}
			)
			if sc := evs[0].GetSetupComplete(); sc == nil || len(sc.GetTools()) != 3 || sc.GetTools()[2].GetName() != "lookup_population" {
				t.Fatalf("first event: %v", evs[0])
			}
			for _, ev := range evs {
				switch {
				case ev.GetToolCallRequest() != nil:
					requests = append(requests, ev.GetToolCallRequest())
				case ev.GetMcpToolExecution() != nil:
					execs = append(execs, ev.GetMcpToolExecution())
				case ev.GetRoundEnd() != nil:
					roundEnd++
				case ev.GetEnd() != nil:
					end = ev.GetEnd()
				case ev.GetModel().GetTextDelta() != nil:
					text.WriteString(ev.GetModel().GetTextDelta().GetText())
				case ev.GetModel().GetToolCallDone() != nil:
					tc := ev.GetModel().GetToolCallDone().GetToolCall()
					done[tc.GetCallId()] = tc.GetName()
				}
			}
			if len(requests) != 2 || len(execs) != 1 || roundEnd != 1 || end == nil {
				t.Fatalf("requests %d, mcp executions %d, round ends %d, end %v", len(requests), len(execs), roundEnd, end)
			}
			for _, r := range requests {
				if done[r.GetCallId()] != r.GetName() || r.GetRound() != 1 || r.GetArguments() != `{"city":"Lyon"}` {
					t.Errorf("request %v does not match a streamed call %v", r, done)
				}
			}
			x := execs[0]
			if x.GetServer() != "pop" || x.GetCall().GetName() != "lookup_population" || x.GetResult().GetIsError() ||
				x.GetResult().GetContent() != `{"population":522000}` || done[x.GetCall().GetCallId()] != "lookup_population" || x.GetError() != "" {
				t.Errorf("mcp execution: %v", x)
			}
			if !strings.Contains(text.String(), "522,000 people") {
				t.Errorf("text %q", text.String())
			}
			if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(end.GetMessages()) != 4 {
				t.Fatalf("end: %v, %d messages", end.GetFinishReason(), len(end.GetMessages()))
			}
			roles := []llmrelayv1.Role{llmrelayv1.Role_ROLE_USER, llmrelayv1.Role_ROLE_ASSISTANT, llmrelayv1.Role_ROLE_TOOL, llmrelayv1.Role_ROLE_ASSISTANT}
			for i, m := range end.GetMessages() {
				if m.GetRole() != roles[i] {
					t.Errorf("message %d role %v", i, m.GetRole())
				}
			}
			m := end.GetMeta()
			if m.GetModelCalls() != 2 || m.GetToolRounds() != 1 || m.GetApiCalls() != 2 || len(m.GetRounds()) != 2 || m.GetProvider() != "up" {
				t.Errorf("meta: %v", m)
			}
			r1, r2 := m.GetRounds()[0].GetMeta().GetUsage(), m.GetRounds()[1].GetMeta().GetUsage()
			if r1.GetTotalTokens() == 0 || r2.GetTotalTokens() == 0 || m.GetUsage().GetTotalTokens() != r1.GetTotalTokens()+r2.GetTotalTokens() ||
				m.GetUsage().GetInputTokens() != r1.GetInputTokens()+r2.GetInputTokens() {
				t.Errorf("usage %v is not the sum of %v and %v", m.GetUsage(), r1, r2)
			}
			if (m.GetResponseId() == "" && ac.name != "ollama") || m.GetResponseId() != m.GetRounds()[1].GetMeta().GetResponseId() || m.GetResponseStatus() == "" {
				t.Errorf("response id/status: %q %q", m.GetResponseId(), m.GetResponseStatus())
			}
			if m.GetRounds()[0].GetToolCalls() != 3 || m.GetRounds()[0].GetToolsDuration() == nil {
				t.Errorf("round 1: %v", m.GetRounds()[0])
			}

			reqs := up.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d upstream requests", len(reqs))
			}
			body := reqs[1].Body
			if strings.Contains(string(body), "previous_response_id") {
				t.Error("round 2 sent previous_response_id")
			}
			if ac.name == "openai-responses" && !strings.Contains(string(body), `"store":false`) {
				t.Error("round 2 without store:false")
			}
			if ac.reasoning != "" && !strings.Contains(string(body), ac.reasoning) {
				t.Error("round 2 does not carry the reasoning state back")
			}
			got := toolResults(t, body, ac.idField, ac.contentField)
			want := map[string]string{}
			for id, name := range done {
				content := clientResults[name]
				if name == "lookup_population" {
					content = `{"population":522000}`
				}
				key := id
				if ac.byName {
					key = name
				}
				want[key] = content
			}
			for k, content := range want {
				if !jsonContains(got[k], content) {
					t.Errorf("round 2: result for %s = %s, want %s (all: %v)", k, got[k], content, got)
				}
			}
		})
	}
}

const builtinAgentYAML = `
providers:
  - name: b
    type: builtin
models:
  - name: echo
    provider: b
    upstream_model: echo
    capabilities: {tools: {format: builtin}}
    context:
      - {role: system, text: "Answer briefly."}
mcp_servers:
  - name: pop
    url: {{MCP}}
agent:
  allow_request_mcp_urls: ["{{MCP}}/allowed"]
`

func startBuiltinAgent(t *testing.T, mcpURL string) llmrelayv1.GatewayServiceClient {
	t.Helper()
	c, logs := startWith(t, strings.ReplaceAll(builtinAgentYAML, "{{MCP}}", mcpURL), "")
	t.Cleanup(func() { t.Log(logs.String()) })
	return c
}

func echoSetup(t *testing.T) *llmrelayv1.AgentSetup {
	return &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Paris")}, Tools: agentTools(t)}
}

func wantCode(t *testing.T, err error, code codes.Code, field string) {
	t.Helper()
	st, _, br := statusDetails(t, err)
	if st.Code() != code {
		t.Fatalf("code %v (%v), want %v", st.Code(), err, code)
	}
	if field != "" && (br == nil || br.GetFieldViolations()[0].GetField() != field) {
		t.Fatalf("bad request %v, want field %s", br, field)
	}
}

// TestAgentOutOfOrderResults: both calls of a round are requested before any
// result is awaited; answered in reverse order, the results still reach the
// model keyed by call_id, in the calls' order.
func TestAgentOutOfOrderResults(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	ctx := context.Background()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: echoSetup(t)}}); err != nil {
		t.Fatal(err)
	}
	var reqs []*llmrelayv1.AgentToolCallRequest
	var end *llmrelayv1.AgentEnd
	for end == nil {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r := ev.GetToolCallRequest(); r != nil {
			reqs = append(reqs, r)
			if len(reqs) == 2 {
				for i := 1; i >= 0; i-- {
					res := &llmrelayv1.ToolResult{CallId: reqs[i].GetCallId(), Content: "result-" + reqs[i].GetName()}
					if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: res}}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		end = ev.GetEnd()
	}
	msgs := end.GetMessages()
	if len(msgs) != 4 || end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("%d messages, %v", len(msgs), end.GetFinishReason())
	}
	calls, results := msgs[1].GetParts(), msgs[2].GetParts()
	for i, r := range results {
		tr := r.GetToolResult()
		tc := calls[i].GetToolCall()
		if tr.GetCallId() != tc.GetCallId() || tr.GetContent() != "result-"+tc.GetName() || tr.GetName() != tc.GetName() {
			t.Errorf("result %d: %v for call %v", i, tr, tc)
		}
	}
	// The prompt context reached the model but is not part of the conversation.
	if msgs[0].GetRole() != llmrelayv1.Role_ROLE_USER {
		t.Errorf("conversation starts with %v", msgs[0].GetRole())
	}
}

// TestAgentUnknownCallID: a result for a call the server did not ask for is
// InvalidArgument naming tool_result.call_id; so is a second result for one.
func TestAgentUnknownCallID(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	_, err := agentRun(context.Background(), t, c, echoSetup(t), func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		return &llmrelayv1.ToolResult{CallId: r.GetCallId() + "-nope", Content: "x"}
	})
	wantCode(t, err, codes.InvalidArgument, "tool_result.call_id")

	sent := map[string]bool{}
	_, err = agentRun(context.Background(), t, c, echoSetup(t), func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		if len(sent) == 0 {
			sent[r.GetCallId()] = true
		}
		for id := range sent {
			return &llmrelayv1.ToolResult{CallId: id, Content: "x"} // the first id, twice
		}
		return nil
	})
	wantCode(t, err, codes.InvalidArgument, "tool_result.call_id")
	if !strings.Contains(err.Error(), "already answered") {
		t.Errorf("error %v", err)
	}
}

// TestAgentMissingResult: without a result in tool_timeout the run fails
// with DeadlineExceeded naming the call (the default), or the model gets an
// error result and the client a cancellation (ERROR_RESULT).
func TestAgentMissingResult(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	setup := echoSetup(t)
	setup.ToolTimeout = durationpb.New(50 * time.Millisecond)
	answerWeatherOnly := func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		if r.GetName() == "get_weather" {
			return answerAll(r)
		}
		return nil
	}
	evs, err := agentRun(context.Background(), t, c, setup, answerWeatherOnly)
	wantCode(t, err, codes.DeadlineExceeded, "tool_result")
	var timeID string
	for _, ev := range evs {
		if r := ev.GetToolCallRequest(); r.GetName() == "get_time" {
			timeID = r.GetCallId()
		}
	}
	if timeID == "" || !strings.Contains(err.Error(), timeID) {
		t.Errorf("error %v does not name the missing call %s", err, timeID)
	}

	setup.OnToolTimeout = llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT
	evs, err = agentRun(context.Background(), t, c, setup, answerWeatherOnly)
	if err != nil {
		t.Fatal(err)
	}
	var cancelled []string
	var end *llmrelayv1.AgentEnd
	for _, ev := range evs {
		if x := ev.GetToolCallCancellation(); x != nil {
			cancelled = append(cancelled, x.GetCallIds()...)
		}
		if ev.GetEnd() != nil {
			end = ev.GetEnd()
		}
	}
	if len(cancelled) != 1 || end == nil {
		t.Fatalf("cancelled %v, end %v", cancelled, end)
	}
	for _, p := range end.GetMessages()[2].GetParts() {
		tr := p.GetToolResult()
		if (tr.GetCallId() == cancelled[0]) != tr.GetIsError() {
			t.Errorf("result %v (cancelled %v)", tr, cancelled)
		}
	}
}

// TestAgentMaxRounds: a model that still calls tools at max_rounds ends the
// run with FINISH_REASON_MAX_ROUNDS, not an error.
func TestAgentMaxRounds(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	setup := echoSetup(t)
	setup.MaxRounds = 1
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_MAX_ROUNDS || end.GetMeta().GetModelCalls() != 1 ||
		end.GetMeta().GetToolRounds() != 0 || len(end.GetMessages()) != 2 {
		t.Fatalf("end %v", end)
	}
	for _, ev := range evs {
		if ev.GetToolCallRequest() != nil {
			t.Error("a tool was requested after the last round")
		}
	}
	setup.MaxRounds = -1
	_, err = agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.InvalidArgument, "setup.max_rounds")
}

// TestAgentClientCancel: a cancel message mid-round (while the server waits
// for results) ends the RPC with Canceled; a cancelled context cancels the
// upstream call in flight.
func TestAgentClientCancel(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	s, err := c.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: echoSetup(t)}}); err != nil {
		t.Fatal(err)
	}
	sentCancel := false
	for {
		ev, err := s.Recv()
		if err != nil {
			wantCode(t, err, codes.Canceled, "")
			break
		}
		if ev.GetToolCallRequest() != nil && !sentCancel {
			sentCancel = true
			// io.EOF: the stream already ended; Recv says how.
			if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Cancel{Cancel: &llmrelayv1.AgentCancel{Reason: "user left"}}}); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		}
		if ev.GetEnd() != nil {
			t.Fatal("the run ended normally after a cancel")
		}
	}

	// A slow upstream: cancelling the context mid-stream reaches it, and so
	// does a cancel message.
	gone := make(chan struct{}, 2)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-AgtSlow1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	defer slow.Close()
	oc, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", "http://127.0.0.1:1"), slow.URL)
	ctx, cancel := context.WithCancel(context.Background())
	os, err := oc.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: &llmrelayv1.AgentSetup{Model: "m",
		Messages: []*llmrelayv1.Message{user("hi")}, Tools: agentTools(t)}}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := os.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetModel().GetTextDelta() != nil {
			break
		}
	}
	cancel()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream call was not cancelled")
	}

	ms, err := oc.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: &llmrelayv1.AgentSetup{Model: "m",
		Messages: []*llmrelayv1.Message{user("hi")}, Tools: agentTools(t)}}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := ms.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetModel().GetTextDelta() != nil {
			break
		}
	}
	if err := ms.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Cancel{Cancel: &llmrelayv1.AgentCancel{}}}); err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = ms.Recv() // events in flight, then the status
	}
	wantCode(t, err, codes.Canceled, "")
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel message did not cancel the upstream call")
	}
}

// TestAgentMCPDownOrSlow: an MCP server that is down fails the setup with
// Unavailable naming it; a slow one gives the model an error result after
// tool_timeout, reported as an MCP execution with its error.
func TestAgentMCPDownOrSlow(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	c := startBuiltinAgent(t, down.URL)
	setup := echoSetup(t)
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Name: "pop"}}
	_, err := agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.Unavailable, "setup.mcp_servers[0]")

	slow := mcpServer(t, 2*time.Second)
	c = startBuiltinAgent(t, slow.URL)
	setup = &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Lyon")}, Tools: agentTools(t)[:1],
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}, ToolTimeout: durationpb.New(100 * time.Millisecond)}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	var exec *llmrelayv1.AgentMcpToolExecution
	for _, ev := range evs {
		if x := ev.GetMcpToolExecution(); x != nil {
			exec = x
		}
	}
	if exec == nil || !exec.GetResult().GetIsError() || !strings.Contains(exec.GetError(), "tool_timeout") {
		t.Fatalf("execution %v", exec)
	}
	if d := exec.GetDuration().AsDuration(); d > time.Second {
		t.Errorf("the slow call took %v; tool_timeout did not bound it", d)
	}
}

// TestAgentRequestMCPURL: a request-supplied MCP URL is PermissionDenied
// unless the configuration allows its prefix.
func TestAgentRequestMCPURL(t *testing.T) {
	t.Parallel()
	srv := mcpServer(t, 0)
	c := startBuiltinAgent(t, srv.URL)
	setup := echoSetup(t)
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Url: "http://169.254.169.254/mcp"}}
	_, err := agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.PermissionDenied, "setup.mcp_servers[0].url")

	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Name: "nope"}}
	_, err = agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.NotFound, "setup.mcp_servers[0].name")
	if _, info, _ := statusDetails(t, err); info.GetReason() != "MCP_SERVER_NOT_FOUND" {
		t.Errorf("reason %s, want MCP_SERVER_NOT_FOUND", info.GetReason())
	}
	if st, _, _ := statusDetails(t, err); resourceInfo(st).GetResourceType() != "mcp_server" || resourceInfo(st).GetResourceName() != "nope" {
		t.Errorf("ResourceInfo %v, want the MCP server not found", resourceInfo(st))
	}
}

// TestAgentSetupErrors: the first message must be a setup; setup fields are
// named under setup.
func TestAgentSetupErrors(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	s, err := c.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "x"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Recv()
	wantCode(t, err, codes.InvalidArgument, "setup")

	_, err = agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "echo", Tools: agentTools(t)}, answerAll)
	wantCode(t, err, codes.InvalidArgument, "setup.messages")

	setup := echoSetup(t)
	setup.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}
	_, err = agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.InvalidArgument, "setup.provider_options.openai.store")
}

// TestAgentHostedMCP: on the Responses API a hosted MCP server is passed to
// OpenAI as an mcp tool (Authorization mapped to its field, other headers
// passed on, no approvals); the token is neither logged nor in the raw
// request. Elsewhere a hosted server is InvalidArgument.
func TestAgentHostedMCP(t *testing.T) {
	t.Setenv("AGENT_TEST_MCP_TOKEN", "mcp-secret-token-7Qx2Lm9")
	yaml := providerYAML("openai", "o4-mini", "openai-responses") + `    hosted: true
    allowed_tools: [search_docs]
    headers:
      Authorization: {env: AGENT_TEST_MCP_TOKEN}
      X-Tenant: {value: tenant-42}
`
	yaml = strings.Replace(yaml, "{{MCP}}", "https://mcp.example.test/mcp", 1)
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/responses_round2.http"))
	c, logs := startWith(t, yaml, up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Search the docs")}, Tools: agentTools(t),
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}, Call: &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(up.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "mcp", "server_label": "pop", "server_url": "https://mcp.example.test/mcp", "allowed_tools": []any{"search_docs"},
		"authorization": "mcp-secret-token-7Qx2Lm9", "headers": map[string]any{"X-Tenant": "tenant-42"}, "require_approval": "never"}
	if len(body.Tools) != 3 || !reflect.DeepEqual(body.Tools[2], want) {
		t.Fatalf("tools %v", body.Tools)
	}
	end := evs[len(evs)-1].GetEnd()
	raw := end.GetMeta().GetRounds()[0].GetMeta().GetRaw().GetRequest()
	if len(raw) == 0 || strings.Contains(string(raw), "mcp-secret-token") || strings.Contains(logs.String(), "mcp-secret-token") {
		t.Errorf("the MCP token leaked (raw %d bytes)", len(raw))
	}

	chat := strings.Replace(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", "https://mcp.example.test/mcp", 1) + "    hosted: true\n"
	c, _ = startWith(t, chat, up.URL)
	_, err = agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.InvalidArgument, "setup.mcp_servers")
}

// TestPromptContext: a model's configured context is merged before the
// request's messages (the provider receives it) and shown by ListModels.
func TestPromptContext(t *testing.T) {
	t.Parallel()
	yaml := strings.Replace(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", "https://mcp.example.test/mcp", 1)
	yaml = strings.Replace(yaml, "    capabilities: {tools: {format: openai-chat}}\n", `    capabilities: {tools: {format: openai-chat}}
    context:
      - {role: system, text: "You are the Lyon tourist office."}
      - {role: assistant, text: "Bonjour!"}
`, 1)
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round2.http"))
	c, _ := startWith(t, yaml, up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}, Tools: agentTools(t)}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(up.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || body.Messages[0].Role != "system" || body.Messages[0].Content != "You are the Lyon tourist office." ||
		body.Messages[1].Role != "assistant" || body.Messages[2].Role != "user" {
		t.Fatalf("upstream messages %+v", body.Messages)
	}
	if n := len(evs[len(evs)-1].GetEnd().GetMessages()); n != 2 {
		t.Errorf("the conversation holds %d messages; the context is not part of it", n)
	}
	lm, err := c.ListModels(context.Background(), &llmrelayv1.ListModelsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ctxMsgs := lm.GetModels()[0].GetContext()
	if len(ctxMsgs) != 2 || ctxMsgs[0].GetRole() != llmrelayv1.Role_ROLE_SYSTEM || ctxMsgs[1].GetParts()[0].GetText() != "Bonjour!" {
		t.Errorf("ListModels context %v", ctxMsgs)
	}
}

// TestAgentGoAway: a server that starts draining sends go_away with the
// conversation so far at the run's next round, then ends it with
// Unavailable (SHUTTING_DOWN).
func TestAgentGoAway(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(strings.ReplaceAll(builtinAgentYAML, "{{MCP}}", "http://127.0.0.1:1")), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	c := llmrelayv1.NewGatewayServiceClient(conn)
	evs, err := agentRun(context.Background(), t, c, echoSetup(t), func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		if r.GetName() == "get_weather" {
			stop() // drain now, mid-round
			for {
				h, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{})
				if err != nil || h.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		return answerAll(r)
	})
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.Unavailable || info.GetReason() != "SHUTTING_DOWN" {
		t.Fatalf("status %v", err)
	}
	ga := evs[len(evs)-1].GetGoAway()
	if ga == nil || len(ga.GetMessages()) != 3 || ga.GetMessages()[2].GetRole() != llmrelayv1.Role_ROLE_TOOL || ga.GetMeta().GetToolRounds() != 1 {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestAgentResultsAhead: results whose call ids the client knows may be sent
// before the calls are requested (grpcurl -d @ with a file); one that no call
// of the round claims is InvalidArgument.
func TestAgentResultsAhead(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	evs, err := agentRun(context.Background(), t, c, echoSetup(t), answerAll)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range evs {
		if r := ev.GetToolCallRequest(); r != nil {
			ids = append(ids, r.GetCallId())
		}
	}
	ahead := func(ids ...string) ([]*llmrelayv1.AgentResponse, error) {
		s, err := c.Agent(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		msgs := []*llmrelayv1.AgentRequest{{Message: &llmrelayv1.AgentRequest_Setup{Setup: echoSetup(t)}}}
		for _, id := range ids {
			msgs = append(msgs, &llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: "ahead"}}})
		}
		for _, m := range msgs {
			if err := s.Send(m); err != nil {
				t.Fatal(err)
			}
		}
		var out []*llmrelayv1.AgentResponse
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out = append(out, ev)
		}
	}
	evs, err = ahead(ids[1], ids[0])
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || end.GetMessages()[2].GetParts()[0].GetToolResult().GetContent() != "ahead" {
		t.Fatalf("end %v", end)
	}
	_, err = ahead(ids[0], "call_never_made", ids[1])
	wantCode(t, err, codes.InvalidArgument, "tool_result.call_id")
}

// TestAgentUnofferedTool: a call to a tool nobody offered gets an error
// result for the model (keyed by its call id); the run goes on.
func TestAgentUnofferedTool(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round1.http"), providertest.Load(t, "testdata/agent/openai_round2.http"))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", "http://127.0.0.1:1"), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t)}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	if evs[len(evs)-1].GetEnd().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
	got := toolResults(t, up.Requests()[1].Body, "tool_call_id", "content")
	if r := got["call_AgtC3pLs1ZcX7vBn4QwE9tGh"]; !strings.Contains(r, `unknown tool \"lookup_population\"`) {
		t.Errorf("result for the unoffered call: %s", r)
	}
}

// TestAgentToolNameCollision: an MCP tool named like a client tool is
// InvalidArgument naming the server.
func TestAgentToolNameCollision(t *testing.T) {
	t.Parallel()
	srv := mcpServer(t, 0)
	c := startBuiltinAgent(t, srv.URL)
	setup := echoSetup(t)
	setup.Tools = append(setup.Tools, &llmrelayv1.Tool{Name: "lookup_population"})
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Name: "pop"}}
	_, err := agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.InvalidArgument, "setup.mcp_servers[0]")
}

// TestAgentHalfClose: a client that closes its side while the server waits
// for its results gets InvalidArgument naming the calls, not a hang.
func TestAgentHalfClose(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: echoSetup(t)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := s.Recv()
		if err != nil {
			wantCode(t, err, codes.InvalidArgument, "tool_result")
			if !strings.Contains(err.Error(), "closed its side") {
				t.Errorf("error %v", err)
			}
			return
		}
	}
}

// TestAgentMCPNoAllowedTools: a server whose allowed tools match none it
// offers is InvalidArgument naming the server, not a tools error the client
// cannot place.
func TestAgentMCPNoAllowedTools(t *testing.T) {
	t.Parallel()
	srv := mcpServer(t, 0)
	c := startBuiltinAgent(t, srv.URL)
	setup := echoSetup(t)
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Url: srv.URL + "/allowed", AllowedTools: []string{"not_there"}}}
	_, err := agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.InvalidArgument, "setup.mcp_servers[0]")
	if !strings.Contains(err.Error(), "at least one tool") {
		t.Errorf("error %v", err)
	}
}

// TestAgentFailureKeepsConversation: a model call that fails in round 2
// (the conversation outgrew the context window) ends the run with a failure
// event carrying the conversation of the whole round 1 (assistant turn and
// every result) and round 1's meta, then the failure's status with the
// provider's facts; a run failing inside round 1 (a missing result) returns
// the setup's messages, and a cancelled run gets no failure event.
func TestAgentFailureKeepsConversation(t *testing.T) {
	t.Parallel()
	mcpSrv := mcpServer(t, 0)
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/openai_round1.http"),
		providertest.Load(t, "testdata/agent/openai_round2_err_400.http"))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", mcpSrv.URL), up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Weather, time and population of Lyon?")},
		Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	st, _, _ := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "maximum context length") {
		t.Fatalf("status %v", err)
	}
	var failed *llmrelayv1.FailedCallMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f
		}
	}
	if failed.GetMeta().GetProviderRequestId() != "req_agtf41d7c0e93a25b8d6c4e2f1a0b9d7c35" {
		t.Errorf("failed call meta %v", failed)
	}
	f := evs[len(evs)-1].GetFailure()
	if f == nil {
		t.Fatalf("last event %v, want a failure", evs[len(evs)-1])
	}
	roles := []llmrelayv1.Role{llmrelayv1.Role_ROLE_USER, llmrelayv1.Role_ROLE_ASSISTANT, llmrelayv1.Role_ROLE_TOOL}
	if f.GetRound() != 2 || len(f.GetMessages()) != len(roles) {
		t.Fatalf("failure round %d with %d messages", f.GetRound(), len(f.GetMessages()))
	}
	for i, m := range f.GetMessages() {
		if m.GetRole() != roles[i] {
			t.Errorf("message %d role %v", i, m.GetRole())
		}
	}
	if n := len(f.GetMessages()[1].GetParts()); n != 3 || len(f.GetMessages()[2].GetParts()) != 3 {
		t.Errorf("round 1: %d calls, %d results", n, len(f.GetMessages()[2].GetParts()))
	}
	// The failed model call of round 2 is the run's last round (its meta
	// the status's FailedCallMeta): made, so counted.
	if m := f.GetMeta(); m.GetModelCalls() != 2 || m.GetToolRounds() != 1 || len(m.GetRounds()) != 2 || m.GetUsage().GetTotalTokens() == 0 ||
		m.GetRounds()[1].GetRound() != 2 || m.GetRounds()[1].GetMeta().GetProviderRequestId() != failed.GetMeta().GetProviderRequestId() {
		t.Errorf("failure meta %v", m)
	}

	// Inside round 1: the setup's conversation (the prompt context stays out).
	b := startBuiltinAgent(t, "http://127.0.0.1:1")
	es := echoSetup(t)
	es.ToolTimeout = durationpb.New(50 * time.Millisecond)
	evs, err = agentRun(context.Background(), t, b, es, func(*llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult { return nil })
	wantCode(t, err, codes.DeadlineExceeded, "tool_result")
	f = evs[len(evs)-1].GetFailure()
	if f.GetRound() != 1 || len(f.GetMessages()) != 1 || !proto.Equal(f.GetMessages()[0], es.GetMessages()[0]) || f.GetMeta().GetModelCalls() != 1 {
		t.Fatalf("failure in round 1: %v", f)
	}
	// A bad result is the client's failure, reported the same way.
	evs, err = agentRun(context.Background(), t, b, echoSetup(t), func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		return &llmrelayv1.ToolResult{CallId: r.GetCallId() + "-nope", Content: "x"}
	})
	wantCode(t, err, codes.InvalidArgument, "tool_result.call_id")
	if evs[len(evs)-1].GetFailure().GetRound() != 1 {
		t.Errorf("last event %v", evs[len(evs)-1])
	}

	// A cancel message: Canceled, no failure event.
	s, err := b.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: echoSetup(t)}}); err != nil {
		t.Fatal(err)
	}
	cancelled := false
	for {
		ev, err := s.Recv()
		if err != nil {
			wantCode(t, err, codes.Canceled, "")
			break
		}
		if ev.GetFailure() != nil {
			t.Fatal("a failure event after the client's cancel")
		}
		if ev.GetToolCallRequest() != nil && !cancelled {
			cancelled = true
			// io.EOF: the stream already ended; Recv says how.
			if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Cancel{Cancel: &llmrelayv1.AgentCancel{Reason: "done"}}}); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		}
	}
}
