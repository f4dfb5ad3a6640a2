package client_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// newerServer streams, between known events, an event kind this client
// version does not know (oneof field 99), as a newer server would.
type newerServer struct {
	llmrelayv1.UnimplementedGatewayServiceServer
}

func futureEvent() []byte {
	b := protowire.AppendTag(nil, 99, protowire.BytesType)
	return protowire.AppendBytes(b, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "future"))
}

func (newerServer) StreamChat(_ *llmrelayv1.StreamChatRequest, s grpc.ServerStreamingServer[llmrelayv1.StreamChatResponse]) error {
	unknown := &llmrelayv1.StreamChatResponse{}
	unknown.ProtoReflect().SetUnknown(futureEvent())
	for _, ev := range []*llmrelayv1.StreamChatResponse{
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "hello "}}},
		unknown,
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "world"}}},
		{Event: &llmrelayv1.StreamChatResponse_End{End: &llmrelayv1.StreamEnd{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_STOP}}},
	} {
		if err := s.Send(ev); err != nil {
			return err
		}
	}
	return nil
}

func (newerServer) StreamTools(_ *llmrelayv1.StreamToolsRequest, s grpc.ServerStreamingServer[llmrelayv1.StreamToolsResponse]) error {
	unknown := &llmrelayv1.StreamToolsResponse{}
	unknown.ProtoReflect().SetUnknown(futureEvent())
	for _, ev := range []*llmrelayv1.StreamToolsResponse{
		{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: &llmrelayv1.ToolCallDelta{CallId: "call_newer_srv_7f3a", Name: "get_time", ArgumentsDelta: `{"city":"Oslo"}`}}},
		unknown,
		{Event: &llmrelayv1.StreamToolsResponse_End{End: &llmrelayv1.StreamEnd{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS}}},
	} {
		if err := s.Send(ev); err != nil {
			return err
		}
	}
	return nil
}

// TestNewerServerEventsIgnored: stream events the client does not know
// do not break Recv or Wait.
func TestNewerServerEventsIgnored(t *testing.T) {
	t.Parallel()
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	llmrelayv1.RegisterGatewayServiceServer(srv, newerServer{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := client.New("passthrough:///newer", client.WithDialOptions(
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials())), client.WithTransportSecurity())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()

	cs, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{})
	if err != nil {
		t.Fatal(err)
	}
	msg, _, err := cs.Wait()
	if err != nil {
		t.Fatalf("StreamChat: %v", err)
	}
	if len(msg.GetParts()) != 1 || msg.GetParts()[0].GetText() != "hello world" || cs.Acc.FinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("chat folded to %v, finish %v", msg, cs.Acc.FinishReason())
	}

	ts, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	msg, _, err = ts.Wait()
	if err != nil {
		t.Fatalf("StreamTools: %v", err)
	}
	if calls := ts.Acc.ToolCalls(); len(msg.GetParts()) != 1 || len(calls) != 1 || calls[0].GetArguments() != `{"city":"Oslo"}` {
		t.Errorf("tools folded to %v", msg)
	}
}
