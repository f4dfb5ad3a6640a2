package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/llmrelay/llmrelay/server/provider"
)

// httpError builds the *provider.Error for a non-2xx response: status,
// retry-after and request-id from the head, then type and message from the
// body {"type":"error","error":{"type","message"},"request_id"}.
//
// The meta keeps what the headers report: the request id and the
// anthropic-ratelimit-* state, which a 429 carries for the throttled caller.
func httpError(resp *http.Response) *provider.Error {
	e := provider.NewHTTPError(providerName, resp, requestIDHeader)
	if e.RequestID == "" {
		e.RequestID = headerRequestID(resp.Header) // Bedrock's, behind a relay
	}
	e.Meta = headerMeta(resp.Header)
	if e.RetryAfter == 0 && e.HTTPStatus == http.StatusTooManyRequests {
		e.RetryAfter = unifiedRejectedWait(resp.Header, e.Date)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodySize))
	if err != nil {
		// The status is known; keep it and record why the body is cut
		// or missing. What was read of it is still read (its message,
		// its type), as an answer cut at the size limit is.
		e.Err = err
	}
	if fixed, ok := provider.CloseTruncatedJSON(raw); ok {
		raw = fixed // cut inside its JSON: what was complete of it
	}
	var body errorBody
	if json.Unmarshal(vertexErrorObject(raw), &body) != nil || body.Error == nil {
		// Not Anthropic's shape: a gateway's in front of it, {"error":
		// "Forbidden"} (LangSmith's,
		// testdata/real_langsmith_gateway_403_forbidden.http) or
		// {"message":"API rate limit exceeded"}.
		if msg := provider.ProxyMessage(raw); msg != "" {
			e.Message = msg
			// The words may be the provider's, passed on in another
			// shape: Amazon Bedrock's {"message":"Input is too long for
			// requested model."} is a context overflow wherever it comes
			// from.
			refineKind(e)
		} else if msg := provider.PlainTextMessage(raw); msg != "" {
			// A proxy's words in plain text (Envoy's reset reason), as
			// an error event in plain text is read.
			e.Message = msg
		}
		return e
	}
	fillFromBody(e, body.Error, body.RequestID)
	relayedError(e, body.Error)
	// Status decides the kind; the body only refines what a status cannot
	// tell (context length, content filtering).
	zaiBusinessCode(e, body.Error)
	refineKind(e)
	provider.MiniMaxPlanLimit(e, resp.Header)
	provider.ZaiUsageReset(e, resp.Header)
	limitQuota(e)
	return e
}

// spendCapErrorCode is error.details.error_code on the 429 of an
// organization past its usage tier's monthly spend cap. Anthropic's
// rate-limits documentation: API usage "pauses until 00:00 UTC on the
// first day of the next month", the 429 comes without retry-after, and
// this code tells it apart from a rate limit; a live one: "You have
// reached your API usage limits: your organization has crossed its
// monthly API usage threshold, set based on your organization's API
// tier. You will regain access on 2026-09-01 at 00:00 UTC."
const spendCapErrorCode = "enforced_spend_limit_reached"

// vertexErrorObject is the error object of Vertex AI's error answer for a
// Claude model, which may come as a one-element JSON array:
// `[{"error":{"code":429,"message":"Quota exceeded for
// aiplatform.googleapis.com/online_prediction_requests_per_base_model with
// base model: anthropic-claude-3-5-sonnet-v2. …","status":"RESOURCE_EXHAUSTED"}}]`
// (cline/cline#651, Aider-AI/aider#1912, yym68686/uni-api#41). Any other
// body is returned as it is.
func vertexErrorObject(raw []byte) []byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return raw
	}
	var list []json.RawMessage
	if json.Unmarshal(t, &list) != nil || len(list) != 1 {
		return raw
	}
	return list[0]
}

// spendCapReached marks e as a spent quota: a rate limit that no wait
// short of the next month lifts, not retried (its type, rate_limit_error,
// had it retried into the same refusal), no retry delay; another
// deployment (another organization's key, another provider) does not
// share it, so a route falls back (pipeline.FallbackWorthy).
func spendCapReached(e *provider.Error) {
	e.Kind = provider.KindRateLimited
	e.ShouldRetry = provider.RetryDiscouraged
	e.RetryAfter = 0
}

// unifiedRejectedWait is how long a 429 of a Claude subscription's
// unified limits says to wait when it comes without a Retry-After: its
// anthropic-ratelimit-unified-status is "rejected" and the
// anthropic-ratelimit-unified-reset (Unix seconds) is when the deciding
// window opens again, counted from the answer's Date; no attempt can
// succeed before then (the rule the pipeline applies to an exhausted
// limit's reset). 0 when the status is another, or the reset is absent,
// unreadable or past.
func unifiedRejectedWait(h http.Header, now time.Time) time.Duration {
	if !strings.EqualFold(strings.TrimSpace(h.Get(provider.UnifiedPrefix+"Status")), "rejected") {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get(provider.UnifiedPrefix+"Reset")), 10, 64)
	if err != nil || n <= 0 || n >= 1<<40 {
		return 0
	}
	return max(time.Unix(n, 0).Sub(now), 0)
}

// limitRE reads the limit Anthropic's rate_limit_error names: "This
// request would exceed the rate limit for your organization (<id>) of
// 50,000 input tokens per minute." (as its clients quote it; "8,000
// output tokens per minute", "50 requests per minute" alike), or the
// organization's hourly prompt size, "…would exceed your organization's
// rate limit of 20,000,000 prompt bytes per hour (org: …, model: …)"
// (anthropic-sdk-python's recording,
// testdata/real_sdkpy_429_prompt_bytes_1.http): the limit's value, its
// metric and its window.
var limitRE = regexp.MustCompile(`(?i)\bof ([\d,]+) (input tokens|output tokens|tokens|requests|prompt bytes) per (minute|hour|day)\b`)

// limitIDs are Anthropic's abbreviations of its limits (its rate-limit
// documentation's RPM, ITPM, OTPM), by metric and window.
var limitIDs = map[string]string{
	"requests minute": "RPM", "input_tokens minute": "ITPM", "output_tokens minute": "OTPM", "tokens minute": "TPM",
	"requests day": "RPD", "input_tokens day": "ITPD", "output_tokens day": "OTPD", "tokens day": "TPD",
}

// limitQuota puts on a rate-limited e the limit its message names, as
// the provider's own QuotaFailure violation (metric, value, window; the
// message as description): the headers cannot say which limit refused
// the request (a request too large for the input-tokens limit leaves it
// all remaining), the message does. Nothing when it names none.
func limitQuota(e *provider.Error) {
	if e.Kind != provider.KindRateLimited || len(e.Quota) > 0 {
		return
	}
	m := limitRE.FindStringSubmatch(e.Message)
	if m == nil {
		return
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		return
	}
	metric := strings.ReplaceAll(strings.ToLower(m[2]), " ", "_")
	window := strings.ToLower(m[3])
	id, ok := limitIDs[metric+" "+window]
	if !ok {
		// A limit the documentation gives no abbreviation (the prompt
		// bytes per hour): its metric and window in words.
		id = metric + "_per_" + window
	}
	e.Quota = append(e.Quota, &errdetails.QuotaFailure_Violation{
		QuotaMetric: metric, QuotaValue: n, QuotaId: id, Description: e.Message,
	})
}

// extErrorDetails is the provider.Error.Extended key of the error's
// details object, as sent (error.details: {"error_code": …}).
const extErrorDetails = "error_details"

// fillFromBody copies the provider's error details into e.
func fillFromBody(e *provider.Error, d *wireErrorDetail, requestID string) {
	e.Code = d.codeText()
	if msg := strings.TrimSpace(d.Message); msg != "" {
		e.Message = msg
	}
	if t := bytes.TrimSpace(d.Details); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		var v any
		if json.Unmarshal(t, &v) == nil {
			if e.Extended == nil {
				e.Extended = map[string]any{}
			}
			e.Extended[extErrorDetails] = v
		}
	}
	if d.errorCode() == spendCapErrorCode {
		spendCapReached(e)
	}
	if e.RequestID == "" {
		e.RequestID = requestID
	}
	if e.Param == "" {
		e.Param = errorField(e.Message)
	}
}

// errorLocation is the location Anthropic's request validation writes
// before its message: a request field path ("max_tokens", "messages.1.content.0",
// "tools.0.custom.input_schema.type") and ": ". Prose that merely starts with
// words ("prompt is too long: …") has spaces before its colon; a capital
// ("Error: …") is not a field of the Messages API.
var errorLocation = regexp.MustCompile(`^([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*): `)

// errorField is the request field an error message blames by its
// location prefix, "" when it names none that way.
func errorField(msg string) string {
	if m := errorLocation.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// refineKind recognizes failures a status code cannot tell apart.
func refineKind(e *provider.Error) {
	msg := strings.ToLower(e.Message)
	// A thinking block signed elsewhere (provider.AnthropicSignatureRefused):
	// the conversation without its thinking blocks passes
	// (provider.Request.DropSignatures).
	e.SignatureRefused = provider.AnthropicSignatureRefused(e.Message)
	switch {
	case strings.Contains(msg, "prompt is too long"),
		strings.Contains(msg, "exceed context limit"),
		strings.Contains(msg, "context window"),
		// Anthropic-compatible endpoints' words: DeepSeek's "This model's
		// maximum context length is 131072 tokens. However, you requested
		// …" and Kimi's "Your request exceeded model token limit: 262144".
		strings.Contains(msg, "maximum context length"),
		strings.Contains(msg, "exceeded model token limit"),
		// Amazon Bedrock's ValidationException for a Claude prompt over
		// the window, {"message":"Input is too long for requested
		// model."}, also as a gateway relays it inside Anthropic's shape
		// (continuedev/continue#9592 quotes it from Bedrock's Claude Opus
		// 4.5; clients' tests code the body).
		strings.Contains(msg, "input is too long for requested model"),
		// Ollama's Anthropic-compatible /v1/messages passes its own words
		// on, typed by status (a 400, or an older version's 500).
		provider.OllamaContextOverflow(msg):
		e.Kind = provider.KindContextLength
		if e.HTTPStatus >= 500 {
			// The same input fails every time: not a fault to retry.
			e.ShouldRetry = provider.RetryDiscouraged
		}
	case strings.Contains(msg, "content filtering policy"):
		e.Kind = provider.KindContentFilter
	case provider.ModelAccessRefused(e.Message):
		// The model refused to this deployment: Vertex AI's 400
		// FAILED_PRECONDITION "Project `…` is not allowed to use
		// Publisher Model `…/publishers/anthropic/models/…`"
		// (yym68686/uni-api#41), Bedrock's 403 "You don't have access to
		// the model with the specified model ID."
		// (gaiin-platform/amplify-genai-backend#62). The model is not
		// this project's or account's to use: permission denied
		// (provider.ModelAccessRefused), whatever the status, never
		// retried, a route falls back (another project, region or
		// provider may have it). Vertex AI's was an invalid request.
		e.Kind = provider.KindPermissionDenied
	case e.Kind == provider.KindInvalidRequest && (provider.CapabilityRefusal(e.Message) ||
		provider.OllamaRefusalKind(e.Message) == provider.KindCapability):
		// A capability the model lacks, in the provider's words: Anthropic's
		// "'claude-3-5-sonnet-20241022' does not support thinking."
		// (anthropics/claude-code#2245), and Ollama's Anthropic-compatible
		// route passing its own ("registry.ollama.ai/library/gemma3:1b does
		// not support tools", ollama.com's "this model does not support
		// image input (ref: …)": ollama/ollama#17301), a 400
		// invalid_request_error. A model that has it serves the same
		// request: never retried, a reason to fall back; they were invalid
		// requests.
		e.Kind = provider.KindCapability
	case (e.Kind == provider.KindNotFound || e.Kind == provider.KindInvalidRequest) && provider.OpenRouterNoEndpoints(e.Message):
		// OpenRouter's Messages endpoint, in its OpenAI-shaped 404: "No
		// endpoints found that support tool use. …": the model exists,
		// none of its providers has the capability; it was a model not
		// found.
		e.Kind = provider.KindCapability
	case e.Kind == provider.KindInvalidRequest && provider.OllamaRefusalKind(e.Message) == provider.KindUnsupported:
		// Ollama's refusal of an operation the model does not do at all
		// ("\"all-minilm\" does not support chat": an embedding model),
		// through its Anthropic route as through its own: unsupported, as
		// the ollama and openai adapters read it.
		e.Kind = provider.KindUnsupported
	case strings.Contains(msg, "credit balance is too low"),
		// Kimi's (Moonshot's) spent quota, a 429 whatever its message
		// ("Your account … is suspended due to insufficient balance", "Your
		// account exceeded current quota").
		e.Code == "exceeded_current_quota_error",
		// Anthropic-compatible endpoints' spent balance: MiniMax's 500
		// api_error "insufficient balance (1008)" (MiniMax-AI/MiniMax-M2#62),
		// which a status alone would retry as a server fault; Z.ai's
		// "Insufficient balance or no resource package" (its 1113).
		strings.Contains(msg, "insufficient balance"),
		// The spend limit the organization set is reached, a 400
		// invalid_request_error too: "You have reached your specified
		// API usage limits. You will regain access on 2026-04-01 at
		// 00:00 UTC." (anthropics/claude-code#2127, #38035); a
		// workspace's: "You have reached your specified workspace API
		// usage limits. You will regain access on 2025-06-01 at 00:00
		// UTC." (anthropics/claude-code#1047, #55998), which was an
		// invalid request, no reason to fall back.
		// The tier's monthly spend cap, a 429 rate_limit_error: "You
		// have reached your API usage limits: your organization has
		// crossed its monthly API usage threshold, …" (spendCapReached
		// reads its details; the words alone, where a proxy kept only
		// the message). All three: provider.AnthropicSpendLimit.
		provider.AnthropicSpendLimit(msg):
		// A 400 invalid_request_error, but the account's quota, as
		// OpenAI's insufficient_quota: not retried (in a stream's
		// error event either, where no status says so), a reason to
		// fall back to another deployment.
		e.Kind = provider.KindRateLimited
		e.ShouldRetry = provider.RetryDiscouraged
	case e.Code == "engine_overloaded_error":
		// Kimi's (Moonshot's) "The engine is currently overloaded, please
		// try again later", a 429: the provider's capacity, as Anthropic's
		// overloaded_error, not the caller's rate limit; retried.
		e.Kind = provider.KindUnavailable
	case strings.Contains(msg, "extra usage is required for"):
		// "Extra usage is required for long context requests." (a 429
		// rate_limit_error: anthropics/claude-code#42616, #50784,
		// Wei-Shaw/sub2api#572): the account is not entitled to the
		// long context (the 1M-token window) without extra usage, not
		// sending too fast. Retrying gets the same refusal (it was
		// retried, after the 429's Retry-After, as a rate limit);
		// another deployment (another plan, key or provider) may be
		// entitled: PermissionDenied, not retried, no retry delay, a
		// route falls back (pipeline.FallbackWorthy).
		e.Kind = provider.KindPermissionDenied
		e.ShouldRetry = provider.RetryDiscouraged
		e.RetryAfter = 0
	case strings.Contains(msg, "out of extra usage"):
		// "You're out of extra usage. Add more at
		// claude.ai/settings/usage" (a 429: griffinmartin/
		// opencode-claude-auth#209): the extra usage is spent, a quota
		// no wait restores, as the credit balance above.
		e.Kind = provider.KindRateLimited
		e.ShouldRetry = provider.RetryDiscouraged
		e.RetryAfter = 0
	}
}

// kindForErrorType classifies an error by its type alone, for error events
// inside a 200 stream (there is no status to go by).
func kindForErrorType(t string) provider.Kind {
	switch t {
	case "invalid_request_error", "request_too_large":
		return provider.KindInvalidRequest
	case "authentication_error":
		return provider.KindUnauthenticated
	case "permission_error":
		return provider.KindPermissionDenied
	case "billing_error":
		// Anthropic's type for its 402 (billing or payment): a spent
		// quota, as a 402 is for every adapter (provider.KindForStatus,
		// provider.QuotaSpent), not a permission.
		return provider.KindRateLimited
	case "not_found_error":
		return provider.KindNotFound
	case "rate_limit_error":
		return provider.KindRateLimited
	case "timeout_error":
		return provider.KindTimeout
	case "overloaded_error", "api_error":
		return provider.KindUnavailable
	default:
		// An error the provider reported mid-answer: treat as transient.
		return provider.KindUnavailable
	}
}

// eventError is the *provider.Error for an `error` event in a stream (or an
// error body in a 200 response).
func eventError(d *wireErrorDetail, requestID string, h http.Header) *provider.Error {
	e := &provider.Error{Provider: providerName, RequestID: headerRequestID(h), Meta: headerMeta(h), InAnswer: true}
	if d == nil {
		d = &wireErrorDetail{}
	}
	e.Kind = kindForErrorType(d.Type)
	e.Message = "error event without a message"
	fillFromBody(e, d, requestID)
	zaiBusinessCode(e, d)
	refineKind(e)
	provider.MiniMaxPlanLimit(e, h)
	provider.ZaiUsageReset(e, h)
	limitQuota(e)
	return e
}

// zaiBusinessCode reads Z.ai's business code (provider.ZaiBusinessCode):
// where Anthropic writes the type ({"type":"1113",…}), under "code" with
// no type, or, in Z.ai's newer form, under "code" beside a type when the
// message leads with it in brackets: {"type":"rate_limit_error","code":
// "1113","message":"[1113][Insufficient balance or no resource package.
// Please recharge.][<request id>]"} (zai-org/feedback#789, a 429 from
// api.z.ai/api/anthropic). There the type said only "rate limit": a spent
// usage cap (1308) was retried as one. The code becomes the error's code.
func zaiBusinessCode(e *provider.Error, d *wireErrorDetail) {
	if d != nil && d.Type != "" {
		if c := (&wireErrorDetail{Code: d.Code}).codeText(); c != "" && strings.HasPrefix(e.Message, "["+c+"]") {
			typ := e.Code
			e.Code = c
			if !provider.ZaiBusinessCode(e) {
				e.Code = typ
			}
			return
		}
	}
	provider.ZaiBusinessCode(e)
}

// relayedError puts in e the upstream's own error that a router relayed
// in error.metadata.raw beside its generic "Provider returned error":
// OpenRouter's Messages endpoint (https://openrouter.ai/api/v1/messages)
// answers so, `{"error":{"message":"Provider returned error","code":400,
// "metadata":{"raw":"{\"error\":{\"code\":\"400\",\"message\":\"Param
// Incorrect\",\"param\":\"messages[2] assistant content must contain at
// least one part\",…}}","provider_name":"Xiaomi"}}}` (farion1231/cc-switch#464,
// Claude Code pointed at OpenRouter), as its chat endpoint does (the openai
// adapter's upstreamError). The router's words tell the caller nothing:
// the upstream's message replaces them, its type or non-numeric code
// replaces the router's numeric one, its param fills the param, and the
// provider's name is the error's upstream_provider. The raw body may be
// Anthropic's, OpenAI's, Google's (alone or in an array), a bare
// {"message"} (Amazon Bedrock's) or plain text. The kind is then refined
// by the upstream's words (refineKind, after this).
func relayedError(e *provider.Error, d *wireErrorDetail) {
	if len(bytes.TrimSpace(d.Metadata)) == 0 {
		return
	}
	var md struct {
		Raw          json.RawMessage `json:"raw"`
		ProviderName json.RawMessage `json:"provider_name"`
	}
	if json.Unmarshal(d.Metadata, &md) != nil {
		return
	}
	raw := bytes.TrimSpace(md.Raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	var msg, code, param string
	var up struct {
		Error *struct {
			wireErrorDetail
			Param string `json:"param"`
		} `json:"error"`
	}
	switch {
	case len(raw) == 0 || provider.IsMarkup(raw):
		return
	case json.Unmarshal(vertexErrorObject(raw), &up) == nil && up.Error != nil:
		msg, code, param = up.Error.Message, up.Error.codeText(), up.Error.Param
	case raw[0] == '{' || raw[0] == '[':
		if msg = provider.ProxyMessage(raw); msg == "" {
			return
		}
	default:
		msg = provider.Shorten(strings.ToValidUTF8(string(raw), "\uFFFD"), maxErrorMessage)
	}
	if msg = strings.TrimSpace(msg); msg == "" {
		return
	}
	e.Message = msg
	if _, err := strconv.Atoi(code); code != "" && err != nil {
		e.Code = code
	}
	if e.Param = strings.TrimSpace(param); e.Param == "" {
		e.Param = errorField(msg)
	}
	var name string
	if json.Unmarshal(md.ProviderName, &name) == nil && strings.TrimSpace(name) != "" {
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extUpstreamProvider] = strings.ToValidUTF8(strings.TrimSpace(name), "\uFFFD")
	}
}

// maxErrorMessage bounds an upstream's plain-text error kept as the
// message.
const maxErrorMessage = 1024
