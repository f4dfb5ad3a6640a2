package openai

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// windowLines is each of rl's windows as one line: budget, header,
// limit/remaining ("-" where unset), period ("-" where unset), reset
// ("-" where unset) as an offset from date, or as a UTC time when date
// is zero, then status and utilization when set.
func windowLines(rl *llmrelayv1.RateLimit, date time.Time) []string {
	var out []string
	n := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	for _, w := range rl.GetWindows() {
		period, reset := "-", "-"
		if w.GetPeriod() != nil {
			period = w.GetPeriod().AsDuration().String()
		}
		if w.GetResetTime() != nil {
			if date.IsZero() {
				reset = w.GetResetTime().AsTime().UTC().Format(time.RFC3339Nano)
			} else {
				reset = "+" + w.GetResetTime().AsTime().Sub(date).String()
			}
		}
		line := w.GetBudget() + " " + w.GetHeader() + " " + n(w.Limit) + "/" + n(w.Remaining) + " " + period + " " + reset
		if w.GetStatus() != "" {
			line += " " + w.GetStatus()
		}
		if w.Utilization != nil {
			line += " " + strconv.FormatFloat(w.GetUtilization(), 'f', -1, 64)
		}
		out = append(out, line)
	}
	return out
}

// checkWindows fails unless rl's windows are want (windowLines), in order.
func checkWindows(t *testing.T, what string, rl *llmrelayv1.RateLimit, date time.Time, want ...string) {
	t.Helper()
	if got := windowLines(rl, date); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: rate-limit windows\n got %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestRound26RateLimitWindows: every budget real answers report is a
// RateLimit.windows entry, with what it counts, the header family it was
// read from, its counts, its period when the provider says it and its
// reset converted from the provider's form: Azure's bare resets (in
// milliseconds there, its budget arithmetic says) beside the renewal
// period in seconds, Groq's and OpenAI's durations, Cerebras's float
// seconds per named window. A 429 keeps them (the throttled caller's
// state). Before, the typed fields held one requests and one tokens
// budget and the rest went to meta.extended as JSON.
func TestRound26RateLimitWindows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		date string // set where the recording has no Date, so resets are counted from it
		want []string
	}{
		{"real_oll_azure_chat_content_filtering_2", "", []string{
			"requests x-ratelimit-requests 120/119 1m0s +500ms",
			"tokens x-ratelimit-tokens 120000/119986 1m0s +7ms"}},
		{"real_rubyllm_azure_foundry_grok", "", []string{
			"requests x-ratelimit-requests 50/48 1m0s +1.889s",
			"tokens x-ratelimit-tokens 50000/49973 1m0s +32ms"}},
		{"real_maruel_groq_oss120_sqrt_1", "Mon, 27 Jul 2025 00:00:00 GMT", []string{
			"requests x-ratelimit-requests 500000/499999 - +172ms",
			"tokens x-ratelimit-tokens 250000/247522 - +594ms"}},
		// Together's unsuffixed request budget; Hugging Face's router's
		// limit below what remains (a rate, left unset as the typed
		// field's) and its tokens budget in fractions; Anthropic's
		// compatible endpoint's limits under names of their own.
		{"real_oll_together_chat", "", []string{
			"requests x-ratelimit 200/199 - +2s"}},
		{"real_maruel_hf_qwen35_sqrt_1", "Mon, 27 Jul 2025 00:00:00 GMT", []string{
			"tokens x-ratelimit-tokens 33333/33183 - -",
			"requests x-ratelimit -/195 - +1s"}},
		{"real_mscope_anthropic_compat", "", []string{
			"requests x-ratelimit-requests 4000/3999 - +0s",
			"tokens x-ratelimit-tokens 2400000/2400000 - +0s"}},
		{"real_oljs_cerebras", "", []string{
			"requests x-ratelimit-requests-day 100000/99997 24h0m0s +22h21m49.437566518s",
			"tokens x-ratelimit-tokens-minute 300000/300000 1m0s +49.437566518s"}},
	} {
		rec := providertest.Load(t, td(tc.name+".http"))
		h := rec.Header.Clone()
		if tc.date != "" {
			h.Set("Date", tc.date)
		}
		date, err := http.ParseTime(h.Get("Date"))
		if err != nil {
			t.Fatalf("%s: Date: %v", tc.name, err)
		}
		meta := &llmrelayv1.ResponseMeta{}
		newTestProvider(t, kOpenAI, "http://unused.invalid").headerMeta(meta, h, "")
		checkWindows(t, tc.name, meta.GetRateLimit(), date, tc.want...)
		if msg := typedInWindows(meta.GetRateLimit()); msg != "" {
			t.Errorf("%s: %s", tc.name, msg)
		}
		for _, k := range []string{"rate_limit_windows", "rate_limit_renewal_period", "rate_limit_input_images"} {
			if _, ok := meta.GetExtended().GetFields()[k]; ok {
				t.Errorf("%s: extended %s, a window's", tc.name, k)
			}
		}
	}

	// OpenAI's 429: the state the caller is throttled with, windows too.
	rec := providertest.Load(t, td("err_429_rate_limit.http"))
	_, err := newTestProvider(t, kOpenAI, providertest.Replay(t, rec).URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.HTTPStatus != http.StatusTooManyRequests {
		t.Fatalf("err %v", err)
	}
	date, _ := http.ParseTime(rec.Header.Get("Date"))
	checkWindows(t, "429", pe.Meta.GetRateLimit(), date,
		"requests x-ratelimit-requests 10000/9999 - +6ms",
		"tokens x-ratelimit-tokens 30000000/29999962 - +0s")
}
