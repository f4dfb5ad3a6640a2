package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestStatusInside200RateLimit: the RESOURCE_EXHAUSTED status of
// testdata/error_429.http inside a 200 (a stream's chunk, a unary body)
// reads as the 429 answer does, rate-limit state included: the stream's
// error had none (streamError did not read the QuotaFailure into it), so
// the client's FailedCallMeta lacked what the 429 gave.
func TestStatusInside200RateLimit(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, filepath.Join("testdata", "error_429.http"))
	date := provider.ResponseDate(rec.Header)
	requests, remaining := int64(10), int64(0)
	want := &llmrelayv1.RateLimit{RequestsLimit: &requests, RequestsRemaining: &remaining}
	// RetryInfo's 34s after the answer's Date.
	want.RequestsResetTime = timestamppb.New(date.Add(34 * time.Second))
	// The violation as a window: its quota id, a minute, exhausted.
	want.Windows = []*llmrelayv1.RateLimitWindow{{Budget: "requests", Header: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
		Period: durationpb.New(time.Minute), Limit: proto.Int64(10), Remaining: proto.Int64(0), ResetTime: want.RequestsResetTime}}

	call := func(t *testing.T, r providertest.Recording, stream bool) *provider.Error {
		t.Helper()
		srv := providertest.Replay(t, r)
		p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		if stream {
			s, serr := p.Stream(context.Background(), crewRequest("hi"))
			if serr == nil {
				defer s.Close()
				_, serr = drain(t, s)
			}
			err = serr
		} else {
			_, err = p.Generate(context.Background(), crewRequest("hi"))
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v", err)
		}
		return pe
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, rec.Body); err != nil {
		t.Fatal(err)
	}
	h200 := http.Header{"Content-Type": {"application/json; charset=UTF-8"}, "Date": {rec.Header.Get("Date")}}
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Date": {rec.Header.Get("Date")}}
	for _, tc := range []struct {
		name   string
		r      providertest.Recording
		stream bool
	}{
		{"429", rec, false},
		{"429 stream", rec, true},
		{"200 body", providertest.Recording{Status: 200, Header: h200, Body: rec.Body}, false},
		{"200 stream chunk", providertest.Recording{Status: 200, Header: sse, Body: []byte("data: " + compact.String() + "\r\n\r\n")}, true},
	} {
		pe := call(t, tc.r, tc.stream)
		if pe.Kind != provider.KindRateLimited || pe.RetryAfter.Truncate(time.Second) != 34*time.Second || len(pe.Quota) != 1 {
			t.Errorf("%s: kind %s, retry %v, quota %v", tc.name, pe.Kind, pe.RetryAfter, pe.Quota)
		}
		got := proto.Clone(pe.Meta.GetRateLimit()).(*llmrelayv1.RateLimit)
		if got.GetRequestsResetTime() != nil {
			got.RequestsResetTime = timestamppb.New(got.GetRequestsResetTime().AsTime().Truncate(time.Second))
		}
		for _, w := range got.GetWindows() {
			if w.ResetTime != nil {
				w.ResetTime = timestamppb.New(w.ResetTime.AsTime().Truncate(time.Second))
			}
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s: rate limit %v, want %v", tc.name, pe.Meta.GetRateLimit(), want)
		}
	}
}
