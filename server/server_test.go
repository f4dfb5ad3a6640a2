package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// start runs a server with cfg over bufconn and returns a client.
func start(t *testing.T, cfg *config.Config) (llmrelayv1.GatewayServiceClient, *grpc.ClientConn) {
	t.Helper()
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	conn := serveBufconn(t, srv)
	return llmrelayv1.NewGatewayServiceClient(conn), conn
}

// serveBufconn serves srv in process until the test ends and returns a
// connection to it.
func serveBufconn(t testing.TB, srv *server.Server) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return conn
}

func defaultClient(t *testing.T) (llmrelayv1.GatewayServiceClient, *grpc.ClientConn) {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	return start(t, cfg)
}

func user(text string) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: text}}}}
}

func weatherTools(t *testing.T) []*llmrelayv1.Tool {
	t.Helper()
	params, err := jsonString(map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
		"required":   []any{"city"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return []*llmrelayv1.Tool{
		{Name: "get_weather", Description: "Weather for a city", Parameters: params},
		{Name: "get_time", Description: "Local time of a city", Parameters: params},
	}
}

// statusDetails returns the ErrorInfo and BadRequest of an error.
func statusDetails(t *testing.T, err error) (*status.Status, *errdetails.ErrorInfo, *errdetails.BadRequest) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("not a status: %v", err)
	}
	var info *errdetails.ErrorInfo
	var br *errdetails.BadRequest
	for _, d := range st.Details() {
		switch x := d.(type) {
		case *errdetails.ErrorInfo:
			info = x
		case *errdetails.BadRequest:
			br = x
		}
	}
	if info == nil {
		t.Fatalf("status %v has no ErrorInfo", st)
	}
	if info.GetDomain() != server.ErrorDomain {
		t.Errorf("domain = %q", info.GetDomain())
	}
	return st, info, br
}

func TestChat(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	var hdr metadata.MD
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-request-id", "req-123")
	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hello there")}}, grpc.Header(&hdr))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetMessage().GetParts()[0].GetText(); got != "You said: hello there" {
		t.Errorf("text = %q", got)
	}
	m := resp.GetMeta()
	if m.GetRequestId() != "req-123" || hdr.Get("x-request-id")[0] != "req-123" {
		t.Errorf("request id: meta %q, header %v", m.GetRequestId(), hdr.Get("x-request-id"))
	}
	if m.GetProvider() != "builtin" || m.GetProtocol() != llmrelayv1.Protocol_PROTOCOL_CHAT || m.GetRequestedModel() != "builtin/echo" ||
		m.GetResolvedModel() != "echo" || m.GetAttempts() != 1 || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		m.GetResponseId() == "" || m.GetCreateTime() == nil || m.GetTotalDuration() == nil || m.GetRequestDuration() == nil ||
		m.GetUsage().GetTotalTokens() != m.GetUsage().GetInputTokens()+m.GetUsage().GetOutputTokens() || m.GetUsage().GetOutputTokens() != 4 {
		t.Errorf("meta incomplete: %v", m)
	}
	if m.GetTotalDuration().AsDuration() < m.GetRequestDuration().AsDuration() {
		t.Errorf("total %v < request %v", m.GetTotalDuration().AsDuration(), m.GetRequestDuration().AsDuration())
	}
	if m.GetRaw() != nil {
		t.Errorf("raw data present, but raw capture is off by default (prompts and bodies are private): %v", m.GetRaw())
	}
	on := true
	resp, err = c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, Call: &llmrelayv1.CallOptions{PreserveRaw: &on}})
	if err != nil {
		t.Fatal(err)
	}
	if raw := resp.GetMeta().GetRaw(); len(raw.GetRequest()) == 0 || len(raw.GetResponse()) == 0 {
		t.Errorf("raw missing with preserve_raw true: %v", raw)
	}
}

func TestChatMaxTokens(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	two := int32(2)
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("one two three")},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: &two}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetMessage().GetParts()[0].GetText(); got != "You said:" {
		t.Errorf("text = %q", got)
	}
	if resp.GetMeta().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH {
		t.Errorf("finish = %v", resp.GetMeta().GetFinishReason())
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	badTemp := 3.5
	cases := []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
		field  string
	}{
		{"unknown model", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "nope", Messages: []*llmrelayv1.Message{user("x")}})
			return err
		}, codes.NotFound, "MODEL_NOT_FOUND", "model"},
		{"no model", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Messages: []*llmrelayv1.Message{user("x")}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "model"},
		{"no messages", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo"})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "messages"},
		{"no role", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{{Parts: user("x").Parts}}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "messages[0].role"},
		{"empty part", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{}}}}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "messages[0].parts[0]"},
		{"image without mime", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER,
				Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte{1}}}}}}}}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "messages[0].parts[0].image.mime_type"},
		{"tools without tools", func() error {
			_, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "tools"},
		{"embed on chat model", func() error {
			_, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "builtin/echo", Inputs: []string{"x"}})
			return err
		}, codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", ""},
		{"chat on embed model", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/embed", Messages: []*llmrelayv1.Message{user("x")}})
			return err
		}, codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", ""},
		{"empty input", func() error {
			_, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"a", ""}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "inputs[1]"},
		{"temperature out of range", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, Options: &llmrelayv1.GenerationOptions{Temperature: &badTemp}})
			return err
		}, codes.InvalidArgument, "INVALID_OPTION", "options.temperature"},
		{"option unknown to format", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH}})
			return err
		}, codes.InvalidArgument, "INVALID_OPTION", "options.reasoning_effort"},
		{"stream unknown model", func() error {
			s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "nope", Messages: []*llmrelayv1.Message{user("x")}, Tools: weatherTools(t)})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, codes.NotFound, "MODEL_NOT_FOUND", "model"},
		{"negative call timeout", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, Call: &llmrelayv1.CallOptions{Timeout: durationpb.New(-time.Second)}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "call.timeout"},
		{"tool choice on chat", func() error {
			_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")},
				Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}}})
			return err
		}, codes.InvalidArgument, "INVALID_OPTION", "options.tool_choice"},
		{"bad page token", func() error {
			_, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{PageToken: "zz"})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST", "page_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			st, info, br := statusDetails(t, err)
			if st.Code() != tc.code || info.GetReason() != tc.reason {
				t.Fatalf("got %v %s (%s), want %v %s", st.Code(), info.GetReason(), st.Message(), tc.code, tc.reason)
			}
			if tc.field != "" {
				if br == nil || len(br.GetFieldViolations()) == 0 || br.GetFieldViolations()[0].GetField() != tc.field {
					t.Fatalf("BadRequest = %v, want field %q", br, tc.field)
				}
			}
		})
	}
}

func TestIgnoreInvalidOptions(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")},
		Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
		Call:    &llmrelayv1.CallOptions{IgnoreInvalidOptions: true}})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetMeta().GetDroppedOptions()
	if len(d) != 1 || d[0].GetOption() != "reasoning_effort" {
		t.Errorf("dropped = %v", d)
	}
}

// TestStreamToolsFoldsToUnary is the contract: every tool-call delta has a
// call_id, and folding the stream gives what Tools returns.
func TestStreamToolsFoldsToUnary(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("Paris")}
	unary, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "builtin/echo", Messages: msgs, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "builtin/echo", Messages: msgs, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	var acc fold.Accumulator
	var kinds []string
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := ev.GetToolCallDelta(); d != nil && d.GetCallId() == "" {
			t.Fatalf("tool call delta without call_id: %v", d)
		}
		if err := acc.AddTools(ev); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, kindOf(ev))
	}
	want := []string{"start", "delta", "delta", "delta", "delta", "done", "done", "usage", "end"}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	if !proto.Equal(acc.Message(), unary.GetMessage()) {
		t.Errorf("folded message differs:\n%v\nunary:\n%v", acc.Message(), unary.GetMessage())
	}
	if acc.FinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || unary.GetMeta().GetFinishReason() != acc.FinishReason() {
		t.Errorf("finish: stream %v unary %v", acc.FinishReason(), unary.GetMeta().GetFinishReason())
	}
	if !proto.Equal(acc.Usage(), unary.GetMeta().GetUsage()) || !proto.Equal(acc.Meta().GetUsage(), acc.Usage()) {
		t.Errorf("usage: stream %v unary %v", acc.Usage(), unary.GetMeta().GetUsage())
	}
	m := acc.Meta()
	if m.GetToolCallCount() != 2 || m.GetTimeToFirstToken() == nil || m.GetProviderRequestId() == "" || m.GetAttempts() != 1 || m.GetRequestId() == "" {
		t.Errorf("final meta incomplete: %v", m)
	}
	if len(acc.ToolCalls()) != 2 || acc.ToolCalls()[0].GetArguments() != `{"city":"Paris"}` {
		t.Errorf("calls = %v", acc.ToolCalls())
	}
}

func kindOf(ev *llmrelayv1.StreamToolsResponse) string {
	switch ev.GetEvent().(type) {
	case *llmrelayv1.StreamToolsResponse_Start:
		return "start"
	case *llmrelayv1.StreamToolsResponse_TextDelta:
		return "text"
	case *llmrelayv1.StreamToolsResponse_ToolCallDelta:
		return "delta"
	case *llmrelayv1.StreamToolsResponse_ToolCallDone:
		return "done"
	case *llmrelayv1.StreamToolsResponse_Usage:
		return "usage"
	case *llmrelayv1.StreamToolsResponse_End:
		return "end"
	}
	return "?"
}

func TestStreamChatFoldsToUnary(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("tell me a story")}
	unary, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "builtin/echo", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	var acc fold.Accumulator
	n := 0
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetTextDelta() != nil {
			n++
		}
		if err := acc.AddChat(ev); err != nil {
			t.Fatal(err)
		}
	}
	if n < 2 {
		t.Errorf("want the reply in several deltas, got %d", n)
	}
	if !proto.Equal(acc.Message(), unary.GetMessage()) || acc.FinishReason() != unary.GetMeta().GetFinishReason() || !proto.Equal(acc.Usage(), unary.GetMeta().GetUsage()) {
		t.Errorf("stream folds to %v / %v / %v; unary %v / %v / %v", acc.Message(), acc.FinishReason(), acc.Usage(),
			unary.GetMessage(), unary.GetMeta().GetFinishReason(), unary.GetMeta().GetUsage())
	}
	if acc.Start().GetRequestId() == "" || acc.Meta().GetRequestId() != acc.Start().GetRequestId() {
		t.Errorf("start %v, meta request id %q", acc.Start(), acc.Meta().GetRequestId())
	}
}

func TestToolResultsAnswered(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	msgs := []*llmrelayv1.Message{
		user("Paris"),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_1", Content: "sunny"}}}}},
	}
	resp, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "builtin/echo", Messages: msgs, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetMessage().GetParts()[0].GetText(); got != "Received 1 tool result(s): call_1=sunny" {
		t.Errorf("text = %q", got)
	}
	if resp.GetMeta().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("finish = %v", resp.GetMeta().GetFinishReason())
	}
}

func TestEmbed(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	resp, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"a", "b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	e := resp.GetEmbeddings()
	if len(e) != 3 || len(e[0].GetValues()) != 8 || e[2].GetIndex() != 2 {
		t.Fatalf("embeddings = %v", e)
	}
	if !proto.Equal(&llmrelayv1.Embedding{Values: e[0].GetValues()}, &llmrelayv1.Embedding{Values: e[2].GetValues()}) {
		t.Error("equal inputs gave different vectors")
	}
	if resp.GetMeta().GetEmbeddingsCount() != 3 || resp.GetMeta().GetProtocol() != llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS {
		t.Errorf("meta = %v", resp.GetMeta())
	}
	dims := int32(32)
	resp, err = c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"a"}, Dimensions: &dims})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetEmbeddings()[0].GetValues()) != 32 {
		t.Errorf("dimensions not honoured")
	}
}

func TestListModelsAndHealth(t *testing.T) {
	t.Parallel()
	c, conn := defaultClient(t)
	ctx := context.Background()
	resp, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetModels()) != 1 || resp.GetNextPageToken() == "" || resp.GetModels()[0].GetName() != "builtin/echo" {
		t.Fatalf("page 1 = %v", resp)
	}
	if n := len(resp.GetModels()[0].GetCapabilities()); n != 5 {
		t.Errorf("builtin/echo capabilities = %d, want 5 (chat, vision, tools, documents, audio)", n)
	}
	resp, err = c.ListModels(ctx, &llmrelayv1.ListModelsRequest{PageSize: 1, PageToken: resp.GetNextPageToken()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetModels()) != 1 || resp.GetNextPageToken() != "" || resp.GetModels()[0].GetName() != "builtin/embed" {
		t.Fatalf("page 2 = %v", resp)
	}
	first, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*llmrelayv1.ListModelsRequest{
		{PageSize: 1, PageToken: "1"}, // the old integer offsets are not tokens
		{PageSize: 2, PageToken: first.GetNextPageToken()},
		{PageSize: 1, PageToken: "eyJ2IjoxLCJhZnRlciI6Im5vcGUiLCJzaXplIjoxfQ"}, // {"v":1,"after":"nope","size":1}
	} {
		if _, err := c.ListModels(ctx, bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("ListModels(%v) = %v, want InvalidArgument", bad, err)
		}
	}
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", h, err)
	}
}

func TestExtractOverGRPC(t *testing.T) {
	t.Parallel()
	_, conn := defaultClient(t)
	c := llmrelayv1.NewExtractServiceClient(conn)
	ctx := context.Background()
	payload, err := structpb.NewValue(map[string]any{"content": []any{
		"Processing your request",
		map[string]any{"name": "search", "input": map[string]any{"q": "test"}},
		map[string]any{"type": "tool_result", "content": "Found results"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Extract(ctx, &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Value{Value: payload}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetTexts()) != 1 || resp.GetTexts()[0].GetText() != "Processing your request" ||
		len(resp.GetToolUses()) != 1 || resp.GetToolUses()[0].GetName() != "search" ||
		len(resp.GetToolResults()) != 1 || resp.GetToolResults()[0].GetContent().GetStringValue() != "Found results" {
		t.Errorf("extract = %v", resp)
	}
	_, err = c.Extract(ctx, &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Json{Json: `{"content": [}`}})
	st, info, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || info.GetMetadata()["offset"] != "13" || br.GetFieldViolations()[0].GetField() != "json" {
		t.Errorf("syntax error = %v %v %v", st, info, br)
	}
	_, err = c.Extract(ctx, &llmrelayv1.ExtractRequest{})
	// "<field>: <problem>" as every other request error, in the message
	// and the violation (it was "invalid payload: is required: ...").
	const wantMissing = "payload: required: set json (JSON text) or value (a JSON value)"
	if st, _, br := statusDetails(t, err); st.Code() != codes.InvalidArgument || st.Message() != wantMissing ||
		br.GetFieldViolations()[0].GetField() != "payload" || br.GetFieldViolations()[0].GetDescription() != wantMissing {
		t.Errorf("missing payload = %v %v", st, br)
	}
}

// TestOptionsCheckedAfterMerge: the checks that look at the tools run on the
// merged options (a configured tool choice must name an offered tool too),
// a valid tool choice does not skip the response-format check, and a
// tool choice on a Chat call is dropped under ignore_invalid_options
// instead of failing.
func TestOptionsCheckedAfterMerge(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`
providers:
  - {name: builtin, type: builtin}
models:
  - name: forced
    provider: builtin
    upstream_model: echo
    capabilities:
      chat: {format: builtin}
      tools: {format: builtin, options: {tool_choice: get_forecast}}
  - name: echo
    provider: builtin
    upstream_model: echo
    capabilities: {chat: {format: builtin}, tools: {format: builtin}}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := start(t, cfg)
	ctx := context.Background()
	_, err = c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "forced", Messages: []*llmrelayv1.Message{user("x")}, Tools: weatherTools(t)})
	if _, _, br := statusDetails(t, err); status.Code(err) != codes.InvalidArgument || br.GetFieldViolations()[0].GetField() != "options.tool_choice.function_name" {
		t.Errorf("configured tool choice naming no offered tool: %v", err)
	}
	_, err = c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "echo", Messages: []*llmrelayv1.Message{user("x")}, Tools: weatherTools(t),
		Options: &llmrelayv1.GenerationOptions{
			ToolChoice:     &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}},
			ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA},
		}})
	if _, _, br := statusDetails(t, err); status.Code(err) != codes.InvalidArgument || br.GetFieldViolations()[0].GetField() != "options.response_format.schema" {
		t.Errorf("json_schema without a schema next to a valid tool choice: %v", err)
	}
	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "echo", Messages: []*llmrelayv1.Message{user("x")},
		Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}},
		Call:    &llmrelayv1.CallOptions{IgnoreInvalidOptions: true}})
	if err != nil {
		t.Fatalf("tool choice on a Chat call under ignore_invalid_options: %v", err)
	}
	if d := resp.GetMeta().GetDroppedOptions(); len(d) != 1 || d[0].GetOption() != "tool_choice" {
		t.Errorf("dropped = %v", d)
	}
}

// TestProviderOptionsMismatch: options for another provider type fail with
// the request field that carries them, or are dropped under
// ignore_invalid_options.
func TestProviderOptionsMismatch(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	po := &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{Betas: []string{"x"}}}}
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, ProviderOptions: po})
	if _, info, br := statusDetails(t, err); status.Code(err) != codes.InvalidArgument || info.GetReason() != "INVALID_OPTION" ||
		br.GetFieldViolations()[0].GetField() != "provider_options.anthropic" {
		t.Errorf("err %v, field %v", err, br)
	}
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, ProviderOptions: po,
		Call: &llmrelayv1.CallOptions{IgnoreInvalidOptions: true}})
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.GetMeta().GetDroppedOptions(); len(d) != 1 || d[0].GetOption() != "provider_options.anthropic" {
		t.Errorf("dropped %v", d)
	}
}
