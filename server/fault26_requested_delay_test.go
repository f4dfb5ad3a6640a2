package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestFault26RequestedDelay: RetryReason.requested_delay is the delay the
// provider asked for on each failed attempt, whatever the gateway did with
// it, and delay what it waited. A routed model's first deployment answers a
// 503 without a delay (retried after the policy's backoff: no requested
// delay) and a 429 asking for 7 s (the route moves on to the next
// deployment at once: delay 0, requested 7 s); the second answers a 503
// with retry-after-ms 1500 (waited: both 1.5 s) and a 429 asking for 120 s,
// beyond max_retry_after (given up on: no delay, requested 120 s).
func TestFault26RequestedDelay(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, f.errStep(1, 503, nil), f.errStep(2, 429, hdr("Retry-After", "7")))
			second := f13Serve(t, f.errStep(11, 503, hdr("retry-after-ms", "1500")), f.errStep(12, 429, hdr("Retry-After", "120")), f.okStep(13))
			clock := &f13Clock{}
			c := f13StartRouted(t, f, 3, first, second, clock)
			_, err := c.Chat(context.Background(), chatReq13())
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("err = %v", err)
			}
			m := failedMeta(t, err)
			rrs := m.GetRetryReasons()
			if len(rrs) != 4 {
				t.Fatalf("retry reasons = %v", rrs)
			}
			want := []struct {
				deployment       string
				requested, delay time.Duration // -1: the policy's backoff, not the provider's
			}{{"first", 0, -1}, {"first", 7 * time.Second, 0}, {"second", 1500 * time.Millisecond, 1500 * time.Millisecond}, {"second", 120 * time.Second, 0}}
			for i, w := range want {
				rr := rrs[i]
				if rr.GetDeployment() != w.deployment {
					t.Errorf("reason %d deployment %q, want %q", i, rr.GetDeployment(), w.deployment)
				}
				if w.requested == 0 && rr.GetRequestedDelay() != nil {
					t.Errorf("reason %d requested_delay = %v, want none (the provider asked for none)", i, rr.GetRequestedDelay().AsDuration())
				}
				if w.requested != 0 && (rr.GetRequestedDelay() == nil || rr.GetRequestedDelay().AsDuration() != w.requested) {
					t.Errorf("reason %d requested_delay = %v, want %v", i, rr.GetRequestedDelay(), w.requested)
				}
				switch d := rr.GetDelay().AsDuration(); {
				case w.delay == -1 && (d <= 0 || d >= 2*time.Millisecond):
					t.Errorf("reason %d delay = %v, want the policy's backoff below max_delay", i, d)
				case w.delay >= 0 && d != w.delay:
					t.Errorf("reason %d delay = %v, want %v", i, d, w.delay)
				}
			}
			if second.requests() != 2 {
				t.Errorf("second saw %d requests", second.requests())
			}
		})
	}
	// The reset of an exhausted limit is the delay a 429 without
	// Retry-After asks for (x-ratelimit-remaining-requests 0, reset in
	// 1m30s): given up on (beyond max_retry_after), and named.
	for _, f := range f13Formats() {
		if f.name == "anthropic" || f.name == "gemini" {
			continue
		}
		t.Run(f.name+"/exhausted limit's reset", func(t *testing.T) {
			t.Parallel()
			reset := hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m30s")
			up := f13Serve(t, f.errStep(1, 429, reset), f.okStep(2))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("err = %v", err)
			}
			rrs := failedMeta(t, err).GetRetryReasons()
			if len(rrs) != 1 {
				t.Fatalf("retry reasons = %v", rrs)
			}
			if d := rrs[0].GetRequestedDelay().AsDuration(); d > 90*time.Second || d < 88*time.Second || rrs[0].GetDelay().AsDuration() != 0 {
				t.Errorf("requested_delay %v (want ~90s), delay %v (want none)", d, rrs[0].GetDelay().AsDuration())
			}
		})
	}
}
