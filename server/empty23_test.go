package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// emptyWords are the words of the warning an answer the provider ended
// normally with nothing in it carries.
const emptyWords = "ended the answer normally but it is empty"

func emptyWarning(m *llmrelayv1.ResponseMeta) string {
	for _, w := range m.GetWarnings() {
		if strings.Contains(w, emptyWords) {
			return w
		}
	}
	return ""
}

// TestEmptyAnswerWarned: an answer the provider ended as complete (STOP)
// that holds no text, refusal or tool call looked like a successful
// answer; it carries a warning naming the output tokens the provider
// counted for it. An empty answer whose finish says why (LENGTH) and an
// answer with text carry none. Unary and streamed alike (hand-built from
// the f13 answers, the text taken out).
func TestEmptyAnswerWarned(t *testing.T) {
	t.Parallel()
	emptyUnary := strings.Replace(openaiChat.okBody, `"content":"`+okText+`"`, `"content":""`, 1)
	lengthUnary := strings.Replace(emptyUnary, `"finish_reason":"stop"`, `"finish_reason":"length"`, 1)
	emptyStream := openaiChat.head + openaiChat.tail
	lengthStream := openaiChat.head + strings.Replace(openaiChat.tail, `"stop"`, `"length"`, 1)
	if emptyUnary == openaiChat.okBody || lengthUnary == emptyUnary || lengthStream == emptyStream {
		t.Fatal("the fixtures were not changed")
	}
	const want = "the provider counted 8 output tokens besides reasoning"
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
		warn   bool
	}{
		{"unary empty stop", emptyUnary, false, true},
		{"unary empty length", lengthUnary, false, false},
		{"unary text", openaiChat.okBody, false, false},
		{"stream empty stop", emptyStream, true, true},
		{"stream empty length", lengthStream, true, false},
		{"stream text", openaiChat.complete(), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var step f13Step
			if tc.stream {
				step = respond(200, openaiChat.streamHead(1), tc.body)
			} else {
				step = respond(200, merged(hdr("Content-Type", "application/json"), openaiChat.reqIDHeader(1)), tc.body)
			}
			up := f13Serve(t, step)
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+openaiChat.yaml, up.URL, &f13Clock{})
			var m *llmrelayv1.ResponseMeta
			if tc.stream {
				got := readStream13(t, c)
				if got.err != nil || got.end == nil {
					t.Fatalf("err %v, end %v", got.err, got.end)
				}
				m = got.end.GetMeta()
			} else {
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m = resp.GetMeta()
			}
			w := emptyWarning(m)
			if tc.warn && !strings.Contains(w, want) {
				t.Errorf("warnings %q: want the empty-answer warning with %q", m.GetWarnings(), want)
			}
			if !tc.warn && w != "" {
				t.Errorf("warnings %q: want no empty-answer warning", m.GetWarnings())
			}
		})
	}
}

// TestRetryReasonsNameRequestIDs: every failed attempt's retry reason
// names the provider's request id of its answer, not only the last
// answer's (ResponseMeta.provider_request_id): the id a provider's support
// asks for about a 429 or a 503 was lost for every attempt but the last.
// A 429, a 503, then a success; each format that reads a request id.
func TestRetryReasonsNameRequestIDs(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		if f.reqID == "" {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, hdr("Retry-After", "0")), f.errStep(2, 503, nil), f.okStep(3))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			rr := m.GetRetryReasons()
			if len(rr) != 2 || m.GetProviderRequestId() != f.wantReqID(3) {
				t.Fatalf("retry reasons %v, request id %q", rr, m.GetProviderRequestId())
			}
			for i, r := range rr {
				if r.GetProviderRequestId() != f.wantReqID(i+1) {
					t.Errorf("attempt %d (%s): provider_request_id %q, want %q", r.GetAttempt(), r.GetReason(), r.GetProviderRequestId(), f.wantReqID(i+1))
				}
			}
		})
	}
}

// TestUpstreamTypeBesideCode: an OpenAI error that gives a code and a type
// (429: code rate_limit_exceeded, type requests) lost the type; ErrorInfo
// carries it as upstreamType beside upstreamCode. An error with a type
// alone keeps it as the code, with no upstreamType.
func TestUpstreamTypeBesideCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status    int
		code, typ string
	}{
		{429, "rate_limit_exceeded", "requests"},
		{400, "invalid_request_error", ""},
	} {
		up := f13Serve(t, openaiChat.errStep(1, tc.status, nil))
		c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+openaiChat.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		st, _ := status.FromError(err)
		md := errorInfoOf(st).GetMetadata()
		if md["upstreamCode"] != tc.code || md["upstreamType"] != tc.typ {
			t.Errorf("%d: upstreamCode %q, upstreamType %q; want %q, %q", tc.status, md["upstreamCode"], md["upstreamType"], tc.code, tc.typ)
		}
	}
}
