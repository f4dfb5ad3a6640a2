package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// upstreamError is the error a router relayed from the provider it
// routed to: OpenRouter answers an upstream failure with its own generic
// error ({"message": "Provider returned error", "code": 400}) and puts
// the provider's own answer in metadata.raw, as a string (the upstream
// body as it came: OpenAI's {"error": {"message", "type", "param",
// "code"}}, Anthropic's {"type": "error", "error": {…}}, or plain text
// such as Cloudflare's "error code: 1015") or as JSON, beside the
// provider's name in metadata.provider_name
// (testdata/real_pyd_openrouter_thinking_false_on_always_on_route.http;
// open-webui/computer#293, diegosouzapw/OmniRoute#3044,
// reVrost/go-openrouter#21 quote the same shape). The generic message
// tells the caller nothing; the upstream one says what to fix.
type upstreamError struct {
	// err holds the upstream message, type, param and code; only the
	// message when raw was plain text.
	err wireError
	// provider is metadata.provider_name ("OpenAI", "Anthropic").
	provider string
	// requestID is the request id the upstream's body gave beside its
	// error ("request_id"): the upstream's, not the router's, so kept
	// apart from the error's own request id.
	requestID string
	// status is the google.rpc.Status name of a Google upstream's error
	// ("INVALID_ARGUMENT"), which classifies its message.
	status string
}

// signatureRefused reports whether the upstream refused reasoning state
// as another account's or platform's, in its own words: Gemini's
// "Corrupted thought signature." (provider.GoogleSignatureRefused), as
// OpenRouter relays it from Google AI Studio (OpenRouterTeam/
// ai-sdk-provider#418, massgen/MassGen#665), and Anthropic's "Invalid
// `signature` in `thinking` block", Bedrock's without the backticks
// (provider.AnthropicSignatureRefused; linanwx/nagobot#21 from Amazon
// Bedrock). The words are the upstream's own message, not a text that
// quotes them: OpenRouter's "Gemini models require OpenRouter reasoning
// details to be preserved…" wraps another refusal (a missing signature)
// in plain text and is not one.
func (up *upstreamError) signatureRefused() bool {
	msg := string(up.err.Message)
	return provider.GoogleSignatureRefused(up.status, msg) || provider.AnthropicSignatureRefused(msg)
}

// upstream reads the upstream error in the error's metadata; nil when the
// metadata has no raw, or one with no message in it.
func (we *wireError) upstream() *upstreamError {
	if !isPresent(we.Metadata) {
		return nil
	}
	var md struct {
		Raw          json.RawMessage `json:"raw"`
		ProviderName flexString      `json:"provider_name"`
	}
	if json.Unmarshal(we.Metadata, &md) != nil || !isPresent(md.Raw) {
		return nil
	}
	body := bytes.TrimSpace(md.Raw)
	if body[0] == '"' {
		var s string
		if json.Unmarshal(body, &s) != nil {
			return nil
		}
		body = []byte(strings.TrimSpace(s))
	}
	up := &upstreamError{provider: strings.TrimSpace(string(md.ProviderName))}
	if len(body) > 0 && body[0] == '{' {
		up.requestID = strings.TrimSpace(bodyRequestID(body))
	}
	up.status = googleStatusName(body)
	if !upstreamObject(body, &up.err) {
		// Not an error object: the text is the upstream's message.
		if len(body) > 0 && (body[0] == '{' || body[0] == '[') || provider.IsMarkup(body) {
			// JSON with no error in it, or a proxy's error page: nothing
			// the router's own message does not say.
			return nil
		}
		up.err.Message = flexString(strings.ToValidUTF8(string(body), "\uFFFD"))
	}
	if strings.TrimSpace(string(up.err.Message)) == "" {
		return nil
	}
	return up
}

// googleStatusName is the status name of a google.rpc.Status error body,
// alone or in an array ({"error": {"code": 400, "message": …, "status":
// "INVALID_ARGUMENT"}}); "" for any other body.
func googleStatusName(body []byte) string {
	if len(body) > 0 && body[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return ""
		}
		body = bytes.TrimSpace(arr[0])
	}
	var v struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &v) != nil || !isStatusName(v.Error.Status) {
		return ""
	}
	return v.Error.Status
}

// upstreamObject reads an upstream error body into we: its "error" object
// (OpenAI, Anthropic, Google; Google's alone in an array too), or its
// "error" string, or the body itself when it has a message at its top
// (vLLM's {"object": "error", "message": …}). False when body is no JSON
// object, or one with none of these.
func upstreamObject(body []byte, we *wireError) bool {
	if len(body) > 0 && body[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return false
		}
		body = bytes.TrimSpace(arr[0])
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil || env == nil {
		return false
	}
	if e, ok := env["error"]; ok && isPresent(e) {
		e = bytes.TrimSpace(e)
		if e[0] == '"' {
			var s string
			if json.Unmarshal(e, &s) != nil {
				return false
			}
			we.Message = flexString(s)
			return true
		}
		return json.Unmarshal(e, we) == nil
	}
	if _, ok := env["message"]; ok {
		return json.Unmarshal(body, we) == nil
	}
	if _, ok := env["msg"]; ok {
		// {"code": 400, "msg": "invalid request, invalid parameter",
		// "request_id": …}: AtlasCloud's, relayed by OpenRouter
		// (testdata/real_maruel_openrouter_qwen35_sqrt_required_err.http),
		// the form of the Chinese clouds' APIs; it was no error object, so
		// the router's "Provider returned error" stood alone.
		var v struct {
			Msg  flexString `json:"msg"`
			Code flexString `json:"code"`
		}
		if json.Unmarshal(body, &v) != nil {
			return false
		}
		we.Message, we.Code = v.Msg, v.Code
		return true
	}
	return false
}

// applyUpstream puts the upstream error's words in e, which was built from
// the router's own error: its message replaces the router's, its param
// fills a param the router did not name, and its code (or type) replaces
// the router's, which only repeats the status (OpenRouter's 400, 429);
// the provider's name goes to the error's extended details. The kind the
// router's status or code gave stays; the caller refines it by the
// upstream words.
func applyUpstream(e *provider.Error, up *upstreamError) {
	e.Message = strings.TrimSpace(string(up.err.Message))
	if e.Param == "" {
		e.Param = string(up.err.Param)
	}
	if e.Param == "" {
		e.Param = paramFromMessage(e.Message)
	}
	code := string(up.err.Code)
	if _, err := strconv.Atoi(code); err == nil || code == "" {
		code = string(up.err.Type)
	}
	if _, err := strconv.Atoi(code); code != "" && err != nil {
		e.Code = code
	}
	if up.provider != "" {
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extUpstreamProvider] = validUTF8(up.provider)
	}
	if up.requestID != "" {
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extUpstreamRequestID] = validUTF8(up.requestID)
	}
}

// routerRateLimit is the rate-limit state OpenRouter puts in an error
// body instead of its headers: a 429 for its own limits (free models per
// minute or per day) carries error.metadata.headers {"X-RateLimit-Limit":
// "50", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": the reset's
// Unix time in milliseconds} (Gitlawb/openclaude#936,
// Avarok-Cybersecurity/atlas#543 quote it), read as the same headers
// would be (bareRateLimit). Without it the error had no rate-limit state:
// nothing said the day's budget was spent until its reset, so the retry
// policy retried a request that cannot succeed before then. nil when the
// body has no such headers.
func routerRateLimit(raw []byte, h http.Header) *llmrelayv1.RateLimit {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	return routerErrorRateLimit(body.Error, h)
}

// routerErrorRateLimit is routerRateLimit of the error object itself: a
// stream's in-band error (OpenRouter sends an error met after the 200 in
// a chunk, its error object shaped as in an error answer: its Errors
// page), whose error.metadata.headers were not read (testdata/
// dialect_openrouter_stream_rate_limited_per_min.http).
func routerErrorRateLimit(errObj json.RawMessage, h http.Header) *llmrelayv1.RateLimit {
	var e struct {
		Metadata struct {
			Headers map[string]json.RawMessage `json:"headers"`
		} `json:"metadata"`
	}
	if !isPresent(errObj) || json.Unmarshal(errObj, &e) != nil || len(e.Metadata.Headers) == 0 {
		return nil
	}
	rh := http.Header{}
	if d := h.Get("Date"); d != "" {
		rh.Set("Date", d)
	}
	for k, v := range e.Metadata.Headers {
		lk := strings.ToLower(k)
		if lk != "x-ratelimit-limit" && lk != "x-ratelimit-remaining" && lk != "x-ratelimit-reset" {
			continue
		}
		var s flexString
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		rh.Set(k, string(s))
	}
	return bareRateLimit(nil, rh)
}

// withRouterRateLimit gives an in-band error the rate-limit state its
// error object carries (routerErrorRateLimit), unless it has one. Not
// inlined: the stream's handle, whose frame an idle stream's stack keeps,
// calls it (server's TestIdleStreamStack).
//
//go:noinline
func withRouterRateLimit(e *provider.Error, errObj json.RawMessage, h http.Header) {
	if e.Meta.GetRateLimit() != nil {
		return
	}
	if rl := routerErrorRateLimit(errObj, h); rl != nil {
		if e.Meta == nil {
			e.Meta = &llmrelayv1.ResponseMeta{}
		}
		e.Meta.RateLimit = rl
	}
}
