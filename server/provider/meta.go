package provider

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// SetExtended stores a provider-specific value in meta.extended. Values are
// anything structpb.NewValue accepts (nil, bool, numbers, string,
// []any, map[string]any); a value it cannot hold is stored as its string
// form rather than lost.
//
// The values clients branch on also have typed fields, filled here so that
// no adapter can set one without the other: "stop_sequence" and
// "service_tier".
func SetExtended(meta *llmrelayv1.ResponseMeta, key string, value any) {
	if s, ok := value.(string); ok {
		switch key {
		case "stop_sequence":
			meta.StopSequence = s
		case "service_tier":
			meta.ServiceTier = s
		}
	}
	if meta.Extended == nil {
		meta.Extended = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	v, err := structpb.NewValue(value)
	if err != nil {
		v = structpb.NewStringValue(stringify(value))
	}
	meta.Extended.Fields[key] = v
}

func stringify(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case interface{ String() string }:
		return x.String()
	default:
		return "<unrepresentable>"
	}
}

// ResponseDate is the provider's Date header, or now when absent. Adapters
// use it as the base for relative reset times so that recorded traffic
// gives the same result every time.
func ResponseDate(h http.Header) time.Time {
	if d := h.Get("Date"); d != "" {
		if t, err := http.ParseTime(d); err == nil {
			return t
		}
	}
	return time.Now()
}

// OpenAIRateLimit reads the x-ratelimit-* headers of OpenAI and Azure
// (limit and remaining as integers, reset as a duration like "6m0s", "1s",
// "20ms"). nil when none is present. A negative count is no count: Azure
// answers a budget it does not track (the Responses API's tokens, since
// November 2025: openai/openai-dotnet#838) with limit and remaining -1
// and a reset of 0, which read as numbers made an exhausted limit that
// resets now (a QuotaFailure naming a tokens limit of -1 on a 429 for
// requests); that budget is left unset, its reset too, as the contract
// leaves what was not reported. A limit below what remains of it is no
// limit either: Azure answers some deployments with a limit of 0 beside
// the requests or tokens that remain (weaviate/weaviate#5035: "it misses
// the totalLimit for requests/tokens and just sends 0 instead"), which
// read as a limit of 0 (a QuotaFailure on a 429 would name it, a client
// would see a budget of nothing); that limit is left unset, the
// remaining count and reset, which are real, kept. A count below -1 beside a
// positive limit is Azure's deficit in an oversubscribed window: nothing
// remains (0), and its reset is kept. A reset that is a bare number is
// read in seconds, or in milliseconds where Azure's budget arithmetic
// shows that unit (bareResetMillis).
func OpenAIRateLimit(h http.Header) *llmrelayv1.RateLimit {
	var rl llmrelayv1.RateLimit
	found := false
	now := ResponseDate(h)
	setInt := func(name string, dst **int64) (untracked bool) {
		if v := h.Get(name); v != "" {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				if n < 0 {
					return true
				}
				*dst = &n
				found = true
			}
		}
		return false
	}
	buckets := [...]struct {
		what             string
		limit, remaining **int64
		reset            **timestamppb.Timestamp
		skip             bool
	}{
		{what: "Requests", limit: &rl.RequestsLimit, remaining: &rl.RequestsRemaining, reset: &rl.RequestsResetTime},
		{what: "Tokens", limit: &rl.TokensLimit, remaining: &rl.TokensRemaining, reset: &rl.TokensResetTime},
	}
	for i := range buckets {
		b := &buckets[i]
		untracked := setInt("X-Ratelimit-Limit-"+b.what, b.limit)
		if neg := remainingDeficit(h.Get("X-Ratelimit-Remaining-" + b.what)); neg && !untracked && *b.limit != nil && **b.limit > 0 {
			// Azure's count of an oversubscribed window
			// (x-ratelimit-remaining-tokens: -27689 beside a reset):
			// nothing remains of a limit it does track.
			zero := int64(0)
			*b.remaining, found = &zero, true
		} else if setInt("X-Ratelimit-Remaining-"+b.what, b.remaining) || untracked {
			b.skip = true
			continue
		}
		if *b.limit != nil && *b.remaining != nil && **b.remaining > **b.limit {
			*b.limit = nil // not the limit (Azure's 0)
		}
	}
	// A bare number's unit, for both budgets of the answer (see
	// bareResetMillis): what one budget's arithmetic shows, else the
	// other's, else seconds.
	var ms [2]int8
	for i, b := range buckets {
		ms[i] = bareResetMillis(h, b.what, *b.limit, *b.remaining)
	}
	for i, b := range buckets {
		if b.skip {
			continue
		}
		v := h.Get("X-Ratelimit-Reset-" + b.what)
		if v == "" {
			continue
		}
		d, err := parseResetDuration(v)
		if err != nil {
			continue
		}
		if unit := ms[i]; isBareNumber(v) && (unit > 0 || (unit == 0 && ms[1-i] > 0)) {
			d /= 1000 // read as seconds: milliseconds
		}
		*b.reset = timestamppb.New(now.Add(d))
		found = true
	}
	// Each budget read is a window too (RateLimit.windows), with the
	// period Azure says it renews over (x-ratelimit-renewalperiod-*, in
	// seconds: 60), which the typed fields have no place for; a period
	// alone (a recording whose counts were redacted) is a window too.
	for _, b := range buckets {
		var period *durationpb.Duration
		if v := h.Get("X-Ratelimit-Renewalperiod-" + b.what); v != "" {
			period = PeriodSeconds(v)
		}
		if *b.limit == nil && *b.remaining == nil && *b.reset == nil && period == nil {
			continue
		}
		what := strings.ToLower(b.what)
		w := Window(&rl, what, "x-ratelimit-"+what)
		w.Limit, w.Remaining, w.ResetTime, w.Period = CopyInt(*b.limit), CopyInt(*b.remaining), *b.reset, period
		found = true
	}
	if !found {
		return nil
	}
	return &rl
}

// remainingDeficit reports a negative remaining count below -1: not
// OpenAI's and Azure's -1 for a budget they do not track, but Azure's
// oversubscribed window, whose deficit it counts
// (x-ratelimit-remaining-tokens: -27689, beside a
// x-ratelimit-reset-tokens of 64 and a retry-after, on a throttled
// Responses stream).
func remainingDeficit(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < 3 || v[0] != '-' {
		return false // without a parse (and its error's allocation) on every answer
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n < -1
}

// isBareNumber reports a reset value without a unit ("500", "7", "2.5").
func isBareNumber(v string) bool {
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		if (v[i] < '0' || v[i] > '9') && v[i] != '.' {
			return false
		}
	}
	return v != "" && v != "."
}

// bareResetMillis tells the unit of a budget's reset given as a bare
// number. Azure sends one (OpenAI a duration with its unit), beside the
// budget's renewal period in seconds (x-ratelimit-renewalperiod-*), and
// its unit is not always the same: a deployment answered 120 requests per
// 60 s, 119 remaining, with x-ratelimit-reset-requests 500 and 120000
// tokens, 119986 remaining, with x-ratelimit-reset-tokens 7 (the openai
// package's testdata/real_oll_azure_chat_content_filtering_2.http): 500
// seconds cannot reset a 60 s window, and the window refills one request
// every 500 ms and 14 tokens in 7 ms; others answered 5 requests per
// 60 s, 4 remaining, with 12 (a request refills in 12 s) and 1500000
// tokens, 745399 remaining, with 30 (30.2 s). The budget's own numbers
// say which: its window refills limit/period per second, so the time
// until it is full again is period·(limit−remaining)/limit seconds, and
// the value is read in the unit that puts it nearer that time. 1: in
// milliseconds, -1: in seconds, 0: its numbers do not say (no renewal
// period, limit or remaining, a value of 0, a duration with its unit).
func bareResetMillis(h http.Header, what string, limit, remaining *int64) int8 {
	v := strings.TrimSpace(h.Get("X-Ratelimit-Reset-" + what))
	if limit == nil || remaining == nil || *limit <= 0 || !isBareNumber(v) {
		return 0
	}
	p := strings.TrimSpace(h.Get("X-Ratelimit-Renewalperiod-" + what))
	if p == "" {
		return 0
	}
	n, err := strconv.ParseFloat(v, 64)
	period, perr := strconv.ParseFloat(p, 64)
	if err != nil || perr != nil || !(n > 0) || !(period > 0) || math.IsInf(n, 0) || math.IsInf(period, 0) {
		return 0
	}
	full := period * float64(*limit-min(*remaining, *limit)) / float64(*limit)
	switch asMS, asS := math.Abs(n/1000-full), math.Abs(n-full); {
	case asMS < asS:
		return 1
	case asS < asMS:
		return -1
	}
	return 0
}

// parseResetDuration parses OpenAI's reset values: Go-like durations
// ("1s", "6m0s", "20ms", "1h2m3.5s") or bare seconds ("5").
func parseResetDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	// A duration ends with its unit (s, m or h: ns, us, µs, ms too), which
	// no float ParseFloat accepts ends with (a digit, '.', or inf, infinity
	// and nan in any case): skipping ParseFloat there skips only its error,
	// which allocates, on every OpenAI response.
	if c := lastByte(v); c != 's' && c != 'm' && c != 'h' {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(secs * float64(time.Second)), nil
		}
	}
	return time.ParseDuration(v)
}

func lastByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[len(s)-1]
}

// UsageTotal is the total a Usage reports: the provider's own total
// when it is at least input + output (Gemini's also counts tool-use
// prompt tokens), else input + output, so a missing or inconsistent
// total never shows fewer tokens than its parts. The result is clamped
// to int32.
func UsageTotal(reported, input, output int32) int32 {
	sum := int64(input) + int64(output)
	if int64(reported) >= sum {
		return reported
	}
	if sum > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(sum)
}

// HeaderValue is h.Get(name) as valid UTF-8: header bytes outside ASCII are
// legal on the wire (obs-text) but a proto string must be UTF-8, and one
// bad byte in a request id would fail the whole response's encoding.
// Invalid sequences become U+FFFD.
func HeaderValue(h http.Header, name string) string {
	return strings.ToValidUTF8(h.Get(name), "\uFFFD")
}

// Count is a provider's token count as a proto int32: negative counts (bad
// data) are 0, counts beyond int32 are capped.
func Count(n int64) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// ToolCallsFinish is the one cross-provider finish rule: an answer with tool
// calls ends with FINISH_REASON_TOOL_CALLS when the provider reported a
// normal stop (or no reason). Every other reason stays: a call cut by the
// token limit is LENGTH and a filtered one CONTENT_FILTER, so a client that
// runs every call of a TOOL_CALLS answer never runs a truncated one. Each
// adapter maps its provider's words first, then applies this rule; the
// server applies it again to the final message.
func ToolCallsFinish(fr llmrelayv1.FinishReason, toolCalls int) llmrelayv1.FinishReason {
	if toolCalls > 0 && (fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED) {
		return llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
	}
	return fr
}

// maxOddEnum bounds the JSON text OddEnumText keeps.
const maxOddEnum = 64

// OddEnumText is an enum value (a finish or stop reason) of an unexpected
// JSON shape (an object, a bool, a fraction: a shape the provider may adopt
// later, or a proxy's) as the text adapters keep instead of failing the
// answer: the compact JSON, valid UTF-8, cut at 64 bytes with an ellipsis.
// The provider's finish reason shows it as sent and it maps to
// FINISH_REASON_OTHER, as any unknown value does.
func OddEnumText(raw []byte) string {
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		c.Reset()
		c.Write(bytes.TrimSpace(raw))
	}
	t := strings.ToValidUTF8(c.String(), "\uFFFD")
	if len(t) > maxOddEnum {
		t = strings.ToValidUTF8(t[:maxOddEnum], "") + "…"
	}
	return t
}

// Shorten is s cut to at most max bytes at a character boundary, "…"
// added where it was cut: a provider's text quoted in a message or a
// warning stays valid UTF-8 and bounded.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
