package provider

import (
	"net/http"
	"testing"
	"time"
)

// TestOpenAIRateLimitAzureUnits: Azure's bare reset numbers are read in
// the unit its budget's own arithmetic shows (bareResetMillis), on header
// sets Azure and GitHub Models (Azure's inference front end) answered, as
// the projects that met them quote them: milliseconds where the value
// matches the time a window of limit per renewal period takes to refill
// what was used (and seconds could not be: 500 s in a 60 s window),
// seconds where the seconds match; a value the numbers cannot place (0,
// no renewal period) in seconds as before, one budget's unit lending
// itself to the other's; a duration with its unit as it says.
func TestOpenAIRateLimitAzureUnits(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 3, 31, 13, 12, 32, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{"Date": {date.Format(http.TimeFormat)}}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		h             http.Header
		reqs, toks    time.Duration // from the Date; -1: unset
		toksRemaining int64         // -1: unset
	}{
		// The openai package's real_oll_azure_chat_content_filtering_2.http.
		{"openllmetry's Azure recording", h("x-ratelimit-limit-requests", "120", "x-ratelimit-remaining-requests", "119",
			"x-ratelimit-limit-tokens", "120000", "x-ratelimit-remaining-tokens", "119986",
			"x-ratelimit-renewalperiod-requests", "60", "x-ratelimit-renewalperiod-tokens", "60",
			"x-ratelimit-reset-requests", "500", "x-ratelimit-reset-tokens", "7"), 500 * time.Millisecond, 7 * time.Millisecond, 119986},
		// GitHub Models (gpt-4o-mini), as a test of a router quotes it.
		{"GitHub Models", h("x-ratelimit-limit-requests", "20000", "x-ratelimit-remaining-requests", "19999",
			"x-ratelimit-renewalperiod-requests", "60", "x-ratelimit-reset-requests", "3",
			"x-ratelimit-limit-tokens", "2000000", "x-ratelimit-remaining-tokens", "1999962",
			"x-ratelimit-renewalperiod-tokens", "60", "x-ratelimit-reset-tokens", "1"), 3 * time.Millisecond, time.Millisecond, 1999962},
		// An Azure 429 (a Foundry model), as a budget test quotes it:
		// a request refills in 12 s; the tokens' 0 says nothing.
		{"Azure 429 in seconds", h("x-ratelimit-limit-requests", "5", "x-ratelimit-remaining-requests", "4",
			"x-ratelimit-limit-tokens", "5000", "x-ratelimit-remaining-tokens", "0",
			"x-ratelimit-renewalperiod-requests", "60", "x-ratelimit-renewalperiod-tokens", "60",
			"x-ratelimit-reset-requests", "12", "x-ratelimit-reset-tokens", "0"), 12 * time.Second, 0, 0},
		// An Azure 200 as a design note quotes it: 754601 tokens to
		// refill at 25000/s is 30.2 s; the requests' 0 says nothing.
		{"Azure 200 in seconds", h("x-ratelimit-limit-requests", "9000", "x-ratelimit-remaining-requests", "8999",
			"x-ratelimit-limit-tokens", "1500000", "x-ratelimit-remaining-tokens", "745399",
			"x-ratelimit-renewalperiod-requests", "10", "x-ratelimit-renewalperiod-tokens", "60",
			"x-ratelimit-reset-requests", "0", "x-ratelimit-reset-tokens", "30"), 0, 30 * time.Second, 745399},
		{"no renewal period: seconds", h("x-ratelimit-limit-tokens", "120000", "x-ratelimit-remaining-tokens", "119986",
			"x-ratelimit-reset-tokens", "7"), -1, 7 * time.Second, 119986},
		{"one budget's unit lends itself", h("x-ratelimit-limit-requests", "120", "x-ratelimit-remaining-requests", "119",
			"x-ratelimit-renewalperiod-requests", "60", "x-ratelimit-reset-requests", "500", "x-ratelimit-reset-tokens", "7"),
			500 * time.Millisecond, 7 * time.Millisecond, -1},
		{"durations keep their unit", h("x-ratelimit-limit-requests", "120", "x-ratelimit-remaining-requests", "119",
			"x-ratelimit-renewalperiod-requests", "60", "x-ratelimit-reset-requests", "500", "x-ratelimit-reset-tokens", "7s"),
			500 * time.Millisecond, 7 * time.Second, -1},
		// Azure's count of an oversubscribed window (a throttled
		// Responses stream, as a proxy's capture quotes it): nothing
		// remains; its reset is kept (64 s: 442689 tokens at 6917/s).
		{"oversubscribed window", h("x-ratelimit-limit-tokens", "415000", "x-ratelimit-remaining-tokens", "-27689",
			"x-ratelimit-renewalperiod-tokens", "60", "x-ratelimit-reset-tokens", "64"), -1, 64 * time.Second, 0},
		// OpenAI's and Azure's -1 for a budget they do not track.
		{"untracked", h("x-ratelimit-limit-tokens", "-1", "x-ratelimit-remaining-tokens", "-1", "x-ratelimit-reset-tokens", "0",
			"x-ratelimit-limit-requests", "100"), -1, -1, -1},
		{"a deficit without a limit says nothing", h("x-ratelimit-remaining-tokens", "-27689", "x-ratelimit-reset-tokens", "64",
			"x-ratelimit-limit-requests", "100"), -1, -1, -1},
	} {
		rl := OpenAIRateLimit(tc.h)
		for _, b := range []struct {
			what string
			want time.Duration
			got  interface{ AsTime() time.Time }
			set  bool
		}{
			{"requests", tc.reqs, rl.GetRequestsResetTime(), rl.GetRequestsResetTime() != nil},
			{"tokens", tc.toks, rl.GetTokensResetTime(), rl.GetTokensResetTime() != nil},
		} {
			if b.want < 0 {
				if b.set {
					t.Errorf("%s: %s reset %v, want none", tc.name, b.what, b.got.AsTime())
				}
				continue
			}
			if !b.set || b.got.AsTime().Sub(date) != b.want {
				t.Errorf("%s: %s reset %v, want %v after the Date", tc.name, b.what, rl, b.want)
			}
		}
		if tc.toksRemaining < 0 != (rl.TokensRemaining == nil) || (rl.TokensRemaining != nil && rl.GetTokensRemaining() != tc.toksRemaining) {
			t.Errorf("%s: tokens remaining %v, want %d", tc.name, rl, tc.toksRemaining)
		}
	}
}
