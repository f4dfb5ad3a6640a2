package provider

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

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
// remaining count and reset, which are real, kept.
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
	setReset := func(name string, dst **timestamppb.Timestamp) {
		if v := h.Get(name); v != "" {
			if d, err := parseResetDuration(v); err == nil {
				*dst = timestamppb.New(now.Add(d))
				found = true
			}
		}
	}
	for _, b := range []struct {
		what             string
		limit, remaining **int64
		reset            **timestamppb.Timestamp
	}{
		{"Requests", &rl.RequestsLimit, &rl.RequestsRemaining, &rl.RequestsResetTime},
		{"Tokens", &rl.TokensLimit, &rl.TokensRemaining, &rl.TokensResetTime},
	} {
		untracked := setInt("X-Ratelimit-Limit-"+b.what, b.limit)
		if setInt("X-Ratelimit-Remaining-"+b.what, b.remaining) || untracked {
			continue
		}
		if *b.limit != nil && *b.remaining != nil && **b.remaining > **b.limit {
			*b.limit = nil // not the limit (Azure's 0)
		}
		setReset("X-Ratelimit-Reset-"+b.what, b.reset)
	}
	if !found {
		return nil
	}
	return &rl
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
