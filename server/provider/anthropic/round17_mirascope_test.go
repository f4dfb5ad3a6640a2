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

// Round 17: Mirascope/mirascope's e2e cassettes (see testdata/README.md,
// "Round 17").

func mirascopeRequest(prompt string, maxTokens int32) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-sonnet-4-0",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(prompt))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr(maxTokens)},
	}
}

// TestRound17MirascopeAuthenticationError: the API refusing the key
// (December 2025), unary and streamed, each with its own request id: 401
// authentication_error "invalid x-api-key", the request id in the header and
// the body, x-should-retry: false, no rate-limit header. The gateway's own
// key was refused: KindUnauthenticated (the server's kind table: gRPC
// Unauthenticated, ErrorInfo reason UPSTREAM_UNAUTHENTICATED, upstreamCode
// authentication_error, upstreamStatus 401), not retried, no field blamed;
// the message is the API's. A stream gets the error before any event.
func TestRound17MirascopeAuthenticationError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, requestID string
		streaming       bool
	}{
		{"real_mirascope_authentication_error", "req_011CWdMEehrhsdujMyQ9pChP", false},
		{"real_mirascope_authentication_error_stream", "req_011CWdMFGmmtqDd5uETFt98k", true},
	} {
		srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
		p := newTestProvider(t, srv.URL)
		req := mirascopeRequest("This should fail with AuthenticationError", 16000)
		var err error
		if tc.streaming {
			var s provider.Stream
			s, err = p.Stream(context.Background(), req)
			if s != nil {
				t.Fatalf("%s: Stream returned a stream with an error status", tc.file)
			}
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %T %v is not a *provider.Error", tc.file, err, err)
		}
		if pe.Provider != "anthropic" || pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 401 ||
			pe.Code != "authentication_error" || pe.Message != "invalid x-api-key" || pe.Param != "" ||
			pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryDiscouraged || pe.RequestID != tc.requestID {
			t.Errorf("%s: got kind=%v status=%d code=%q msg=%q param=%q retry=%v advice=%v rid=%q", tc.file,
				pe.Kind, pe.HTTPStatus, pe.Code, pe.Message, pe.Param, pe.RetryAfter, pe.ShouldRetry, pe.RequestID)
		}
		if pe.Meta.GetProviderRequestId() != tc.requestID || pe.Meta.GetRateLimit() != nil || len(pe.Meta.GetExtended().GetFields()) != 0 {
			t.Errorf("%s: meta %v, want the request id only", tc.file, pe.Meta)
		}
		lcgSameFields(t, srv.Last(t).Body, `{"max_tokens":16000,"messages":[{"role":"user","content":[{"type":"text","text":"This should fail with AuthenticationError"}]}],"model":"claude-sonnet-4-0"}`)
	}
}

// TestRound17MirascopeMaxTokensStream: claude-sonnet-4-0 (answering as
// claude-sonnet-4-20250514, model before id) cut by max_tokens 50 in the
// middle of a numbered list ("…8. Delaware\n9"): FINISH_REASON_LENGTH, the
// text written so far kept whole, a ping between two deltas, message_delta
// repeating input_tokens and the zero cache counts (50 out, up from 4). No
// tool call, so nothing is flagged cut. service_tier standard, no
// inference_geo (October 2025); the four rate-limit header families.
func TestRound17MirascopeMaxTokensStream(t *testing.T) {
	t.Parallel()
	const name = "real_mirascope_max_tokens_stream"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), mirascopeRequest("List all U.S. states.", 50))
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
		parts: []*llmrelayv1.Part{text("Here are all 50 U.S. states in alphabetical order:\n\n1. Alabama\n2. Alaska\n3. Arizona\n4. Arkansas\n" +
			"5. California\n6. Colorado\n7. Connecticut\n8. Delaware\n9")},
		responseID: "msg_01UuVuexmaaZ5vovacduShYr", model: "claude-sonnet-4-20250514", requestID: "req_011CUDKoyeYWX5Ty97GBAEpX",
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:         usageOf(15, 50, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 10, 17, 19, 30, 9, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	if _, ok := f.meta.GetExtended().GetFields()[provider.ExtUsageDetails]; ok {
		t.Errorf("usage_details %v, want none (every detail is zero)", f.meta.GetExtended().GetFields()[provider.ExtUsageDetails])
	}
	if n := countKind(evs, provider.EventText); n != 7 {
		t.Errorf("%d text deltas, want the recording's 7", n)
	}
	lcgSameFields(t, srv.Last(t).Body, `{"max_tokens":50,"messages":[{"role":"user","content":[{"type":"text","text":"List all U.S. states."}]}],"model":"claude-sonnet-4-0","stream":true}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
}

// TestRound17MirascopeParallelToolLoop: claude-sonnet-4-0 (September
// 2025), unary: text then two parallel calls of the same tool (passwords
// "mellon" and "radiance"), 410 in, 109 out, cache_creation zeros; after
// both results, a markdown answer quoting them (596 in, 42 out). The live
// API accepted mirascope's second request, which is the first answer whole
// in one assistant turn and both tool_result blocks in one user turn: ours
// from the first answer and the two results is the same messages (the
// first turn as one text block where mirascope sent a string), tools and
// max_tokens.
func TestRound17MirascopeParallelToolLoop(t *testing.T) {
	t.Parallel()
	const first, second = "real_mirascope_call_with_tools_1", "real_mirascope_call_with_tools_2"
	const prompt = "Please retrieve the secrets associated with each of these passwords: mellon,radiance"
	const tools = `"tools":[{"name":"secret_retrieval_tool","description":"A tool that requires a password to retrieve a secret.",` +
		`"input_schema":{"properties":{"password":{"title":"Password","type":"string"}},"required":["password"],"additionalProperties":false,"type":"object"}}]`
	req := mirascopeRequest(prompt, 1024)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "secret_retrieval_tool", Description: "A tool that requires a password to retrieve a secret.",
		Parameters: `{"properties":{"password":{"title":"Password","type":"string"}},"required":["password"],"additionalProperties":false,"type":"object"}`}}
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, first, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll retrieve the secrets for both passwords you provided."),
			toolCallPart("toolu_01CeTQJNTjiT4HL9tmJDNmzz", "secret_retrieval_tool", `{"password":"mellon"}`),
			toolCallPart("toolu_012VGQd2jGxW2itWj5Th7UUg", "secret_retrieval_tool", `{"password":"radiance"}`),
		},
		responseID: "msg_016NAKqhgkqGqdGg87KZ5YWP", model: "claude-sonnet-4-20250514", requestID: "req_011CTBKxpJz637u7HxvnxEKW",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(410, 109, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 9, 16, 2, 56, 31, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	if n := res.Meta.GetToolCallCount(); n != 2 {
		t.Errorf("tool_call_count %d, want 2", n)
	}
	lcgSameFields(t, srv.Last(t).Body, `{"max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]}],"model":"claude-sonnet-4-0",`+tools+`}`)
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res))

	next := providertest.ReplayFile(t, "testdata/"+second+".http")
	req.Messages = append(req.Messages, res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01CeTQJNTjiT4HL9tmJDNmzz", "Welcome to Moria!", false)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_012VGQd2jGxW2itWj5Th7UUg", "Life before Death", false)))
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	body := next.Last(t).Body
	lcgSameMessages(t, "follow-up", body, `[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]},`+
		`{"role":"assistant","content":[{"type":"text","text":"I'll retrieve the secrets for both passwords you provided."},`+
		`{"type":"tool_use","id":"toolu_01CeTQJNTjiT4HL9tmJDNmzz","name":"secret_retrieval_tool","input":{"password":"mellon"}},`+
		`{"type":"tool_use","id":"toolu_012VGQd2jGxW2itWj5Th7UUg","name":"secret_retrieval_tool","input":{"password":"radiance"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01CeTQJNTjiT4HL9tmJDNmzz","content":"Welcome to Moria!"},`+
		`{"type":"tool_result","tool_use_id":"toolu_012VGQd2jGxW2itWj5Th7UUg","content":"Life before Death"}]}]`)
	lcgSameFields(t, body, `{"max_tokens":1024,"model":"claude-sonnet-4-0",`+tools+`}`)
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Here are the secrets retrieved for each password:\n\n- **Password \"mellon\"**: \"Welcome to Moria!\"\n- **Password \"radiance\"**: \"Life before Death\"")},
		responseID: "msg_01Qe4htHoFDoaJV6X1CC4cTR", model: "claude-sonnet-4-20250514", requestID: "req_011CTBKxzJW4EQRPBKSJTtUQ",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(596, 42, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 9, 16, 2, 56, 35, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/"+second+".golden", renderResult(t, res2))
	providertest.Golden(t, "testdata/"+second+".request.golden", providertest.RequestGolden(next.Last(t), requestHeaders...))
}
