package ollama

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// parseHTTPError turns a non-2xx response into a *provider.Error: Ollama's
// {"error":"..."} message, refined Kind (context length), and a retry
// delay from the headers or, failing those, from the message.
func parseHTTPError(resp *http.Response) *provider.Error {
	e := provider.NewHTTPError(providerName, resp, requestIDHeader)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		// Keep what the status says; record why the body is missing.
		e.Err = err
	}
	if fixed, ok := provider.CloseTruncatedJSON(body); ok {
		body = fixed // cut inside its JSON: what was complete of it
	}
	msg, code, param := errorDetails(body)
	if msg != "" {
		e.Message = msg
	}
	if u := signinURL(body); u != "" {
		// A local Ollama not signed in to ollama.com, asked for a cloud
		// model: its "unauthorized" alone does not say what to do.
		e.Message += " (this Ollama server is not signed in to ollama.com, which its cloud models need: run `ollama signin` on it, or open " + u + ")"
		e.Extended = map[string]any{extSigninURL: u}
	}
	e.Code, e.Param = code, param
	if e.RequestID == "" {
		e.RequestID = provider.OllamaCloudRef(msg)
	}
	e.Kind = refineKind(e.Kind, msg)
	if e.Kind == provider.KindContextLength || provider.OllamaOutOfMemory(msg) || provider.OllamaLoadFailed(msg) {
		// Older Ollama versions answer an over-long input with a 500: the
		// same input fails every time, not a server fault to retry; nor
		// is a model larger than the host's free memory, which stays so
		// for minutes (provider.OllamaOutOfMemory), nor one whose runner
		// failed to load it (provider.OllamaLoadFailed: each attempt
		// loads it again, for seconds or minutes, to fail the same way).
		e.ShouldRetry = provider.RetryDiscouraged
		e.Message += provider.OllamaLoadAdvice(msg)
	}
	if e.Kind == provider.KindUnavailable && strings.Contains(strings.ToLower(msg), "requires more system memory") {
		// The model does not fit the server's free memory ("model
		// requires more system memory (3.7 GiB) than is available
		// (3.6 GiB)", a 500): the same call fails the same way until
		// memory is freed, so it is not retried here; another
		// deployment may serve it.
		e.ShouldRetry = provider.RetryDiscouraged
	}
	if (e.Kind == provider.KindInvalidRequest || e.Kind == provider.KindUnsupported || e.Kind == provider.KindCapability) && e.HTTPStatus >= 500 {
		// An invalid request or an operation the model does not have,
		// answered with a 500 (an image the runner cannot use, a model
		// that cannot embed): the same request fails again, here and on
		// any server with that model; another deployment may have another.
		e.ShouldRetry = provider.RetryDiscouraged
	}
	if e.Kind == provider.KindUnavailable && modelNaN(msg) {
		// The model computed a NaN (an embedding model on some inputs:
		// bge-m3, nomic-embed-text), which Go's JSON encoder refuses: a
		// 500 "failed to encode response: json: unsupported value: NaN".
		// The same input fails the same way every time with this model,
		// so it is not retried here; another deployment (another model)
		// may serve it.
		e.ShouldRetry = provider.RetryDiscouraged
		e.Message += nanAdvice
	}
	if e.HTTPStatus == http.StatusPaymentRequired && e.Kind == provider.KindRateLimited && (e.Code == "" || e.Code == "402") {
		// ollama.com's 402 for a cloud model that draws on an empty
		// "extra usage" balance (ollama/ollama#17639): a spent balance,
		// coded as every adapter codes one (OpenAI's on /v1 too).
		e.Code = "insufficient_quota"
	}
	if e.Kind == provider.KindInvalidRequest || e.Kind == provider.KindCapability {
		e.Message += provider.OllamaImageAdvice(msg)
	}
	if e.Kind == provider.KindRateLimited && e.Code == "" && usageLimit(msg) {
		// ollama.com's plan limit: retrying seconds later meets the same
		// limit, so it is a quota, as OpenAI's insufficient_quota (not
		// retried; a reason to fall back to the next deployment).
		e.Code = "insufficient_quota"
	}
	if e.RetryAfter == 0 {
		e.RetryAfter = retryDelayFromMessage(msg)
	}
	// Ollama itself sends no rate-limit headers (nor does ollama.com); a
	// proxy in front of it may, in OpenAI's x-ratelimit-* form, and the
	// throttled caller needs them.
	if rl := provider.OpenAIRateLimit(resp.Header); rl != nil || e.RequestID != "" {
		e.Meta = &llmrelayv1.ResponseMeta{ProviderRequestId: e.RequestID, RateLimit: rl}
	}
	return e
}

// extSigninURL is the failure's extended key of Ollama's signin_url.
const extSigninURL = "signin_url"

// signinURL is an error body's signin_url when it is an https URL of
// ollama.com (the only place Ollama sends a user to sign in), else "".
func signinURL(body []byte) string {
	var eb errorBody
	if json.Unmarshal(bytes.TrimSpace(body), &eb) != nil || eb.SigninURL == "" {
		return ""
	}
	u, err := url.Parse(eb.SigninURL)
	if err != nil || u.Scheme != "https" || (u.Hostname() != "ollama.com" && !strings.HasSuffix(u.Hostname(), ".ollama.com")) {
		return ""
	}
	return eb.SigninURL
}

// errorDetails reads an error body: Ollama's {"error":"message"}, a
// proxy's {"error":{"message","type"|"code","param"}}, or plain text.
func errorDetails(body []byte) (msg, code, param string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return "", "", ""
	}
	var eb errorBody
	if err := json.Unmarshal(body, &eb); err == nil {
		if m, c, p, ok := errorValue(eb.Error); ok {
			return m, c, p
		}
		// A gateway's JSON in front of Ollama ({"message":"API rate
		// limit exceeded"}): its words; none, the status's text.
		return provider.ProxyMessage(body), "", ""
	}
	// A proxy's words (Envoy's "upstream connect error ..."); a markup
	// page, or bytes that are not text (a body in a coding the gateway
	// did not decode), leave the message to the status's text.
	return provider.PlainTextMessage(body), "", ""
}

// errorValue decodes the value of an "error" field. ok is false when there
// is none (absent, null, empty).
func errorValue(raw json.RawMessage) (msg, code, param string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", "", "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, "", "", s != ""
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   string          `json:"param"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		code := obj.Type
		if c := scalarString(obj.Code); c != "" {
			code = c
		}
		if obj.Message == "" {
			obj.Message = plainText(raw)
		}
		return obj.Message, code, obj.Param, true
	}
	return plainText(raw), "", "", true
}

// scalarString renders a JSON string or number; "" otherwise.
func scalarString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// plainText is a short single-line form of a non-JSON body (a proxy's
// HTML or text page).
func plainText(b []byte) string {
	return strings.ToValidUTF8(provider.Shorten(strings.Join(strings.Fields(string(b)), " "), 300), "�")
}

// nanRE matches the error Ollama answers when the model's output holds a
// NaN, which Go's encoding/json cannot write: the runner's (or server's)
// "failed to encode response: json: unsupported value: NaN" (ollama/ollama
// #9639, #14657; users quote the whole body in hang-in/seCall#5).
var nanRE = regexp.MustCompile(`(?i)json: unsupported value: [+-]?(nan|inf)`)

// modelNaN reports whether an error message is Ollama's refusal to encode
// a NaN (or infinite) value the model computed.
func modelNaN(msg string) bool { return nanRE.MatchString(msg) }

// nanAdvice is added to the message of a modelNaN error.
const nanAdvice = " (the model computed a NaN for this input, which Ollama cannot send as JSON: the same input fails again with this model)"

// refineKind recognizes errors Ollama only tells apart by message.
func refineKind(k provider.Kind, msg string) provider.Kind {
	m := strings.ToLower(msg)
	switch {
	case k == provider.KindUnauthenticated, k == provider.KindPermissionDenied, k == provider.KindNotFound, k == provider.KindRateLimited:
		return k
	case strings.Contains(m, "context length"), strings.Contains(m, "context window"), strings.Contains(m, "maximum context"),
		// The runner's answer when truncate is on and num_keep leaves
		// nothing of the prompt (runner/ollamarunner NewSequence).
		strings.Contains(m, "entire prompt removed by truncation"):
		return provider.KindContextLength
	case strings.Contains(m, "content filter"), strings.Contains(m, "content policy"):
		return provider.KindContentFilter
	case provider.OllamaImageAdvice(msg) == provider.OllamaNoVisionAdvice:
		// The runner's model.ErrNoVisionModel, "this model is missing
		// data required for image input": a model without a vision
		// component, the capability Ollama's own check calls vision
		// ("… does not support vision"). The deployment's model, not the
		// request: a vision model serves it (round 25: KindCapability,
		// it was an invalid request).
		return provider.KindCapability
	case provider.OllamaImageAdvice(msg) != "":
		// The runner's refusal of an image it cannot decode: the same
		// request fails every time, on any model.
		return provider.KindInvalidRequest
	case provider.OllamaRefusalKind(msg) != provider.KindUnknown:
		// What the model cannot do: a capability the request needs (tools:
		// "registry.ollama.ai/library/gemma3:1b does not support tools", a
		// 400; thinking), or an operation (chat for an embedding model;
		// the runner's "this model does not support embeddings", a chat
		// model on Ollama's own engine, ollama/ollama#9742, a 500 to
		// /api/embed and /v1/embeddings alike). The deployment's model,
		// not the request: another model may serve it (a route falls
		// back), this one never will (not retried).
		return provider.OllamaRefusalKind(msg)
	}
	return k
}

// usageLimit recognizes ollama.com's 429 for an exhausted plan
// (provider.OllamaUsageLimit).
func usageLimit(msg string) bool { return provider.OllamaUsageLimit(msg) }

var retryRE = regexp.MustCompile(`(?i)(?:try again|retry)\s+(?:in|after)\s+([0-9]+(?:\.[0-9]+)?)\s*([a-z]+(?:[0-9]+(?:\.[0-9]+)?[a-z]+)*)`)

// retryDelayFromMessage reads "try again in 20s" / "1m30s" / "2 minutes"
// hints, which hosted Ollama and proxies put in the message instead of a
// header. 0 when there is none or it is implausible (over a day).
func retryDelayFromMessage(msg string) time.Duration {
	m := retryRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	var d time.Duration
	if pd, err := time.ParseDuration(m[1] + strings.ToLower(m[2])); err == nil {
		d = pd
	} else {
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0
		}
		unit, ok := retryUnits[strings.ToLower(m[2])]
		if !ok {
			return 0
		}
		d = time.Duration(n * float64(unit))
	}
	if d <= 0 || d > 24*time.Hour {
		return 0
	}
	return d
}

var retryUnits = map[string]time.Duration{
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"hour": time.Hour, "hours": time.Hour,
}

// inBandError is an {"error":...} object inside a 200 answer (a stream
// line, or a unary body): the model runner failed after the status was
// sent.
func inBandError(raw json.RawMessage, status int, requestID string) *provider.Error {
	msg, code, param, ok := errorValue(raw)
	if !ok {
		return nil
	}
	if requestID == "" {
		requestID = provider.OllamaCloudRef(msg)
	}
	kind := refineKind(provider.KindUnavailable, msg)
	if kind == provider.KindInvalidRequest || kind == provider.KindCapability {
		msg += provider.OllamaImageAdvice(msg)
	}
	return &provider.Error{
		Provider: providerName, Kind: kind, HTTPStatus: status,
		Code: code, Message: msg, Param: param, RequestID: requestID, RetryAfter: retryDelayFromMessage(msg),
	}
}
