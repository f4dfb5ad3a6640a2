package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// sendLimitYAML is pricedChatYAML with limits.max_send_message_bytes at max.
func sendLimitYAML(max string) string {
	return "limits: {max_send_message_bytes: " + max + "}\n" + pricedChatYAML("http://127.0.0.1:9/unused")
}

// TestAgentEndLeavesOutSetupMessages: a run whose setup carried a large
// message (a document pasted in, under limits.max_recv_message_bytes)
// ended with a bare RESOURCE_EXHAUSTED: its end event, carrying the whole
// conversation, was over limits.max_send_message_bytes, so the answer the
// provider was paid for never reached the client. The end event now
// leaves out the setup's messages, which the client sent, counts them in
// omitted_setup_messages and says so in a warning; client.Agent puts them
// back, so its result is the whole conversation as before.
func TestAgentEndLeavesOutSetupMessages(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("clause; ", 1000) // 8000 bytes
	up := providertest.Replay(t,
		chatStream("chatcmpl-Omit1", "", []chatCall{{"call_om1", "get_weather", `{"city":"Oslo"}`}}, 2100, 12),
		chatStream("chatcmpl-Omit2", "Rain in Oslo.", nil, 2150, 6),
		chatStream("chatcmpl-Omit3", "", []chatCall{{"call_om2", "get_weather", `{"city":"Oslo"}`}}, 2100, 12),
		chatStream("chatcmpl-Omit4", "Rain in Oslo.", nil, 2150, 6))
	c, _ := startWith(t, sendLimitYAML("7000"), up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user(doc), user("And the weather in Oslo?")}, Tools: agentTools(t)}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	end := evs[len(evs)-1].GetEnd()
	if end == nil || end.GetOmittedSetupMessages() != 2 || len(end.GetMessages()) != 3 {
		t.Fatalf("end: omitted %d, %d messages (last event %v)", end.GetOmittedSetupMessages(), len(end.GetMessages()), evs[len(evs)-1])
	}
	if m := end.GetMessages(); m[0].GetParts()[0].GetToolCall().GetCallId() != "call_om1" ||
		m[1].GetParts()[0].GetToolResult().GetCallId() != "call_om1" || m[2].GetParts()[0].GetText() != "Rain in Oslo." {
		t.Errorf("messages after the setup's: %v", m)
	}
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || !hasWarning(end.GetMeta().GetWarnings(), "leave out the setup's first 2 (omitted_setup_messages)") {
		t.Errorf("finish %v, warnings %q", end.GetFinishReason(), end.GetMeta().GetWarnings())
	}

	// The Go client gives back the whole conversation.
	res, err := (&client.Agent{Client: &client.Client{Gateway: c}, Tools: map[string]client.ToolFunc{
		"get_weather": func(context.Context, string) (string, error) { return "rain", nil },
		"get_time":    func(context.Context, string) (string, error) { return "12:00", nil },
	}}).Run(context.Background(), setup)
	if err != nil {
		t.Fatalf("client run: %v", err)
	}
	if len(res.Messages) != 5 || !proto.Equal(res.Messages[0], setup.Messages[0]) || !proto.Equal(res.Messages[1], setup.Messages[1]) ||
		res.Messages[4].GetParts()[0].GetText() != "Rain in Oslo." {
		t.Errorf("client conversation: %d messages", len(res.Messages))
	}
}

// TestAgentFailureLeavesOutSetupMessages: the failure event of such a run
// (its second model call refused) carries the conversation up to the last
// whole round without the setup's messages, so the client can still retry
// from there, and the failure's status follows.
func TestAgentFailureLeavesOutSetupMessages(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("clause; ", 1000)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("x-request-id", "req_omit_fail_1")
	up := providertest.Replay(t,
		chatStream("chatcmpl-OmitF1", "", []chatCall{{"call_omf", "get_weather", `{"city":"Bergen"}`}}, 2100, 12),
		providertest.Recording{Status: 400, Header: h, Body: []byte(`{"error":{"message":"Invalid 'messages[2].content': string too long.","type":"invalid_request_error","param":"messages[2].content","code":"string_above_max_length"}}`)})
	c, _ := startWith(t, sendLimitYAML("7000"), up.URL)
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user(doc)}, Tools: agentTools(t)}, answerAll)
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("status %v", err)
	}
	f := evs[len(evs)-1].GetFailure()
	if f == nil || f.GetOmittedSetupMessages() != 1 || len(f.GetMessages()) != 2 || f.GetMessages()[1].GetParts()[0].GetToolResult().GetCallId() != "call_omf" {
		t.Fatalf("failure: omitted %d, messages %v", f.GetOmittedSetupMessages(), f.GetMessages())
	}
}

// TestAgentEndTooLargeEvenWithoutSetup: when the run's own messages are
// over the limit (a client tool answered with more than it), nothing can
// be left out: the run fails with RESOURCE_EXHAUSTED naming the limit, as
// any response over it does.
func TestAgentEndTooLargeEvenWithoutSetup(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t,
		chatStream("chatcmpl-OmitB1", "", []chatCall{{"call_omb", "get_weather", `{"city":"Tromsø"}`}}, 30, 12),
		chatStream("chatcmpl-OmitB2", "Snow.", nil, 2150, 6))
	c, _ := startWith(t, sendLimitYAML("7000"), up.URL)
	_, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Tromsø?")}, Tools: agentTools(t)},
		func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
			return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: strings.Repeat("snow ", 2000)}
		})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "max_send_message_bytes") {
		t.Fatalf("status %v", err)
	}
}
