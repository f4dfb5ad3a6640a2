package openai

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24ParallelWrapper: gpt-5.4's internal parallel-call wrapper
// returned as a function_call named "parallel" whose arguments are
// {"tool_uses":[{recipient_name, parameters}, …]} (vercel/ai#19067;
// testdata/real_responses_parallel_wrapper_stream.http, vercel/ai's
// fixture of that issue, and responses_parallel_wrapper.http, its unary
// fixture with ids of our own). The nested calls carry no call ids, so the
// call is relayed as sent (one call, call_parallel, the wrapper's
// arguments byte for byte) and now said: it went out as a plain call to
// a tool the client never declared. A client that declares a tool named
// "parallel" gets its call without the warning.
func TestRound24ParallelWrapper(t *testing.T) {
	t.Parallel()
	const args = `{"tool_uses":[{"recipient_name":"functions.weather","parameters":{"location":"San Francisco"}},{"recipient_name":"functions.cityAttractions","parameters":{"city":"Rome"}}]}`
	req := func(tools ...string) *provider.Request {
		r := r21Request("gpt-5.4", "What is the weather in San Francisco and what should I see in Rome?")
		r.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		for _, n := range tools {
			r.Tools = append(r.Tools, &llmrelayv1.Tool{Name: n, Parameters: `{"type":"object"}`})
		}
		return r
	}
	check := func(t *testing.T, callID string, msg *llmrelayv1.Message, meta *llmrelayv1.ResponseMeta, warned bool) {
		t.Helper()
		parts := msg.GetParts()
		if len(parts) != 1 || parts[0].GetToolCall().GetCallId() != callID || parts[0].GetToolCall().GetName() != "parallel" ||
			parts[0].GetToolCall().GetArguments() != args {
			t.Fatalf("parts %v", parts)
		}
		n := 0
		for _, w := range meta.GetWarnings() {
			if strings.Contains(w, "tool call "+callID+` is to the undeclared tool "parallel"`) {
				n++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[warned]; n != want {
			t.Errorf("wrapper warnings %d, want %d: %q", n, want, meta.GetWarnings())
		}
		if meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
			t.Errorf("finish %v", meta.GetFinishReason())
		}
	}
	const unaryID, streamID = "call_jS2R1ZGCW5uBh0mPhNhIAnoT", "call_parallel"
	res := r21Unary(t, "responses_parallel_wrapper", req("weather", "cityAttractions"))
	check(t, unaryID, res.Message, res.Meta, true)
	f := r21Stream(t, "real_responses_parallel_wrapper_stream", req("weather", "cityAttractions"))
	check(t, streamID, f.Message, f.Meta, true)

	// Declared by the client: its own tool, unary and streamed.
	srv := providertest.ReplayFile(t, td("responses_parallel_wrapper.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req("weather", "parallel"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, unaryID, res.Message, res.Meta, false)
	srv = providertest.ReplayFile(t, td("real_responses_parallel_wrapper_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req("weather", "parallel"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	f = accFold(t, evs)
	check(t, streamID, f.Message, f.Meta, false)
}
