package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// chatCall is one tool call of a hand-built Chat Completions stream.
type chatCall struct{ id, name, args string }

// chatStream is a Chat Completions stream in the shape of
// testdata/agent/openai_round1.http (built here: these tests need answers
// the fixtures do not have): optional text, then each call in one chunk,
// the finish reason and a usage chunk.
func chatStream(id, text string, calls []chatCall, in, out int) providertest.Recording {
	var b strings.Builder
	chunk := func(delta, finish string) {
		fmt.Fprintf(&b, `data: {"id":%q,"object":"chat.completion.chunk","created":1763900000,"model":"gpt-4o-mini-2024-07-18",`+
			`"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`+"\n\n", id, delta, finish)
	}
	chunk(`{"role":"assistant","content":""}`, "null")
	if text != "" {
		t, _ := json.Marshal(text)
		chunk(`{"content":`+string(t)+`}`, "null")
	}
	for i, c := range calls {
		a, _ := json.Marshal(c.args)
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, i, c.id, c.name, a), "null")
	}
	finish := `"stop"`
	if len(calls) > 0 {
		finish = `"tool_calls"`
	}
	chunk(`{}`, finish)
	fmt.Fprintf(&b, `data: {"id":%q,"object":"chat.completion.chunk","created":1763900000,"model":"gpt-4o-mini-2024-07-18","choices":[],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", id, in, out, in+out)
	b.WriteString("data: [DONE]\n\n")
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("x-request-id", "req_"+id)
	return providertest.Recording{Status: 200, Header: h, Body: []byte(b.String())}
}

// pricedChatYAML is an openai-chat model m with prices, and MCP server pop.
func pricedChatYAML(mcpURL string) string {
	y := strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-chat"), "{{MCP}}", mcpURL)
	return strings.Replace(y, "    capabilities: {tools: {format: openai-chat}}\n",
		"    capabilities: {tools: {format: openai-chat}}\n    prices: {input: 0.15, output: 0.60}\n", 1)
}

// richMCP is an in-process MCP server whose tools answer in every way a
// tool can: a Go error, an image only, an embedded text resource with a
// resource link, no answer until cancelled, and text.
func richMCP(t *testing.T) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "rich", Version: "test"}, nil)
	type in struct {
		City string `json:"city"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "fail_tool"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return nil, nil, errors.New("backend exploded")
	})
	sdk.AddTool(s, &sdk.Tool{Name: "image_tool"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("PNGDATA"), MIMEType: "image/png"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "resource_tool"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///lyon.txt", MIMEType: "text/plain", Text: "Lyon: 522000"}},
			&sdk.ResourceLink{URI: "file:///paris.txt", Name: "paris.txt"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "hang_tool"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ in) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	sdk.AddTool(s, &sdk.Tool{Name: "lookup_population"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"population":522000}`}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// recvAll sends msgs on a new Agent stream and returns every event and the
// final error (nil after a clean end).
func recvAll(t *testing.T, c llmrelayv1.GatewayServiceClient, msgs ...*llmrelayv1.AgentRequest) ([]*llmrelayv1.AgentResponse, error) {
	t.Helper()
	s, err := c.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := s.Send(m); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
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
	}
}

func setupReq(s *llmrelayv1.AgentSetup) *llmrelayv1.AgentRequest {
	return &llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: s}}
}

func resultReq(r *llmrelayv1.ToolResult) *llmrelayv1.AgentRequest {
	return &llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: r}}
}

// TestAgentSetupRefusedBeforeAccepted: a setup the first model call would
// refuse (unknown model, duplicate tool, hosted MCP off the Responses API)
// ends with its status alone: no setup_complete ("the run is accepted") and
// no failure event offering a conversation to retry from.
func TestAgentSetupRefusedBeforeAccepted(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	unknown := echoSetup(t)
	unknown.Model = "nope"
	dup := echoSetup(t)
	dup.Tools = append(dup.Tools, dup.Tools[0])
	badCall := echoSetup(t)
	badCall.Call = &llmrelayv1.CallOptions{Timeout: durationpb.New(-time.Second)}
	for _, tc := range []struct {
		name   string
		setup  *llmrelayv1.AgentSetup
		code   codes.Code
		reason string
		field  string
	}{
		{"unknown model", unknown, codes.NotFound, "MODEL_NOT_FOUND", "setup.model"},
		{"duplicate tool", dup, codes.InvalidArgument, "INVALID_REQUEST", "setup.tools[2].name"},
		{"bad call timeout", badCall, codes.InvalidArgument, "INVALID_REQUEST", "setup.call.timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := recvAll(t, c, setupReq(tc.setup))
			wantCode(t, err, tc.code, tc.field)
			if _, info, _ := statusDetails(t, err); info.GetReason() != tc.reason {
				t.Errorf("reason %q, want %q", info.GetReason(), tc.reason)
			}
			if len(evs) != 0 {
				t.Errorf("events before the refusal: %v", evs)
			}
		})
	}
	// An accepted setup is acknowledged before the first model event.
	evs, err := agentRun(context.Background(), t, c, echoSetup(t), answerAll)
	if err != nil || len(evs) < 2 || evs[0].GetSetupComplete() == nil || evs[1].GetModel().GetStart() == nil {
		t.Fatalf("first events %v (%v)", evs[:2], err)
	}
}

// TestAgentClientMessages: after the setup, a second setup is
// InvalidArgument naming setup; a message of a kind this server does not
// know (a newer client's) names message; a result naming another tool than
// its call names tool_result.name (Gemini keys results by name, so it would
// reach the wrong function), whether sent after or ahead of its call.
func TestAgentClientMessages(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	future := &llmrelayv1.AgentRequest{}
	future.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), []byte{}))
	for _, tc := range []struct {
		name  string
		msg   *llmrelayv1.AgentRequest
		field string
	}{
		{"second setup", setupReq(echoSetup(t)), "setup"},
		{"unknown kind", future, "message"},
		{"empty", &llmrelayv1.AgentRequest{}, "message"},
		{"empty call id", resultReq(&llmrelayv1.ToolResult{Content: "x"}), "tool_result.call_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := recvAll(t, c, setupReq(echoSetup(t)), tc.msg)
			wantCode(t, err, codes.InvalidArgument, tc.field)
			if f := evs[len(evs)-1].GetFailure(); f == nil || len(f.GetMessages()) != 1 {
				t.Errorf("last event %v, want a failure with the setup's conversation", evs[len(evs)-1])
			}
		})
	}

	// The builtin model's call ids for echoSetup, from a clean run.
	evs, err := agentRun(context.Background(), t, c, echoSetup(t), answerAll)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{} // name -> call id
	for _, ev := range evs {
		if r := ev.GetToolCallRequest(); r != nil {
			calls[r.GetName()] = r.GetCallId()
		}
	}
	_, err = agentRun(context.Background(), t, c, echoSetup(t), func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Name: "get_time", Content: "x"}
	})
	wantCode(t, err, codes.InvalidArgument, "tool_result.name")
	if !strings.Contains(err.Error(), calls["get_weather"]) {
		t.Errorf("error %v does not name the call", err)
	}
	_, err = recvAll(t, c, setupReq(echoSetup(t)),
		resultReq(&llmrelayv1.ToolResult{CallId: calls["get_time"], Name: "get_time", Content: "14:05"}),
		resultReq(&llmrelayv1.ToolResult{CallId: calls["get_weather"], Name: "get_time", Content: "sunny"}))
	wantCode(t, err, codes.InvalidArgument, "tool_result.name")
	// The right name is accepted, ahead or not.
	evs, err = recvAll(t, c, setupReq(echoSetup(t)),
		resultReq(&llmrelayv1.ToolResult{CallId: calls["get_time"], Name: "get_time", Content: "14:05"}),
		resultReq(&llmrelayv1.ToolResult{CallId: calls["get_weather"], Name: "get_weather", Content: "sunny"}))
	if err != nil || evs[len(evs)-1].GetEnd().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("run with named results: %v, last event %v", err, evs[len(evs)-1])
	}
}

// TestAgentOversizedResult: a result over the server's receive limit ends
// the run with ResourceExhausted (grpc-go writes that status itself the
// moment it refuses the message, so it carries no ErrorInfo), not a hang.
func TestAgentOversizedResult(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(echoSetup(t))); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			if grpcstatus.Code(err) != codes.ResourceExhausted {
				t.Fatalf("error %v", err)
			}
			return
		}
		if r := ev.GetToolCallRequest(); r != nil {
			// io.EOF: the server already ended the stream; Recv says how.
			if err := s.Send(resultReq(&llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: strings.Repeat("x", 5<<20)})); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		}
		if ev.GetEnd() != nil {
			t.Fatal("the run ended normally")
		}
	}
}

// TestAgentMixedRound: one round calls a client tool and five MCP tools in
// parallel, with text before the calls, against a priced model. Every MCP
// outcome reaches the model as a result keyed by its call id: a tool's Go
// error and a call past tool_timeout as error results (the run goes on), an
// image as a note saying what was left out (and a run warning), an embedded
// text resource as its text and a resource link as its MCP JSON. The text
// stays in the assistant turn beside the calls; each round's meta arrives
// in its model end event and its round record; the run's usage and cost
// are the exact integer sums of the rounds'.
func TestAgentMixedRound(t *testing.T) {
	t.Parallel()
	mcpSrv := richMCP(t)
	city := `{"city":"Lyon"}`
	up := providertest.Replay(t,
		chatStream("chatcmpl-Mixed1", "Let me check.", []chatCall{{"call_w", "get_weather", city}, {"call_f", "fail_tool", city},
			{"call_i", "image_tool", city}, {"call_r", "resource_tool", city}, {"call_h", "hang_tool", city}, {"call_p", "lookup_population", city}}, 101, 23),
		chatStream("chatcmpl-Mixed2", "Sunny, 522000 people.", nil, 233, 7))
	c, _ := startWith(t, pricedChatYAML(mcpSrv.URL), up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t)[:1],
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}, ToolTimeout: durationpb.New(150 * time.Millisecond)}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	var (
		requests  []string
		execs     = map[string]*llmrelayv1.AgentMcpToolExecution{}
		modelEnds []*llmrelayv1.ResponseMeta
		roundEnds []*llmrelayv1.AgentRound
		end       *llmrelayv1.AgentEnd
	)
	for _, ev := range evs {
		switch {
		case ev.GetToolCallRequest() != nil:
			requests = append(requests, ev.GetToolCallRequest().GetCallId())
		case ev.GetMcpToolExecution() != nil:
			execs[ev.GetMcpToolExecution().GetCall().GetCallId()] = ev.GetMcpToolExecution()
		case ev.GetModel().GetEnd() != nil:
			modelEnds = append(modelEnds, ev.GetModel().GetEnd().GetMeta())
		case ev.GetRoundEnd() != nil:
			roundEnds = append(roundEnds, ev.GetRoundEnd().GetRound())
		case ev.GetEnd() != nil:
			end = ev.GetEnd()
		}
	}
	if len(requests) != 1 || requests[0] != "call_w" || len(execs) != 5 || len(modelEnds) != 2 || len(roundEnds) != 1 || end == nil {
		t.Fatalf("requests %v, %d MCP executions, %d model ends, %d round ends, end %v", requests, len(execs), len(modelEnds), len(roundEnds), end)
	}
	want := map[string]struct {
		content string
		isError bool
		execErr string
	}{
		"call_w": {clientResults["get_weather"], false, ""},
		"call_f": {"backend exploded", true, ""},
		"call_i": {"[image (image/png, 7 bytes) omitted: tool results reach the model as text]", false, ""},
		"call_r": {"Lyon: 522000\n" + `{"type":"resource_link","uri":"file:///paris.txt","name":"paris.txt"}`, false, ""},
		"call_h": {"mcp server pop: call hang_tool: no answer within tool_timeout", true, "mcp server pop: call hang_tool: no answer within tool_timeout"},
		"call_p": {`{"population":522000}`, false, ""},
	}
	for id, w := range want {
		if x := execs[id]; id != "call_w" && (x.GetResult().GetContent() != w.content || x.GetResult().GetIsError() != w.isError ||
			x.GetError() != w.execErr || x.GetServer() != "pop" || x.GetRound() != 1) {
			t.Errorf("MCP execution %s: %v", id, x)
		}
	}
	if d := execs["call_h"].GetDuration().AsDuration(); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("the hanging call took %v, want about tool_timeout", d)
	}
	// The conversation: the text beside the calls, then every result in
	// the calls' order, each under its call id and tool name.
	msgs := end.GetMessages()
	if len(msgs) != 4 || msgs[1].GetParts()[0].GetText() != "Let me check." || len(msgs[1].GetParts()) != 7 || len(msgs[2].GetParts()) != 6 {
		t.Fatalf("conversation %v", msgs)
	}
	for i, p := range msgs[2].GetParts() {
		r, call := p.GetToolResult(), msgs[1].GetParts()[i+1].GetToolCall()
		w := want[r.GetCallId()]
		if r.GetCallId() != call.GetCallId() || r.GetName() != call.GetName() || r.GetContent() != w.content || r.GetIsError() != w.isError {
			t.Errorf("result %d: %v for call %v", i, r, call)
		}
	}
	// What the model was sent in round 2: the text and calls together, and
	// each result keyed by its call id.
	body := up.Requests()[1].Body
	if !bytes.Contains(body, []byte(`{"role":"assistant","content":"Let me check.","tool_calls":[`)) {
		t.Errorf("round 2 lost the text beside the calls: %s", body)
	}
	got := toolResults(t, body, "tool_call_id", "content")
	for id, w := range want {
		var s string
		if err := json.Unmarshal([]byte(got[id]), &s); err != nil || s != w.content {
			t.Errorf("round 2: result %s = %s, want %q", id, got[id], w.content)
		}
	}
	// One meta per round, the same in the model's end event and the round
	// record; the run's sums are exact.
	m := end.GetMeta()
	if len(m.GetRounds()) != 2 || !proto.Equal(m.GetRounds()[0], roundEnds[0]) {
		t.Fatalf("rounds %v, round end %v", m.GetRounds(), roundEnds[0])
	}
	var cost int64
	for i, r := range m.GetRounds() {
		if !proto.Equal(r.GetMeta(), modelEnds[i]) || r.GetMeta().GetAttempts() != 1 || r.GetRound() != int32(i+1) {
			t.Errorf("round %d meta %v, model end meta %v", i+1, r.GetMeta(), modelEnds[i])
		}
		cost += r.GetMeta().GetCost().GetAmountNanos()
	}
	// 101×0.15 + 23×0.60 and 233×0.15 + 7×0.60 (USD per million tokens), in nano-dollars.
	if cost != 15150+13800+34950+4200 || m.GetCost().GetAmountNanos() != cost || m.GetCost().GetCurrency() != "USD" {
		t.Errorf("cost %v, rounds' sum %d", m.GetCost(), cost)
	}
	wantUsage := &llmrelayv1.Usage{InputTokens: 334, OutputTokens: 30, TotalTokens: 364}
	if !proto.Equal(m.GetUsage(), wantUsage) || m.GetApiCalls() != 2 || m.GetModelCalls() != 2 || m.GetToolRounds() != 1 ||
		m.GetResponseId() != "chatcmpl-Mixed2" || m.GetResponseStatus() != "stop" || m.GetRounds()[0].GetToolCalls() != 6 {
		t.Errorf("meta %v", m)
	}
	if len(m.GetWarnings()) != 1 || !strings.Contains(m.GetWarnings()[0], "image (image/png, 7 bytes) omitted") ||
		!strings.Contains(m.GetWarnings()[0], "call_i") {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}

// TestAgentMCPDownAtCall: an MCP server reachable at setup that is gone
// when its tool is called gives the model an error result with the
// transport error (reported in the MCP execution); the run goes on. One
// unreachable at setup is Unavailable with MCP_SERVER_UNAVAILABLE, before
// setup_complete.
func TestAgentMCPDownAtCall(t *testing.T) {
	t.Parallel()
	mcpSrv := mcpServer(t, 0)
	// The MCP endpoint answers the handshake and the tool list, then drops
	// the connection of every tools/call: the server died in between.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req, err := http.NewRequestWithContext(r.Context(), r.Method, mcpSrv.URL+r.URL.Path, r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		req.Header = r.Header.Clone()
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		if _, err := io.Copy(w, res.Body); err != nil {
			t.Log(err)
		}
	}))
	t.Cleanup(front.Close)
	c := startBuiltinAgent(t, front.URL)
	setup := &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Lyon")}, Tools: agentTools(t)[:1],
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
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
	if exec == nil || !exec.GetResult().GetIsError() || exec.GetError() == "" || exec.GetResult().GetContent() != exec.GetError() ||
		!strings.Contains(exec.GetError(), "mcp server pop: call lookup_population") {
		t.Fatalf("execution %v", exec)
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || !strings.Contains(end.GetMessages()[3].GetParts()[0].GetText(), exec.GetError()) {
		t.Fatalf("end %v", end)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	c = startBuiltinAgent(t, down.URL)
	evs, err = agentRun(context.Background(), t, c, setup, answerAll)
	wantCode(t, err, codes.Unavailable, "setup.mcp_servers[0]")
	if _, info, _ := statusDetails(t, err); info.GetReason() != "MCP_SERVER_UNAVAILABLE" || len(evs) != 0 {
		t.Errorf("reason %q, events %v", info.GetReason(), evs)
	}
}

// TestAgentEmptyAnswer: a model that answers nothing (no text, no calls)
// ends the run with its finish reason, a warning, and a conversation with
// no empty assistant turn: the conversation is one a new setup accepts.
func TestAgentEmptyAnswer(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t,
		chatStream("chatcmpl-Empty1", "", []chatCall{{"call_w", "get_weather", `{"city":"Lyon"}`}}, 50, 10),
		chatStream("chatcmpl-Empty2", "", nil, 80, 0))
	c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")},
		Tools: agentTools(t)}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	msgs := end.GetMessages()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(msgs) != 3 || msgs[2].GetRole() != llmrelayv1.Role_ROLE_TOOL {
		t.Fatalf("end %v", end)
	}
	if w := end.GetMeta().GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "round 2: the model answered with nothing") {
		t.Errorf("warnings %q", w)
	}
	if m := end.GetMeta(); m.GetModelCalls() != 2 || m.GetUsage().GetTotalTokens() != 140 || len(m.GetRounds()) != 2 {
		t.Errorf("meta %v", m)
	}
	// The conversation continues as it is.
	b := startBuiltinAgent(t, "http://127.0.0.1:1")
	evs, err = agentRun(context.Background(), t, b, &llmrelayv1.AgentSetup{Model: "echo", Messages: msgs, Tools: agentTools(t)}, answerAll)
	if err != nil || evs[len(evs)-1].GetEnd() == nil {
		t.Fatalf("continuing the conversation: %v", err)
	}
}

// TestAgentMaxRoundsContinue: a run that ends at max_rounds returns the
// last assistant turn with its unanswered calls; sent back as is, the setup
// is InvalidArgument naming the first unanswered call (the provider would
// refuse it after the run was accepted); with the results appended, the
// run continues.
func TestAgentMaxRoundsContinue(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	setup := echoSetup(t)
	setup.MaxRounds = 1
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_MAX_ROUNDS || len(end.GetMessages()) != 2 {
		t.Fatalf("end %v", end)
	}
	next := &llmrelayv1.AgentSetup{Model: "echo", Messages: end.GetMessages(), Tools: agentTools(t)}
	evs, err = recvAll(t, c, setupReq(next))
	wantCode(t, err, codes.InvalidArgument, "setup.messages[1].parts[0].tool_call")
	calls := end.GetMessages()[1].GetParts()
	if !strings.Contains(err.Error(), calls[0].GetToolCall().GetCallId()) || len(evs) != 0 {
		t.Errorf("error %v, events %v", err, evs)
	}
	// One result of two is not enough either.
	results := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL}
	results.Parts = append(results.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
		CallId: calls[0].GetToolCall().GetCallId(), Content: "sunny"}}})
	next.Messages = append(end.GetMessages(), results)
	_, err = recvAll(t, c, setupReq(next))
	wantCode(t, err, codes.InvalidArgument, "setup.messages[1].parts[1].tool_call")
	results.Parts = append(results.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
		CallId: calls[1].GetToolCall().GetCallId(), Content: "14:05"}}})
	evs, err = agentRun(context.Background(), t, c, next, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	if end := evs[len(evs)-1].GetEnd(); end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(end.GetMessages()) != 4 {
		t.Fatalf("continued run %v", end)
	}
}
