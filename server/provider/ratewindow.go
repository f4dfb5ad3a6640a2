package provider

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Window is rl's window of budget read from the header family header
// (RateLimitWindow.header: "x-ratelimit-requests"), appended to
// rl.windows when rl has none yet. The adapters fill each budget they
// read through it, so a budget read by two readers (a limit under one
// name, its remaining count under another) is one window.
func Window(rl *llmrelayv1.RateLimit, budget, header string) *llmrelayv1.RateLimitWindow {
	for _, w := range rl.Windows {
		if w.Budget == budget && w.Header == header {
			return w
		}
	}
	w := &llmrelayv1.RateLimitWindow{Budget: budget, Header: header}
	rl.Windows = append(rl.Windows, w)
	return w
}

// windowEmpty reports a window with nothing read into it.
func windowEmpty(w *llmrelayv1.RateLimitWindow) bool {
	return w.Limit == nil && w.Remaining == nil && w.ResetTime == nil && w.Utilization == nil && w.Status == "" && w.Period == nil
}

// PeriodSeconds is a window length sent in seconds (Azure's
// x-ratelimit-renewalperiod-*: "60"), nil when v is not a positive
// number of seconds below a year.
func PeriodSeconds(v string) *durationpb.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(n > 0) || n > 366*24*3600 {
		return nil
	}
	return durationpb.New(time.Duration(n * float64(time.Second)))
}

// windowNames are the window lengths providers name in their rate-limit
// headers: Cerebras's and Mistral's -minute, -hour, -day, -10-second,
// -60-second (x-ratelimit-limit-requests-day), and Anthropic's unified
// 5h and 7d windows (anthropic-ratelimit-unified-7d-utilization). A
// month has no fixed length, and no entry.
var windowNames = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
}

// NamedPeriod is the length a window's name says: "minute", "day",
// "10-second", "60-second", "5h", "7d" (and a name that starts with one
// of these and goes on after '_' or '-', a per-model window as
// "7d_sonnet"); nil for any other name ("month", "overage").
func NamedPeriod(name string) *durationpb.Duration {
	name = strings.ToLower(strings.TrimSpace(name))
	if d, ok := windowNames[name]; ok {
		return durationpb.New(d)
	}
	// <n>-<unit>: Mistral's 10-second and 60-second windows.
	if n, unit, ok := strings.Cut(name, "-"); ok {
		if d, ok := windowNames[unit]; ok {
			if k, err := strconv.Atoi(n); err == nil && k > 0 && k <= 1000 {
				return durationpb.New(time.Duration(k) * d)
			}
		}
	}
	// <n>h, <n>d: Anthropic's unified windows, maybe followed by a
	// qualifier (7d_sonnet, 7d-opus).
	head := name
	if i := strings.IndexAny(head, "_-"); i > 0 {
		head = head[:i]
	}
	if len(head) < 2 {
		return nil
	}
	k, err := strconv.Atoi(head[:len(head)-1])
	if err != nil || k <= 0 || k > 1000 {
		return nil
	}
	switch head[len(head)-1] {
	case 'h':
		return durationpb.New(time.Duration(k) * time.Hour)
	case 'd':
		return durationpb.New(time.Duration(k) * 24 * time.Hour)
	}
	return nil
}

// anthropicFamilies are the anthropic-ratelimit-<family>-{limit,remaining,reset}
// headers Anthropic sends on every answer (its OpenAI-compatible endpoint's
// too) and the budget each counts: requests, tokens (the most restrictive
// of input and output), and the input and output token limits the
// requests and tokens fields have no place for.
var anthropicFamilies = [...]struct{ family, budget string }{
	{"requests", "requests"}, {"tokens", "tokens"}, {"input-tokens", "input_tokens"}, {"output-tokens", "output_tokens"},
}

// AnthropicWindows adds to rl (nil: none yet) a window for each
// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-*
// family the headers send (limit and remaining as integers, the reset an
// RFC 3339 time), and the unified windows of a Claude subscription
// (AnthropicUnifiedWindows). It returns rl, nil when there was none and
// the headers have none.
func AnthropicWindows(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	for _, f := range anthropicFamilies {
		prefix := "anthropic-ratelimit-" + f.family
		var w llmrelayv1.RateLimitWindow
		if v := strings.TrimSpace(h.Get(prefix + "-limit")); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				w.Limit = &n
			}
		}
		if v := strings.TrimSpace(h.Get(prefix + "-remaining")); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				w.Remaining = &n
			}
		}
		if v := strings.TrimSpace(h.Get(prefix + "-reset")); v != "" {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				w.ResetTime = timestamppb.New(t)
			}
		}
		if windowEmpty(&w) {
			continue
		}
		if rl == nil {
			rl = &llmrelayv1.RateLimit{}
		}
		dst := Window(rl, f.budget, prefix)
		dst.Limit, dst.Remaining, dst.ResetTime = w.Limit, w.Remaining, w.ResetTime
	}
	return AnthropicUnifiedWindows(rl, h)
}

// UnifiedPrefix starts the headers of the unified limits Anthropic
// answers a Claude subscription's requests with (an OAuth token, as
// Claude Code sends, or a relay in front of one) instead of the
// requests and tokens ones: an overall status and reset, then per
// window ("5h", "7d", "7d_sonnet", "7d_oi", "overage") a status
// (allowed, allowed_warning, rejected), a reset in Unix seconds and the
// fraction used, and headers that are no window's (representative-claim:
// five_hour, fallback-percentage, overage-disabled-reason), as they are
// quoted from live answers ("anthropic-ratelimit-unified-5h-utilization:
// 0.43", "anthropic-ratelimit-unified-5h-reset: 1767409200").
const UnifiedPrefix = "Anthropic-Ratelimit-Unified-"

// unifiedFields are the words that end a unified window's headers.
var unifiedFields = [...]string{"status", "reset", "utilization"}

// UnifiedWindowField splits the rest of a unified limit header's name
// (after UnifiedPrefix, lower case) into its window ("" for the overall
// status and reset) and the value it holds (status, reset,
// utilization); ok is false for a header that is no window's
// (representative-claim, fallback-percentage, overage-disabled-reason).
func UnifiedWindowField(rest string) (window, field string, ok bool) {
	for _, f := range unifiedFields {
		if rest == f {
			return "", f, true
		}
		if w, found := strings.CutSuffix(rest, "-"+f); found && w != "" {
			return w, f, true
		}
	}
	return "", "", false
}

// UnifiedTyped reports whether the unified limit header whose name goes
// on after UnifiedPrefix with rest (lower case) and has the value v is
// held by a window (AnthropicUnifiedWindows): a window's status, its
// reset in Unix seconds, its utilization as a number. The others
// (representative-claim, fallback-percentage, a value of another form)
// are for meta.extended.
func UnifiedTyped(rest, v string) bool {
	_, field, ok := UnifiedWindowField(rest)
	if !ok {
		return false
	}
	v = strings.TrimSpace(v)
	switch field {
	case "status":
		return v != ""
	case "reset":
		n, err := strconv.ParseInt(v, 10, 64)
		return err == nil && n > 0 && n < 1<<40
	default:
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
}

// CopyInt is a copy of *p (nil for nil): a window holds its own counts,
// not the typed fields' pointers.
func CopyInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	n := *p
	return &n
}

// AnthropicUnifiedWindows adds the unified windows of a Claude
// subscription's answer to rl (nil: none yet): one window of budget
// "unified" per window name the headers give (the overall one, header
// "anthropic-ratelimit-unified", and "anthropic-ratelimit-unified-5h",
// "-7d", ...), with its status as sent, its reset (Unix seconds) as a
// time, its utilization as a fraction, its period from its name (5h,
// 7d; none for the overall one or "overage"). In the order of the
// window names, sorted, so the answer is the same whatever the header
// map's order.
func AnthropicUnifiedWindows(rl *llmrelayv1.RateLimit, h http.Header) *llmrelayv1.RateLimit {
	type entry struct {
		window, field, value string
	}
	var found []entry
	for name, vs := range h {
		if len(name) <= len(UnifiedPrefix) || !strings.EqualFold(name[:len(UnifiedPrefix)], UnifiedPrefix) || len(vs) == 0 {
			continue
		}
		window, field, ok := UnifiedWindowField(strings.ToLower(name[len(UnifiedPrefix):]))
		v := strings.TrimSpace(vs[0])
		if !ok || v == "" {
			continue
		}
		found = append(found, entry{window, field, v})
	}
	if len(found) == 0 {
		return rl
	}
	// Sorted by window, then field: windows in a stable order.
	for i := 1; i < len(found); i++ {
		for j := i; j > 0 && (found[j].window < found[j-1].window || (found[j].window == found[j-1].window && found[j].field < found[j-1].field)); j-- {
			found[j], found[j-1] = found[j-1], found[j]
		}
	}
	for _, e := range found {
		header := "anthropic-ratelimit-unified"
		if e.window != "" {
			header += "-" + e.window
		}
		var w *llmrelayv1.RateLimitWindow
		if rl != nil {
			for _, x := range rl.Windows {
				if x.Budget == "unified" && x.Header == header {
					w = x
				}
			}
		}
		switch e.field {
		case "status":
			if w == nil {
				w = &llmrelayv1.RateLimitWindow{}
			}
			w.Status = strings.ToValidUTF8(e.value, "\uFFFD")
		case "reset":
			n, err := strconv.ParseInt(e.value, 10, 64)
			if err != nil || n <= 0 || n >= 1<<40 {
				continue
			}
			if w == nil {
				w = &llmrelayv1.RateLimitWindow{}
			}
			w.ResetTime = timestamppb.New(time.Unix(n, 0).UTC())
		case "utilization":
			f, err := strconv.ParseFloat(e.value, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				continue
			}
			if w == nil {
				w = &llmrelayv1.RateLimitWindow{}
			}
			w.Utilization = &f
		}
		if w.Header == "" {
			if rl == nil {
				rl = &llmrelayv1.RateLimit{}
			}
			w.Budget, w.Header = "unified", header
			if e.window != "" {
				w.Period = NamedPeriod(e.window)
			}
			rl.Windows = append(rl.Windows, w)
		}
	}
	return rl
}

// ResetAfter is the time a reset sent as a duration from the answer's
// Date means (OpenAI's "1m30s", "20ms", or bare seconds "5"); nil when v
// is none.
func ResetAfter(h http.Header, v string) *timestamppb.Timestamp {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	d, err := parseResetDuration(v)
	if err != nil || d < 0 {
		return nil
	}
	return timestamppb.New(ResponseDate(h).Add(d))
}

// MergeMeta is proto.Merge(dst, src) of two metas of one call, but for
// the rate limit's windows: src's, when it reports any, replace dst's
// instead of being appended to them (a repeated field merges by
// appending, and a stream's head and its end, or an attempt's state and
// the error that carries it on, report the same windows twice). The
// typed rate-limit fields merge as before: each one src sets wins.
func MergeMeta(dst, src *llmrelayv1.ResponseMeta) {
	if len(src.GetRateLimit().GetWindows()) > 0 && dst.GetRateLimit() != nil {
		dst.RateLimit.Windows = nil
	}
	proto.Merge(dst, src)
}

// googlePeriodRE finds the window a Google quota id names:
// "GenerateRequestsPerMinutePerProjectPerModel-FreeTier" (a minute),
// "GenerateContentInputTokensPerModelPerDay-FreeTier" (a day); the word
// after "Per" must end there (PerModel, PerProject are no windows).
var googlePeriodRE = regexp.MustCompile(`Per(Second|Minute|Hour|Day)(?:[^a-z]|$)`)

// googleMetricPeriodRE finds the window a Google quota metric names in
// words ("generate_requests_per_model_per_day").
var googleMetricPeriodRE = regexp.MustCompile(`_per_(second|minute|hour|day)(?:[^a-z]|$)`)

// googleQuotaBudget is the budget a Google quota violation counts, from
// its metric ("generativelanguage.googleapis.com/generate_content_free_tier_input_token_count":
// input_tokens; "..._requests", "generate_requests_per_model": requests),
// or from its id when the metric says none
// ("GenerateContentInputTokensPerModelPerMinute"); "" for a quota of
// another kind.
func googleQuotaBudget(metric, id string) string {
	for _, s := range [...]string{strings.ToLower(metric), strings.ToLower(id)} {
		switch {
		case strings.Contains(s, "input_token"), strings.Contains(s, "inputtoken"):
			return "input_tokens"
		case strings.Contains(s, "output_token"), strings.Contains(s, "outputtoken"):
			return "output_tokens"
		case strings.Contains(s, "token"):
			return "tokens"
		case strings.Contains(s, "request"):
			return "requests"
		}
	}
	return ""
}

// googleQuotaPeriod is the window a Google quota's id (or, naming none,
// its metric) says: PerSecond, PerMinute, PerHour, PerDay (and "Daily",
// which dailyQuota reads as a day too); nil when neither says one.
func googleQuotaPeriod(metric, id string) *durationpb.Duration {
	unit := ""
	if m := googlePeriodRE.FindStringSubmatch(id); m != nil {
		unit = strings.ToLower(m[1])
	} else if strings.Contains(id, "Daily") {
		unit = "day"
	} else if m := googleMetricPeriodRE.FindStringSubmatch(strings.ToLower(metric)); m != nil {
		unit = m[1]
	}
	if d, ok := windowNames[unit]; ok {
		return durationpb.New(d)
	}
	return nil
}

// GoogleQuotaWindows adds to rl (nil: none yet) a window for each quota
// violation of a Google RESOURCE_EXHAUSTED (the google.rpc.QuotaFailure
// Gemini and Vertex AI send in the error's body, not in headers; or the
// violation an ErrorInfo's metadata names): its budget from the metric
// (requests, input_tokens, output_tokens, tokens), its period from the
// quota id (PerMinute 1m, PerHour 1h, PerDay 24h), its limit the
// quotaValue (absent when 0: proto3 JSON leaves a 0 out), nothing
// remaining (a violation is a quota that was exceeded: google.rpc's
// "a daily quota or a custom quota that was exceeded"), and its header
// the quota id (the metric when there is none): the name the provider
// gives the budget, in the body. The reset is now + retry (the
// RetryInfo delay) for a window no shorter than the delay and shorter
// than a day, unset for the others and without a delay: a delay of
// seconds beside a spent per-day quota is the minute window's, not the
// day's (Gemini's daily quotas reset at midnight Pacific time, its
// rate-limits page says; the gemini adapter drops that delay anyway,
// provider.ApplyGoogleDetails). Violations of
// another kind (no budget read) are left to the error's quota
// violations, where they are kept whole. It returns rl, nil when there
// was none and no window was read.
func GoogleQuotaWindows(rl *llmrelayv1.RateLimit, vs []*errdetails.QuotaFailure_Violation, now time.Time, retry time.Duration) *llmrelayv1.RateLimit {
	for _, v := range vs {
		budget := googleQuotaBudget(v.GetQuotaMetric(), v.GetQuotaId())
		header := strings.ToValidUTF8(strings.TrimSpace(v.GetQuotaId()), "\uFFFD")
		if header == "" {
			header = strings.ToValidUTF8(strings.TrimSpace(v.GetQuotaMetric()), "\uFFFD")
		}
		if budget == "" || header == "" {
			continue
		}
		if rl == nil {
			rl = &llmrelayv1.RateLimit{}
		}
		w := Window(rl, budget, header)
		w.Period = googleQuotaPeriod(v.GetQuotaMetric(), v.GetQuotaId())
		if n := v.GetQuotaValue(); n > 0 {
			w.Limit = &n
		}
		zero := int64(0)
		w.Remaining = &zero
		if d := w.GetPeriod().AsDuration(); retry > 0 && (w.Period == nil || (retry <= d && d < 24*time.Hour)) {
			w.ResetTime = timestamppb.New(now.Add(retry))
		}
	}
	return rl
}
