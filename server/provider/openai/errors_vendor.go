package openai

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/llmrelay/llmrelay/server/provider"
)

// freeQuotaRE matches DashScope's answer to a spent free quota, "Free
// allocated quota exceeded." (a 429: QwenLM/qwen-code#1742): the free
// allowance is used up, unlike its Throttling.AllocationQuota "Allocated
// quota exceeded, please increase your quota limit." (its token-rate
// limit, #token-limit in its error-code page), which passes.
var freeQuotaRE = regexp.MustCompile(`(?i)^\s*free allocated quota exceeded\b`)

// vendorError reads what OpenAI-compatible vendors say in their error
// objects beyond OpenAI's own codes, the same way whether it came as an
// error answer (status set) or inside a 200 (a stream's error event, an
// error body): a spent balance or quota (a rate limit that no wait
// restores: not retried, and another deployment may serve the call), the
// provider's capacity (unavailable, retried), a rate limit the status
// did not say. It runs after refineKind, over what the status and
// OpenAI's codes decided.
func vendorError(e *provider.Error, we *wireError) {
	code, typ := string(we.Code), string(we.Type)
	switch {
	case code != "" && e.Code == code && (typ == "" || strings.HasPrefix(e.Message, "["+code+"]")) && provider.ZaiBusinessCode(e):
		// Z.ai's (Zhipu's) OpenAI-compatible endpoint: {"error":{"code":
		// "1113","message":"Insufficient balance or no resource
		// package. Please recharge."}} (a 429: musistudio/
		// claude-code-router#1071, zai-org/GLM-5#148), its 5-hour
		// usage cap 1308, its concurrency limit 1302 (retried): the
		// code says what the 429 cannot, and inside a 200 stream it was
		// an unknown code, "unavailable" and retried. Only without a
		// type: Mistral's numeric codes ("1000", its internal error)
		// come with one. Or with a type when the message starts with
		// the code in brackets, Z.ai's newer form ("type":
		// "rate_limit_error","code":"1113","message":"[1113][Insufficient
		// balance or no resource package. Please recharge.][<request
		// id>]", as zai-org/feedback#789 quotes it from its
		// Anthropic-compatible endpoint).
	case typ == "exceeded_current_quota_error":
		// Kimi's (Moonshot's) spent quota or suspended account, a 429
		// ("Your account … is suspended due to insufficient balance",
		// "Your account exceeded current quota"): not retried.
		spent(e)
	case typ == "engine_overloaded_error", typ == "service_tier_capacity_exceeded", code == "queue_exceeded":
		// Kimi's "The engine is currently overloaded, please try again
		// later", Mistral's "Service tier capacity exceeded for this
		// model." (code 3505) and Cerebras's "We're experiencing high
		// traffic right now!" (code queue_exceeded), all 429s: the
		// provider's capacity, not the caller's rate limit (as OpenAI's
		// overloaded 429): retried, no quota of the caller's to report.
		e.Kind = provider.KindUnavailable
	case code == "data_inspection_failed" || typ == "data_inspection_failed" || strings.HasSuffix(code, "DataInspectionFailed"):
		// DashScope's content inspection: a 400 "Input data may contain
		// inappropriate content." (camel-ai/owl#432 quotes it in the
		// OpenAI shape), "<400> InternalError.Algo.DataInspectionFailed:
		// Input text data may contain inappropriate content."
		// (CommandCodeAI/command-code#813), its output's too: a content
		// filter's verdict, not a malformed request (400) nor, inside a
		// 200 stream, an unknown failure to retry; the same input gets
		// the same verdict, whatever status it came with.
		e.Kind = provider.KindContentFilter
		e.ShouldRetry = provider.RetryDiscouraged
		e.RetryAfter = 0
	case code == "organization_restricted":
		// Groq's 400 invalid_request_error "Organization has been
		// restricted. Please reach out to support if you believe this
		// was in error." (songquanpeng/one-api#1764): the account is
		// barred, not the request at fault: permission denied, not
		// retried, and another deployment's account may serve the call
		// (as an invalid request it did not fall back).
		e.Kind = provider.KindPermissionDenied
		e.ShouldRetry = provider.RetryDiscouraged
		e.RetryAfter = 0
	case code == "Arrearage" || typ == "Arrearage":
		// DashScope's overdue account, a 400 "Access denied, please make
		// sure your account is in good standing." (hsliuping/
		// TradingAgents-CN#170 quotes it in the OpenAI shape): the
		// account's billing, not the request; read as an invalid request
		// it did not fall back.
		spent(e)
	case freeQuotaRE.MatchString(e.Message):
		spent(e)
	case provider.SpentBalance(e.Message) && e.Kind != provider.KindContextLength && e.Kind != provider.KindContentFilter:
		// The balance or credit is spent, in the vendor's words under its
		// own status: DeepSeek's 402, Together's 402 credit_limit "Credit
		// limit exceeded", Fireworks's 412 PRECONDITION_FAILED "Account …
		// is suspended, possibly due to reaching the monthly spending
		// limit …" (an invalid request by its status, which did not fall
		// back), MiniMax's 500 "insufficient balance (1008)" (retried as
		// a server fault), in a stream's error event too.
		spent(e)
	case e.HTTPStatus < 300 && isRateLimitWord(code, typ):
		// Vendors' rate-limit types inside a 200 stream, which
		// kindForCode did not know (an unknown code is "unavailable"):
		// Kimi's rate_limit_reached_error, Mistral's rate_limited,
		// Together's credit_limit ("You have been rate limited. Your
		// rate limit is 60 queries per minute": togethercomputer/MoA#27),
		// DashScope's Throttling.*.
		e.Kind = provider.KindRateLimited
	}
}

// isRateLimitWord reports the vendors' rate-limit codes and types
// (Cerebras's too_many_tokens_error / token_quota_exceeded and
// too_many_requests_error / request_quota_exceeded among them).
func isRateLimitWord(code, typ string) bool {
	for _, s := range [2]string{code, typ} {
		switch {
		case s == "rate_limit_reached_error", s == "rate_limited", s == "credit_limit",
			s == "too_many_tokens_error", s == "too_many_requests_error", s == "token_quota_exceeded", s == "request_quota_exceeded",
			s == "Throttling" || strings.HasPrefix(s, "Throttling."):
			return true
		}
	}
	return false
}

// spent marks e as a spent quota: rate limited, not retried (no attempt
// succeeds until someone pays or the period ends), no retry delay that
// would say waiting helps; a route still falls back (another account).
func spent(e *provider.Error) {
	e.Kind = provider.KindRateLimited
	e.ShouldRetry = provider.RetryDiscouraged
	e.RetryAfter = 0
}

// vendorReset applies, once the answer's head is known, the reset a
// vendor's spent plan names: Z.ai's usage caps (1308, 1310: "… Your limit
// will reset at 2026-09-09 05:38:28", UTC+8: provider.ZaiUsageReset),
// MiniMax's Token Plan (2056), whose message
// may say when it resets ("… resets at 2026-05-20T20:00:00Z (2056)"): the
// wait until then is the retry delay (longer than the gateway waits, so
// the call falls back and the caller is told when to come back);
// without a reset it is spent, not retried. Its base_resp form (status
// 2056, coded insufficient_quota by minimaxError) with a reset in its
// status_msg gets the delay too, and stays retryable after it.
func vendorReset(e *provider.Error, h http.Header) {
	if e == nil || e.Kind != provider.KindRateLimited {
		return
	}
	if s, _ := e.Extended[extMiniMaxStatus].(float64); s == 2056 {
		if d := provider.MiniMaxPlanReset(e.Message, h); d > 0 {
			e.Code = "2056"
			e.RetryAfter = d
			e.ShouldRetry = provider.RetryUnsaid
		}
		return
	}
	provider.MiniMaxPlanLimit(e, h)
	provider.ZaiUsageReset(e, h)
	cerebrasDaily(e, h)
	azureInferenceLimit(e)
}

// azureInferenceLimitRE reads the limit GitHub Models and Azure AI
// Inference name in their 429 RateLimitReached, and the wait: "Rate limit
// of 8 per 86400s exceeded for UserByModelByDay. Please wait 83652 seconds
// before retrying." (Microsoft Q&A 2156697; "… of 50 per 86400s … Please
// wait 29243 seconds …" through LiteLLM's GithubException). The same
// service's headers say it too (x-ratelimit-type: UserByModelByDay,
// retry-after), which a proxy in front may drop.
var azureInferenceLimitRE = regexp.MustCompile(`\bRate limit of (\d+) per (\d+)s exceeded for (\w+)\. Please wait (\d+) seconds? before retrying\b`)

// azureInferenceLimit reads azureInferenceLimitRE: the limit as a
// QuotaFailure violation (requests, its id, its value) and the wait as
// the retry delay when no header gave one. A per-day limit (…ByDay) is
// spent until the wait the words give: that delay, longer than the
// gateway waits, makes the call fall back with RetryInfo saying when (as
// cerebrasDaily's reset does); a short one (the day's window about to
// move) is waited out and retried.
func azureInferenceLimit(e *provider.Error) {
	m := azureInferenceLimitRE.FindStringSubmatch(e.Message)
	if m == nil {
		return
	}
	v := &errdetails.QuotaFailure_Violation{QuotaMetric: "requests", QuotaId: m[3], Description: e.Message}
	if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
		v.QuotaValue = n
	}
	e.Quota = append(e.Quota, v)
	wait, err := strconv.ParseInt(m[4], 10, 64)
	if err != nil || wait <= 0 || wait > math.MaxInt64/int64(time.Second) || e.RetryAfter != 0 || e.ShouldRetry == provider.RetryDiscouraged {
		return
	}
	e.RetryAfter = time.Duration(wait) * time.Second
}

// cerebrasLimitRE reads the limit Cerebras's 429 names: "Tokens per minute
// limit exceeded - too many tokens processed." (type too_many_tokens_error,
// code token_quota_exceeded: continuedev/continue#9800), "Requests per
// minute limit exceeded - too many requests sent." (too_many_requests_error,
// request_quota_exceeded: nminaya/grammar-nazi-bot#958), "Tokens per day
// limit exceeded - …": the metric and the window, no value (the message
// gives none).
var cerebrasLimitRE = regexp.MustCompile(`(?i)^\s*(tokens|requests) per (minute|hour|day) limit exceeded\b`)

// cerebrasLimitIDs abbreviates Cerebras's limits as OpenAI's and Groq's
// messages name theirs (TPM, RPD).
var cerebrasLimitIDs = map[string]string{
	"tokens minute": "TPM", "tokens hour": "TPH", "tokens day": "TPD",
	"requests minute": "RPM", "requests hour": "RPH", "requests day": "RPD",
}

// cerebrasLimit is the QuotaFailure violation of the limit a Cerebras
// message names, nil for any other message. Without it the 429 said no
// limit at all (its type is no OpenAI limit type, its words not OpenAI's).
func cerebrasLimit(msg string) *errdetails.QuotaFailure_Violation {
	m := cerebrasLimitRE.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	metric, window := strings.ToLower(m[1]), strings.ToLower(m[2])
	return &errdetails.QuotaFailure_Violation{QuotaMetric: metric, QuotaId: cerebrasLimitIDs[metric+" "+window], Description: msg}
}

// cerebrasDaily reads a Cerebras daily limit (TPD, RPD) refused: no
// attempt succeeds before the day's window resets. The day window's reset
// its headers give (x-ratelimit-reset-<metric>-day, seconds: Cerebras
// sends it for requests, not for tokens, in the recordings here) is the
// retry delay, longer than the gateway waits, so the call falls back with
// RetryInfo saying when; without one the quota is spent for the day: not
// retried (it was retried into the same refusal), as a spent daily quota
// is for Gemini. A delay the provider already gave is kept.
func cerebrasDaily(e *provider.Error, h http.Header) {
	if e.RetryAfter != 0 || e.ShouldRetry == provider.RetryDiscouraged || !cerebrasLimitRE.MatchString(e.Message) {
		return
	}
	v := cerebrasLimit(e.Message)
	if v.QuotaId != "TPD" && v.QuotaId != "RPD" {
		return
	}
	if s, err := strconv.ParseFloat(strings.TrimSpace(h.Get("x-ratelimit-reset-"+v.QuotaMetric+"-day")), 64); err == nil && s > 0 && s < math.MaxInt64/float64(time.Second) {
		e.RetryAfter = time.Duration(s * float64(time.Second))
		return
	}
	e.ShouldRetry = provider.RetryDiscouraged
}

// kimiLimitRE reads the limit Kimi's (Moonshot's) rate_limit_reached_error
// names: "Your account org-…<ak-…> request reached organization max RPM:
// 3, please try again after 1 seconds", "… request reached max
// organization concurrency: 1, …" (LLM-Red-Team/kimi-cc#16), "… request
// reached project TPM rate limit, current: 1410, limit: 100, see …"
// (LLM-Red-Team/kimi-cc#41): the limit's abbreviation (or concurrency)
// and its value.
var kimiLimitRE = regexp.MustCompile(`(?i)\breached (?:(?:organization|project) )?max (?:(?:organization|project) )?(RPM|TPM|RPD|TPD|concurrency): (\d+)|` +
	`\breached (?:organization|project) (RPM|TPM|RPD|TPD) rate limit, current: \d+, limit: (\d+)`)

// kimiMetrics are the QuotaFailure metrics of Kimi's limits.
var kimiMetrics = map[string]string{"RPM": "requests", "RPD": "requests", "TPM": "tokens", "TPD": "tokens", "CONCURRENCY": "concurrency"}

// kimiLimit is the QuotaFailure violation of the limit a Kimi rate-limit
// message names, nil for any other message.
func kimiLimit(msg string) *errdetails.QuotaFailure_Violation {
	m := kimiLimitRE.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	id, val := m[1], m[2]
	if id == "" {
		id, val = m[3], m[4]
	}
	id = strings.ToUpper(id)
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return nil
	}
	qid := id
	if id == "CONCURRENCY" {
		qid = "concurrency"
	}
	return &errdetails.QuotaFailure_Violation{QuotaMetric: kimiMetrics[id], QuotaId: qid, QuotaValue: n, Description: msg}
}
