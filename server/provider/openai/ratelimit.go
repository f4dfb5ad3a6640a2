package openai

import (
	"math"
	"net/http"
	"slices"
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

// windowedWindows adds to rl (nil: none yet) every per-window budget
// the headers send (RateLimit.windows): Cerebras answers with a minute,
// an hour and a day window for requests and tokens
// (testdata/real_crew_cerebras_streaming_completion_3.http,
// real_maruel_cerebras_oss_logprobs.http), Mistral with 10-second or
// 60-second request windows and minute and month token windows, of which
// the typed fields hold one each (windowedRateLimit: the one that
// throttles first); the others, a client's day budget among them, were
// kept only as JSON in meta.extended. Each is a window with its period
// from its name (none for a month), header x-ratelimit-<name>-<window>,
// in the order of rateLimitNames' budgets and names and rateLimitWindows.
func windowedWindows(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	var now time.Time
	for _, what := range [...]string{"requests", "tokens"} {
		for _, name := range rateLimitNames[what] {
			for _, win := range rateLimitWindows {
				key := name + "-" + win
				limit := headerInt(h, "x-ratelimit-limit-"+key)
				remaining := headerInt(h, "x-ratelimit-remaining-"+key)
				if limit == nil && remaining == nil {
					continue
				}
				if rl == nil {
					rl = &llmrelayv1.RateLimit{}
				}
				if now.IsZero() {
					now = provider.ResponseDate(h)
				}
				rw := rateWindow{resetSecs: strings.TrimSpace(h.Get("x-ratelimit-reset-" + key))}
				w := provider.Window(rl, what, "x-ratelimit-"+key)
				w.Limit, w.Remaining, w.ResetTime = limit, remaining, rw.reset(now)
				w.Period = provider.NamedPeriod(win)
			}
		}
	}
	return rl
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

// inputImagesWindow adds OpenAI's third budget to rl (nil: none yet),
// the input images a model that reads images may take per minute, sent
// beside the requests and tokens budgets as
// x-ratelimit-{limit,remaining,reset}-input-images
// (testdata/real_envoy_chat_image_to_text.http: 50000, 49999 and "1ms"):
// a window of budget "input_images", its reset a duration from the
// response's Date as the other budgets'.
func inputImagesWindow(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	// Canonical names: h.Get allocates to canonicalize any other (this
	// runs on every answer).
	limit := headerInt(h, "X-Ratelimit-Limit-Input-Images")
	remaining := headerInt(h, "X-Ratelimit-Remaining-Input-Images")
	if limit == nil && remaining == nil {
		return rl
	}
	if rl == nil {
		rl = &llmrelayv1.RateLimit{}
	}
	w := provider.Window(rl, "input_images", "x-ratelimit-input-images")
	w.Limit, w.Remaining = limit, remaining
	w.ResetTime = provider.ResetAfter(h, h.Get("X-Ratelimit-Reset-Input-Images"))
	return rl
}

// queryCost is the tokens a Mistral call was charged against its token
// budget (ratelimitbysize-query-cost, in 2024,
// testdata/real_oi_mistral_tool_call_stream.http; x-ratelimit-tokens-query-cost
// since 2025, testdata/real_oll_mistral_chat.http), which is no budget:
// meta.extended.rate_limit_by_size {"query_cost": n}; nil when not sent.
// The budgets beside it are windows (bySizeWindows, windowedWindows).
func queryCost(h http.Header) map[string]any {
	if n := headerInt(h, "Ratelimitbysize-Query-Cost"); n != nil {
		return map[string]any{"query_cost": *n}
	}
	if n := headerInt(h, "X-Ratelimit-Tokens-Query-Cost"); n != nil {
		return map[string]any{"query_cost": *n}
	}
	return nil
}

// bySizeWindows adds to rl (nil: none yet) Mistral's 2024 per-window
// token budgets, x-ratelimitbysize-{limit,remaining}-<window>
// (testdata/real_oi_mistral_tool_call_stream.http,
// testdata/real_mag_mistral_parallel_function_call_stream.http: minute
// and month), of which the typed tokens fields hold only the binding one
// (ratelimitbysize-*, bareRateLimit): windows of budget "tokens", header
// x-ratelimitbysize-<window>, period from the window's name, in the
// order of the window names, sorted.
func bySizeWindows(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	const prefix = "x-ratelimitbysize-"
	var windows []string
	for name := range h {
		// Every answer's headers are scanned: only the names with the
		// prefix are lowered (an allocation each).
		if len(name) <= len(prefix) || !strings.EqualFold(name[:len(prefix)], prefix) {
			continue
		}
		rest := strings.ToLower(name[len(prefix):])
		for _, f := range [...]string{"limit-", "remaining-"} {
			if window, ok := strings.CutPrefix(rest, f); ok && window != "" && !slices.Contains(windows, window) {
				windows = append(windows, window)
			}
		}
	}
	slices.Sort(windows)
	for _, win := range windows {
		limit := headerInt(h, prefix+"limit-"+win)
		remaining := headerInt(h, prefix+"remaining-"+win)
		if limit == nil && remaining == nil {
			continue
		}
		if rl == nil {
			rl = &llmrelayv1.RateLimit{}
		}
		w := provider.Window(rl, "tokens", prefix+win)
		w.Limit, w.Remaining, w.Period = limit, remaining, provider.NamedPeriod(win)
	}
	return rl
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
// fills only a count rl has none for, and the same count of the budget's
// x-ratelimit-<budget> window (RateLimit.windows).
func unprefixedLimits(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	lim := func(w *llmrelayv1.RateLimitWindow) **int64 { return &w.Limit }
	rem := func(w *llmrelayv1.RateLimitWindow) **int64 { return &w.Remaining }
	for _, b := range []struct {
		name     string
		get      func(*llmrelayv1.RateLimit) **int64
		fraction bool // OpenAI's own name: read here only as a fraction
		budget   string
		win      func(*llmrelayv1.RateLimitWindow) **int64
	}{
		{"X-Ratelimit-Requests", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.RequestsLimit }, false, "requests", lim},
		{"X-Ratelimit-Tokens", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.TokensLimit }, false, "tokens", lim},
		{"X-Ratelimit-Limit-Requests", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.RequestsLimit }, true, "requests", lim},
		{"X-Ratelimit-Remaining-Requests", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.RequestsRemaining }, true, "requests", rem},
		{"X-Ratelimit-Limit-Tokens", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.TokensLimit }, true, "tokens", lim},
		{"X-Ratelimit-Remaining-Tokens", func(rl *llmrelayv1.RateLimit) **int64 { return &rl.TokensRemaining }, true, "tokens", rem},
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
		if f := b.win(provider.Window(rl, b.budget, "x-ratelimit-"+b.budget)); *f == nil {
			*f = provider.CopyInt(n)
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
	// Each triple sent is a window (RateLimit.windows), whether or not
	// the typed fields hold it: header x-ratelimit (requests) or
	// ratelimitbysize (tokens), a limit below what remains of it left
	// unset as there.
	for _, b := range [...]struct{ prefix, budget string }{{"x-ratelimit", "requests"}, {"ratelimitbysize", "tokens"}} {
		bw := bareWindow(h, b.prefix+"-")
		if bw == nil {
			continue
		}
		if rl == nil {
			rl = &llmrelayv1.RateLimit{}
		}
		w := provider.Window(rl, b.budget, b.prefix)
		w.Limit, w.Remaining, w.ResetTime = bw.limit, bw.remaining, bareReset(h, bw.resetSecs)
		if bw.limitBelowRemaining() {
			w.Limit = nil
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

// The meta.extended keys of rate-limit headers that are no budget's
// window (rateLimitExtras).
const (
	// extRateLimitUsed is Perplexity's x-ratelimit-used (the requests of
	// the x-ratelimit window used: 1 beside a limit of 1 and 0 remaining,
	// testdata/real_rubyllm_perplexity_sonar_citations.http), a number.
	extRateLimitUsed = "rate_limit_used"
	// extRateLimitKey is Azure's x-ratelimit-key (what its limits are
	// counted for: the deployment's model, "gpt-5.2-chat",
	// testdata/real_crew_azure_responses_call_with_tools.http), as sent.
	extRateLimitKey = "rate_limit_key"
	// extRateLimitAbusePenalty is Azure's x-ratelimit-abusepenalty-active
	// ("False" on GitHub Models' and Azure's answers,
	// testdata/real_oll_azure_chat_content_filtering_2.http): a boolean,
	// or the value as sent when it is neither True nor False.
	extRateLimitAbusePenalty = "rate_limit_abuse_penalty_active"
	// extRateLimitDynamicScale is the x-ratelimit-dynamic-scale-{requests,tokens}
	// pair Nebius sends behind Hugging Face's router ("1.00":
	// testdata/real_maruel_hf_nebius_qwen3_think.http), {"requests": 1,
	// "tokens": 1}: numbers, or a value as sent when it is none.
	extRateLimitDynamicScale = "rate_limit_dynamic_scale"
	// extRateLimitDynamic holds a x-ratelimit-dynamic-period-* header
	// dynamicWindows could not read ({"period_usage_requests": "…"}), as
	// sent.
	extRateLimitDynamic = "rate_limit_dynamic"
)

// rateLimitExtras keeps in meta.extended the rate-limit headers that
// describe no budget the windows hold: Perplexity's x-ratelimit-used,
// Azure's x-ratelimit-key and x-ratelimit-abusepenalty-active, and the
// scale Nebius applies to its limits (x-ratelimit-dynamic-scale-*).
// They were dropped.
func rateLimitExtras(meta *llmrelayv1.ResponseMeta, h http.Header) {
	if v := strings.TrimSpace(h.Get("X-Ratelimit-Used")); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			provider.SetExtended(meta, extRateLimitUsed, n)
		} else {
			provider.SetExtended(meta, extRateLimitUsed, validUTF8(v))
		}
	}
	if v := strings.TrimSpace(h.Get("X-Ratelimit-Key")); v != "" {
		provider.SetExtended(meta, extRateLimitKey, validUTF8(v))
	}
	if v := strings.TrimSpace(h.Get("X-Ratelimit-Abusepenalty-Active")); v != "" {
		switch {
		case strings.EqualFold(v, "true"):
			provider.SetExtended(meta, extRateLimitAbusePenalty, true)
		case strings.EqualFold(v, "false"):
			provider.SetExtended(meta, extRateLimitAbusePenalty, false)
		default:
			provider.SetExtended(meta, extRateLimitAbusePenalty, validUTF8(v))
		}
	}
	scale := map[string]any{}
	for _, b := range [...]string{"requests", "tokens"} {
		v := strings.TrimSpace(h.Get("X-Ratelimit-Dynamic-Scale-" + b))
		if v == "" {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			scale[b] = f
		} else {
			scale[b] = validUTF8(v)
		}
	}
	if len(scale) > 0 {
		provider.SetExtended(meta, extRateLimitDynamicScale, scale)
	}
}

// dynamicWindows adds to rl (nil: none yet) the windows of the dynamic
// period Nebius reports behind Hugging Face's router
// (testdata/real_maruel_hf_nebius_qwen3_think.http):
// x-ratelimit-dynamic-period-usage-{requests,tokens} ("0%": the share of
// the period's budget used) and x-ratelimit-dynamic-period-remaining
// ("899s": the time left in the period). Each usage is a window of its
// budget, header x-ratelimit-dynamic-period-<budget>, its utilization the
// percentage as a fraction, its reset the answer's Date plus the time
// left; the period's length is not sent. A value of another form, and the
// time left when there is no Date to count it from or no usage to give
// it to, is kept in meta.extended (extRateLimitDynamic) instead.
func dynamicWindows(meta *llmrelayv1.ResponseMeta, h http.Header) {
	var unread map[string]any
	remaining := strings.TrimSpace(h.Get("X-Ratelimit-Dynamic-Period-Remaining"))
	var reset *timestamppb.Timestamp
	if h.Get("Date") != "" {
		// Counted from the answer's Date; without one (a cassette that
		// dropped it) the time left is kept as sent.
		reset = provider.ResetAfter(h, remaining)
	}
	used := false
	for _, b := range [...]string{"requests", "tokens"} {
		v := strings.TrimSpace(h.Get("X-Ratelimit-Dynamic-Period-Usage-" + b))
		if v == "" {
			continue
		}
		pct, ok := strings.CutSuffix(v, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if !ok || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			if unread == nil {
				unread = map[string]any{}
			}
			unread["period_usage_"+b] = validUTF8(v)
			continue
		}
		if meta.RateLimit == nil {
			meta.RateLimit = &llmrelayv1.RateLimit{}
		}
		w := provider.Window(meta.RateLimit, b, "x-ratelimit-dynamic-period-"+b)
		u := f / 100
		w.Utilization, w.ResetTime = &u, reset
		used = true
	}
	if remaining != "" && (reset == nil || !used) {
		if unread == nil {
			unread = map[string]any{}
		}
		unread["period_remaining"] = validUTF8(remaining)
	}
	if unread != nil {
		provider.SetExtended(meta, extRateLimitDynamic, unread)
	}
}
