package gemini

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// TestRound26SafetyStopCutsCall: a functionCall last in a candidate whose
// finishReason is a safety or content stop (SAFETY, PROHIBITED_CONTENT,
// BLOCKLIST, SPII, RECITATION: "the token generation stopped", the API
// reference's FinishReason) or MALFORMED_FUNCTION_CALL is the call being
// written when the model was stopped: its arguments parse, but it is
// reported cut (arguments_valid false, the cut warning), unary and
// streamed, and the folded stream equals the unary answer. A STOP keeps
// the call whole. Hand-built from the documented GenerateContentResponse
// shape (candidates[].content.parts[].functionCall, finishReason).
func TestRound26SafetyStopCutsCall(t *testing.T) {
	t.Parallel()
	for _, finish := range []string{"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "MALFORMED_FUNCTION_CALL", "STOP"} {
		t.Run(finish, func(t *testing.T) {
			t.Parallel()
			low := strings.ToLower(strings.ReplaceAll(finish, "_", ""))
			id := "r26fc-" + low
			call := `{"functionCall":{"id":"` + id + `","name":"getWeather","args":{"location":"Oslo"}}}`
			text := `{"text":"Checking."}`
			usage := `"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":7,"totalTokenCount":19},"modelVersion":"gemini-2.5-flash","responseId":"r26fc-resp-` + low + `"`
			unary := `{"candidates":[{"content":{"role":"model","parts":[` + text + `,` + call + `]},"finishReason":"` + finish + `","index":0}],` + usage + `}`
			stream := `data: {"candidates":[{"content":{"role":"model","parts":[` + text + `]},"index":0}],` + usage + "}\r\n\r\n" +
				`data: {"candidates":[{"content":{"role":"model","parts":[` + call + `]},"finishReason":"` + finish + `","index":0}],` + usage + "}\r\n\r\n"

			run := func(body, ctype string) *Provider {
				srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {ctype}}, Body: []byte(body)})
				p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			res, err := run(unary, "application/json; charset=UTF-8").Generate(context.Background(), generateCases(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			s, err := run(stream, "text/event-stream").Stream(context.Background(), generateCases(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			if end != nil && end.Error() != "EOF" {
				t.Fatalf("stream: %v", end)
			}
			folded := foldMessage(t, evs)
			if !proto.Equal(folded, res.Message) {
				t.Errorf("folded %v, unary %v", folded, res.Message)
			}
			whole := finish == "STOP"
			tc := res.Message.GetParts()[len(res.Message.GetParts())-1].GetToolCall()
			if tc.GetCallId() != id || tc.GetArguments() != `{"location":"Oslo"}` || tc.GetArgumentsValid() != whole {
				t.Errorf("unary call %v, want valid %v", tc, whole)
			}
			kinds := map[provider.EventKind]int{}
			for _, ev := range evs {
				kinds[ev.Kind]++
			}
			if whole && (kinds[provider.EventToolCallCut] != 0 || kinds[provider.EventToolCallEnd] != 1) ||
				!whole && (kinds[provider.EventToolCallCut] != 1 || kinds[provider.EventToolCallEnd] != 0) {
				t.Errorf("call ends %v", kinds)
			}
			w := cutCallWarning(id, cutBy(finish))
			f := foldEvents(evs)
			for name, m := range map[string]*llmrelayv1.ResponseMeta{"unary": res.Meta, "stream": f.meta} {
				has := false
				for _, x := range m.GetWarnings() {
					has = has || x == w && !whole
					if whole && strings.Contains(x, "was cut by") {
						t.Errorf("%s: warning %q for a whole call", name, x)
					}
				}
				if has == whole {
					t.Errorf("%s: warnings %q, want %q", name, m.GetWarnings(), w)
				}
				if m.GetProviderFinishReason() != finish {
					t.Errorf("%s: finish %q", name, m.GetProviderFinishReason())
				}
			}
		})
	}
}
