package anthropic

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25bNoStopReason: a whole answer (200 JSON) whose stop_reason is
// null or missing. Anthropic never sends one ("In non-streaming mode this
// value is always non-null. In streaming mode, it is null in the
// message_start event and non-null otherwise.": anthropic-sdk-python
// src/anthropic/types/message.py @ 0c20cf40f20edb11ab0453f646bcccf42479d92f);
// it is a stream's message_start passed on whole, or a proxy's answer put
// together from a stream cut before its message_delta. **Bug:** the finish
// was unspecified with no word of why, so an answer that may be cut looked
// like any other. Now the finish stays unspecified (never STOP), the
// provider's finish reason empty, and a warning says the end is unknown;
// the same when a proxy answers a stream request with that JSON. An answer
// with a stop_reason has no such warning.
func TestRound25bNoStopReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, stop string }{
		{"null", `"stop_reason":null,`},
		{"missing", ``},
		{"end_turn", `"stop_reason":"end_turn",`},
	} {
		body := `{"id":"msg_01NoStop25bAnswer","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"The capital of France is"}],` +
			tc.stop + `"stop_sequence":null,"usage":{"input_tokens":14,"output_tokens":6}}`
		rec := providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_011NoStop25bAnswer"}}, Body: []byte(body)}
		srv := providertest.Replay(t, rec)
		res, err := newTestProvider(t, srv.URL).Generate(context.Background(), plainRequest())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED
		if tc.name == "end_turn" {
			want = llmrelayv1.FinishReason_FINISH_REASON_STOP
		}
		warned := slices.Contains(res.Meta.GetWarnings(), noStopReasonWarning)
		if res.Meta.GetFinishReason() != want || warned != (tc.name != "end_turn") || res.Message.GetParts()[0].GetText() != "The capital of France is" {
			t.Errorf("%s: finish %v, warnings %q, message %v", tc.name, res.Meta.GetFinishReason(), res.Meta.GetWarnings(), res.Message)
		}

		// The same JSON answering a stream request (a proxy that ignores
		// stream): the stream's end carries the same finish and warning.
		srv = providertest.Replay(t, rec)
		s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
		if err != nil {
			t.Fatalf("%s stream: %v", tc.name, err)
		}
		last := &llmrelayv1.ResponseMeta{}
		for {
			ev, err := s.Recv()
			if err != nil {
				break
			}
			if m := ev.Meta; m != nil {
				proto.Merge(last, m)
			}
		}
		s.Close()
		if last.GetFinishReason() != want || slices.Contains(last.GetWarnings(), noStopReasonWarning) != (tc.name != "end_turn") {
			t.Errorf("%s stream: meta %v", tc.name, last)
		}
	}
}
