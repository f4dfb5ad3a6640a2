package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// hugeMCP is an MCP server whose one tool, big_tool, answers text: "x"
// then n two-byte runes (every rune starts at an odd offset).
func hugeMCP(t *testing.T, n int) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "huge", Version: "test"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "big_tool"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "x" + strings.Repeat("é", n)}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentHugeMCPResultCut: an MCP tool answering 6 MiB of text (under
// limits.max_response_bytes, over limits.max_send_message_bytes) used to
// end the run with ResourceExhausted: its mcp_tool_execution event could
// not be sent. The result is now cut to a quarter of the send limit at a
// rune boundary, with a note for the model and a run warning, and the run
// goes on; the model gets the cut result.
func TestAgentHugeMCPResultCut(t *testing.T) {
	t.Parallel()
	mcpSrv := hugeMCP(t, 3<<20)
	up := providertest.Replay(t,
		chatStream("chatcmpl-Huge1", "", []chatCall{{"call_b", "big_tool", `{}`}}, 40, 10),
		chatStream("chatcmpl-Huge2", "That is long.", nil, 90, 8))
	c, _ := startWith(t, pricedChatYAML(mcpSrv.URL), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("big")},
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}, nil)
	if err != nil {
		t.Fatalf("error %v", err)
	}
	var exec *llmrelayv1.AgentMcpToolExecution
	for _, ev := range evs {
		if x := ev.GetMcpToolExecution(); x != nil {
			exec = x
		}
	}
	const bound, total = 1 << 20, 1 + 2*(3<<20) // a quarter of the default 4 MiB; the tool's answer
	kept := bound - 1                           // byte bound-1 starts a rune: the cut does not split one
	wantNote := "\n[result cut: " + strconv.Itoa(total-kept) + " of " + strconv.Itoa(total) + " bytes omitted]"
	content := exec.GetResult().GetContent()
	if exec.GetError() != "" || exec.GetResult().GetIsError() || !strings.HasSuffix(content, wantNote) ||
		len(content) != kept+len(wantNote) || !utf8.ValidString(content) || !strings.HasPrefix(content, "xé") {
		t.Fatalf("execution: error %q, is_error %v, %d bytes ending %q", exec.GetError(), exec.GetResult().GetIsError(), len(content), content[max(0, len(content)-80):])
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || end.GetMessages()[2].GetParts()[0].GetToolResult().GetContent() != content {
		t.Fatalf("end: %v", end.GetFinishReason())
	}
	if !hasWarning(end.GetMeta().GetWarnings(), "round 1: MCP server pop, tool big_tool (call call_b): result of "+strconv.Itoa(total)+" bytes cut to its first "+strconv.Itoa(kept)) {
		t.Errorf("warnings %q", end.GetMeta().GetWarnings())
	}
	got := toolResults(t, up.Requests()[1].Body, "tool_call_id", "content")
	var sent string
	if err := json.Unmarshal([]byte(got["call_b"]), &sent); err != nil || sent != content {
		t.Errorf("round 2 result: %d bytes (%v)", len(sent), err)
	}
}

// TestAgentUnknownToolInMixedRound: one round calls a client tool, a tool
// nobody offered, an MCP tool and a second client tool (answered with
// is_error). The client is asked for its two calls only, the MCP call is
// reported, and the model gets the four results in the calls' order, each
// under its call id: the unknown tool's as an error result. The run says
// in a warning which call named an unknown tool (no event showed it: the
// client learnt of it only by reading the conversation); the client's
// error flag stays on its result in the conversation.
func TestAgentUnknownToolInMixedRound(t *testing.T) {
	t.Parallel()
	mcpSrv := richMCP(t)
	up := providertest.Replay(t,
		chatStream("chatcmpl-Unk1", "", []chatCall{{"call_w", "get_weather", `{"city":"Lyon"}`}, {"call_u", "nope_tool", `{}`},
			{"call_p", "lookup_population", `{"city":"Lyon"}`}, {"call_t", "get_time", `{"city":"Lyon"}`}}, 40, 10),
		chatStream("chatcmpl-Unk2", "Sunny; no clock.", nil, 90, 5))
	c, _ := startWith(t, pricedChatYAML(mcpSrv.URL), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon")},
		Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}, func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		if r.GetName() == "get_time" {
			return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: "clock broken", IsError: true}
		}
		return answerAll(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, ev := range evs {
		switch {
		case ev.GetToolCallRequest() != nil:
			seq = append(seq, "request "+ev.GetToolCallRequest().GetCallId())
		case ev.GetMcpToolExecution() != nil:
			seq = append(seq, "mcp "+ev.GetMcpToolExecution().GetCall().GetCallId())
		case ev.GetRoundEnd() != nil:
			seq = append(seq, "round_end")
		case ev.GetEnd() != nil:
			seq = append(seq, "end")
		}
	}
	if want := "request call_w,request call_t,mcp call_p,round_end,end"; strings.Join(seq, ",") != want {
		t.Errorf("events %v, want %s", seq, want)
	}
	end := evs[len(evs)-1].GetEnd()
	want := []struct {
		id, content string
		isError     bool
	}{
		{"call_w", clientResults["get_weather"], false},
		{"call_u", `unknown tool "nope_tool"`, true},
		{"call_p", `{"population":522000}`, false},
		{"call_t", "clock broken", true},
	}
	results := end.GetMessages()[2].GetParts()
	if len(results) != len(want) {
		t.Fatalf("results %v", results)
	}
	for i, w := range want {
		r := results[i].GetToolResult()
		if r.GetCallId() != w.id || r.GetContent() != w.content || r.GetIsError() != w.isError {
			t.Errorf("result %d: %v, want %+v", i, r, w)
		}
	}
	// The model was sent the results in the same order.
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(up.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range body.Messages {
		if m.Role == "tool" {
			order = append(order, m.ToolCallID)
		}
	}
	if strings.Join(order, ",") != "call_w,call_u,call_p,call_t" {
		t.Errorf("round 2 results in order %v", order)
	}
	if !hasWarning(end.GetMeta().GetWarnings(), `round 1: the model called "nope_tool" (call call_u), which is neither a client tool nor an MCP tool of the run`) {
		t.Errorf("warnings %q", end.GetMeta().GetWarnings())
	}
}

// TestAgentResultRightAfterRound: a client that knows the next round's
// call id sends that result right after the round's last one. Whether it
// was taken as sent ahead or refused as "not a call the server asked
// for" depended on whether the loop had already started the next model
// call; it is now kept for the next round whatever the timing (nothing
// was awaited any more), and a result for a call no round makes is still
// refused when the next round's calls are known.
func TestAgentResultRightAfterRound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, nextID string
		wantErr      bool
	}{{"next round's call", "call_c", false}, {"no such call", "call_z", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t,
				chatStream("chatcmpl-Next1", "", []chatCall{{"call_a", "get_weather", `{"city":"Lyon"}`}}, 40, 10),
				chatStream("chatcmpl-Next2", "", []chatCall{{"call_c", "get_weather", `{"city":"Paris"}`}}, 60, 5),
				chatStream("chatcmpl-Next3", "Both sunny.", nil, 80, 3))
			c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
			setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon, then Paris")}, Tools: agentTools(t)}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := c.Agent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(setupReq(setup)); err != nil {
				t.Fatal(err)
			}
			var evs []*llmrelayv1.AgentResponse
			for {
				ev, err := s.Recv()
				if err != nil {
					if !tc.wantErr {
						t.Fatalf("error %v", err)
					}
					wantCode(t, err, codes.InvalidArgument, "tool_result.call_id")
					if !strings.Contains(err.Error(), `"call_z" is not a call the server asked for`) {
						t.Errorf("error %v", err)
					}
					if f := runFailure(t, evs); f.GetRound() != 2 || len(f.GetMessages()) != 3 {
						t.Errorf("failure %v", f)
					}
					return
				}
				evs = append(evs, ev)
				if ev.GetToolCallRequest().GetCallId() == "call_a" {
					for _, r := range []*llmrelayv1.ToolResult{{CallId: "call_a", Content: "sunny"}, {CallId: tc.nextID, Content: "sunny too"}} {
						if err := s.Send(resultReq(r)); err != nil {
							t.Fatal(err)
						}
					}
				}
				if end := ev.GetEnd(); end != nil {
					if tc.wantErr {
						t.Fatal("the run ended normally")
					}
					// Each round's stream names its own calls in its deltas.
					var deltas []string
					round := 0
					for _, ev := range evs {
						if ev.GetModel().GetStart() != nil {
							round++
						}
						if d := ev.GetModel().GetToolCallDelta(); d != nil {
							deltas = append(deltas, strconv.Itoa(round)+":"+d.GetCallId())
						}
					}
					if strings.Join(deltas, ",") != "1:call_a,2:call_c" {
						t.Errorf("tool call deltas by round %v", deltas)
					}
					if r := end.GetMessages()[4].GetParts()[0].GetToolResult(); end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
						r.GetCallId() != "call_c" || r.GetContent() != "sunny too" {
						t.Fatalf("end %v", end)
					}
					return
				}
			}
		})
	}
}

// builtinCallIDs are the echo model's call ids for echoSetup, by tool name.
func builtinCallIDs(t *testing.T, c llmrelayv1.GatewayServiceClient) map[string]string {
	t.Helper()
	evs, err := agentRun(context.Background(), t, c, echoSetup(t), answerAll)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, ev := range evs {
		if r := ev.GetToolCallRequest(); r != nil {
			ids[r.GetName()] = r.GetCallId()
		}
	}
	if len(ids) != 2 {
		t.Fatalf("call ids %v", ids)
	}
	return ids
}

// gatedChat is a Chat Completions upstream whose one answer streams two
// get_weather calls (call_1, call_2), then waits for release before its
// finish reason (finish: "tool_calls", or "length" with call_2's arguments
// cut) and usage.
func gatedChat(t *testing.T, finish string, release <-chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, `data: {"id":"chatcmpl-Gated1","object":"chat.completion.chunk","created":1763900000,"model":"gpt-4o-mini-2024-07-18",`+
				`"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`+"\n\n", delta, finish)
		}
		args2 := `{\"city\":\"Paris\"}`
		if finish == "length" {
			args2 = `{\"city\":\"Pa`
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		chunk(`{"role":"assistant","content":""}`, "null")
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}}]}`, "null")
		chunk(`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"`+args2+`"}}]}`, "null")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		chunk(`{}`, strconv.Quote(finish))
		fmt.Fprint(w, `data: {"id":"chatcmpl-Gated1","object":"chat.completion.chunk","created":1763900000,"model":"gpt-4o-mini-2024-07-18","choices":[],`+
			`"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentResultsForCallsNotRun: a client answering calls as soon as
// their deltas show them, while the model call still runs, used to fail
// the run when the round's calls were not run after all (the last round
// of max_rounds, or a turn the output token limit cut): its results were
// unknown call ids, and the failure's conversation lost the turn the
// model was paid for. They are now left out (with a warning when they
// arrived before the turn ended; after it they reach no one) and the run
// ends as it would have: MAX_ROUNDS with the turn and its unanswered
// calls, or LENGTH.
func TestAgentResultsForCallsNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		finish    string
		maxRounds int32
		want      llmrelayv1.FinishReason
	}{
		{"tool_calls", 1, llmrelayv1.FinishReason_FINISH_REASON_MAX_ROUNDS},
		{"length", 0, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
	} {
		t.Run(tc.finish, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			up := gatedChat(t, tc.finish, release)
			c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:1"), up.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := c.Agent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(setupReq(&llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon and Paris")},
				Tools: agentTools(t), MaxRounds: tc.maxRounds})); err != nil {
				t.Fatal(err)
			}
			answered := map[string]bool{}
			for {
				ev, err := s.Recv()
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if ev.GetToolCallRequest() != nil {
					t.Errorf("a call was requested: %v", ev)
				}
				if id := ev.GetModel().GetToolCallDelta().GetCallId(); id != "" && !answered[id] {
					answered[id] = true
					if err := s.Send(resultReq(&llmrelayv1.ToolResult{CallId: id, Content: "sunny"})); err != nil {
						t.Fatal(err)
					}
					if len(answered) == 2 {
						close(release)
					}
				}
				if end := ev.GetEnd(); end != nil {
					if end.GetFinishReason() != tc.want || len(end.GetMessages()) != 2 || len(end.GetMessages()[1].GetParts()) != 2 {
						t.Fatalf("end %v", end)
					}
					for _, w := range end.GetMeta().GetWarnings() {
						// The second result may reach the server after the
						// round ended (the upstream is released once both
						// were sent, not once both were read): either or both.
						if strings.Contains(w, "results sent") && w != "round 1: results sent for calls call_1, call_2 were not used: the round's calls were not run" &&
							w != "round 1: results sent for calls call_1 were not used: the round's calls were not run" &&
							w != "round 1: results sent for calls call_2 were not used: the round's calls were not run" {
							t.Errorf("warning %q", w)
						}
					}
					return
				}
			}
		})
	}
}

// TestAgentUnknownModelBeforeMCP: a setup naming an unknown model is
// NotFound (MODEL_NOT_FOUND, setup.model) before any MCP server is
// contacted; the servers used to be connected first, so an unreachable
// one answered Unavailable for a setup whose fault was its model, and a
// reachable one was connected for nothing.
func TestAgentUnknownModelBeforeMCP(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	c := startBuiltinAgent(t, down.URL)
	setup := echoSetup(t)
	setup.Model = "nope"
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Name: "pop"}}
	evs, err := recvAll(t, c, setupReq(setup))
	wantCode(t, err, codes.NotFound, "setup.model")
	if _, info, _ := statusDetails(t, err); info.GetReason() != "MODEL_NOT_FOUND" || len(evs) != 0 {
		t.Errorf("reason %q, events %v", info.GetReason(), evs)
	}
	setup.Model = ""
	_, err = recvAll(t, c, setupReq(setup))
	wantCode(t, err, codes.InvalidArgument, "setup.model")
}

// TestAgentFirstMessage: a stream whose first message is not a setup (an
// empty message, a cancel, a result, or none before the client closes its
// side) is InvalidArgument naming setup, with no event.
func TestAgentFirstMessage(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	for name, msgs := range map[string][]*llmrelayv1.AgentRequest{
		"empty":  {{}},
		"none":   nil,
		"cancel": {{Message: &llmrelayv1.AgentRequest_Cancel{Cancel: &llmrelayv1.AgentCancel{Reason: "never mind"}}}},
		"result": {resultReq(&llmrelayv1.ToolResult{CallId: "call_1", Content: "x"})},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := c.Agent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if err := s.Send(m); err != nil && !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			ev, err := s.Recv()
			if ev != nil {
				t.Fatalf("event %v", ev)
			}
			wantCode(t, err, codes.InvalidArgument, "setup")
		})
	}
}

// TestAgentRound2FailsMidStream: round 2's model stream fails after its
// first text (Anthropic's overloaded_error event). The client saw round
// 2's start and text, then gets the failure event (round 2, the
// conversation of the whole round 1, the meta of both model calls with
// usage and cost summed, the failed call's included) and the status:
// Unavailable, UPSTREAM_UNAVAILABLE, with the failed call's meta as
// FailedCallMeta, the same as the failure's last round.
func TestAgentRound2FailsMidStream(t *testing.T) {
	t.Parallel()
	mcpSrv := mcpServer(t, 0)
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("request-id", "req_011AgtR20Overload")
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5-20250929\",\"id\":\"msg_01AgtR20Over\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":900,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Lyon is\"}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/anthropic_round1.http"), providertest.Recording{Status: 200, Header: h, Body: []byte(body)})
	y := strings.ReplaceAll(providerYAML("anthropic", "claude-sonnet-4-5", "anthropic-messages"), "{{MCP}}", mcpSrv.URL)
	y = strings.Replace(y, "    capabilities: {tools: {format: anthropic-messages}}\n",
		"    capabilities: {tools: {format: anthropic-messages}}\n    prices: {input: 3, output: 15}\n", 1)
	c, _ := startWith(t, y, up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon")},
		Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}, answerAll)
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_UNAVAILABLE" || info.GetMetadata()["upstreamRequestId"] != "req_011AgtR20Overload" {
		t.Fatalf("status %v (%v)", err, info)
	}
	var failed *llmrelayv1.ResponseMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f.GetMeta()
		}
	}
	n := len(evs)
	if n < 4 || evs[n-3].GetModel().GetStart().GetResponseId() != "msg_01AgtR20Over" || evs[n-2].GetModel().GetTextDelta().GetText() != "Lyon is" {
		t.Fatalf("last events %v", evs[max(0, n-3):])
	}
	f := runFailure(t, evs)
	m := f.GetMeta()
	if f.GetRound() != 2 || len(f.GetMessages()) != 3 || len(f.GetMessages()[2].GetParts()) != 3 {
		t.Fatalf("failure round %d, %d messages", f.GetRound(), len(f.GetMessages()))
	}
	if len(m.GetRounds()) != 2 || !proto.Equal(m.GetRounds()[1].GetMeta(), failed) || m.GetModelCalls() != 2 || m.GetApiCalls() != 2 || m.GetToolRounds() != 1 {
		t.Fatalf("failure meta %v, failed call %v", m, failed)
	}
	// Round 1: 520 in, 160 out; round 2 (failed): 900 in, 1 out. At 3 and
	// 15 USD per million tokens, in nano-dollars.
	wantUsage := &llmrelayv1.Usage{InputTokens: 1420, OutputTokens: 161, TotalTokens: 1581}
	if !proto.Equal(m.GetUsage(), wantUsage) || m.GetCost().GetAmountNanos() != 520*3000+160*15000+900*3000+1*15000 ||
		failed.GetCost().GetAmountNanos() != 900*3000+15000 {
		t.Errorf("usage %v, cost %v (failed call %v)", m.GetUsage(), m.GetCost(), failed.GetCost())
	}
}

// TestAgentEndsWithoutLeaks: however a run ends while an MCP tool runs or
// the client's results are awaited (a cancel message or the RPC cancelled
// while the MCP tool runs; a bad result, the client closing its side or a
// tool timeout while results are awaited), the MCP call is cancelled at
// the server and no goroutine of the run outlives it (the
// reader of the client's messages, the MCP calls, the sessions).
// Not parallel: goleak sees every goroutine of the process.
func TestAgentEndsWithoutLeaks(t *testing.T) {
	started, cancelled := make(chan struct{}, 4), make(chan struct{}, 4)
	c := startBuiltinAgent(t, blockingMCP(t, started, cancelled).URL)
	// A first run opens the gRPC connection the next ones share.
	builtinCallIDs(t, c)
	mcpSetup := func() *llmrelayv1.AgentSetup {
		s := echoSetup(t)
		s.Tools = nil
		s.McpServers = []*llmrelayv1.AgentMcpServer{{Name: "pop"}}
		return s
	}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("the MCP tool was not %s", what)
		}
	}
	for _, tc := range []struct {
		name  string
		setup *llmrelayv1.AgentSetup
		mcp   bool
		act   func(s llmrelayv1.GatewayService_AgentClient, cancel context.CancelFunc) error
		code  codes.Code
	}{
		{"cancel message", mcpSetup(), true, func(s llmrelayv1.GatewayService_AgentClient, _ context.CancelFunc) error {
			return s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Cancel{Cancel: &llmrelayv1.AgentCancel{}}})
		}, codes.Canceled},
		{"rpc cancelled", mcpSetup(), true, func(_ llmrelayv1.GatewayService_AgentClient, cancel context.CancelFunc) error {
			cancel()
			return nil
		}, codes.Canceled},
		{"bad result", echoSetup(t), false, func(s llmrelayv1.GatewayService_AgentClient, _ context.CancelFunc) error {
			return s.Send(resultReq(&llmrelayv1.ToolResult{CallId: "call_nobody", Content: "x"}))
		}, codes.InvalidArgument},
		{"half-closed", echoSetup(t), false, func(s llmrelayv1.GatewayService_AgentClient, _ context.CancelFunc) error {
			return s.CloseSend()
		}, codes.InvalidArgument},
		{"tool timeout", func() *llmrelayv1.AgentSetup {
			s := echoSetup(t)
			s.ToolTimeout = durationpb.New(20 * time.Millisecond)
			return s
		}(), false, func(llmrelayv1.GatewayService_AgentClient, context.CancelFunc) error { return nil }, codes.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s, err := c.Agent(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Send(setupReq(tc.setup)); err != nil {
					t.Fatal(err)
				}
				acted := false
				if tc.mcp {
					wait(started, "called")
					if err := tc.act(s, cancel); err != nil && !errors.Is(err, io.EOF) {
						t.Fatal(err)
					}
					acted = true
				}
				for {
					ev, err := s.Recv()
					if err != nil {
						if grpcstatus.Code(err) != tc.code {
							t.Fatalf("error %v, want %v", err, tc.code)
						}
						break
					}
					if ev.GetToolCallRequest() != nil && !acted {
						if err := tc.act(s, cancel); err != nil && !errors.Is(err, io.EOF) {
							t.Fatal(err)
						}
						acted = true
					}
					if ev.GetEnd() != nil {
						t.Fatalf("the run ended normally")
					}
				}
				if tc.mcp {
					wait(cancelled, "cancelled")
				}
			}()
			// The client may see the status before the server's handler
			// has closed the MCP sessions (a cancelled RPC): their HTTP
			// connections are closed once idle, until none is left.
			var err error
			for range 50 {
				http.DefaultTransport.(*http.Transport).CloseIdleConnections()
				if err = goleak.Find(ignore); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
