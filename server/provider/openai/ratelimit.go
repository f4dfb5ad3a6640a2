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

// rateLimitWindows are the windows of Cerebras's rate-limit headers,
// shortest first: x-ratelimit-{limit,remaining}-{requests,tokens}-<window>
// and x-ratelimit-reset-{requests,tokens}-<window> (seconds, a float).
// Cerebras sends these instead of OpenAI's unsuffixed headers; its API
// reference names the day window for requests and the minute window for
// tokens, and api.cerebras.ai answers with all three windows for both
// (crewAI's cassette, testdata/real_crew_cerebras_streaming_completion_3.http).
var rateLimitWindows = [...]string{"minute", "hour", "day"}

// windowedRateLimit reads Cerebras's per-window rate-limit headers. The
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

func pickWindow(h http.Header, what string) *rateWindow {
	var best *rateWindow
	for _, win := range rateLimitWindows {
		w := rateWindow{
			limit:     headerInt(h, "x-ratelimit-limit-"+what+"-"+win),
			remaining: headerInt(h, "x-ratelimit-remaining-"+what+"-"+win),
			resetSecs: strings.TrimSpace(h.Get("x-ratelimit-reset-" + what + "-" + win)),
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
	return best
}

func headerInt(h http.Header, name string) *int64 {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}
