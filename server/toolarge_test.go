package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRequestTooLarge: OpenAI's 429 for a request larger than the whole
// per-minute token limit (the openai adapter's
// testdata/err_429_request_too_large.http), and the same refusal in a
// Responses stream's response.failed (real_responses_failed_only_stream)
// were retried as any rate limit, though no attempt can succeed: now one
// attempt, ResourceExhausted with the provider's code, a QuotaFailure
// naming the tokens-per-minute limit and its value (which the headers do
// not show exhausted), no RetryInfo (even where the headers show the
// tokens spent and their reset), and a routed model falls back.
func TestRequestTooLarge(t *testing.T) {
	t.Parallel()
	tooLarge := providertest.Load(t, "provider/openai/testdata/err_429_request_too_large.http")
	failed := providertest.Load(t, "provider/openai/testdata/real_responses_failed_only_stream.http")
	cases := []struct {
		name   string
		f      f13Format
		rec    providertest.Recording
		extra  http.Header
		stream bool
		limit  int64
		status string
	}{
		{"chat 429", openaiChat, tooLarge, nil, false, 30000, "429"},
		{"chat 429 stream", openaiChat, tooLarge, nil, true, 30000, "429"},
		{"chat 429, tokens spent", openaiChat, tooLarge, http.Header{"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"20s"},
			"Date": {time.Now().UTC().Format(http.TimeFormat)}}, false, 30000, "429"},
		{"responses failed event", openaiResponses, failed, nil, true, 30000, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.rec.Header.Clone()
			for k, v := range tc.extra {
				h[k] = v
			}
			up := f13Serve(t, respond(tc.rec.Status, h, string(tc.rec.Body)))
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, &f13Clock{})
			var err error
			if tc.stream {
				err = readStream13(t, c).err
			} else {
				_, err = c.Chat(context.Background(), chatReq13())
			}
			st := status.Convert(err)
			info := errorInfoOf(st)
			if st.Code() != codes.ResourceExhausted || info.GetReason() != "UPSTREAM_RATE_LIMITED" || info.GetMetadata()["upstreamCode"] != "rate_limit_exceeded" ||
				info.GetMetadata()["upstreamStatus"] != tc.status {
				t.Fatalf("got %v %v", st.Code(), info)
			}
			if up.requests() != 1 {
				t.Errorf("%d attempts, want 1 (no retry)", up.requests())
			}
			if r := retryInfo(st); r != nil {
				t.Errorf("RetryInfo %v: waiting does not help", r)
			}
			vs := quotaFailure(st).GetViolations()
			want := &errdetails.QuotaFailure_Violation{Subject: "provider:up", QuotaMetric: "tokens", QuotaId: "TPM", QuotaValue: tc.limit}
			if len(vs) != 1 {
				t.Fatalf("violations %v", vs)
			}
			got := proto.Clone(vs[0]).(*errdetails.QuotaFailure_Violation)
			got.Description = ""
			if !proto.Equal(got, want) {
				t.Errorf("violation %v, want %v", vs[0], want)
			}
		})
	}
	t.Run("falls back", func(t *testing.T) {
		t.Parallel()
		for _, stream := range []bool{false, true} {
			first := f13Serve(t, respond(tooLarge.Status, tooLarge.Header, string(tooLarge.Body)))
			f := openaiChat
			second := f13Serve(t, f.okStep(11))
			if stream {
				second = f13Serve(t, respond(200, f.streamHead(11), f.head+f.text(okText)+f.tail))
			}
			clock := &f13Clock{}
			c := f13StartRouted(t, f, 3, first, second, clock)
			if stream {
				if got := readStream13(t, c); got.err != nil {
					t.Fatalf("stream: %v", got.err)
				}
			} else if _, err := c.Chat(context.Background(), chatReq13()); err != nil {
				t.Fatal(err)
			}
			if first.requests() != 1 || second.requests() != 1 || len(clock.slept()) != 0 {
				t.Errorf("stream %v: first %d, second %d requests, %d waits", stream, first.requests(), second.requests(), len(clock.slept()))
			}
		}
	})
}
