package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestMetadataBounded: a request's metadata is bounded by
// limits.max_header_list_bytes (64 KiB by default), announced in the
// HTTP/2 settings so that a grpc-go client refuses to send more with a
// message naming the bound; grpc's own default let one request's headers
// take 16 MiB (four times a request message), and past that the
// connection was reset (Unavailable, which clients retry).
func TestMetadataBounded(t *testing.T) {
	t.Parallel()
	call := func(c llmrelayv1.GatewayServiceClient, n int) error {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-big", strings.Repeat("x", n))
		_, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
		return err
	}
	c, _ := startWith(t, geminiYAML, "http://127.0.0.1:1")
	if err := call(c, 32<<10); err != nil {
		t.Errorf("32 KiB of metadata: %v", err)
	}
	err := call(c, 100<<10)
	if st := status.Convert(err); st.Code() != codes.Internal || !strings.Contains(st.Message(), "violates the maximum size (65536 bytes) set by server") {
		t.Errorf("100 KiB of metadata: %v", err)
	}
	// The bound is the configuration's.
	c, _ = startWith(t, geminiYAML+"limits: {max_header_list_bytes: 262144}\n", "http://127.0.0.1:1")
	if err := call(c, 100<<10); err != nil {
		t.Errorf("100 KiB of metadata under a 256 KiB bound: %v", err)
	}
}

// TestExtraBodyErrorNamedOnce: an extra_body that is not a JSON object, or
// has a duplicate key, is named by its field path once (it was
// "provider_options.extra_body: extra_body: not a JSON object").
func TestExtraBodyErrorNamedOnce(t *testing.T) {
	t.Parallel()
	c, _ := startWith(t, geminiYAML, "http://127.0.0.1:1")
	for extra, want := range map[string]string{
		`[1]`:                "provider_options.extra_body: not a JSON object",
		`{"a": 1, "a": 2}`:   `provider_options.extra_body: duplicate field "a"`,
		`{"a": 1} {"b": 2}`:  "provider_options.extra_body: ",
		`{"a": 1, "b": tru}`: "provider_options.extra_body: b: invalid character",
	} {
		_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("hi")},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: extra}})
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), want) || strings.Count(st.Message(), "extra_body") != 1 {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

// TestDuplicateCallIDInOneTurn: two tool calls of one assistant message
// with one call_id are refused naming the second (they were sent on; no
// result could answer both). The same id in two turns stays allowed:
// providers reuse ids across rounds.
func TestDuplicateCallIDInOneTurn(t *testing.T) {
	t.Parallel()
	c, _ := startWith(t, geminiYAML, "http://127.0.0.1:1")
	call := func(id string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: "get_weather", Arguments: "{}"}}}
	}
	result := func(id string) *llmrelayv1.Message {
		return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: "x"}}}}}
	}
	msgs := []*llmrelayv1.Message{user("hi"),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{call("c1"), {Kind: &llmrelayv1.Part_Text{Text: "and"}}, call("c1")}},
		result("c1")}
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "flash", Messages: msgs})
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br.GetFieldViolations()[0].GetField() != "messages[1].parts[2].tool_call.call_id" ||
		st.Message() != `messages[1].parts[2].tool_call.call_id: "c1" is the id of an earlier call of this message: each call needs its own` {
		t.Errorf("duplicate call id: %v", err)
	}
	turn := func(id string) *llmrelayv1.Message {
		return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{call(id)}}
	}
	_, err = c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "flash",
		Messages: []*llmrelayv1.Message{user("hi"), turn("c1"), result("c1"), turn("c1"), result("c1")}})
	if status.Code(err) == codes.InvalidArgument {
		t.Errorf("one id in two turns: %v", err) // the upstream is unreachable: Unavailable
	}
}
