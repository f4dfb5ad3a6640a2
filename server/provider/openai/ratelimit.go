package openai

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// rateLimitWindows are the windows of per-window rate-limit headers,
// shortest first: x-ratelimit-{limit,remaining}-<what>-<window> and
// x-ratelimit-reset-<what>-<window> (seconds, a float). Cerebras sends
// these instead of OpenAI's unsuffixed headers; its API reference names the
// day window for requests and the minute window for tokens, and
// api.cerebras.ai answers with all three windows for both (crewAI's
// cassette, testdata/real_crew_cerebras_streaming_completion_3.http).
// api.mistral.ai (2025) answers with a 10-second request window and minute
// and month token windows, naming requests "req"
// (testdata/real_oll_mistral_chat.http); in 2026 with a 60-second request
// window (x-ratelimit-limit-req-60-second:
// testdata/real_rubyllm_mistral_tool_call_1.http).
var rateLimitWindows = [...]string{"10-second", "60-second", "minute", "hour", "day", "month"}

// rateLimitNames are the names the per-window headers give each budget:
// Cerebras's "requests" and "tokens", Mistral's "req".
var rateLimitNames = map[string][]string{"requests": {"requests", "req"}, "tokens": {"tokens"}}

// windowedRateLimit reads per-window rate-limit headers (Cerebras's,
// Mistral's). The
// RateLimit message has one requests budget and one tokens budget; each
// is the window with the fewest remaining (the one that throttles first;
// on a tie, the shorter window), or, when no window has a remaining
// count, the shortest window with a limit. nil when no such header is
// present.
func windowedRateLimit(h http.Header) *llmrelayv1.RateLimit {
	var rl llmrelayv1.RateLimit
	reqs := pickWindow(h, "requests")
	toks := pickWindow(h, "tokens")
	if reqs == nil && toks == nil {
		return nil
	}
	now := provider.ResponseDate(h)
	if reqs != nil {
		rl.RequestsLimit, rl.RequestsRemaining = reqs.limit, reqs.remaining
		rl.RequestsResetTime = reqs.reset(now)
	}
	if toks != nil {
		rl.TokensLimit, rl.TokensRemaining = toks.limit, toks.remaining
		rl.TokensResetTime = toks.reset(now)
	}
	return &rl
}

type rateWindow struct {
	limit, remaining *int64
	resetSecs        string
	key              string // per-window headers: "<name>-<window>"
}

func (w *rateWindow) reset(now time.Time) *timestamppb.Timestamp {
	if w.resetSecs == "" {
		return nil
	}
	s, err := strconv.ParseFloat(w.resetSecs, 64)
	if err != nil || s < 0 || math.IsInf(s, 0) || math.IsNaN(s) || s > 1e9 {
		return nil
	}
	return timestamppb.New(now.Add(time.Duration(s * float64(time.Second))))
}

// extRateLimitWindows is the meta.extended key of windowExtras.
const extRateLimitWindows = "rate_limit_windows"

// windowExtras are the per-window budgets RateLimit does not hold:
// Cerebras answers with a minute, an hour and a day window for requests
// and tokens (testdata/real_crew_cerebras_streaming_completion_3.http,
// real_maruel_cerebras_oss_logprobs.http), of which RateLimit holds one
// each (windowedRateLimit: the one that throttles first); the others
// were lost, a client unable to see its day budget run out. Returned as
// {"<name>-<window>": {"limit": n, "remaining": n, "reset": "<seconds as
// sent>"}} with what was sent of each; the tokens windows are left out
// where sizeLimitExtras keeps them (Mistral's, beside its query cost).
// nil when there are none.
func windowExtras(h http.Header) map[string]any {
	var b map[string]any
	for what, names := range rateLimitNames {
		if what == "tokens" && h.Get("X-Ratelimit-Tokens-Query-Cost") != "" {
			continue
		}
		picked := pickWindow(h, what)
		if picked == nil {
			continue
		}
		for _, name := range names {
			for _, win := range rateLimitWindows {
				key := name + "-" + win
				if key == picked.key {
					continue
				}
				limit := headerInt(h, "x-ratelimit-limit-"+key)
				remaining := headerInt(h, "x-ratelimit-remaining-"+key)
				if limit == nil && remaining == nil {
					continue
				}
				w := map[string]any{}
				if limit != nil {
					w["limit"] = *limit
				}
				if remaining != nil {
					w["remaining"] = *remaining
				}
				if v := strings.TrimSpace(h.Get("x-ratelimit-reset-" + key)); v != "" {
					w["reset"] = validUTF8(v)
				}
				if b == nil {
					b = map[string]any{}
				}
				b[key] = w
			}
		}
	}
	return b
}

// extRenewalPeriod is the meta.extended key of renewalPeriods.
const extRenewalPeriod = "rate_limit_renewal_period"

// renewalPeriods are Azure's x-ratelimit-renewalperiod-{requests,tokens}
// (seconds: the window each budget refills over; 60 in
// testdata/real_oll_azure_chat_content_filtering_2.http,
// real_rubyllm_azure_foundry_grok.http), which RateLimit has no place
// for: {"requests": n, "tokens": n} with what was sent; nil when neither.
func renewalPeriods(h http.Header) map[string]any {
	var b map[string]any
	for _, what := range [...]string{"requests", "tokens"} {
		v := strings.TrimSpace(h.Get("X-Ratelimit-Renewalperiod-" + what))
		if v == "" {
			continue
		}
		if b == nil {
			b = map[string]any{}
		}
		if n, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(n, 0) && !math.IsNaN(n) {
			b[what] = n
		} else {
			b[what] = validUTF8(v)
		}
	}
	return b
}

func pickWindow(h http.Header, what string) *rateWindow {
	var best *rateWindow
	for _, name := range rateLimitNames[what] {
		for _, win := range rateLimitWindows {
			w := rateWindow{
				limit:     headerInt(h, "x-ratelimit-limit-"+name+"-"+win),
				remaining: headerInt(h, "x-ratelimit-remaining-"+name+"-"+win),
				resetSecs: strings.TrimSpace(h.Get("x-ratelimit-reset-" + name + "-" + win)),
				key:       name + "-" + win,
			}
			if w.limit == nil && w.remaining == nil {
				continue
			}
			switch {
			case best == nil:
			case w.remaining == nil:
				continue
			case best.remaining != nil && *w.remaining >= *best.remaining:
				continue
			}
			best = &w
		}
	}
	return best
}

// inputImagesLimit reads OpenAI's third budget, the input images a model
// that reads images may take per minute, sent beside the requests and
// tokens budgets as x-ratelimit-{limit,remaining,reset}-input-images
// (testdata/real_envoy_chat_image_to_text.http: 50000, 49999 and "1ms").
// The RateLimit message has a requests and a tokens budget only, so it is
// kept in meta.extended as {"limit", "remaining", "reset"} with what was
// sent of each (the reset as sent, a duration from the response's Date);
// nil when neither count was sent.
func inputImagesLimit(h http.Header) map[string]any {
	// Canonical names: h.Get allocates to canonicalize any other (this
	// runs on every answer).
	limit := headerInt(h, "X-Ratelimit-Limit-Input-Images")
	remaining := headerInt(h, "X-Ratelimit-Remaining-Input-Images")
	if limit == nil && remaining == nil {
		return nil
	}
	b := make(map[string]any, 3)
	if limit != nil {
		b["limit"] = *limit
	}
	if remaining != nil {
		b["remaining"] = *remaining
	}
	if v := strings.TrimSpace(h.Get("X-Ratelimit-Reset-Input-Images")); v != "" {
		b["reset"] = validUTF8(v)
	}
	return b
}

// sizeLimitExtras are Mistral's token-budget headers the RateLimit
// message has no place for (testdata/real_oi_mistral_tool_call_stream.http,
// testdata/real_mag_mistral_parallel_function_call_stream.http): the
// tokens the call cost (ratelimitbysize-query-cost) and the budget of
// each window (x-ratelimitbysize-{limit,remaining}-{minute,month}), of
// which RateLimit holds only the binding one (ratelimitbysize-*,
// bareRateLimit); under the names api.mistral.ai uses since 2025
// (x-ratelimit-tokens-query-cost, x-ratelimit-{limit,remaining}-tokens-
// <window>) the same facts. Returned as {"query_cost": n, "<window>": {"limit": n,
// "remaining": n}}; nil when there are none.
func sizeLimitExtras(h http.Header) map[string]any {
	var b map[string]any
	set := func(k string, v any) {
		if b == nil {
			b = map[string]any{}
		}
		b[k] = v
	}
	if n := headerInt(h, "Ratelimitbysize-Query-Cost"); n != nil {
		set("query_cost", *n)
	} else if n := headerInt(h, "X-Ratelimit-Tokens-Query-Cost"); n != nil {
		// The same count under the names api.mistral.ai answers with
		// since 2025, beside x-ratelimit-{limit,remaining}-tokens-<window>
		// (testdata/real_oll_mistral_chat.http,
		// testdata/real_rubyllm_mistral_tool_call_1.http). RateLimit
		// holds the binding tokens window (windowedRateLimit); each
		// window is kept here, as for the older names.
		set("query_cost", *n)
		for _, win := range rateLimitWindows {
			limit := headerInt(h, "x-ratelimit-limit-tokens-"+win)
			remaining := headerInt(h, "x-ratelimit-remaining-tokens-"+win)
			if limit == nil && remaining == nil {
				continue
			}
			w := map[string]any{}
			if limit != nil {
				w["limit"] = *limit
			}
			if remaining != nil {
				w["remaining"] = *remaining
			}
			set(win, w)
		}
	}
	const prefix = "x-ratelimitbysize-"
	for name := range h {
		// Every answer's headers are scanned: only the names with the
		// prefix are lowered (an allocation each).
		if len(name) <= len(prefix) || !strings.EqualFold(name[:len(prefix)], prefix) {
			continue
		}
		rest := strings.ToLower(name[len(prefix):])
		for _, f := range [...]string{"limit-", "remaining-"} {
			window, ok := strings.CutPrefix(rest, f)
			if !ok || window == "" {
				continue
			}
			n := headerInt(h, name)
			if n == nil {
				continue
			}
			w, _ := b[window].(map[string]any)
			if w == nil {
				w = map[string]any{}
				set(window, w)
			}
			w[strings.TrimSuffix(f, "-")] = *n
		}
	}
	return b
}

func headerInt(h http.Header, name string) *int64 {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && strings.Contains(v, ".") {
		// Hugging Face's router sends its token budget as a fraction
		// (x-ratelimit-limit-tokens: 33333.333333333336, remaining
		// 33183.333333333336: maruel/genai's cassette,
		// testdata/real_maruel_hf_qwen35_sqrt_1.http), which was no
		// count at all: the whole tokens of it.
		if f, ferr := strconv.ParseFloat(v, 64); ferr == nil && f >= 0 && f < math.MaxInt64 {
			n, err = int64(f), nil
		}
	}
	if err != nil || n < 0 {
		// A negative count is no count (Azure's -1 for a budget it
		// does not track: provider.OpenAIRateLimit).
		return nil
	}
	return &n
}

// unprefixedLimits completes rl with the limits Anthropic's OpenAI-compatible
// endpoint (api.anthropic.com/v1/chat/completions) sends under names of its
// own, x-ratelimit-requests and x-ratelimit-tokens, beside OpenAI's
// x-ratelimit-remaining-* and x-ratelimit-reset-* and without OpenAI's
// x-ratelimit-limit-* (testdata/real_mscope_anthropic_compat.http: 4000
// and 2400000, December 2025), and OpenAI's own limit and remaining
// counts when they are fractions (Hugging Face's router's token budget,
// which provider.OpenAIRateLimit reads as no count: headerInt). Each
// fills only a count rl has none for.
func unprefixedLimits(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	for _, b := range []struct {
		name     string
		get      func(*llmrelayv1.RateLimit) **int64
		fraction bool // OpenAI's own name: read here only as a fraction
	}{
		{"X-Ratelimit-Requests", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.RequestsLimit }, false},
		{"X-Ratelimit-Tokens", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.TokensLimit }, false},
		{"X-Ratelimit-Limit-Requests", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.RequestsLimit }, true},
		{"X-Ratelimit-Remaining-Requests", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.RequestsRemaining }, true},
		{"X-Ratelimit-Limit-Tokens", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.TokensLimit }, true},
		{"X-Ratelimit-Remaining-Tokens", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.TokensRemaining }, true},
	} {
		if b.fraction && !strings.Contains(h.Get(b.name), ".") {
			// An integer count is provider.OpenAIRateLimit's to read (and
			// to leave out: a limit of 0 beside a remaining count is no
			// limit).
			continue
		}
		n := headerInt(h, b.name)
		if n == nil {
			continue
		}
		if rl == nil {
			rl = &llmrelayv1.RateLimit{}
		}
		if f := b.get(rl); *f == nil {
			*f = n
		}
	}
	return rl
}

// bareRateLimit completes rl (nil: none read yet) with the budgets of
// servers that send a single unsuffixed triple instead of OpenAI's
// -requests/-tokens pairs:
//
//   - x-ratelimit-{limit,remaining,reset}: a request budget. Together
//     documents these as requests (limit, remaining, and the time until the
//     request budget resets; testdata/real_oll_together_chat.http answers
//     200, 199 and "2"); OpenRouter sends the same names.
//   - ratelimitbysize-{limit,remaining,reset}: Mistral's token budget
//     ("by size": tokens) for its binding window, beside per-window
//     x-ratelimitbysize-*-{minute,month} (api.mistral.ai in 2024,
//     testdata/real_oi_mistral_tool_call_stream.http: 500000, 342032 and
//     60, the minute window's values).
//
// Each fills only a budget rl has no limit or remaining count for, so
// OpenAI's own headers always win.
func bareRateLimit(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	if rl == nil || (rl.RequestsLimit == nil && rl.RequestsRemaining == nil) {
		if w := bareWindow(h, "x-ratelimit-"); w != nil {
			if rl == nil {
				rl = &llmrelayv1.RateLimit{}
			}
			rl.RequestsLimit, rl.RequestsRemaining = w.limit, w.remaining
			if w.limitBelowRemaining() {
				rl.RequestsLimit = nil // not the limit of what remains (bareLimitBelowRemaining)
			}
			rl.RequestsResetTime = bareReset(h, w.resetSecs)
		}
	}
	if rl == nil || (rl.TokensLimit == nil && rl.TokensRemaining == nil) {
		if w := bareWindow(h, "ratelimitbysize-"); w != nil {
			if rl == nil {
				rl = &llmrelayv1.RateLimit{}
			}
			rl.TokensLimit, rl.TokensRemaining = w.limit, w.remaining
			if w.limitBelowRemaining() {
				rl.TokensLimit = nil
			}
			rl.TokensResetTime = bareReset(h, w.resetSecs)
		}
	}
	return rl
}

// limitBelowRemaining reports a limit below the count that remains of
// it: not the limit of that budget, as OpenAIRateLimit leaves Azure's 0
// beside a remaining count. Together documents its x-ratelimit-limit as
// the requests per second it permits and answers 10 beside a remaining
// 18 or 19 (its dynamic rate, with a burst cushion above it:
// docs.together.ai/docs/rate-limits; testdata/real_maruel_together_qwen_sqrt_1.http,
// real_mscope_together_llama4.http), Hugging Face's router 100 beside 195
// (testdata/real_maruel_hf_qwen35_sqrt_1.http). A client reading
// limit − remaining as what it used would count a negative use; the
// limit is left unset, the remaining count and reset kept, and the
// headers as sent go to meta.extended (bareLimitBelowRemaining).
func (w *rateWindow) limitBelowRemaining() bool {
	return w.limit != nil && w.remaining != nil && *w.remaining > *w.limit
}

// extBareRateLimit is the meta.extended key of an unsuffixed request
// budget whose limit is below what remains of it.
const extBareRateLimit = "rate_limit_requests_as_sent"

// bareLimitBelowRemaining is the unsuffixed x-ratelimit-{limit,remaining,reset}
// triple as sent ({"limit", "remaining", "reset"}) when its limit is below
// its remaining count and the typed requests budget is read from it
// (rl.RequestsLimit left unset): the limit is a rate, not that budget's
// size, and kept rather than lost. nil otherwise.
func bareLimitBelowRemaining(rl *llmrelayv1.RateLimit, h http.Header) map[string]any {
	if rl == nil || rl.RequestsLimit != nil {
		return nil
	}
	w := bareWindow(h, "x-ratelimit-")
	if w == nil || !w.limitBelowRemaining() || rl.RequestsRemaining == nil || *rl.RequestsRemaining != *w.remaining {
		return nil
	}
	b := map[string]any{"limit": *w.limit, "remaining": *w.remaining}
	if w.resetSecs != "" {
		b["reset"] = validUTF8(w.resetSecs)
	}
	return b
}

func bareWindow(h http.Header, prefix string) *rateWindow {
	w := rateWindow{
		limit:     headerInt(h, prefix+"limit"),
		remaining: headerInt(h, prefix+"remaining"),
		resetSecs: strings.TrimSpace(h.Get(prefix + "reset")),
	}
	if w.limit == nil && w.remaining == nil {
		return nil
	}
	return &w
}

// bareReset reads an unsuffixed reset value. Servers disagree on its unit:
// Together and Mistral send seconds until the reset, OpenRouter the reset's
// Unix time in milliseconds. A value below 1e9 (31 years) is taken as
// seconds from the response's Date; one from 1e9 is a Unix time, in
// milliseconds from 1e12 (September 2001 in milliseconds, year 33658 in
// seconds), else in seconds.
func bareReset(h http.Header, v string) *timestamppb.Timestamp {
	if v == "" {
		return nil
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil
	}
	switch {
	case n < 1e9:
		return timestamppb.New(provider.ResponseDate(h).Add(time.Duration(n * float64(time.Second))))
	case n < 1e12:
		return timestamppb.New(time.Unix(int64(n), 0).UTC())
	case n < 253402300800000: // year 10000 in milliseconds
		return timestamppb.New(time.UnixMilli(int64(n)).UTC())
	default:
		return nil
	}
}

// anthropicRateLimit reads the anthropic-ratelimit-{requests,tokens}-*
// headers (limit, remaining, an RFC 3339 reset) that Anthropic's API sends
// on every answer, its OpenAI-compatible endpoint's included (which follows
// the Messages API's limits); nil when there are none.
func anthropicRateLimit(h http.Header) *llmrelayv1.RateLimit {
	var rl llmrelayv1.RateLimit
	found := false
	for _, b := range []struct {
		what             string
		limit, remaining **int64
		reset            **timestamppb.Timestamp
	}{
		{"requests", &rl.RequestsLimit, &rl.RequestsRemaining, &rl.RequestsResetTime},
		{"tokens", &rl.TokensLimit, &rl.TokensRemaining, &rl.TokensResetTime},
	} {
		prefix := "anthropic-ratelimit-" + b.what + "-"
		if n := headerInt(h, prefix+"limit"); n != nil {
			*b.limit, found = n, true
		}
		if n := headerInt(h, prefix+"remaining"); n != nil {
			*b.remaining, found = n, true
		}
		if v := strings.TrimSpace(h.Get(prefix + "reset")); v != "" {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				*b.reset, found = timestamppb.New(t), true
			}
		}
	}
	if !found {
		return nil
	}
	return &rl
}
