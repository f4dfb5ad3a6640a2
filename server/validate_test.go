package server_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestUndeclaredEnumsAndNonFiniteNumbers: an enum value the contract does
// not declare, anywhere in a request, and a NaN or infinite number are
// InvalidArgument naming the field, before any provider is called (NaN
// used to come back as a provider failure with attempts: 1, unknown enums
// were dropped by the adapters' switches).
func TestUndeclaredEnumsAndNonFiniteNumbers(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.Error(w, "the gateway should not have called", http.StatusTeapot)
	}))
	defer up.Close()
	c, _ := startWith(t, geminiYAML, up.URL)
	ctx := context.Background()
	msgs := func() []*llmrelayv1.Message {
		return []*llmrelayv1.Message{user("hello"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: user("hi").Parts}}
	}
	chat := func(mut func(*llmrelayv1.ChatRequest)) func() error {
		return func() error {
			req := &llmrelayv1.ChatRequest{Model: "flash", Messages: msgs()}
			mut(req)
			_, err := c.Chat(ctx, req)
			return err
		}
	}
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"role", chat(func(r *llmrelayv1.ChatRequest) { r.Messages[1].Role = 99 }), "messages[1].role"},
		{"reasoning effort", chat(func(r *llmrelayv1.ChatRequest) {
			r.Options = &llmrelayv1.GenerationOptions{ReasoningEffort: 99}
		}), "options.reasoning_effort"},
		{"response format type", chat(func(r *llmrelayv1.ChatRequest) {
			r.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: 7}}
		}), "options.response_format.type"},
		{"image detail", chat(func(r *llmrelayv1.ChatRequest) {
			r.Messages[0].Parts = append(r.Messages[0].Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
				Source: &llmrelayv1.Image_Url{Url: "https://example.com/a.png"}, Detail: -3}}})
		}), "messages[0].parts[1].image.detail"},
		{"tool choice mode", func() error {
			_, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "flash", Messages: msgs(), Tools: weatherTools(t),
				Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: 99}}}})
			return err
		}, "options.tool_choice.mode"},
		{"streamed role", func() error {
			s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{{Role: 12, Parts: user("x").Parts}}})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, "messages[0].role"},
		{"NaN temperature", chat(func(r *llmrelayv1.ChatRequest) {
			r.Options = &llmrelayv1.GenerationOptions{Temperature: proto.Float64(math.NaN())}
		}), "options.temperature"},
		{"infinite top_p", chat(func(r *llmrelayv1.ChatRequest) {
			r.Options = &llmrelayv1.GenerationOptions{TopP: proto.Float64(math.Inf(-1))}
		}), "options.top_p"},
		{"infinite provider option", chat(func(r *llmrelayv1.ChatRequest) {
			r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{RepeatPenalty: proto.Float64(math.Inf(1))}}}
		}), "provider_options.ollama.repeat_penalty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			st, info, br := statusDetails(t, err)
			if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" {
				t.Fatalf("got %v %s (%s), want InvalidArgument INVALID_REQUEST", st.Code(), info.GetReason(), st.Message())
			}
			if br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != tc.field {
				t.Fatalf("BadRequest = %v, want field %q", br, tc.field)
			}
			for _, d := range st.Details() {
				if _, ok := d.(*llmrelayv1.FailedCallMeta); ok {
					t.Errorf("FailedCallMeta attached: a provider was called (%v)", d)
				}
			}
		})
	}
	t.Cleanup(func() {
		if n := calls.Load(); n != 0 {
			t.Errorf("the provider was called %d times", n)
		}
	})
}

// TestEmbedNonFiniteProviderOption: Embed requests are checked the same way.
func TestEmbedNonFiniteProviderOption(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	_, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"a"},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{RepeatPenalty: proto.Float64(math.NaN())}}}})
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br.GetFieldViolations()[0].GetField() != "provider_options.ollama.repeat_penalty" {
		t.Fatalf("got %v %v", status.Convert(err), br)
	}
}
