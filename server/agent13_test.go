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

	"github.com/llmrelay/llmrelay/client"
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
	// A run that waits for results nobody sends ends at this deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	s, err := c.Agent(ctx)
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
		"call_i": {"[image (image/png, 7 bytes) omitted: the model cannot be given it in a tool result]", false, ""},
		"call_r": {"Lyon: 522000\n" + `{"type":"resource_link","uri":"file:///paris.txt","name":"paris.txt"}`, false, ""},
		"call_h": {"mcp server pop: call hang_tool: no answer within tool_timeout 150ms", true, "mcp server pop: call hang_tool: no answer within tool_timeout 150ms"},
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
	// The second: Chat Completions has no error flag on a tool result
	// (the failed calls' is_error), which the round's request left out.
	if len(m.GetWarnings()) != 2 || !strings.Contains(m.GetWarnings()[0], "image (image/png, 7 bytes) omitted") ||
		!strings.Contains(m.GetWarnings()[0], "call_i") || !strings.Contains(m.GetWarnings()[1], "is_error of 2 tool result(s) not sent") {
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

// TestAgentResultsAcrossRounds: over three rounds (openai-chat replays), a
// result for a call withdrawn in round 1 (tool_timeout, ERROR_RESULT) that
// arrives in round 2 is ignored (it crossed the cancellation) and the run
// completes; a result sent again in round 2 for a call answered in round 1
// is InvalidArgument ("already answered"), with the failure event carrying
// round 1 whole.
func TestAgentResultsAcrossRounds(t *testing.T) {
	t.Parallel()
	rounds := func() *providertest.Server {
		return providertest.Replay(t,
			chatStream("chatcmpl-Across1", "", []chatCall{{"call_a", "get_weather", `{"city":"Lyon"}`}, {"call_b", "get_time", `{"city":"Lyon"}`}}, 40, 10),
			chatStream("chatcmpl-Across2", "", []chatCall{{"call_c", "get_weather", `{"city":"Paris"}`}}, 60, 5),
			chatStream("chatcmpl-Across3", "Done.", nil, 80, 2))
	}
	up := rounds()
	c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon, then Paris")}, Tools: agentTools(t),
		ToolTimeout: durationpb.New(100 * time.Millisecond), OnToolTimeout: llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT}
	s, err := c.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(setup)); err != nil {
		t.Fatal(err)
	}
	var end *llmrelayv1.AgentEnd
	for end == nil {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var res []*llmrelayv1.ToolResult
		switch {
		case ev.GetToolCallRequest().GetCallId() == "call_a":
			res = append(res, &llmrelayv1.ToolResult{CallId: "call_a", Content: "sunny"}) // call_b: no answer in time
		case ev.GetToolCallCancellation() != nil:
			if ids := ev.GetToolCallCancellation().GetCallIds(); len(ids) != 1 || ids[0] != "call_b" {
				t.Fatalf("cancellation %v", ev.GetToolCallCancellation())
			}
			res = append(res, &llmrelayv1.ToolResult{CallId: "call_b", Content: "14:05, late"})
		case ev.GetToolCallRequest().GetCallId() == "call_c":
			res = append(res, &llmrelayv1.ToolResult{CallId: "call_c", Content: "rainy"})
		}
		for _, r := range res {
			if err := s.Send(resultReq(r)); err != nil {
				t.Fatal(err)
			}
		}
		end = ev.GetEnd()
	}
	msgs := end.GetMessages()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(msgs) != 6 || end.GetMeta().GetToolRounds() != 2 {
		t.Fatalf("end %v", end)
	}
	if r := msgs[2].GetParts()[1].GetToolResult(); r.GetCallId() != "call_b" || !r.GetIsError() || strings.Contains(r.GetContent(), "late") {
		t.Errorf("withdrawn call's result %v", r)
	}
	if r := msgs[4].GetParts()[0].GetToolResult(); r.GetCallId() != "call_c" || r.GetContent() != "rainy" {
		t.Errorf("round 2 result %v", r)
	}

	up = rounds()
	c, _ = startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
	setup.ToolTimeout, setup.OnToolTimeout = nil, llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_UNSPECIFIED
	evs, err := agentRun(context.Background(), t, c, setup, func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		if r.GetCallId() == "call_c" {
			return &llmrelayv1.ToolResult{CallId: "call_a", Content: "sunny again"} // round 1's call
		}
		return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: "ok"}
	})
	wantCode(t, err, codes.InvalidArgument, "tool_result.call_id")
	if !strings.Contains(err.Error(), `"call_a" was already answered`) {
		t.Errorf("error %v", err)
	}
	if f := evs[len(evs)-1].GetFailure(); f.GetRound() != 2 || len(f.GetMessages()) != 3 || f.GetMeta().GetToolRounds() != 1 {
		t.Errorf("failure %v", f)
	}
}

// TestAgentHalfCloseAfterResults: a client that sends its results and then
// closes its side (all it will ever send) gets the whole run when the later
// rounds need nothing more from it.
func TestAgentHalfCloseAfterResults(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	s, err := c.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(echoSetup(t))); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r := ev.GetToolCallRequest(); r != nil {
			if err := s.Send(resultReq(answerAll(r))); err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if end := ev.GetEnd(); end != nil {
			if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(end.GetMessages()) != 4 {
				t.Fatalf("end %v", end)
			}
			break
		}
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v", err)
	}
}

// blockingMCP is an MCP server whose one tool, wait_here, reports its start
// and then its cancellation.
func blockingMCP(t *testing.T, started, cancelled chan<- struct{}) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	s := sdk.NewServer(&sdk.Implementation{Name: "block", Version: "test"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "wait_here"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
		case <-release:
		}
		return nil, nil, ctx.Err()
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // first: a tool never cancelled must not keep srv.Close waiting
	return srv
}

// TestAgentCancelMidMCPTool: a cancel message while an MCP tool runs ends
// the RPC with Canceled, without a failure event, and cancels the MCP call
// (the MCP server sees its request's context end). The gRPC deadline
// passing while the same tool runs ends the RPC with DeadlineExceeded and
// cancels the call too.
func TestAgentCancelMidMCPTool(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan struct{}, 4), make(chan struct{}, 4)
	c := startBuiltinAgent(t, blockingMCP(t, started, cancelled).URL)
	setup := &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Lyon")},
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("the MCP tool was not %s", what)
		}
	}
	s, err := c.Agent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(setup)); err != nil {
		t.Fatal(err)
	}
	wait(started, "called")
	if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Cancel{Cancel: &llmrelayv1.AgentCancel{Reason: "enough"}}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			wantCode(t, err, codes.Canceled, "")
			break
		}
		if ev.GetFailure() != nil || ev.GetEnd() != nil {
			t.Fatalf("event after the cancel: %v", ev)
		}
	}
	wait(cancelled, "cancelled by the cancel message")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = agentRun(ctx, t, c, setup, nil)
	if grpcstatus.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("error %v", err)
	}
	wait(started, "called")
	wait(cancelled, "cancelled at the deadline")
}

// TestAgentMCPCollisions: two MCP servers offering the same tool name (here
// the same server twice) are InvalidArgument naming the second, before any
// event.
func TestAgentMCPCollisions(t *testing.T) {
	t.Parallel()
	srv := mcpServer(t, 0)
	c := startBuiltinAgent(t, srv.URL)
	setup := echoSetup(t)
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Name: "pop"}, {Url: srv.URL + "/allowed"}}
	evs, err := recvAll(t, c, setupReq(setup))
	wantCode(t, err, codes.InvalidArgument, "setup.mcp_servers[1]")
	if !strings.Contains(err.Error(), `"lookup_population"`) || len(evs) != 0 {
		t.Errorf("error %v, events %v", err, evs)
	}
}

// TestAgentCallIDReusedAcrossRounds: a provider that uses a call id again
// in a later round (here "call_0" in both) gets each round's call answered:
// the round-2 result is not "already answered", nor ignored as the late
// answer of a withdrawn call.
func TestAgentCallIDReusedAcrossRounds(t *testing.T) {
	t.Parallel()
	for _, withdrawn := range []bool{false, true} {
		t.Run(fmt.Sprintf("withdrawn=%v", withdrawn), func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t,
				chatStream("chatcmpl-Reuse1", "", []chatCall{{"call_0", "get_weather", `{"city":"Lyon"}`}}, 30, 5),
				chatStream("chatcmpl-Reuse2", "", []chatCall{{"call_0", "get_weather", `{"city":"Paris"}`}}, 50, 5),
				chatStream("chatcmpl-Reuse3", "Lyon and Paris are sunny.", nil, 70, 6))
			c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
			setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon and Paris")}, Tools: agentTools(t)}
			if withdrawn {
				setup.ToolTimeout = durationpb.New(100 * time.Millisecond)
				setup.OnToolTimeout = llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT
			}
			evs, err := agentRun(context.Background(), t, c, setup, func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
				if withdrawn && r.GetRound() == 1 {
					return nil // round 1's call_0 is withdrawn at tool_timeout
				}
				return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: "sunny in " + r.GetArguments()}
			})
			if err != nil {
				t.Fatal(err)
			}
			end := evs[len(evs)-1].GetEnd()
			msgs := end.GetMessages()
			if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(msgs) != 6 {
				t.Fatalf("end %v", end)
			}
			if r := msgs[4].GetParts()[0].GetToolResult(); r.GetCallId() != "call_0" || r.GetContent() != `sunny in {"city":"Paris"}` {
				t.Errorf("round 2 result %v", r)
			}
			if r := msgs[2].GetParts()[0].GetToolResult(); r.GetIsError() != withdrawn {
				t.Errorf("round 1 result %v", r)
			}
		})
	}
}

// TestClientAgentReusedIDWithdrawn: client.Agent stops the handler of a
// withdrawn call even when the provider used its id in an earlier round
// whose handler (deaf to its own withdrawal) ended in between: the older
// handler's end does not forget the newer call.
func TestClientAgentReusedIDWithdrawn(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t,
		chatStream("chatcmpl-ReuseW1", "", []chatCall{{"call_0", "get_time", `{"city":"Lyon"}`}}, 30, 5),
		chatStream("chatcmpl-ReuseW2", "", []chatCall{{"call_0", "get_time", `{"city":"Paris"}`}}, 50, 5),
		chatStream("chatcmpl-ReuseW3", "No time.", nil, 70, 2))
	c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
	round2 := make(chan struct{})
	cause := make(chan error, 1)
	a := client.Agent{Client: &client.Client{Gateway: c}, Tools: map[string]client.ToolFunc{
		"get_time": func(ctx context.Context, args string) (string, error) {
			if strings.Contains(args, "Lyon") {
				<-round2 // ignores its withdrawal, ends once round 2's call runs
				return "late", nil
			}
			close(round2)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return "", ctx.Err()
		}}}
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("time?")}, Tools: agentTools(t)[1:],
		ToolTimeout: durationpb.New(100 * time.Millisecond), OnToolTimeout: llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT}
	res, err := a.Run(context.Background(), setup)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-cause; !errors.Is(err, client.ErrToolCallCancelled) {
		t.Errorf("round 2 handler's cause %v, want its withdrawal", err)
	}
	if res.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(res.Messages) != 6 {
		t.Fatalf("result %v", res)
	}
}

// TestAgentRequestMCPURLPrefix: an allowed prefix is compared as a URL, not
// as a string: with a prefix written without a trailing slash, a URL whose
// user info or longer host or port starts like it is PermissionDenied (not
// a connection to another host), and so is a path climbing out of an
// allowed path with dot segments, even percent-encoded.
func TestAgentRequestMCPURLPrefix(t *testing.T) {
	t.Parallel()
	srv := mcpServer(t, 0)
	yaml := strings.ReplaceAll(builtinAgentYAML, "{{MCP}}", srv.URL)
	yaml = strings.Replace(yaml, `allow_request_mcp_urls: ["`+srv.URL+`/allowed"]`, `allow_request_mcp_urls: ["`+srv.URL+`/allowed", "http://127.0.0.1:1", "http://localhost"]`, 1)
	c, _ := startWith(t, yaml, "")
	for _, u := range []string{
		"http://127.0.0.1:1@" + strings.TrimPrefix(srv.URL, "http://") + "/mcp", // user info: the host is the test server's
		"http://127.0.0.1:10/mcp",      // a longer port
		"http://localhost.invalid/mcp", // a longer host
		srv.URL + "/allowed/../mcp",
		srv.URL + "/allowed/%2e%2e/mcp",
		srv.URL + "/allowedX/../allowed/./mcp",
	} {
		setup := echoSetup(t)
		setup.McpServers = []*llmrelayv1.AgentMcpServer{{Url: u}}
		evs, err := recvAll(t, c, setupReq(setup))
		wantCode(t, err, codes.PermissionDenied, "setup.mcp_servers[0].url")
		if len(evs) != 0 {
			t.Errorf("%s: events %v", u, evs)
		}
	}
	// Under the prefix, the server is used.
	setup := echoSetup(t)
	setup.Tools = setup.Tools[:1]
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Url: srv.URL + "/allowed/mcp"}}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil || evs[0].GetSetupComplete() == nil || len(evs[0].GetSetupComplete().GetTools()) != 2 {
		t.Fatalf("allowed URL: %v, first event %v", err, evs[0])
	}
}

// TestAgentMCPOverSSE: an MCP server reached over the SSE transport (a
// request URL with transport sse) executes its tools in the run; its event
// stream used to die with the setup's connect timeout, so every call was
// an EOF error result.
func TestAgentMCPOverSSE(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "population", Version: "test"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "lookup_population"}, func(context.Context, *sdk.CallToolRequest, struct {
		City string `json:"city"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"population":522000}`}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	c := startBuiltinAgent(t, srv.URL)
	setup := &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Lyon")}, Tools: agentTools(t)[:1],
		McpServers: []*llmrelayv1.AgentMcpServer{{Url: srv.URL + "/allowed", Transport: "sse"}}}
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
	if exec.GetError() != "" || exec.GetResult().GetIsError() || exec.GetResult().GetContent() != `{"population":522000}` ||
		exec.GetServer() != strings.TrimPrefix(srv.URL, "http://") {
		t.Fatalf("execution %v", exec)
	}
}

// TestAgentRetriedRound: a round whose model call was retried (a 503, then
// the stream) reports its attempts and retry reason in its meta, and the
// run's api_calls counts every HTTP request while model_calls counts rounds.
func TestAgentRetriedRound(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	unavailable := providertest.Recording{Status: 503, Header: h,
		Body: []byte(`{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`)}
	up := providertest.Replay(t, unavailable,
		chatStream("chatcmpl-Retry1", "", []chatCall{{"call_w", "get_weather", `{"city":"Lyon"}`}}, 30, 5),
		chatStream("chatcmpl-Retry2", "Sunny.", nil, 50, 2))
	yaml := "defaults:\n  retry: {max_attempts: 3, base_delay: 1ms, max_delay: 5ms}\n" + pricedChatYAML("http://127.0.0.1:1")
	c, _ := startWith(t, yaml, up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")},
		Tools: agentTools(t)}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	m := evs[len(evs)-1].GetEnd().GetMeta()
	r1 := m.GetRounds()[0].GetMeta()
	if r1.GetAttempts() != 2 || len(r1.GetRetryReasons()) != 1 || r1.GetRetryReasons()[0].GetUpstreamStatus() != 503 {
		t.Errorf("round 1 meta: attempts %d, retry reasons %v", r1.GetAttempts(), r1.GetRetryReasons())
	}
	if m.GetApiCalls() != 3 || m.GetModelCalls() != 2 || m.GetRounds()[1].GetMeta().GetAttempts() != 1 || len(up.Requests()) != 3 {
		t.Errorf("meta: api_calls %d, model_calls %d; %d upstream requests", m.GetApiCalls(), m.GetModelCalls(), len(up.Requests()))
	}
}
