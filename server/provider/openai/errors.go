package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// httpError builds the *provider.Error of a non-2xx response.
func (p *Provider) httpError(resp *http.Response, model string, sec secrets) *provider.Error {
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	if fixed, ok := provider.CloseTruncatedJSON(raw); ok {
		// Cut inside its JSON (the connection closed, a limit cut a long
		// body): what was complete of it, its message and type, which
		// say what the status cannot (a spent quota, the delay).
		raw = fixed
	}
	e := p.bodyError(raw, resp, model, sec)
	if e == nil {
		// No error object in the body (HTML from a proxy, empty body):
		// classification from the status alone.
		e = provider.NewHTTPError(p.name, resp, p.requestIDHeader())
		if msg := provider.PlainTextMessage(raw); msg != "" {
			// A proxy's words in plain text (Envoy's reset reason),
			// as Gemini's and Ollama's adapters keep them.
			e.Message = sec.redact(msg)
		}
		e.RequestID = p.errorRequestID(resp.Header, e.Message)
		if p.azure && model != "" {
			e.Extended = map[string]any{extAzureDeployment: model}
		}
	}
	if rerr != nil && e.Err == nil {
		e.Err = fmt.Errorf("reading error body: %w", rerr)
	}
	google := e.Meta.GetRateLimit() // a Google status's quota windows (googleStatusError)
	e.Meta = p.errorMeta(resp.Header, model)
	if e.Meta.RateLimit == nil {
		e.Meta.RateLimit = routerRateLimit(raw, resp.Header)
	}
	if google != nil {
		if e.Meta.RateLimit == nil {
			e.Meta.RateLimit = google
		} else {
			e.Meta.RateLimit.Windows = append(e.Meta.RateLimit.Windows, google.Windows...)
		}
	}
	paymentRequired(e)
	capacityExceeded(e)
	vendorReset(e, resp.Header)
	return e
}

// statusCapacityExceeded is the status Groq answers a flex-tier request
// with when the tier has no capacity left (its Flex Processing page:
// "requests will fail quickly with status 498 and error
// capacity_exceeded. Add jittered backoff and retries"). No standard
// status has the number, so the status table read it as an invalid
// request: not retried, not a reason to fall back.
const statusCapacityExceeded = 498

// capacityExceeded reads Groq's 498 as what its documentation says: the
// provider's capacity, transient (Unavailable), retried as the provider
// advises (RetryAdvised, unless its x-should-retry said otherwise), and
// a reason to fall back once the retries are spent.
func capacityExceeded(e *provider.Error) {
	if e.HTTPStatus != statusCapacityExceeded {
		return
	}
	e.Kind = provider.KindUnavailable
	if e.ShouldRetry == provider.RetryUnsaid {
		e.ShouldRetry = provider.RetryAdvised
	}
}

// messageRequestIDRE matches the request id OpenAI's server errors name
// in their message for its help center: "… if the error persists.
// (Please include the request ID req_23c32c4251b3cab04bce519f14d4801f in
// your message.)", in older answers a bare 32-digit hex id ("… request
// ID 44fa8f95f731a58124b775d316c1b044 in your message.").
var messageRequestIDRE = regexp.MustCompile(`(?i)\binclude the request id ((?:req_)?[0-9a-f]{16,64})\b`)

// errorRequestID is the request id of an error answer or event: its
// headers' (requestID), else the one its message names
// (messageRequestIDRE), which is all a caller has to quote to OpenAI's
// support when what stands in front of the API dropped the header.
func (p *Provider) errorRequestID(h http.Header, msg string) string {
	if id := p.requestID(h); id != "" {
		return id
	}
	if m := messageRequestIDRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return provider.OllamaCloudRef(msg) // ollama.com's, through Ollama's /v1 route
}

// inBand completes an error reported inside a 2xx answer (a stream's
// error event, response.failed) with what the answer's head said: the
// request id (errorRequestID), and, for a rate limit or an unavailable
// provider that named no delay of its own, the head's Retry-After. Azure
// refuses a throttled Responses stream so: a 200 with retry-after: 4,
// then an error event rate_limit_exceeded and response.failed ("Your
// requests to … have exceeded rate limit."; a proxy's capture of the live
// service found the header on every refused stream and on no answered
// one); the retry came after the policy's millisecond backoff, into the
// same refusal.
func (p *Provider) inBand(e *provider.Error, h http.Header) {
	e.RequestID = p.errorRequestID(h, e.Message)
	vendorReset(e, h)
	if e.RetryAfter != 0 || e.ShouldRetry == provider.RetryDiscouraged || provider.QuotaSpent(e.Code) ||
		(e.Kind != provider.KindRateLimited && e.Kind != provider.KindUnavailable) {
		return
	}
	e.RetryAfter = provider.RetryAfter(h, provider.ResponseDate(h))
}

// paymentRequired codes a 402 as what it says, the account's credits or
// balance spent (OpenRouter's "insufficient credits", NVIDIA's expired
// cloud credits: testdata/dialect_openrouter_err_402.http,
// dialect_nvidia_err_402.http): provider.KindForStatus already reads it
// as an exhausted quota; the code says so as OpenAI's insufficient_quota
// 429 does. A code of the provider's own is kept; none, or the status
// repeated (OpenRouter's "code": 402), becomes insufficient_quota.
func paymentRequired(e *provider.Error) {
	if e.HTTPStatus != http.StatusPaymentRequired || e.Kind != provider.KindRateLimited {
		return
	}
	if e.Code == "" || e.Code == "402" {
		e.Code = "insufficient_quota"
	}
}

// errorMeta is what the headers of an answer that is an error report: the
// request id and rate-limit state (a 429's x-ratelimit-* headers are what
// the throttled caller needs), Azure's deployment.
func (p *Provider) errorMeta(h http.Header, model string) *llmrelayv1.ResponseMeta {
	meta := &llmrelayv1.ResponseMeta{}
	p.headerMeta(meta, h, model)
	return meta
}

// bodyError parses an error body of resp. It returns nil when the body
// holds no error object.
func (p *Provider) bodyError(raw []byte, resp *http.Response, model string, sec secrets) *provider.Error {
	if e := p.googleStatusError(raw, resp, sec); e != nil {
		e.RequestID = p.errorRequestID(resp.Header, e.Message)
		sec.redactError(e)
		return e
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil || env == nil {
		return nil
	}
	success := resp.StatusCode >= 200 && resp.StatusCode <= 299
	detailField := "" // the field a FastAPI "detail" names
	errRaw, ok := env["error"]
	if !ok || !isPresent(errRaw) {
		if e := p.baseRespError(env["base_resp"], resp, success); e != nil {
			e.RequestID = p.errorRequestID(resp.Header, e.Message)
			sec.redactError(e)
			return e
		}
		if e := p.problemError(env, resp, success); e != nil {
			e.RequestID = p.errorRequestID(resp.Header, e.Message)
			sec.redactError(e)
			return e
		}
		// vLLM and others: {"object":"error","message":...,"type":...,"code":400}
		if _, hasMsg := env["message"]; !hasMsg {
			// FastAPI servers (Voyage's /v1/embeddings, pydantic-ai's
			// recording): {"detail":"..."}, or for a request that fails
			// validation {"detail":[{"loc":[...],"msg":"..."}]}.
			var d string
			d, detailField = fastAPIDetail(env["detail"])
			if d == "" {
				return nil
			}
			errRaw = mustJSON(d)
		} else {
			errRaw = raw
		}
	}
	upstream := ""
	if len(errRaw) > 0 && errRaw[0] == '"' {
		// Pollinations answers {"error": "400 Bad Request", "status": 400,
		// "details": {"error": {message, type, param, code}, "provider":
		// "openai"}}: the string is the status's text, the upstream's
		// error object (the message that says what was refused) is in
		// details (maruel/genai's cassette,
		// testdata/real_maruel_pollinations_gemini_schema_err.http).
		var det struct {
			Error    json.RawMessage `json:"error"`
			Provider string          `json:"provider"`
		}
		if json.Unmarshal(env["details"], &det) == nil && len(det.Error) > 0 && det.Error[0] == '{' {
			errRaw, upstream = det.Error, det.Provider
		}
	}
	if upstream == "" {
		// Portkey's gateway (and TrueFoundry's) prefix the provider's
		// message with "<provider> error: " (errors_litellm.go,
		// gatewayPrefixed).
		if raw2, prov := gatewayPrefixed(env, errRaw); prov != "" {
			errRaw, upstream = raw2, prov
		}
	}
	var e *provider.Error
	if success {
		// An error object in a success response: classified by its code.
		e = p.errorFromObject(errRaw, resp.StatusCode, model, nil)
	} else {
		e = p.errorFromObject(errRaw, resp.StatusCode, model, provider.NewHTTPError(p.name, resp, p.requestIDHeader()))
	}
	var errType string
	if t, ok := env["error_type"]; ok && json.Unmarshal(t, &errType) != nil {
		errType = ""
	}
	applyErrorType(e, errType, success)
	if e.Param == "" {
		e.Param = detailField
	}
	if upstream != "" {
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extUpstreamProvider] = validUTF8(upstream)
	}
	e.RequestID = p.errorRequestID(resp.Header, e.Message)
	if e.RequestID == "" {
		// DashScope's error bodies carry it beside the error object
		// ("request_id": "ixv8GZ_SpiR8Voog" in
		// testdata/real_maruel_qwen3_30b_a3b_required_thinking_error.http,
		// whose headers have none; it was dropped).
		e.RequestID = validUTF8(bodyRequestID(raw))
	}
	if e.RequestID == "" && !success {
		// Together's error answer carries its request id beside the error
		// ({"id": "oPBSiFu-zqrih-9addf27bee29a320", "error": {…}}, the id
		// its x-request-id header repeats: maruel/genai's cassette, which
		// kept no such header, testdata/real_maruel_together_err_401.http).
		// Inside a 2xx the id is the answer's, not the request's.
		var id string
		if json.Unmarshal(env["id"], &id) == nil {
			e.RequestID = validUTF8(id)
		}
	}
	sec.redactError(e)
	return e
}

// googleStatusError reads the error answer of a Google API behind its
// OpenAI-compatible endpoint (Gemini's generativelanguage.googleapis.com
// /v1beta/openai, Vertex AI's): a google.rpc.Status, alone in an array
// ([{"error": {"code": 429, "message": …, "status": "RESOURCE_EXHAUSTED",
// "details": […]}}], as n4ze3m/page-assist#406 and docbrain-ai/docbrain#22
// quote Gemini's) or not. Its message, its status (and ErrorInfo reason)
// as the code, and its details as the gemini adapter reads them
// (provider.ApplyGoogleDetails: RetryInfo, QuotaFailure, Help, BadRequest);
// the kind from the status, refined as Gemini's. The array was no error
// object at all, which left the status's text as the message and lost
// every detail. nil for any other body, and inside 2xx.
func (p *Provider) googleStatusError(raw []byte, resp *http.Response, sec secrets) *provider.Error {
	t := bytes.TrimSpace(raw)
	if resp.StatusCode < 300 || len(t) == 0 {
		return nil
	}
	var st *provider.GoogleStatus
	switch t[0] {
	case '[':
		var arr []struct {
			Error *provider.GoogleStatus `json:"error"`
		}
		if json.Unmarshal(t, &arr) != nil || len(arr) == 0 {
			return nil
		}
		st = arr[0].Error
	case '{':
		// A google.rpc.Status has a numeric code and a status name, which
		// no OpenAI-style error object has.
		var probe struct {
			Error struct {
				Code   *int    `json:"code"`
				Status *string `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal(t, &probe) != nil || probe.Error.Code == nil || probe.Error.Status == nil || !isStatusName(*probe.Error.Status) {
			return nil
		}
		var env struct {
			Error *provider.GoogleStatus `json:"error"`
		}
		if json.Unmarshal(t, &env) != nil {
			return nil
		}
		st = env.Error
	default:
		return nil
	}
	if st == nil || (strings.TrimSpace(st.Message) == "" && st.Status == "") {
		return nil
	}
	e := provider.NewHTTPError(p.name, resp, p.requestIDHeader())
	if m := strings.TrimSpace(st.Message); m != "" {
		e.Message = m
	}
	e.Code = st.Status
	reason := provider.ApplyGoogleDetails(e, st.Details, sec.redact)
	if reason != "" {
		e.Code = st.Status + "/" + reason
	}
	if e.RetryAfter == 0 && e.ShouldRetry != provider.RetryDiscouraged && st.Status == "RESOURCE_EXHAUSTED" {
		// No RetryInfo: the delay the message states ("Please retry in
		// 34.237795071s.", the Gemini API's words beside it).
		e.RetryAfter = retryDelayFromMessage(e.Message)
	}
	// Only where the request can go again with Google's placeholder
	// (buildChatRequest): Google's own host.
	e.SignatureRefused = p.googleCompat && provider.GoogleSignatureRefused(st.Status, e.Message)
	switch {
	case reason == "API_KEY_INVALID" || reason == "API_KEY_EXPIRED" || st.Status == "UNAUTHENTICATED":
		e.Kind = provider.KindUnauthenticated
	case st.Status == "INVALID_ARGUMENT" && (looksLikeContextLength(e.Message) || strings.Contains(strings.ToLower(e.Message), "exceeds the maximum number of tokens")):
		e.Kind = provider.KindContextLength
	case st.Status == "PERMISSION_DENIED", provider.GoogleDeploymentRefused(st.Status, e.Message),
		// Vertex AI's OpenAI-compatible endpoint refusing the model to
		// the project (400 FAILED_PRECONDITION "Project `…` is not
		// allowed to use Publisher Model `…`"), as the gemini adapter
		// reads it (provider.ModelAccessRefused).
		provider.ModelAccessRefused(e.Message):
		e.Kind = provider.KindPermissionDenied
	case provider.GoogleCapacityExhausted(st.Status, reason, e.Message):
		// The model's shared capacity (Vertex AI's pay-as-you-go 429),
		// not the caller's quota (provider.GoogleCapacityExhausted).
		e.Kind = provider.KindUnavailable
	case st.Status == "RESOURCE_EXHAUSTED":
		e.Kind = provider.KindRateLimited
		if provider.GoogleCreditsSpent(st.Status, st.Code, st.Message) {
			e.ShouldRetry = provider.RetryDiscouraged
			e.RetryAfter = 0
		}
	}
	// Each quota violation is a window of the rate limit, as the gemini
	// adapter reads it: Google sends its quotas in the body, no header
	// (httpError keeps them beside what the headers say).
	if rl := provider.GoogleQuotaWindows(nil, e.Quota, provider.ResponseDate(resp.Header), e.RetryAfter); rl != nil {
		e.Meta = &llmrelayv1.ResponseMeta{RateLimit: rl}
	}
	return e
}

// googleCreditsSpent marks a google.rpc.Status error object read as an
// OpenAI one (Gemini's OpenAI-compatible endpoint inside a 200 stream:
// {"error":{"code":429,"message":"Your prepayment credits are
// depleted…","status":"RESOURCE_EXHAUSTED"}}) that says the prepaid
// credits are spent: a spent quota, not retried, as googleStatusError
// reads the same status in an error answer (provider.GoogleCreditsSpent).
func googleCreditsSpent(e *provider.Error, obj []byte) {
	if len(obj) == 0 || obj[0] != '{' || !bytes.Contains(obj, []byte("RESOURCE_EXHAUSTED")) {
		return
	}
	var st struct {
		Code   flexInt `json:"code"`
		Status string  `json:"status"`
	}
	if json.Unmarshal(obj, &st) != nil || !provider.GoogleCreditsSpent(st.Status, int(st.Code), e.Message) {
		return
	}
	e.Kind = provider.KindRateLimited
	e.ShouldRetry = provider.RetryDiscouraged
	e.RetryAfter = 0
}

// isStatusName reports whether s reads as a google.rpc.Code name
// ("RESOURCE_EXHAUSTED", "INVALID_ARGUMENT"): capitals and underscores.
func isStatusName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return true
}

// fastAPIDetail is the text of a FastAPI error's "detail": the string, or
// the "loc: msg" of each validation failure joined with "; "; "" when it
// is neither. field is the request body field the first failure names
// (its loc after "body": ["body","max_completion_tokens"] is
// max_completion_tokens, ["body","messages",0,"content"] is
// messages.0.content), the BadRequest field violation as OpenAI's
// "param" gives it; "" when no failure is in the body.
func fastAPIDetail(raw json.RawMessage) (text, field string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), ""
	}
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return "", ""
	}
	var parts []string
	for _, it := range items {
		if it.Msg == "" {
			continue
		}
		loc := make([]string, 0, len(it.Loc))
		for _, l := range it.Loc {
			loc = append(loc, fmt.Sprint(l))
		}
		if len(loc) > 0 {
			parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
		} else {
			parts = append(parts, it.Msg)
		}
		if field == "" && len(loc) > 1 && loc[0] == "body" {
			field = strings.Join(loc[1:], ".")
		}
	}
	return strings.Join(parts, "; "), field
}

// messageDetail reads a "message" that is an object holding a FastAPI
// validation failure, as api.mistral.ai's 422 answers give it
// ({"object":"error","message":{"detail":[{"type":"extra_forbidden",
// "loc":["body","max_completion_tokens"],"msg":"Extra inputs are not
// permitted",…}]},…}, testdata/dialect_mistral_err_422_extra_forbidden.http):
// the "loc: msg" of each failure and the field of the first, as
// fastAPIDetail writes them; "" for any other message.
func messageDetail(m string) (text, field string) {
	if !strings.HasPrefix(m, "{") {
		return "", ""
	}
	var obj struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal([]byte(m), &obj) != nil || !isPresent(obj.Detail) {
		return "", ""
	}
	return fastAPIDetail(obj.Detail)
}

// messageParam matches the field OpenAI's own validation messages quote
// first ("Invalid 'input[0]': maximum input length is 8192 tokens.",
// "Invalid type for 'messages[0].content': …", "Missing required
// parameter: 'tools[0].function'."), which its "param" usually repeats
// but not always (testdata/embed_error_openai_400_input_length.http has
// "param": null).
var messageParam = regexp.MustCompile(`^(?:Invalid|Invalid (?:type|value) for|Missing required parameter:|Unsupported parameter:|Unknown parameter:) '([^'\s]+)'`)

// responseFormatTypeRefused matches Groq's refusal of a response format
// type the model has not ("This model does not support response format
// `json_schema`. See supported models at …"), sent with "param":
// "response_format" (testdata/real_maruel_groq_compound_mini_json_schema_err.http,
// December 2025) or with none (real_maruel_groq_llama31_json_schema_stream_err.http,
// July 2025).
var responseFormatTypeRefused = regexp.MustCompile("^This model does not support response format `[a-z_]+`")

// responseFormatParam is the part of response_format a refusal blames
// when its param names the whole format (or nothing) and its message says
// which part: the type the model lacks (Groq's refusal above; OpenAI's
// "Invalid parameter: 'response_format' of type 'json_object' is not
// supported with this model.") or the schema (OpenAI's strict-mode
// refusals "Invalid schema for response_format 'X': In context=(…), …",
// "param": "response_format": testdata/openai_err_400_strict_schema_required.http).
// "" leaves the param as it is.
func responseFormatParam(param, msg string) string {
	switch {
	case param != "" && param != "response_format":
		return ""
	case responseFormatTypeRefused.MatchString(msg), strings.HasPrefix(msg, "Invalid parameter: 'response_format' of type '"):
		return "response_format.type"
	case param == "response_format" && strings.HasPrefix(msg, "Invalid schema for response_format"):
		return "response_format.json_schema.schema"
	}
	return ""
}

// paramFromMessage is the field a message quotes as messageParam reads
// it; "" when it quotes none that way.
func paramFromMessage(msg string) string {
	if m := messageParam.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// errorFromObject builds an error from an "error" value: an object
// {message,type,param,code[,innererror]} or a bare string. base, when
// non-nil, carries the status-derived fields; otherwise this is an error
// inside a 2xx response (stream error event, error body with status 200)
// and Kind comes from the type/code alone.
func (p *Provider) errorFromObject(errRaw json.RawMessage, status int, model string, base *provider.Error) *provider.Error {
	e := base
	if e == nil {
		e = &provider.Error{Provider: p.name, HTTPStatus: status, Kind: provider.KindUnavailable}
	}
	var we wireError
	t := bytes.TrimSpace(errRaw)
	switch {
	case len(t) > 0 && t[0] == '"':
		var s string
		if err := json.Unmarshal(t, &s); err == nil {
			we.Message = flexString(s)
		}
	default:
		if err := json.Unmarshal(t, &we); err != nil {
			// Keep the status classification; the body is not usable.
			e.Err = fmt.Errorf("unparseable error body: %w", err)
			return e
		}
	}
	e.Param = string(we.Param)
	if m := strings.TrimSpace(string(we.Message)); m != "" {
		e.Message = m
		if d, field := messageDetail(m); d != "" {
			e.Message = d
			if e.Param == "" {
				e.Param = field
			}
		}
	}
	if e.Param == "" {
		// The field the message blames, where "param" is null: the
		// BadRequest field violation the gRPC status carries.
		e.Param = paramFromMessage(e.Message)
	}
	if f := responseFormatParam(e.Param, e.Message); f != "" {
		e.Param = f
	}
	e.Code = string(we.Code)
	if e.Code == "" {
		e.Code = string(we.Type)
	} else if string(we.Type) != e.Code {
		e.Type = string(we.Type)
	}
	if base == nil {
		e.Kind = kindForCode(string(we.Type), string(we.Code))
		if we.Type == "" && we.Code == "" && we.HTTPStatusCode >= 400 && we.HTTPStatusCode <= 599 {
			// text-generation-inference's error event names only the
			// status the error would have had
			// (testdata/dialect_tgi_stream_error_event.http).
			e.Kind = provider.KindForStatus(int(we.HTTPStatusCode))
			if we.HTTPStatusCode == http.StatusFailedDependency {
				// TGI's status for an error of the generation itself.
				e.Kind = provider.KindUnavailable
			}
			e.Code = strconv.FormatInt(int64(we.HTTPStatusCode), 10)
		}
		if e.Code == "402" && e.Kind == provider.KindRateLimited {
			// The status a 402 would have had, inside a 200 (OpenRouter's
			// {"error":{"code":402,...}} event): credits spent, coded as
			// paymentRequired codes the HTTP 402, so it is not retried.
			e.Code = "insufficient_quota"
		}
	}
	up := we.upstream()
	var litellmNames []string
	if up == nil && status != 0 {
		// A LiteLLM proxy's wrapper around the provider's answer
		// (errors_litellm.go).
		up, litellmNames = litellmUpstream(e.Message)
	}
	if up != nil {
		applyUpstream(e, up)
	}
	p.refineKind(e, &we, status)
	if k := litellmKind(litellmNames); k != provider.KindUnknown && e.Kind == provider.KindInvalidRequest {
		// LiteLLM's own classification of a 400 the words below may
		// still refine.
		e.Kind = k
	}
	if up != nil {
		// The upstream's code and words classify too (its
		// context_length_exceeded under the router's bare 400).
		p.refineKind(e, &up.err, status)
		if provider.AnthropicSpendLimit(e.Message) && e.Kind == provider.KindInvalidRequest {
			// Anthropic's spend limit as a relay wraps it (LiteLLM's
			// 400 BadRequestError, BerriAI/litellm#37599): the
			// account's quota, as the anthropic adapter reads it.
			e.Kind, e.ShouldRetry = provider.KindRateLimited, provider.RetryDiscouraged
		}
		if up.signatureRefused() {
			// Only where the request can go again without the state
			// (buildChatRequest, relayWithoutSignatures): the relays
			// that carry it back.
			e.SignatureRefused = p.relaysReasoningState()
		}
	}
	googleCreditsSpent(e, t)
	if (e.Kind == provider.KindContextLength || provider.OllamaOutOfMemory(e.Message) || provider.OllamaLoadFailed(e.Message)) && status >= 500 {
		// The same input fails every time (Ollama's and llama.cpp's 500s
		// for an input too long): not a server fault to retry; nor does
		// a model larger than an Ollama host's free memory load a moment
		// later (provider.OllamaOutOfMemory), nor one its runner failed
		// to load (provider.OllamaLoadFailed).
		e.ShouldRetry = provider.RetryDiscouraged
		e.Message += provider.OllamaLoadAdvice(e.Message)
	}
	if e.RetryAfter == 0 {
		e.RetryAfter = retryDelayFromMessage(e.Message)
	}
	// The vendors' own words and codes (Z.ai's business codes, Kimi's
	// types, spent balances), the upstream's too.
	vendorError(e, &we)
	if up != nil {
		vendorError(e, &up.err)
	}
	rateLimitQuota(e, string(we.Type))
	if p.azure && model != "" {
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extAzureDeployment] = model
	}
	if fg := we.FailedGeneration; fg != nil && *fg != "" {
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extFailedGeneration] = *fg
	}
	return e
}

// applyErrorType reads text-generation-inference's error_type, the
// classification it sends beside a string error ({"error": "Input
// validation error: …", "error_type": "validation"}), as the error's code;
// inside a 2xx response (a stream's error event, where the status says
// nothing) it also classifies the error, unless the message already did
// (a context-length message).
func applyErrorType(e *provider.Error, errType string, success bool) {
	if errType == "" {
		return
	}
	if e.Code == "" {
		e.Code = errType
	}
	if !success || e.Kind == provider.KindContextLength {
		return
	}
	switch errType {
	case "validation", "tokenizer":
		e.Kind = provider.KindInvalidRequest
	case "overloaded":
		// TGI answers a full queue with 429 when it can.
		e.Kind = provider.KindRateLimited
	default: // generation, incomplete_generation: the generation broke
		e.Kind = provider.KindUnavailable
	}
}

// problemError reads an RFC 7807 problem body, {"status": 404, "title":
// "Not Found", "detail": "Function '…': Not found for account '…'"}, which
// NVIDIA's hosted API (integrate.api.nvidia.com) answers with: the detail
// (else the title) is the message, the HTTP status classifies it. nil for
// any other body, and inside 2xx (no such answer was seen).
func (p *Provider) problemError(env map[string]json.RawMessage, resp *http.Response, success bool) *provider.Error {
	if success {
		return nil
	}
	var detail, title string
	if json.Unmarshal(env["detail"], &detail) != nil || json.Unmarshal(env["title"], &title) != nil {
		return nil // absent (null) or not strings: not a problem body
	}
	if _, ok := env["status"]; !ok {
		return nil
	}
	e := provider.NewHTTPError(p.name, resp, p.requestIDHeader())
	if m := strings.TrimSpace(detail); m != "" {
		e.Message = m
	} else if m := strings.TrimSpace(title); m != "" {
		e.Message = m
	}
	if (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity) && looksLikeContextLength(e.Message) {
		e.Kind = provider.KindContextLength
	}
	return e
}

// billingCode reports whether code is one of OpenAI's billing codes that
// come under the type insufficient_quota (help.openai.com, "Troubleshooting
// API usage and spend limits"), each a spent quota (provider.QuotaSpent).
func billingCode(code string) bool {
	switch code {
	case "credit_balance_exhausted", "organization_spend_limit_exceeded", "project_spend_limit_exceeded", "organization_usage_limit_exceeded":
		return true
	}
	return false
}

// extModerationReasons is the key of OpenRouter's moderation reasons in an
// error's extended details.
const extModerationReasons = "moderation_reasons"

// extMiniMaxStatus is the key of MiniMax's base_resp.status_code in an
// error's extended details.
const extMiniMaxStatus = "minimax_status_code"

// baseRespError is the error a body's MiniMax base_resp reports, nil when
// there is none or its status_code is 0. Outside 2xx the HTTP status
// classifies it; the status message and code come from base_resp.
func (p *Provider) baseRespError(raw json.RawMessage, resp *http.Response, success bool) *provider.Error {
	if !isPresent(raw) {
		return nil
	}
	var b baseResp
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	e := p.minimaxError(&b, resp.StatusCode)
	if e == nil || success {
		return e
	}
	h := provider.NewHTTPError(p.name, resp, p.requestIDHeader())
	h.Message, h.Code, h.Extended = e.Message, e.Code, e.Extended
	if e.Code == "insufficient_quota" {
		h.Kind = provider.KindRateLimited
	}
	return h
}

// minimaxError converts MiniMax's base_resp ({"status_code": 1008,
// "status_msg": "insufficient balance"}), which MiniMax sends with HTTP 200
// on its OpenAI-compatible endpoint; nil when the status is 0 (success).
// The kinds follow MiniMax's error code table
// (platform.minimax.io/docs/api-reference/errorcode).
func (p *Provider) minimaxError(b *baseResp, status int) *provider.Error {
	if b == nil || b.StatusCode == 0 {
		return nil
	}
	code := strconv.FormatInt(int64(b.StatusCode), 10)
	e := &provider.Error{Provider: p.name, HTTPStatus: status, Code: code, Kind: provider.KindUnavailable,
		Message:  strings.TrimSpace(string(b.StatusMsg)),
		Extended: map[string]any{extMiniMaxStatus: float64(b.StatusCode)}}
	if e.Message == "" {
		e.Message = "MiniMax status " + code
	}
	switch b.StatusCode {
	case 1001:
		e.Kind = provider.KindTimeout
	case 1002, 1039, 1041, 2045: // rate, token, connection and growth limits
		e.Kind = provider.KindRateLimited
	case 1008, 2056: // insufficient balance, plan usage limit: not retried
		e.Kind, e.Code = provider.KindRateLimited, "insufficient_quota"
	case 1004, 2049: // not authorized, invalid API key
		e.Kind = provider.KindUnauthenticated
	case 1026, 1027: // input, output sensitive
		e.Kind = provider.KindContentFilter
	case 2013: // invalid parameters
		e.Kind = provider.KindInvalidRequest
	}
	if looksLikeContextLength(e.Message) {
		e.Kind = provider.KindContextLength
	}
	return e
}

// extFailedGeneration is the key of Groq's failed_generation in an error's
// extended details.
const extFailedGeneration = "failed_generation"

// redactError removes the call's credentials from the texts of an error
// the provider sent: its message, param, code and failed generation.
func (s secrets) redactError(e *provider.Error) {
	e.Message = s.redact(e.Message)
	e.Param = s.redact(e.Param)
	e.Code = s.redact(e.Code)
	e.Type = s.redact(e.Type)
	for _, v := range e.Quota {
		// rateLimitQuota's description is the message, as it was read.
		v.Description, v.QuotaId, v.QuotaMetric = s.redact(v.Description), s.redact(v.QuotaId), s.redact(v.QuotaMetric)
	}
	if fg, ok := e.Extended[extFailedGeneration].(string); ok {
		e.Extended[extFailedGeneration] = s.redact(fg)
	}
	if id, ok := e.Extended[extUpstreamRequestID].(string); ok {
		e.Extended[extUpstreamRequestID] = s.redact(id)
	}
}

// refineKind applies what the body says over the status classification.
func (p *Provider) refineKind(e *provider.Error, we *wireError, status int) {
	code, typ := string(we.Code), string(we.Type)
	e.SignatureRefused = reasoningStateRefused(code, e.Message)
	switch {
	case code == "context_length_exceeded" || typ == "context_length_exceeded" || typ == "exceed_context_size_error" ||
		// GitHub Models' per-request input cap: 413 tokens_limit_reached,
		// "Request body too large for gpt-4o model. Max size: 8000
		// tokens." (eslint/tsc-meetings#593;
		// testdata/dialect_github_err_413_tokens_limit_reached.http).
		code == "tokens_limit_reached" ||
		((status == 0 || status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusOK) && looksLikeContextLength(e.Message)):
		e.Kind = provider.KindContextLength
	case provider.OllamaContextOverflow(e.Message):
		// Ollama's own words for an input that does not fit, behind its
		// OpenAI-compatible endpoint: 400 invalid_request_error from the
		// versions that tell it apart, 500 api_error from older ones
		// (openai.NewError types by status). The native adapter reads
		// them as context-length errors whatever the status; so does
		// this one now, not a 500 to retry.
		e.Kind = provider.KindContextLength
	case status == http.StatusTooManyRequests && code == "" && provider.OllamaUsageLimit(e.Message):
		// ollama.com's plan limit through Ollama's /v1 routes ("you've
		// reached your hourly usage limit, please wait or upgrade to
		// continue", type api_error, code null): a spent quota, as the
		// ollama adapter codes it (provider.OllamaUsageLimit), not a
		// rate to retry seconds later.
		e.Kind = provider.KindRateLimited
		e.Code = "insufficient_quota"
	case status == http.StatusBadRequest && (typ == "invalid_model" || deepseekUnknownModelRE.MatchString(e.Message) || deepseekNoModelRE.MatchString(e.Message) ||
		openrouterUnknownModelRE.MatchString(e.Message) || siliconflowUnknownModelRE.MatchString(e.Message) ||
		hfNoProviderRE.MatchString(e.Message)) ||
		code == "model_not_found" || code == "model_decommissioned" || (status == http.StatusBadRequest && code == "model_not_available"):
		// A model the server does not have or no longer serves, answered
		// 400 where OpenAI and DashScope answer 404 model_not_found:
		// Mistral's and Perplexity's type invalid_model ("Invalid model:
		// bad model", code "1500"; "Invalid model 'bad model'. Permitted
		// models can be found in …", code 400), DeepSeek's
		// invalid_request_error "The supported API model names are
		// deepseek-v4-pro or deepseek-v4-flash, but you passed bad model."
		// (maruel/genai's recordings,
		// testdata/real_maruel_*_bad_model_stream_error.http) and its
		// "Model Not Exist" (deepseekNoModelRE), OpenRouter's
		// "bad/model is not a valid model ID" (code 400), SiliconFlow's
		// {"code":20012,"message":"Model does not exist. Please check it
		// carefully."}, Together's 400 model_not_available ("Unable to
		// access non-serverless model …",
		// testdata/dialect_together_err_400_model_not_available.http),
		// Hugging Face's router's "The requested model '…' is not
		// supported by any provider you have enabled."
		// (testdata/dialect_hf_err_400_model_not_supported.http).
		// Whatever the status (a 200 stream's error too): the code
		// model_not_found, OpenAI's own, which Hugging Face's router sends
		// with a 400 (testdata/real_maruel_hf_bad_model_err.http), and
		// Groq's model_decommissioned (400 "The model `…` has been
		// decommissioned and is no longer supported",
		// testdata/dialect_groq_err_400_model_decommissioned.http).
		// The contract's not-found kind is the unknown model's, whatever
		// the status; they were invalid requests.
		e.Kind = provider.KindNotFound
	case provider.ModelAccessRefused(e.Message):
		// The model refused to this deployment in its provider's words
		// (Bedrock's "You don't have access to the model with the
		// specified model ID.", relayed in an OpenAI-shaped error):
		// permission denied, as the adapters read it at its own status.
		e.Kind = provider.KindPermissionDenied
	case (status == http.StatusNotFound || status < 300) && provider.OpenRouterNoEndpoints(e.Message):
		// OpenRouter's 404 "No endpoints found that support tool use. …"
		// (or "… image input"): the model exists, none of its providers
		// has the capability. A capability refusal, not a model not found
		// (provider.OpenRouterNoEndpoints); still never retried, still a
		// fallback.
		e.Kind = provider.KindCapability
	case provider.OllamaRefusalKind(e.Message) != provider.KindUnknown:
		// Ollama's refusal of what the model cannot do, through its OpenAI
		// routes as through its own: a capability ("registry.ollama.ai/
		// library/gemma3:1b does not support tools", 400
		// invalid_request_error) or an operation ("this model does not
		// support embeddings", 500 api_error, as Azure's
		// OperationNotSupported below): the deployment's model.
		e.Kind = provider.OllamaRefusalKind(e.Message)
	case provider.CapabilityRefusalAt(status, e.Message):
		// A capability the deployment's model (or server) lacks, in the
		// provider's own words: DeepSeek's "deepseek-reasoner does not
		// support Function Calling", vLLM's "\"auto\" tool choice requires
		// --enable-auto-tool-choice and --tool-call-parser to be set",
		// OpenAI's "Invalid content type. image_url is only supported by
		// certain models.", xAI's tool refusal, Gemini's "Function calling
		// is not enabled for models/…" through its compatible endpoint
		// (provider.CapabilityRefusal); OpenRouter's 404 "No endpoints
		// found that support tool use. …" and llama.cpp's 500 "tools param
		// requires --jinja flag" under their own status only
		// (provider.CapabilityRefusalAt). A 400 invalid_request_error, but a
		// model with the capability serves the same request: never
		// retried, a reason to fall back; they were invalid requests (the
		// 404 an unknown model, the 500 a server fault retried).
		e.Kind = provider.KindCapability
		if status >= 500 {
			// The status alone would have the call retried.
			e.ShouldRetry = provider.RetryDiscouraged
		}
	case code == "OperationNotSupported":
		// Azure OpenAI's answer to an operation the deployment's model
		// does not do: "The embeddings operation does not work with the
		// specified model, gpt-35-turbo. …" (OpenHands/OpenHands#1003),
		// "The chatCompletion operation does not work with the specified
		// model, text-embedding-3-large. …" (langchain-ai/langmem#13), a
		// 400 with no type. The deployment cannot serve the operation,
		// whatever the request holds: the operation is unsupported there
		// (as on a provider without it), not a malformed request.
		e.Kind = provider.KindUnsupported
	case (status == http.StatusBadRequest || status == 0) && groqNoChatRE.MatchString(e.Message):
		// Groq's answer to chat completions asked of a model that does not
		// chat (a speech model): "The model canopylabs/orpheus-arabic-saudi
		// does not support chat completions" (400 invalid_request_error,
		// langflow-ai/langflow#11120): the operation is unsupported by the
		// deployment's model, as Azure's OperationNotSupported.
		e.Kind = provider.KindUnsupported
	case code == "model_terms_required":
		// Groq's 400 for a model whose terms the organization has not
		// accepted: "The model canopylabs/orpheus-arabic-saudi requires
		// terms acceptance. Please have the org admin accept the terms at
		// https://console.groq.com/playground?model=…"
		// (langflow-ai/langflow#11120): the model refused to this
		// organization until its admin acts, as Groq's 403 "blocked at the
		// organization level" and provider.ModelAccessRefused are:
		// permission denied, never retried, a route falls back (another
		// key's organization may have accepted them). It was an invalid
		// request.
		e.Kind = provider.KindPermissionDenied
	case status == http.StatusRequestEntityTooLarge && code == "rate_limit_exceeded":
		// Groq answers a request larger than a whole per-minute or
		// per-day limit with 413, type tokens, code rate_limit_exceeded
		// ("Request too large for model … on tokens per minute (TPM):
		// Limit 6000, Requested 12089, please reduce your message size",
		// testdata/dialect_groq_err_413_request_too_large.http): an
		// exhausted quota that waiting cannot fix, like OpenAI's 429 of
		// the same words (rateLimitQuota), not a malformed request.
		e.Kind = provider.KindRateLimited
	case inputTooLongRE.MatchString(e.Message):
		// An embedding input longer than the server takes, under a status
		// of its own: TEI's 413, llama.cpp's 500 (the same input fails
		// every time; not a server fault to retry).
		e.Kind = provider.KindContextLength
	case status == http.StatusForbidden && e.Message == "please check the api-key you provided":
		// Baseten's Model APIs refuse a key with 403 {"error": "please
		// check the api-key you provided"} (maruel/genai's recordings,
		// testdata/real_maruel_baseten_bad_key_err.http): the caller's
		// credentials, as a 401 is, not a permission of a valid key.
		e.Kind = provider.KindUnauthenticated
	case status == http.StatusForbidden && strings.HasPrefix(e.Message, "You are not allowed to request logprobs from this model"):
		// OpenAI refuses logprobs from its reasoning models (gpt-5-nano:
		// 403 invalid_request_error, code and param null: maruel/genai's
		// cassette, testdata/real_maruel_openai_gpt5nano_logprobs_err.http).
		// The key is allowed the model; the request asks what the model
		// does not give: an invalid request naming logprobs, not a
		// permission to fail over for (another deployment of the model
		// answers the same).
		e.Kind = provider.KindInvalidRequest
		if e.Param == "" {
			e.Param = "logprobs"
		}
	case provider.OllamaImageAdvice(e.Message) != "":
		// Under a 500: not retried either (the route may still fall back
		// to another model). A model without vision ("this model is
		// missing data required for image input") lacks a capability, as
		// the ollama adapter reads it; an image Ollama cannot decode is
		// the request's.
		e.Kind, e.ShouldRetry = provider.KindInvalidRequest, provider.RetryDiscouraged
		if provider.OllamaImageAdvice(e.Message) == provider.OllamaNoVisionAdvice {
			e.Kind = provider.KindCapability
		}
		if a := provider.OllamaImageAdvice(e.Message); !strings.HasSuffix(e.Message, a) {
			e.Message += a
		}
	case status == http.StatusInternalServerError && strings.Contains(e.Message, "Jinja Exception:"):
		// llama.cpp's server renders the conversation with the model's
		// chat template and answers the template's raise_exception with
		// 500 server_error ("Error: Jinja Exception: Conversation roles
		// must alternate user/assistant/user/assistant/...": gemma-3's
		// template refusing a tool turn, maruel/genai's cassette,
		// testdata/real_maruel_llama_gemma_sqrt_stream_2_err.http). The
		// template refuses the same conversation every time: the request
		// is at fault, not a server fault to retry or fall back on.
		e.Kind = provider.KindInvalidRequest
	case code == "content_filter" || sensitiveCode(code) || contentRiskRE.MatchString(e.Message) || policyFlagged(code, e.Message) ||
		(we.InnerError != nil && string(we.InnerError.Code) == "ResponsibleAIPolicyViolation"):
		e.Kind = provider.KindContentFilter
		if we.InnerError != nil && isPresent(we.InnerError.ContentFilterResult) {
			var v any
			if err := json.Unmarshal(we.InnerError.ContentFilterResult, &v); err == nil {
				e.Extended = map[string]any{extContentFilterResult: v}
				if verdict := filterVerdict(v); verdict != "" {
					e.Message += " (filtered: " + verdict + ")"
				}
			} else {
				e.Extended = map[string]any{extContentFilterResult: validUTF8(string(we.InnerError.ContentFilterResult))}
			}
		} else if isPresent(we.ContentFilters) {
			blockedFilters(e, we.ContentFilters)
		}
	case len(we.moderationReasons()) > 0:
		// OpenRouter's moderation flagged the input (a 403 with the
		// reasons: testdata/dialect_openrouter_err_moderation.http); the
		// flagged input itself is not kept.
		e.Kind = provider.KindContentFilter
		reasons := make([]any, 0, len(we.moderationReasons()))
		for _, r := range we.moderationReasons() {
			reasons = append(reasons, validUTF8(r))
		}
		if e.Extended == nil {
			e.Extended = map[string]any{}
		}
		e.Extended[extModerationReasons] = reasons
	case code == "billing_hard_limit_reached":
		// "Billing hard limit has been reached": the spending limit the
		// organization set is spent. OpenAI answers it with 400 and the
		// type invalid_request_error (dfinke/PowerShellAI#127,
		// all-in-aigc/aiwallpaper#2), image_generation_user_error or
		// insufficient_quota (whose case would code it so: the code is
		// the more precise), but no request is at fault: an exhausted
		// quota like insufficient_quota, not retried (provider.QuotaSpent),
		// and another deployment may serve the call.
		e.Kind = provider.KindRateLimited
		e.Code = "billing_hard_limit_reached"
	case code == "insufficient_quota" || typ == "insufficient_quota" || billingCode(code):
		// Not retryable, but still a 429: the retry policy reads Code.
		// OpenAI's specific billing code under the type insufficient_quota
		// (credit_balance_exhausted, organization_spend_limit_exceeded,
		// project_spend_limit_exceeded, organization_usage_limit_exceeded:
		// help.openai.com's "Troubleshooting API usage and spend limits")
		// is kept as the code, what the caller sees (ErrorInfo's
		// upstreamCode, the QuotaFailure's quota id) and must act on: it
		// was replaced by insufficient_quota, which says none of which
		// credit or limit to raise.
		e.Kind = provider.KindRateLimited
		e.Code = "insufficient_quota"
		if billingCode(code) {
			e.Code = code
		}
	case status == http.StatusTooManyRequests && typ == "server_error" && code == "":
		// OpenAI's 429 for an overloaded model ("That model is currently
		// overloaded with other requests. You can retry your request, …",
		// type server_error): the provider's capacity, not the caller's
		// rate limit or quota (no QuotaFailure of the caller's limits); a
		// 429 still, retried and falling back as one.
		e.Kind = provider.KindUnavailable
	case code == "billing_not_active" || typ == "billing_not_active":
		// "Your account is not active, please check your billing
		// details": a 429 (code sometimes null, the type saying it) that
		// no retry gets past (provider.QuotaSpent).
		e.Kind = provider.KindRateLimited
		e.Code = "billing_not_active"
	}
}

// blockedFilters reads the content_filters of Azure's Responses API
// refusal (a 400 content_filter whose verdicts are a list, one per
// source, not innererror's one result): kept as sent in the error's
// extended details under content_filters, as a Responses answer's are,
// and the categories of each blocked entry named in the message as
// innererror's are ("(filtered: jailbreak (detected))").
func blockedFilters(e *provider.Error, raw json.RawMessage) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	if e.Extended == nil {
		e.Extended = map[string]any{}
	}
	e.Extended[extContentFilters] = v
	list, _ := v.([]any)
	var verdicts []string
	for _, item := range list {
		m, _ := item.(map[string]any)
		if blocked, _ := m["blocked"].(bool); !blocked {
			continue
		}
		if s := filterVerdict(m["content_filter_results"]); s != "" {
			verdicts = append(verdicts, s)
		}
	}
	if len(verdicts) > 0 {
		e.Message += " (filtered: " + strings.Join(verdicts, "; ") + ")"
	}
}

// contentRiskRE matches DeepSeek's refusal by its content filter, "Content
// Exists Risk" (an invalid_request_error, as a 400 body or an error event in
// a 200 stream: testdata/dialect_deepseek_stream_content_risk.http),
// possibly followed by a request id in parentheses.
var contentRiskRE = regexp.MustCompile(`(?i)^\s*content\s+exists\s+risk\s*(\(|$)`)

// policyFlaggedRE matches the words of OpenAI's invalid_prompt refusals:
// "Invalid prompt: your prompt was flagged as potentially violating our
// usage policy." (reasoning models, a 400 or a Responses stream's
// response.failed), "Invalid prompt: we've limited access to this
// content for safety reasons."
var policyFlaggedRE = regexp.MustCompile(`(?i)flagged as potentially violating|usage polic|for safety reasons`)

// policyFlagged reports OpenAI's invalid_prompt of a prompt its usage
// policy filter refused: a content filter's verdict on the input (the
// caller must change the prompt, as for Azure's content_filter 400), not
// a malformed request. An invalid_prompt naming anything else stays an
// invalid request.
func policyFlagged(code, msg string) bool {
	return code == "invalid_prompt" && policyFlaggedRE.MatchString(msg)
}

// sensitiveCode reports Volcengine Ark's (Doubao's) content refusals:
// SensitiveContentDetected and its Input…/Output… variants
// (testdata/dialect_ark_err_sensitive.http).
func sensitiveCode(code string) bool { return strings.HasSuffix(code, "SensitiveContentDetected") }

// kindForCode classifies an error event inside a 2xx stream by its type or
// code; unknown errors are KindUnavailable (the stream broke upstream).
func kindForCode(typ, code string) provider.Kind {
	if sensitiveCode(code) {
		return provider.KindContentFilter
	}
	order := [2]string{code, typ}
	if _, err := strconv.Atoi(code); err == nil {
		// A numeric code is the HTTP status the error stands for
		// (llama.cpp's {"code":400,"type":"exceed_context_size_error"}):
		// the type says more.
		order = [2]string{typ, code}
	}
	for _, s := range order {
		switch s {
		case "context_length_exceeded", "exceed_context_size_error": // OpenAI; llama.cpp's server
			return provider.KindContextLength
		case "content_filter":
			return provider.KindContentFilter
		case "rate_limit_exceeded", "rate_limit_error", "tokens", "requests", "insufficient_quota", "429", "402":
			return provider.KindRateLimited
		case "invalid_request_error", "invalid_value", "unsupported_parameter", "400":
			return provider.KindInvalidRequest
		case "authentication_error", "invalid_api_key", "401":
			return provider.KindUnauthenticated
		case "permission_error", "403":
			return provider.KindPermissionDenied
		case "not_found_error", "model_not_found", "DeploymentNotFound", "404":
			return provider.KindNotFound
		case "timeout", "408":
			return provider.KindTimeout
		case "server_error", "overloaded_error", "service_unavailable", "internal_error", "unavailable_error":
			return provider.KindUnavailable
		}
	}
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
		// Another status (an in-band 409, 413, 422, 501): what that
		// status would be as an answer's (the retry policy reads it
		// alike: provider.InBandStatus).
		return provider.KindForStatus(n)
	}
	return provider.KindUnavailable
}

// deepseekUnknownModelRE matches DeepSeek's answer to a model name it
// does not serve.
var deepseekUnknownModelRE = regexp.MustCompile(`^The supported API model names are .+, but you passed `)

// groqNoChatRE matches Groq's refusal of chat completions by a model that
// does not chat (langflow-ai/langflow#11120), whole.
var groqNoChatRE = regexp.MustCompile(`^The model \S+ does not support chat completions\.?$`)

// deepseekNoModelRE matches DeepSeek's other answer to a model name it
// does not serve, the whole message of a 400 invalid_request_error:
// {"error":{"message":"Model Not Exist","type":"invalid_request_error",
// "param":null,"code":"invalid_request_error"}} (deepwn/addi#13 logs the
// body from api.deepseek.com/v1; ConardLi/easy-dataset#9 and
// langbot-app/LangBot#1643 for "deepseek R1", "deepseek-v3";
// testdata/dialect_deepseek_err_400_model_not_exist.http).
var deepseekNoModelRE = regexp.MustCompile(`^Model Not Exist$`)

// openrouterUnknownModelRE matches OpenRouter's answer to a model id it
// does not route: {"error": {"message": "bad/model is not a valid model
// ID", "code": 400}} (maruel/genai's recording,
// testdata/real_maruel_openrouter_bad_model_err.http).
var openrouterUnknownModelRE = regexp.MustCompile(`^\S+ is not a valid model ID$`)

// siliconflowUnknownModelRE matches SiliconFlow's answer to a model it
// does not serve: 400 {"code":20012,"message":"Model does not exist.
// Please check it carefully.","data":null} (ErlichLiu/DeepClaude#111;
// testdata/dialect_siliconflow_err_400_model_does_not_exist.http).
var siliconflowUnknownModelRE = regexp.MustCompile(`^Model does not exist\.`)

// hfNoProviderRE matches Hugging Face's router's answer to a model that
// none of the account's enabled inference providers serves (400, code
// model_not_supported; cline/cline#5098,
// testdata/dialect_hf_err_400_model_not_supported.http).
var hfNoProviderRE = regexp.MustCompile(`^The requested model '.*' is not supported by any provider you have enabled\.$`)

// contextLengthRE matches the messages of a prompt longer than the context:
// OpenAI's and most compatible servers', and text-generation-inference's
// validation errors ("`inputs` tokens + `max_new_tokens` must be <= 4096",
// "`inputs` must have less than 4096 tokens").
//
// Kimi's (Moonshot's) "Invalid request: Your request exceeded model token
// limit: 262144 (requested: 269030)" (a 400 invalid_request_error:
// MoonshotAI/kimi-cli#2011) is its own wording; so are xAI's "This
// model's maximum prompt length is 131072 but the request contains 136973
// tokens." (cline/cline#3120) and DashScope's "<400>
// InternalError.Algo.InvalidParameter: Range of input length should be
// [1, 983616]" (agentscope-ai/QwenPaw#6255; testdata/
// dialect_xai_err_400_prompt_length.http, dialect_dashscope_err_400_input_length.http),
// and vLLM's "The decoder prompt (length 9000) is longer than the maximum
// model length of 8192. …" (with "plus the number of requested output
// tokens (at least 1)" for a prompt that fills the window exactly: its
// vllm/v1/engine/input_processor.py; dialect_vllm_err_400_decoder_prompt.http);
// and Anthropic's "input length and `max_tokens` exceed context limit:
// 199759 + 8192 > 200000, …" (continuedev/continue#6080), which the
// anthropic adapter reads so, from its OpenAI-compatible endpoint
// (dialect_anthropic_compat_err_400_context_limit.http); SGLang's "The
// input (43028 tokens) is longer than the model's context length (40960
// tokens)." (its TokenizerManager._validate_one_request; Together's
// serverless models answer the same words:
// dialect_sglang_err_400_input_longer_than_context.http).
var contextLengthRE = regexp.MustCompile("(?i)maximum context length|context length exceeded|context window|too many tokens|prompt is too long|exceeded model token limit|" +
	"`inputs` tokens \\+ `max_new_tokens` must be <=|`inputs` must have less than \\d+ tokens|" +
	"maximum prompt length is \\d+ but the request contains \\d+ tokens|range of input length should be \\[1, \\d+\\]|" +
	"prompt \\(length \\d+\\)( plus the number of requested output tokens \\(at least 1\\))? is longer than the maximum model length|" +
	"exceed context limit|is longer than the model's context length")

func looksLikeContextLength(msg string) bool { return contextLengthRE.MatchString(msg) }

// inputTooLongRE: an embedding input longer than the server takes.
// OpenAI's "Invalid 'input[0]': maximum input length is 8192 tokens."
// (400, no code), TEI's "Input validation error: `inputs` must have less
// than 512 tokens. Given: 516" (413; or "characters") and llama.cpp's
// "input is too large to process. increase the physical batch size",
// later "input (992 tokens) is too large to process" (500).
var inputTooLongRE = regexp.MustCompile("(?i)maximum input length is \\d+ tokens|`?inputs`? must have less than \\d+ (tokens|characters)|\\binput (\\(\\d+ tokens\\) )?is too large to process")

var (
	// "Please try again in 1.5s." / "in 222ms" / "in 6m0s" (OpenAI);
	// "Please retry in 34.237795071s." (Google's RESOURCE_EXHAUSTED).
	tryAgainRE = regexp.MustCompile(`(?i)(?:try again|\bretry) in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)`)
	// "Please retry after 6 seconds." (Azure); "please try again after 1
	// seconds" (Kimi's rate_limit_reached_error: LLM-Red-Team/kimi-cc#16).
	retryAfterRE = regexp.MustCompile(`(?i)(?:retry|try again) after (\d+(?:\.\d+)?) seconds?`)
)

// retryDelayFromMessage reads a retry delay given only in the message.
func retryDelayFromMessage(msg string) time.Duration {
	if m := tryAgainRE.FindStringSubmatch(msg); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
			return d
		}
	}
	if m := retryAfterRE.FindStringSubmatch(msg); m != nil {
		if secs, err := strconv.ParseFloat(m[1], 64); err == nil && secs > 0 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

// filterVerdict summarizes an Azure content_filter_result: the categories
// that were filtered, with their severity, e.g. "violence (medium)". A
// custom blocklist's verdict is a list of the lists that matched
// ({"custom_blocklists":[{"filtered":true,"id":"svir"}]}:
// testdata/real_svir_azure_async_flagged_stream.http), or in older API
// versions an object whose details are that list: named with the ids of
// the lists that filtered, "custom_blocklists (svir)".
func filterVerdict(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	var out []string
	for cat, r := range m {
		if list, ok := r.([]any); ok {
			if ids, f := filteredLists(list); f {
				out = append(out, cat+ids)
			}
			continue
		}
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		details, _ := rm["details"].([]any)
		ids, detailFiltered := filteredLists(details)
		if f, _ := rm["filtered"].(bool); !f && !detailFiltered {
			continue
		}
		s := cat
		if sev, _ := rm["severity"].(string); sev != "" {
			s += " (" + sev + ")"
		} else if det, _ := rm["detected"].(bool); det {
			s += " (detected)"
		} else {
			s += ids
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// filteredLists reads a custom blocklist verdict's entries
// ([{"filtered":true,"id":"svir"}, …]): whether one filtered, and the ids
// of those that did, as " (id, id)" ("" when none has an id).
func filteredLists(list []any) (string, bool) {
	var ids []string
	filtered := false
	for _, e := range list {
		em, _ := e.(map[string]any)
		if f, _ := em["filtered"].(bool); !f {
			continue
		}
		filtered = true
		if id, _ := em["id"].(string); id != "" && len(ids) < 8 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", filtered
	}
	return " (" + strings.Join(ids, ", ") + ")", true
}

// limitTypes are the error types with which OpenAI (and Groq, which
// copies it) names the limit that refused a rate-limited request: its
// 429 bodies say {"type": "tokens", "code": "rate_limit_exceeded"} or
// "requests" (testdata/err_429_rate_limit.http, compat_err_429.http);
// older answers said "tokens_usage_based", the tokens limit under an
// earlier name. The value is the QuotaFailure metric.
var limitTypes = map[string]string{
	"tokens": "tokens", "tokens_usage_based": "tokens", "requests": "requests",
	"input_tokens": "input_tokens", "output_tokens": "output_tokens",
	// Groq's messages: "on input tokens per minute (ITPM)".
	"input tokens": "input_tokens", "output tokens": "output_tokens",
}

var (
	// limitRE reads the limit a rate-limit message names: "on tokens per
	// min (TPM): Limit 30000, Requested 31538", "on requests per day
	// (RPD): Limit 10000, Used 10000, Requested 1", Groq's "on tokens per
	// minute (TPM): Limit 6000, …", the older "on tokens_usage_based per
	// min: Limit 300000, …": the metric, the window's abbreviation when
	// given, and the limit.
	limitRE = regexp.MustCompile(`(?i)\bon (input tokens|output tokens|tokens|requests|tokens_usage_based) per \w+(?: \(([A-Z]{3,4})\))?:? Limit:? ([\d,]+)`)
	// tooLargeRE: OpenAI's answer to a request larger than the whole
	// per-minute limit, "Request too large for gpt-4o in organization
	// org-… on tokens per min (TPM): Limit 30000, Requested 31538. The
	// input or output tokens must be reduced in order to run
	// successfully." (a 429 rate_limit_exceeded of type tokens:
	// TheR1D/shell_gpt#653, Aider-AI/aider#1880; in a Responses stream's
	// response.failed: testdata/real_responses_failed_only_stream.http).
	tooLargeRE = regexp.MustCompile(`(?i)^\s*request too large for\b|tokens must be reduced in order to run successfully`)
)

// rateLimitQuota puts on a rate-limited e the limit that refused it, as
// the provider's own QuotaFailure violation: the metric its type names
// (else its message), the limit and window (QuotaId: TPM, RPD…) its
// message states. The rate-limit headers cannot say it: the request's
// tokens were never taken (a request too large leaves them all
// remaining), and they show only the per-minute limits, not the daily
// ones a message can name; the server fills in the headers' limit only
// when the message gives none. The code stays the provider's
// (rate_limit_exceeded), which does not say which limit refused.
//
// A request too large for the whole per-minute limit can never succeed
// there, however long the caller waits: it is not retried
// (RetryDiscouraged, as the x-should-retry header would say) and has no
// retry delay, but remains an exhausted quota that another deployment
// (a higher tier) may not share, so the route falls back.
func rateLimitQuota(e *provider.Error, typ string) {
	if e.Kind != provider.KindRateLimited || provider.QuotaSpent(e.Code) {
		return
	}
	metric := limitTypes[typ]
	m := limitRE.FindStringSubmatch(e.Message)
	if m != nil {
		named := limitTypes[strings.ToLower(m[1])]
		// The message may be more precise than the type: Groq types an
		// input-token limit "tokens" and names it "input tokens per
		// minute (ITPM)".
		if metric == "" || (metric == "tokens" && (named == "input_tokens" || named == "output_tokens")) {
			metric = named
		}
	}
	if metric == "" && m == nil {
		if v := cerebrasLimit(e.Message); v != nil {
			e.Quota = append(e.Quota, v)
			return
		}
		if v := kimiLimit(e.Message); v != nil {
			e.Quota = append(e.Quota, v)
			return
		}
	}
	if metric == "" {
		return
	}
	v := &errdetails.QuotaFailure_Violation{QuotaMetric: metric, Description: e.Message}
	if m != nil && limitTypes[strings.ToLower(m[1])] == metric {
		v.QuotaId = strings.ToUpper(m[2])
		if n, err := strconv.ParseInt(strings.ReplaceAll(m[3], ",", ""), 10, 64); err == nil {
			v.QuotaValue = n
		}
	}
	e.Quota = append(e.Quota, v)
	if tooLargeRE.MatchString(e.Message) {
		e.ShouldRetry = provider.RetryDiscouraged
		e.RetryAfter = 0
	}
}

// reasoningStateRefused reports the Responses API's refusal of reasoning
// state the request sent back that the deployment cannot read: encrypted
// content another organization, project or Azure resource produced, a 400
// invalid_request_error with code invalid_encrypted_content ("The
// encrypted content gAAA...Rg== could not be verified.": openai/codex
// #8132, #8145; "... Reason: Encrypted content could not be decrypted or
// parsed.": Wei-Shaw/sub2api#2863, an account pool), and a reasoning
// item id it does not hold, a 404 "Item with id 'rs_…' not found. Items
// are not persisted when `store` is set to false. Try again with `store`
// set to true, or remove this item from your input." (can1357/oh-my-pi
// #41, anomalyco/opencode#7724). The input without its reasoning items
// passes (provider.Request.DropSignatures, withoutReasoningItems).
func reasoningStateRefused(code, msg string) bool {
	if code == "invalid_encrypted_content" {
		return true
	}
	return strings.HasPrefix(msg, "Item with id 'rs_") && strings.Contains(msg, "not found")
}
