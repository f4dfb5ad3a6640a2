package gemini

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// maxErrorBody caps how much of an error body is read.
const maxErrorBody = 64 << 10

// httpError turns a non-2xx response into a *provider.Error: Kind from the
// status, then the google.rpc.Status body (message, status, ErrorInfo
// reason, BadRequest field, RetryInfo delay, QuotaFailure violations, Help
// links) refines it. The body is read up to maxErrorBody; secrets are
// redacted from the message and the details.
func (p *Provider) httpError(resp *http.Response) *provider.Error {
	e := provider.NewHTTPError(providerName, resp, requestIDHeader)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		e.Err = err
	}
	if fixed, ok := provider.CloseTruncatedJSON(body); ok {
		body = fixed // cut inside its JSON: what was complete of it
	}
	if st := parseStatusBody(body); st != nil {
		p.applyStatusMeta(e, st, provider.ResponseDate(resp.Header))
	} else if msg := strings.TrimSpace(strings.TrimPrefix(string(body), "\uFEFF")); msg != "" && !provider.IsMarkup(body) {
		switch {
		case strings.HasPrefix(msg, "{"):
			// JSON of another shape (a gateway's in front of Gemini,
			// {"message":"API rate limit exceeded"}): its words, not the
			// JSON; none, the status's text.
			msg = provider.ProxyMessage([]byte(msg))
		case !provider.IsPlainText(body):
			// Bytes that are not text (a body in a coding the gateway
			// did not decode: Brotli, zstd), or a JSON array: not words,
			// the status's text says it.
			msg = ""
		}
		if msg != "" {
			// Redacted before it is cut: a key cut at the limit would
			// leave a piece too short for the pattern to know.
			e.Message = truncate(p.redact(msg), 1024)
		}
	}
	// The Developer API names the service tier on its refusals too
	// (X-Gemini-Service-Tier on a 400): the tier the failed call was
	// under, as on a success.
	if tier := strings.TrimSpace(resp.Header.Get(serviceTierHeader)); tier != "" {
		if e.Meta == nil {
			e.Meta = &llmrelayv1.ResponseMeta{}
		}
		headerServiceTier(e.Meta, resp.Header)
	}
	return e
}

// applyStatusMeta fills e from a google.rpc.Status (applyStatus) and
// puts the rate-limit state its QuotaFailure reports into e.Meta, its
// resets counted from now (the answer's Date): the one reading of an
// error status, whether it came as an error answer or inside a 200
// (a stream's chunk, a unary body), which left the rate limit out. Each
// violation is a window of the rate limit (provider.GoogleQuotaWindows).
func (p *Provider) applyStatusMeta(e *provider.Error, st *statusError, now time.Time) {
	p.applyStatus(e, st)
	// The typed fields hold the first request and token quota; the
	// windows every violation (provider.GoogleQuotaWindows).
	rl := quotaRateLimit(st, now, e.RetryAfter)
	if rl = provider.GoogleQuotaWindows(rl, e.Quota, now, e.RetryAfter); rl != nil {
		if e.Meta == nil {
			e.Meta = &llmrelayv1.ResponseMeta{}
		}
		e.Meta.RateLimit = rl
	}
}

// quotaRateLimit is the rate-limit state a RESOURCE_EXHAUSTED error reports.
// Gemini sends no rate-limit headers; its QuotaFailure names each exhausted
// quota (quotaId "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
// "GenerateContentInputTokensPerModelPerMinute-FreeTier", ...) with its
// limit (quotaValue). An exhausted quota has nothing remaining, and it is
// restored when the provider says to retry (RetryInfo, from the response's
// Date). The first request quota and the first token quota are kept; nil
// when the error names neither.
func quotaRateLimit(st *statusError, now time.Time, retry time.Duration) *llmrelayv1.RateLimit {
	var rl llmrelayv1.RateLimit
	found := false
	for _, d := range st.Details {
		if !strings.HasSuffix(d.Type, "google.rpc.QuotaFailure") {
			continue
		}
		for _, v := range d.Violations {
			if !v.QuotaValue.Set {
				// No limit given (or 0, which proto3 JSON leaves out
				// alike): the RateLimit says nothing it cannot know.
				continue
			}
			limit := v.QuotaValue.Value
			id := strings.ToLower(v.QuotaID + " " + v.QuotaMetric)
			var lim, rem **int64
			var reset **timestamppb.Timestamp
			switch {
			case strings.Contains(id, "token"):
				lim, rem, reset = &rl.TokensLimit, &rl.TokensRemaining, &rl.TokensResetTime
			case strings.Contains(id, "request"):
				lim, rem, reset = &rl.RequestsLimit, &rl.RequestsRemaining, &rl.RequestsResetTime
			default:
				continue
			}
			if *lim != nil {
				continue
			}
			zero := int64(0)
			*lim, *rem = &limit, &zero
			if retry > 0 {
				*reset = timestamppb.New(now.Add(retry))
			}
			found = true
		}
	}
	if !found {
		return nil
	}
	return &rl
}

// parseStatusBody decodes {"error": {...}} or, as the non-SSE streaming
// endpoint sends it, [{"error": {...}}]. nil when the body is neither.
func parseStatusBody(body []byte) *statusError {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] == '[' {
		var arr []errorEnvelope
		if json.Unmarshal(body, &arr) == nil {
			for _, env := range arr {
				if env.Error != nil {
					return env.Error
				}
			}
		}
		return nil
	}
	var env errorEnvelope
	if json.Unmarshal(body, &env) != nil || env.Error == nil {
		return nil
	}
	return env.Error
}

// applyStatus fills e from a google.rpc.Status and refines its Kind: the
// message, the status (and ErrorInfo reason) as code, the RetryInfo delay,
// the BadRequest field, the QuotaFailure's violations as they are (Quota)
// and the Help links.
func (p *Provider) applyStatus(e *provider.Error, st *statusError) {
	claude := false
	if inner, reqID := anthropicInner(st.Message); inner != "" {
		// Cloud Code (Antigravity) serving Claude answers Anthropic's
		// refusal as a Status whose message is Anthropic's error body,
		// JSON in a string ({"error":{"code":400,"message":"{\"type\":
		// \"error\",\"error\":{\"type\":\"invalid_request_error\",
		// \"message\":\"messages.1.content.0.type: Expected `thinking`
		// …\"},\"request_id\":\"req_vrtx_…\"}","status":
		// "INVALID_ARGUMENT"}}: znlsl/Antigravity2Api#11). Anthropic's
		// words are the message and classify it; its request id is kept.
		c := *st
		c.Message, st, claude = inner, &c, true
		if reqID != "" {
			if e.Extended == nil {
				e.Extended = map[string]any{}
			}
			e.Extended["upstream_request_id"] = reqID
		}
	}
	// Field errors come as "* Request.field: problem\n": the line end is
	// not part of the message.
	if msg := strings.TrimSpace(st.Message); msg != "" {
		e.Message = p.redact(msg)
	}
	e.Code = st.Status
	if e.HTTPStatus == 0 {
		// An error inside a 200 stream: classify by its own code.
		e.Kind = kindForStatusCode(st.Code, st.Status)
	}
	reason := provider.ApplyGoogleDetails(e, st.Details, p.redact)
	if reason != "" {
		e.Code = st.Status + "/" + reason
	}
	if e.RetryAfter == 0 && e.ShouldRetry != provider.RetryDiscouraged && st.Status == "RESOURCE_EXHAUSTED" {
		// No RetryInfo (a stream's chunk, a proxy that kept the message
		// alone): the delay the message states.
		e.RetryAfter = messageRetryDelay(st.Message)
	}
	switch {
	case reason == "API_KEY_INVALID" || reason == "API_KEY_EXPIRED" || st.Status == "UNAUTHENTICATED":
		e.Kind = provider.KindUnauthenticated
	case isContextLength(st.Message), claude && anthropicContextLength(st.Message):
		e.Kind = provider.KindContextLength
	case st.Status == "PERMISSION_DENIED", provider.GoogleDeploymentRefused(st.Status, st.Message),
		// Vertex AI's 400 FAILED_PRECONDITION "Project `…` is not allowed
		// to use Publisher Model `…`": the model is not this project's to
		// use; not the caller's invalid argument. Never retried, a route
		// falls back (provider.ModelAccessRefused).
		provider.ModelAccessRefused(st.Message):
		e.Kind = provider.KindPermissionDenied
	case provider.GoogleCapacityExhausted(st.Status, reason, st.Message):
		// The model's shared capacity (Vertex AI's pay-as-you-go pool,
		// MODEL_CAPACITY_EXHAUSTED), not the caller's quota: retried as
		// the provider being unavailable, its RetryInfo kept.
		e.Kind = provider.KindUnavailable
	case st.Status == "RESOURCE_EXHAUSTED":
		e.Kind = provider.KindRateLimited
		if provider.GoogleCreditsSpent(st.Status, st.Code, st.Message) {
			// Prepaid credits spent: no wait helps (an HTTP 402 is not
			// retried by its status; this comes as a 429 or in a stream).
			e.ShouldRetry = provider.RetryDiscouraged
			e.RetryAfter = 0
		}
	case st.Status == "DEADLINE_EXCEEDED":
		e.Kind = provider.KindTimeout
	case st.Status == "INVALID_ARGUMENT" && provider.CapabilityRefusal(st.Message):
		// A capability the model lacks: "Function calling is not enabled
		// for models/gemma-3-12b-it" (agno-agi/agno#3505), "Developer
		// instruction is not enabled for models/gemma-3-27b-it" (no system
		// instruction: 0xPlaygrounds/rig#788), "Json mode is not enabled
		// for models/gemini-pro". A 400 INVALID_ARGUMENT, but a model
		// that has it serves the same request: never retried, a reason to
		// fall back; they were invalid requests.
		e.Kind = provider.KindCapability
	}
	e.SignatureRefused = provider.GoogleSignatureRefused(st.Status, st.Message)
}

// retryInRE reads the delay a RESOURCE_EXHAUSTED message states, as the
// Gemini API words it beside its RetryInfo: a Go duration, "Please retry
// in 34.237795071s." (testdata/error_429.http), "850ms", and past a
// minute "1m5s", past an hour "9h10m57.29s" (a daily quota, as clients
// quote it).
var retryInRE = regexp.MustCompile(`(?i)\bplease retry in ((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|h|m|s))+)\b`)

// messageRetryDelay is the delay msg states (retryInRE), 0 when it
// states none; one beyond a Duration is the longest (as a Retry-After
// header's), which the retry policy does not wait for.
func messageRetryDelay(msg string) time.Duration {
	m := retryInRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	d, err := time.ParseDuration(strings.ToLower(m[1]))
	if err != nil {
		// The pattern admits only a duration's syntax: too long for one.
		return time.Duration(math.MaxInt64)
	}
	return max(d, 0)
}

// kindForStatusCode classifies an error object that came without an HTTP
// error status (inside a 200 stream), from its code and status name.
func kindForStatusCode(code int, status string) provider.Kind {
	switch status {
	case "UNAVAILABLE", "INTERNAL", "UNKNOWN", "ABORTED":
		return provider.KindUnavailable
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return provider.KindInvalidRequest
	case "NOT_FOUND":
		return provider.KindNotFound
	case "CANCELLED":
		// The backend gave up on the operation (the gateway's own
		// cancellation ends the read before any chunk): transient, as
		// an HTTP 499 is (provider.StatusProviderCancelled), not the
		// caller's cancellation.
		return provider.KindUnavailable
	}
	if k := provider.KindForStatus(code); k != provider.KindUnknown {
		return k
	}
	return provider.KindUnavailable
}

// isContextLength recognizes the refusals of a prompt longer than the
// model's window (INVALID_ARGUMENT): the Gemini API's "The input token
// count (N) exceeds the maximum number of tokens allowed (M)." and Vertex
// AI's "Unable to submit request because the input token count is N but
// model only supports up to M. …" (testdata/vertex24_error_context_length.http).
func isContextLength(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "exceeds the maximum number of tokens") ||
		(strings.Contains(m, "input token count") && (strings.Contains(m, "exceed") || strings.Contains(m, "only supports up to"))) ||
		strings.Contains(m, "context window") && strings.Contains(m, "exceed")
}

// apiKeyInText matches key material Google echoes in messages
// ("Consumer 'api_key:AIza...'"): AIza keys and api_key:<value> forms.
var apiKeyInText = regexp.MustCompile(`AIza[0-9A-Za-z_\-]{10,}|api_key:[^\s'",]+`)

// redact removes the adapter's key and anything shaped like a Google API
// key from provider text.
func (p *Provider) redact(s string) string {
	if p.apiKey != "" && strings.Contains(s, p.apiKey) {
		s = strings.ReplaceAll(s, p.apiKey, "[REDACTED]")
	}
	return apiKeyInText.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "api_key:") {
			return "api_key:[REDACTED]"
		}
		return "[REDACTED]"
	})
}

// truncate cuts s to at most n bytes at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// anthropicInner reads Anthropic's error body inside a Status message
// ({"type":"error","error":{"type":…,"message":…},"request_id":…}): its
// message and request id; "" for any other message.
func anthropicInner(msg string) (string, string) {
	m := strings.TrimSpace(msg)
	if !strings.HasPrefix(m, "{") {
		return "", ""
	}
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal([]byte(m), &body) != nil || body.Type != "error" {
		return "", ""
	}
	return strings.TrimSpace(body.Error.Message), strings.TrimSpace(body.RequestID)
}

// anthropicContextLength reports Anthropic's words for an input longer
// than the model's window ("prompt is too long: 209303 tokens > 200000
// maximum", "input length and `max_tokens` exceed context limit: …"), as
// the anthropic adapter reads them.
func anthropicContextLength(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "prompt is too long") || strings.Contains(m, "exceed context limit")
}
