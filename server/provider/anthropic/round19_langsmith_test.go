package anthropic

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19: langchain-ai/langsmith-sdk's cassettes (see testdata/README.md,
// "Round 19").

// TestRound19LangsmithMaxTokensStream: claude-3-5-haiku-latest (served as
// claude-3-5-haiku-20241022, January 2026) asked for 3 tokens at
// temperature 0 says "foo" and stops on max_tokens. message_start carries
// service_tier "standard" inside its usage and the cache_creation split
// (both 0), every event's JSON padded with spaces before its last brace;
// message_delta repeats the input and cache counts beside output_tokens 3
// (which must not be added twice: 12 in, 3 out). No ping. The request id
// is the request-id header; the eight anthropic-ratelimit-* headers give
// the limits (4000 requests, 480000 tokens) and their resets. Our request
// is the recorded one with the text as a content block.
func TestRound19LangsmithMaxTokensStream(t *testing.T) {
	t.Parallel()
	const name = "real_langsmith_haiku_max_tokens_stream"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-3-5-haiku-latest",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Say 'foo'"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](3), Temperature: ptr[float64](0)},
	}
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("foo")},
		responseID: "msg_01Kyp5n8ANJtiChxZJEWtsKi", model: "claude-3-5-haiku-20241022", requestID: "req_011CWuF3baPt1S5EppSKyP6z",
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:         usageOf(12, 3, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2026, 1, 8, 4, 0, 21, 0, time.UTC),
	})
	if f.meta.GetServiceTier() != "standard" {
		t.Errorf("service tier %q, want standard", f.meta.GetServiceTier())
	}
	rl := f.meta.GetRateLimit()
	if rl.GetRequestsRemaining() != 3999 || rl.GetTokensRemaining() != 480000 {
		t.Errorf("rate limit %v", rl)
	}
	lcgSameFields(t, srv.Last(t).Body, `{"max_tokens": 3, "messages": [{"role": "user", "content": [{"type": "text", "text": "Say 'foo'"}]}], "model": "claude-3-5-haiku-latest", "temperature": 0, "stream": true}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
}

// TestRound19LangsmithGatewayForbidden: the cassette of langsmith's
// beta.messages.parse test recorded LangSmith's own gateway
// (gateway.smith.langchain.com) in front of api.anthropic.com refusing the
// call: 403 with {"error":"Forbidden"} and no request-id header (a
// x-datadog-trace-id, which is the gateway's trace, not a request id).
// Permission denied, not retryable, no code; the message is the body's
// bare string (before, a body not in Anthropic's shape was ignored and
// only the status text was left: here the same word, see
// TestRound19BareErrorMessage for the reading itself), unary and streamed.
func TestRound19LangsmithGatewayForbidden(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_langsmith_gateway_403_forbidden.http")
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-haiku-4-5-20251001",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Alice and Bob are going to a science fair on Friday."))}}
	for _, streaming := range []bool{false, true} {
		var err error
		if streaming {
			var s provider.Stream
			if s, err = newTestProvider(t, srv.URL).Stream(context.Background(), req); s != nil {
				t.Fatal("a stream for a 403")
			}
		} else {
			_, err = newTestProvider(t, srv.URL).Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("streaming=%v: %v is not a *provider.Error", streaming, err)
		}
		if pe.Kind != provider.KindPermissionDenied || pe.HTTPStatus != 403 || pe.Code != "" || pe.Message != "Forbidden" ||
			pe.RequestID != "" || pe.RetryAfter != 0 || pe.Param != "" || pe.Err != nil {
			t.Errorf("streaming=%v: %+v", streaming, pe)
		}
		if pe.Meta.GetProviderRequestId() != "" || pe.Meta.GetRateLimit() != nil {
			t.Errorf("streaming=%v: meta %v", streaming, pe.Meta)
		}
	}
}

// TestRound19BareErrorMessage: the text of {"error": "..."} (or a
// gateway's top-level "message") is the message; Anthropic's own shape and
// other bodies give none here (the caller reads those, or keeps the status
// text).
func TestRound19BareErrorMessage(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"{\"error\":\"Forbidden\"}\n":                         "Forbidden",
		`{"error": " Invalid gateway key "}`:                  "Invalid gateway key",
		`{"type":"error","error":{"type":"x","message":"y"}}`: "",
		`{"error":null}`:                                      "",
		`upstream error`:                                      "",
		`{"message":"x"}`:                                     "x",
	} {
		if got := provider.ProxyMessage([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
