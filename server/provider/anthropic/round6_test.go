package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 6: real answers from sources not replayed before (see
// testdata/README.md, "Round 6"): the Vercel AI SDK's error fixtures and
// live captures, and pydantic-ai cassettes. Each case is checked against
// what the recording says, written out by hand.

func TestRound6Generate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want llmWant
	}{
		{"real_issue_14707_opus_4_7_temperature", llmWant{
			parts:      []*llmrelayv1.Part{text("OK")},
			responseID: "msg_011CcnjVcgeY1HxJJJBmgZBe", model: "claude-opus-4-7", requestID: "req_011CcnjVcHqLqQKPxvPHWZ5U",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			// thinking_tokens: 0 is no reasoning.
			usage:    usageOf(21, 6, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}},
		{"real_pyd_anthropic_model_retrying_after_empty_response", llmWant{
			parts:      []*llmrelayv1.Part{text("# Hi there! \U0001F44B\n\nHow can I help you today?")},
			responseID: "msg_011Ccmc3JDrLNAjTnX1WNbcp", model: "claude-haiku-4-5-20251001",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:    usageOf(26, 18, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), plainRequest())
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkLLMWant(t, "unary", res.Message, res.Meta, tc.want)
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

// TestRound6Errors: real 400 invalid_request_error bodies (the Vercel AI
// SDK's fixtures, the API's answers to a history it rejects). No request-id
// header: the body's request_id is the only one. The message is the API's
// whole text, and it is not mistaken for a context-length or content-filter
// failure. Unary and streamed alike (a stream with an error status returns
// no stream).
func TestRound6Errors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, requestID, message string
	}{
		{"real_issue_17366_error", "req_011Cd65WVh8Zrvno3NunpJ73",
			"messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_issue_17366_invalid. " +
				"Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"real_parallel_provider_client_tools_error", "req_011CdKG2NtAD16XZmtMKXVQr",
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_issue8112_custom. " +
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			for _, streaming := range []bool{false, true} {
				srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
				p := newTestProvider(t, srv.URL)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), plainRequest())
					if s != nil {
						t.Fatal("Stream returned a stream with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), plainRequest())
				}
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("stream=%v: error %T %v is not a *provider.Error", streaming, err, err)
				}
				if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "invalid_request_error" ||
					pe.RetryAfter != 0 || pe.RequestID != tc.requestID || pe.Provider != "anthropic" || pe.Message != tc.message {
					t.Errorf("stream=%v: got kind=%v status=%d code=%q retry=%v rid=%q msg=%q", streaming,
						pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter, pe.RequestID, pe.Message)
				}
				if !strings.Contains(err.Error(), "tool_result") {
					t.Errorf("stream=%v: error text %q lost the provider's message", streaming, err)
				}
			}
		})
	}
}

// TestRound6Stream: streamed answers read off their cassettes by hand.
func TestRound6Stream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want llmWant
	}{
		// claude-3-opus (November 2024) after an assistant prefill "<code>":
		// padded JSON (spaces before the closing brace), a spaced
		// `{"type": "ping"}`, the second delta " -lth" (the cassette folds
		// its space into a line break), stop_sequence "</code>";
		// requests and tokens rate-limit headers only.
		{"real_llm_claude_3_test_stop_sequence", llmWant{
			parts:      []*llmrelayv1.Part{text("ls -lth")},
			responseID: "msg_016zF3GJHKje3rh8nQQAgbFC", model: "claude-3-opus-20240229", requestID: "req_01HvSV85zfYzBEaBGyLbNZuo",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "stop_sequence",
			usage:         usageOf(20, 7, 0, 0, 0),
			requestsLimit: 2000, tokensLimit: 80000, tokensReset: time.Date(2024, 11, 19, 16, 14, 22, 0, time.UTC),
			extended: map[string]string{"stop_sequence": `"</code>"`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			f := foldEvents(t, evs)
			checkLLMWant(t, "streamed", f.message, f.meta, tc.want)
			if got := accumulate(t, evs); !proto.Equal(got, f.message) {
				t.Errorf("accumulator message\n got %v\nwant %v", got, f.message)
			}
			if rl := f.meta.GetRateLimit(); tc.name == "real_llm_claude_3_test_stop_sequence" && rl.GetRequestsRemaining() != 1999 || rl.GetTokensRemaining() != 76000 ||
				!rl.GetRequestsResetTime().AsTime().Equal(time.Date(2024, 11, 19, 16, 14, 19, 0, time.UTC)) {
				t.Errorf("rate limit %v, want 1999 requests and 76000 tokens remaining, requests reset 16:14:19", rl)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, err))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}
