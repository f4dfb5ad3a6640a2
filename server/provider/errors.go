package provider

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Kind classifies a provider failure. The server maps kinds to gRPC codes in
// one place (server/errors.go); the retry policy reads Kind and HTTPStatus.
type Kind int

const (
	KindUnknown Kind = iota
	// KindInvalidRequest: 400/422, the provider rejected the request.
	KindInvalidRequest
	// KindContextLength: the prompt is longer than the context window.
	KindContextLength
	// KindUnauthenticated: 401, the provider refused the gateway's key.
	KindUnauthenticated
	// KindPermissionDenied: 403.
	KindPermissionDenied
	// KindNotFound: 404, unknown model or deployment.
	KindNotFound
	// KindRateLimited: 429.
	KindRateLimited
	// KindUnavailable: 5xx, 529 overloaded, an error event in a stream,
	// an answer whose body was cut after its headers (a close inside the
	// body, a reset: ErrBrokeMidAnswer).
	KindUnavailable
	// KindTimeout: 408, a connect/first-byte/idle timeout, or our deadline.
	KindTimeout
	// KindContentFilter: the prompt was blocked by a content filter.
	KindContentFilter
	// KindBadResponse: the provider's answer could not be parsed, or a
	// stream ended without its final event.
	KindBadResponse
	// KindUnsupported: the provider has no such operation.
	KindUnsupported
	// KindCanceled: the caller went away.
	KindCanceled
	// KindConnection: the connection failed before any response byte
	// (refused, reset, DNS, TLS); one that breaks after the headers is
	// KindUnavailable (BodyReadError).
	KindConnection
	// KindResourceExhausted: a gateway limit (response size, memory
	// budget) stopped the call; not retried.
	KindResourceExhausted
	// KindConflict: 409, a conflict on the provider's side (a lock
	// timeout, in the OpenAI and Anthropic SDKs' words), which they and
	// the retry policy retry: not the caller's bad input.
	KindConflict
	// KindCapability: the provider says the model lacks a capability the
	// request needs (tools, thinking, vision): the deployment's model, not
	// the request, which a model with it serves; as the gateway's own
	// capability check answers (FailedPrecondition
	// CAPABILITY_NOT_SUPPORTED), never retried, a reason to fall back.
	KindCapability
)

var kindNames = map[Kind]string{
	KindUnknown: "unknown", KindInvalidRequest: "invalid_request", KindContextLength: "context_length_exceeded",
	KindUnauthenticated: "unauthenticated", KindPermissionDenied: "permission_denied", KindNotFound: "not_found",
	KindRateLimited: "rate_limited", KindUnavailable: "unavailable", KindTimeout: "timeout",
	KindContentFilter: "content_filter", KindBadResponse: "bad_response", KindUnsupported: "unsupported",
	KindCanceled: "canceled", KindConnection: "connection_error", KindResourceExhausted: "resource_exhausted",
	KindConflict: "conflict", KindCapability: "capability_not_supported",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is a provider failure. Adapters return it (wrapped or not) for every
// error the provider reported and every transport failure.
type Error struct {
	// Provider is the adapter's provider type ("openai", "anthropic", ...).
	Provider string
	Kind     Kind
	// HTTPStatus is the provider's status, 0 when no response was received.
	HTTPStatus int
	// InAnswer: the error was read from inside a 2xx answer (an error
	// event in a stream, an error object in a 200 body) by an adapter
	// that leaves HTTPStatus 0 for it (the anthropic and gemini ones,
	// whose classification reads an in-band error's own code): the
	// provider answered, and RetryReason.upstream_status reports its 200
	// as for output that does not parse (KindBadResponse) or an in-band
	// error with HTTPStatus 200 (the openai and ollama adapters). Nothing
	// else reads it: the gRPC status and ErrorInfo do not change.
	InAnswer bool
	// Code is the provider's own error type or code ("rate_limit_error",
	// "context_length_exceeded", "RESOURCE_EXHAUSTED").
	Code string
	// Type is the provider's error type where it gives one besides Code
	// (OpenAI's `type`: "invalid_request_error", "tokens", "requests"
	// beside the code "rate_limit_exceeded"); "" when it gave none or
	// Code already is it.
	Type string
	// Message is the provider's error message: it tells the user what to
	// fix. Never contains secrets.
	Message string
	// Param is the request field the provider blamed, if it named one.
	Param string
	// RetryAfter is the delay the provider asked for (header or body); 0
	// when it gave none.
	RetryAfter time.Duration
	// RequestID is the provider's request id for the failed request.
	RequestID string
	// Date is the provider's clock when it answered with the error: its
	// Date header, else when the answer was read (ResponseDate); zero
	// for an error not read from an error answer's head. The relative
	// reset times of its rate-limit state (OpenAI's "6m0s", "20ms") are
	// counted from it, so the retry policy measures an exhausted limit's
	// delay from it too: the provider's duration exactly (the header's
	// second precision cost up to a second of it, all of a "20ms"), and
	// an absolute reset (Anthropic's RFC 3339) as the provider's clock
	// counts it, whatever the gateway's says.
	Date time.Time
	// ShouldRetry is the provider's own verdict on retrying, from its
	// x-should-retry header (OpenAI, Anthropic): RetryAdvised or
	// RetryDiscouraged override the status's default; RetryUnsaid when
	// the answer did not say.
	ShouldRetry RetryAdvice
	// BatchTooLarge: the provider refused an embeddings request for its
	// inputs together, not for any one of them (OpenAI's 300,000 tokens
	// summed over a request's inputs, max_tokens_per_request; Mistral's
	// "Too many tokens in batch"), or for their number (BatchLimit): the
	// same inputs in smaller requests may pass, and the gateway sends them
	// so (server/embed.go).
	BatchTooLarge bool
	// BatchLimit is the most inputs one embeddings request takes, where
	// the provider's refusal said it (Azure OpenAI's "Too many inputs.
	// The max number of inputs is 16", TEI's "batch size 64 > maximum
	// allowed batch size 32"): the gateway sends the inputs in requests
	// of at most that many. 0 when it did not say.
	BatchLimit int
	// BatchParts is the fewest requests the inputs need by the provider's
	// own count, where a refusal of their tokens together gave it
	// (OpenAI's "Requested 453357 tokens, max 300000 tokens per request":
	// 2): the gateway splits the inputs into that many parts at first.
	// 0 when it did not say.
	BatchParts int
	// SignatureRefused: the provider refused reasoning state the request
	// sent back (a Gemini thought signature, an Anthropic thinking block's
	// signature, OpenAI Responses encrypted reasoning or a reasoning item
	// id) as not its own: state another account, project or platform of
	// the same provider type signed (Gemini's 400 "Corrupted thought
	// signature.", Anthropic's 400 "Invalid `signature` in `thinking`
	// block", OpenAI's invalid_encrypted_content and its "Item with id
	// 'rs_…' not found"). The same conversation without that state
	// (Request.DropSignatures) can pass: the retry policy sends it once
	// more so, to the same deployment (pipeline.Retry).
	SignatureRefused bool
	// Quota is the provider's own account of the quotas it found
	// exhausted (the google.rpc.QuotaFailure violations Gemini and Vertex
	// AI send, GoogleQuotaViolation.Proto), as it gave them; nil when it
	// gave none. The server's QuotaFailure carries them instead of the
	// violations it would build from the rate-limit state.
	Quota []*errdetails.QuotaFailure_Violation
	// Help is the provider's links about the failure (google.rpc.Help: a
	// quota's documentation, the console page that enables an API); the
	// server's status carries them.
	Help []*errdetails.Help_Link
	// Extended holds provider-specific details (e.g. Azure content filter
	// results) for the failure's meta; may be nil.
	Extended map[string]any
	// Meta is what the provider reported before or with the failure: the
	// rate-limit state and request id of an error response's headers, the
	// response id, resolved model and usage of an answer that failed
	// mid-way. The server puts it into the failure's FailedCallMeta under
	// its own fields; nil when the provider reported nothing.
	Meta *llmrelayv1.ResponseMeta
	// Err is the underlying error, if any (transport errors).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(e.Kind.String())
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (http %d)", e.HTTPStatus)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// StatusProviderCancelled is HTTP 499, google.rpc's CANCELLED: Gemini and
// Vertex AI answer it when their backend gave up on the operation
// ({"code": 499, "message": "The operation was cancelled.", "status":
// "CANCELLED"}, reason backendError, under load: gemini-cli#20309). The
// gateway never reads the answer to a request it cancelled itself (its
// context ends the read first), so a 499 it reads is the provider's own
// failure: transient, retried like a 5xx (gemini-cli retries it since
// #20432, google-genai is asked to in python-genai#2506), never the
// caller's invalid request nor its cancellation.
const StatusProviderCancelled = 499

// KindForStatus is the default classification of an HTTP error status.
// Adapters refine it from the body (context length, content filter).
func KindForStatus(status int) Kind {
	switch {
	case status == http.StatusBadRequest, status == http.StatusUnprocessableEntity,
		status == http.StatusRequestEntityTooLarge:
		return KindInvalidRequest
	case status == http.StatusUnauthorized:
		return KindUnauthenticated
	case status == http.StatusForbidden:
		return KindPermissionDenied
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return KindTimeout
	case status == http.StatusConflict:
		return KindConflict
	case status == StatusProviderCancelled:
		return KindUnavailable
	case status == http.StatusTooManyRequests, status == http.StatusPaymentRequired:
		// 402: the account's credits or balance are spent (OpenRouter,
		// NVIDIA): an exhausted quota, as OpenAI's insufficient_quota 429
		// is, not an invalid request. The retry policy does not retry it
		// (by status) and falls back.
		return KindRateLimited
	case status >= 500:
		// 500, 502, 503, 529 (Anthropic overloaded) and the rest.
		return KindUnavailable
	case status >= 400:
		return KindInvalidRequest
	default:
		return KindUnknown
	}
}

// InBandStatus is the HTTP status an error inside a 2xx answer names as
// its code, as OpenAI-compatible servers write one in a 200 stream or
// body ({"error":{"code":501,"message":…}}: OpenRouter, vLLM,
// llama.cpp, text-generation-inference's error event): the status the
// error would have had as an answer of its own, 400 to 599. 0 for an
// error answer (its own status says it), for a code that is not such a
// number, and when e is nil. The retry policy reads it as it reads an
// answer's status, so an in-band 501 is not retried as an HTTP 501 is
// not.
func InBandStatus(e *Error) int {
	if e == nil || e.HTTPStatus >= 300 || len(e.Code) != 3 {
		return 0
	}
	n, err := strconv.Atoi(e.Code)
	if err != nil || n < 400 || n > 599 {
		return 0
	}
	return n
}

// TooLarge reports whether e refuses the request for its size: a 413
// (the provider's own, Anthropic's request_too_large past its 32 MB, which
// Cloudflare answers before the API; or a proxy's in front of the
// provider, nginx's client_max_body_size, whose page has no JSON at all),
// an error inside a 2xx answer whose code is 413 (InBandStatus),
// Anthropic's type request_too_large where no error status says it (an
// error event, an error inside a 200), and Google's "Request payload size exceeds the limit: N bytes"
// (the Gemini API's 400 INVALID_ARGUMENT for its request size). The
// limit is the deployment's (its endpoint's, its proxy's, its model's):
// the same request fails there every time, but another deployment may
// take it (pipeline.FallbackWorthy).
func TooLarge(e *Error) bool {
	if e == nil {
		return false
	}
	if e.HTTPStatus == http.StatusRequestEntityTooLarge || InBandStatus(e) == http.StatusRequestEntityTooLarge {
		return true
	}
	if e.HTTPStatus < 300 && e.Code == "request_too_large" {
		return true
	}
	_, ok := GooglePayloadLimit(e.Message)
	return ok
}

// googlePayloadLimitRE reads Google's refusal of a request body over its
// size limit: "Request payload size exceeds the limit: 4194304 bytes."
// (the Gemini API's INVALID_ARGUMENT; quarkiverse/quarkus-langchain4j#1705
// quotes it for a batch of embeddings).
var googlePayloadLimitRE = regexp.MustCompile(`(?i)\brequest payload size exceeds the limit: (\d{1,12}) bytes\b`)

// GooglePayloadLimit is the limit in bytes a Google refusal of a request
// body over its size limit names, and whether msg is one.
func GooglePayloadLimit(msg string) (limit int, ok bool) {
	m := googlePayloadLimitRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, true
	}
	return n, true
}

// QuotaSpent reports whether an error code says the account cannot be
// served at all until someone acts (credits bought, billing fixed), not
// that it is sending too fast: OpenAI's insufficient_quota (also what
// the adapters code a 402 and other providers' spent balances as) and
// billing_not_active, both 429s, its billing_hard_limit_reached (the
// spending limit the organization set is reached: a 400, which the
// adapter reads as the spent quota it is, "Billing hard limit has been
// reached"), and Anthropic's billing_error (its 402's type, in a stream's
// error event too). The retry policy does not retry them: the same answer
// would come back, however long it waited.
func QuotaSpent(code string) bool {
	switch code {
	case "insufficient_quota", "billing_not_active", "billing_hard_limit_reached", "billing_error",
		// OpenAI's billing codes under the type insufficient_quota, each a
		// 429 no retry gets past (help.openai.com, "Troubleshooting API
		// usage and spend limits": "Check error.code in the API response.
		// A billing-related error may still use the broader error.type
		// value insufficient_quota."; "Retrying these errors won't restore
		// access").
		"credit_balance_exhausted", "organization_spend_limit_exceeded", "project_spend_limit_exceeded",
		"organization_usage_limit_exceeded":
		return true
	}
	return false
}

// GoogleStatus is a google.rpc.Status as Google's JSON APIs write it
// (Gemini, Vertex AI, their OpenAI-compatible endpoints): {"code": 429,
// "message": …, "status": "RESOURCE_EXHAUSTED", "details": […]}.
type GoogleStatus struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Status  string         `json:"status"`
	Details []GoogleDetail `json:"details"`
}

// GoogleDetail is one of a GoogleStatus's details: the fields of the kinds
// read (RetryInfo, ErrorInfo, BadRequest, QuotaFailure, Help), by "@type".
type GoogleDetail struct {
	Type            string                 `json:"@type"`
	RetryDelay      string                 `json:"retryDelay"`
	Reason          string                 `json:"reason"`
	Domain          string                 `json:"domain"`
	Metadata        map[string]string      `json:"metadata"`
	FieldViolations []GoogleFieldViolation `json:"fieldViolations"`
	Violations      []GoogleQuotaViolation `json:"violations"`
	Links           []GoogleHelpLink       `json:"links"`
}

// GoogleFieldViolation is one google.rpc.BadRequest field violation.
type GoogleFieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// ApplyGoogleDetails puts what a google.rpc.Status's details say on e:
// the RetryInfo delay (RetryAfter), the first BadRequest field (Param;
// without one, the field e.Message's validation line names: set the
// message first), the QuotaFailure's violations as sent (Quota; without one, the quota a
// RATE_LIMIT_EXCEEDED ErrorInfo's metadata names), the Help links. Text
// goes through clean (the adapter's redaction). It returns the first
// ErrorInfo's reason ("API_KEY_INVALID", "RATE_LIMIT_EXCEEDED"), "" when
// there is none.
func ApplyGoogleDetails(e *Error, details []GoogleDetail, clean func(string) string) (reason string) {
	var rateLimit map[string]string // a RATE_LIMIT_EXCEEDED ErrorInfo's metadata
	paramSet := false
	for _, d := range details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.QuotaFailure"):
			for i := range d.Violations {
				e.Quota = append(e.Quota, d.Violations[i].Proto(clean))
			}
		case strings.HasSuffix(d.Type, "google.rpc.Help"):
			for _, l := range d.Links {
				if l.URL != "" || l.Description != "" {
					e.Help = append(e.Help, &errdetails.Help_Link{Description: clean(l.Description), Url: clean(l.URL)})
				}
			}
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			// A google.protobuf.Duration in JSON: "34s", "0.5s".
			if rd, err := time.ParseDuration(strings.TrimSpace(d.RetryDelay)); err == nil && rd > 0 {
				e.RetryAfter = rd
			}
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
			if reason == "" {
				reason = d.Reason
			}
			if d.Reason == "RATE_LIMIT_EXCEEDED" && rateLimit == nil {
				rateLimit = d.Metadata
			}
		case strings.HasSuffix(d.Type, "google.rpc.BadRequest"):
			for _, fv := range d.FieldViolations {
				if fv.Field != "" && !paramSet {
					e.Param, paramSet = clean(fv.Field), true
				}
			}
		}
	}
	if !paramSet && e.Param == "" {
		e.Param = clean(googleMessageField(e.Message))
	}
	if len(e.Quota) == 0 {
		if v := errorInfoQuota(rateLimit, clean); v != nil {
			e.Quota = append(e.Quota, v)
		}
	}
	if rateLimit["quota_limit_value"] == "0" || googleZeroQuotaRE.MatchString(e.Message) {
		// A quota of none at all (the model has no free tier, the
		// project no quota in the region): no wait makes room in it,
		// whatever RetryInfo says. As a spent quota: not retried, no
		// delay, and a route falls back (another project or tier has
		// one).
		e.ShouldRetry = RetryDiscouraged
		e.RetryAfter = 0
	}
	if dailyQuota(e.Quota) {
		// A daily quota is spent: no attempt succeeds before the day
		// is over, whatever RetryInfo says (Gemini sends one of
		// seconds beside it: python-genai#2044's "47s"; gemini-cli
		// makes such a 429 terminal). Not retried, with no delay that
		// would say waiting helps; still an exhausted quota another
		// deployment may not share, so a route falls back.
		e.ShouldRetry = RetryDiscouraged
		e.RetryAfter = 0
	}
	return reason
}

// ollamaContextRE matches Ollama's refusals of an input that does not fit
// its context, as its source words them: the runner's errorInputTooLong
// ("the input length exceeds the context length", truncate false), the
// embed handler's when truncating cannot help ("input exceeds maximum
// context length and cannot be truncated further", "input after
// truncation exceeds maximum context length") and the runner's when
// num_keep leaves nothing of the prompt ("entire prompt removed by
// truncation").
var ollamaContextRE = regexp.MustCompile(`(?i)\binput length exceeds the context length|\binput (after truncation )?exceeds maximum context length|entire prompt removed by truncation`)

// OllamaContextOverflow reports whether msg is Ollama's refusal of an
// input longer than its context. Its compatible endpoints (OpenAI's
// /v1/chat/completions, Anthropic's /v1/messages) pass the words on under
// a type the status decides (a 400's invalid_request_error, an older
// version's 500 api_error): precise enough to classify at any status.
func OllamaContextOverflow(msg string) bool { return ollamaContextRE.MatchString(msg) }

// ollamaMemoryRE matches Ollama's refusal to load a model its host has
// not the memory for: "model requires more system memory (44.0 GiB) than
// is available (7.6 GiB)" (a 500 from its scheduler, before any work).
var ollamaMemoryRE = regexp.MustCompile(`(?i)\bmodel requires more system memory\b`)

// OllamaOutOfMemory reports whether msg is Ollama's refusal to load a
// model larger than its host's free memory. An attempt a few
// milliseconds later meets the same refusal (the memory frees only when
// another model is unloaded, after its keep_alive, minutes by default),
// so the adapters mark it RetryDiscouraged: not retried on this host, a
// 5xx that another deployment (a larger host) may not share, so the
// route falls back.
func OllamaOutOfMemory(msg string) bool { return ollamaMemoryRE.MatchString(msg) }

// ollamaLoadRE matches Ollama's 500 when its model runner exits while
// loading the model, with the loader's own error after it (ollama/ollama
// llm/server.go: "llama runner process has terminated: %w", newer servers
// "llama-server process has terminated: %s: %s", the exit status and the
// runner's last error line): "llama runner process has terminated: error
// loading model: unable to allocate CUDA0 buffer" (ollama/ollama#11359),
// "llama-server process has terminated: exit status 1: error loading
// model: unknown model architecture: 'mllama'" (meta-llama/llama-models
// #496). A runner that exits with no loader error ("exit status 2",
// "signal: killed") is not matched: that may be a crash of the moment.
var ollamaLoadRE = regexp.MustCompile(`(?i)\b(?:llama runner|llama-server) process has terminated\b.*\berror loading model\b`)

// OllamaLoadFailed reports whether msg is Ollama's answer when the model
// failed to load: not enough GPU memory for its buffers, an architecture
// the server's runner does not know, a damaged file. Each attempt loads
// the model again (seconds to minutes: ollama/ollama#8597 logs two
// minutes before the CUDA allocation failed) and fails the same way, so
// the adapters mark it RetryDiscouraged: a 5xx another deployment (a
// larger GPU, a newer Ollama) may not share, so a route falls back.
func OllamaLoadFailed(msg string) bool { return ollamaLoadRE.MatchString(msg) }

// ollamaCapabilityRE matches Ollama's refusals of a capability the model
// lacks, as its source words them (ollama/ollama server): the check before
// the model is scheduled, "<model> does not support tools"
// (Model.CheckCapabilities with the model's full name: "registry.ollama.ai/
// library/gemma3:1b does not support tools", a 400 from
// handleScheduleError; "insert" for a suffix, "vision" for images), and
// the handlers' own "\"<model>\" does not support thinking" (think asked
// of a model without it), and ollama.com's "this model does not support
// image input (ref: …)" (a cloud model without vision, a 400 through a
// local Ollama's Anthropic-compatible route: ollama/ollama#17301).
var ollamaCapabilityRE = regexp.MustCompile(`(?i)^(?:"[^"]*"|[^\s"]+) does not support (?:tools|thinking|insert|vision)\b|^this model does not support image input\b`)

// ollamaOperationRE matches Ollama's refusals of an operation the model
// does not do at all: the handlers' "\"<model>\" does not support chat"
// and "… generate" (an embedding model, whose capabilities lack
// completion) and the runner's "this model does not support embeddings"
// (a chat model on Ollama's own engine, a 500 to /api/embed and
// /v1/embeddings alike, ollama/ollama#9742).
var ollamaOperationRE = regexp.MustCompile(`(?i)^(?:"[^"]*"|[^\s"]+) does not support (?:chat|generate|completion)\b|^this model does not support embeddings\b`)

// OllamaRefusalKind is the kind of Ollama's refusal of what its model
// cannot do: KindCapability for a capability the request needs (tools,
// thinking), KindUnsupported for an operation the model does not do
// (chat, embeddings), as Azure's OperationNotSupported is; KindUnknown
// when msg is neither. Both are the deployment's model, not the request
// (a model that has it serves the same request): never retried, a reason
// to fall back.
func OllamaRefusalKind(msg string) Kind {
	msg = strings.TrimSpace(msg)
	switch {
	case ollamaCapabilityRE.MatchString(msg):
		return KindCapability
	case ollamaOperationRE.MatchString(msg):
		return KindUnsupported
	}
	return KindUnknown
}

// OllamaLoadAdvice is what to add to an OllamaLoadFailed message that
// names an architecture the server does not know: a newer Ollama may run
// the model. "" otherwise (the loader's words say the rest).
func OllamaLoadAdvice(msg string) string {
	if OllamaLoadFailed(msg) && strings.Contains(strings.ToLower(msg), "unknown model architecture") {
		return " (this Ollama's runner does not know the model's architecture: a newer Ollama may run it; loading it again here fails the same way)"
	}
	return ""
}

// googleFieldLine is the line Google's request validation writes for a
// refused field when no BadRequest detail comes with it: "* " , the
// request message's name, the field's path, ": " and the problem
// ("* BatchEmbedContentsRequest.requests: at most 100 requests can be in
// one batch", "* GenerateContentRequest.contents[8].parts[0].data:
// required oneof field 'data' must have one initialized field").
var googleFieldLine = regexp.MustCompile(`^\* [A-Z][A-Za-z0-9]*\.([^\s:]+): `)

// googleMessageField is the field path the first line of a Google error
// message names as googleFieldLine reads it ("requests",
// "contents[8].parts[0].data"); "" when it names none that way.
func googleMessageField(msg string) string {
	if m := googleFieldLine.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := googleProtoInvalid.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := googleUnknownName.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// googleUnknownName is the JSON decoding refusal of a field the request
// message has not, where it names the object holding it ("Invalid JSON
// payload received. Unknown name \"additionalProperties\" at
// 'tools[0].function_declarations[0].parameters': Cannot find field.",
// IBM/mcp-cli#170, bigduu/Bodhi-AI#52 on gemini-3.5-flash); its BadRequest
// detail names the same path, but a body that lost its details (a relay
// that kept the message) still names it this way.
var googleUnknownName = regexp.MustCompile(`^Invalid JSON payload received\. Unknown name "[^"]*" at '([^']+)': Cannot find field\.`)

// googleProtoInvalid is the other form of Google's request validation: a
// first line saying the request message is invalid, then an indented line
// per field with the field's path alone ("The GenerateContentRequest proto
// is invalid:\n  * tools[0].function_declarations[178].name: [FIELD_INVALID]
// Invalid function name. …", zed-industries/zed#37643 through gemini-cli,
// kaitranntt/ccs#25 on the Gemini API); the first field's path.
var googleProtoInvalid = regexp.MustCompile(`^The [A-Z][A-Za-z0-9]* proto is invalid:[ \t]*\r?\n[ \t]*\* ([^\s:]+): `)

// dailyQuota reports whether one of the violations is of a per-day
// quota, by Google's quota ids ("GenerateRequestsPerDayPerProjectPerModel-
// FreeTier", "Gemini25ProRequestsPerDay"; gemini-cli's test:
// "PerDay" or "Daily" in the id).
func dailyQuota(vs []*errdetails.QuotaFailure_Violation) bool {
	for _, v := range vs {
		if id := v.GetQuotaId(); strings.Contains(id, "PerDay") || strings.Contains(id, "Daily") {
			return true
		}
	}
	return false
}

// GoogleCreditsSpent reports a Google RESOURCE_EXHAUSTED that says the
// project's prepaid credits are spent, not that it sends too fast: the
// Gemini API's "Your prepayment credits are depleted. Please go to AI
// Studio at https://ai.studio/projects to manage your project and
// billing." (a 429, as the clients that meet it quote it; some see a
// 402), or its code 402 inside the status. An HTTP 402 is not retried by
// its status; this one came as a 429 or inside a 200 stream, and was
// retried to fail the same way (python clients, dyad-sh/dyad#3626, make
// it terminal). The caller marks it RetryDiscouraged: a spent quota that
// another deployment may not share, so a route falls back.
//
// It also reports a RESOURCE_EXHAUSTED whose message says that a quota
// the request needs is none at all, which no wait changes either
// (googleZeroQuotaRE), for the callers that read a status without its
// details (a stream's error chunk through the OpenAI-compatible
// endpoint); ApplyGoogleDetails reads it beside the details.
func GoogleCreditsSpent(status string, code int, msg string) bool {
	if status != "RESOURCE_EXHAUSTED" {
		return false
	}
	return code == http.StatusPaymentRequired || strings.Contains(strings.ToLower(msg), "credits are depleted") ||
		googleZeroQuotaRE.MatchString(msg)
}

// googleZeroQuotaRE matches a Gemini RESOURCE_EXHAUSTED message that
// names a quota of 0: the model has no free tier, or not for this
// project ("* Quota exceeded for metric:
// generativelanguage.googleapis.com/generate_content_free_tier_input_token_count,
// limit: 0, model: gemini-2.0-flash-exp", a line per violation, as
// akshayaggarwal99/nodenest#1 and google-gemini/gemini-cli#22486 quote
// it; the QuotaFailure beside it leaves quotaValue out, proto3's 0), or
// says so in words ("Gemini 2.5 Pro Preview doesn't have a free quota
// tier.", ai-christianson/RA.Aid#182, with a RetryInfo of 33 s that
// client waited twenty times). The RetryInfo and "Please retry in"
// beside it are the per-minute window's, which never opens for a limit
// of 0 (a daily quota's id is read apart: dailyQuota). A limit of 0.5 or
// 05 is not 0.
var googleZeroQuotaRE = regexp.MustCompile(`(?i)\bquota exceeded for metric:? [^\n]*?\blimit:? 0(?:[^.\d]|\.(?:\D|$)|$)|doesn['’]t have a free quota tier`)

// GoogleCapacityExhausted reports a Google RESOURCE_EXHAUSTED (a 429, or
// inside a 200 stream) that says the provider's shared capacity for the
// model is used up, not a quota or limit of the caller's: reason is the
// status's ErrorInfo reason, msg its message. Two forms:
//   - the ErrorInfo reason MODEL_CAPACITY_EXHAUSTED, "No capacity
//     available for model gemini-3-flash-preview on the server"
//     (Google's Code Assist backend, which the Gemini-API proxies in front
//     of it relay as they got it: google-gemini/gemini-cli#23986, #27548,
//     su-kaka/gcli2api#313; the same reason comes as a 503 UNAVAILABLE,
//     gemini-cli#23520);
//   - Vertex AI's pay-as-you-go 429, "Resource exhausted. Please try again
//     later. Please refer to
//     https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429
//     for more details." (gemini-cli#15498, #14831), which that page
//     explains: "In the pay-as-you-go model, you use a shared pool of
//     resources. If resources aren't available when you make a request,
//     Vertex AI returns a 429 error"; its table gives the message as
//     "Resource exhausted, please try again later.".
//
// Such a 429 is the provider's capacity, as Kimi's, Mistral's and
// Cerebras's overloaded 429s are (docs/decisions.md): Unavailable and
// retried, with no quota of the caller's to report. Neither the Gemini
// API's "Resource has been exhausted (e.g. check quota)." nor a
// Provisioned Throughput 429 ("Too many requests. Exceeded the
// Provisioned Throughput.", the caller's purchased throughput) is one.
func GoogleCapacityExhausted(status, reason, msg string) bool {
	if status != "RESOURCE_EXHAUSTED" {
		return false
	}
	return reason == "MODEL_CAPACITY_EXHAUSTED" || googleCapacityRE.MatchString(strings.TrimSpace(msg))
}

// googleCapacityRE matches the messages GoogleCapacityExhausted reads
// without a reason: Vertex AI's pay-as-you-go wording (a comma or a full
// stop after "exhausted"), and the Code Assist backend's.
var googleCapacityRE = regexp.MustCompile(`(?i)^resource exhausted[,.] please try again later\b|^no capacity available for model\b`)

// GoogleDeploymentRefused reports a Google FAILED_PRECONDITION that
// refuses the deployment rather than the request, as the Gemini API's
// error table documents its 400 FAILED_PRECONDITION: "Gemini API free
// tier is not available in your country. Please enable billing on your
// project in Google AI Studio.", and "User location is not supported for
// the API use." (the gateway's egress location). The request is valid;
// this project, key or location may not send it: PermissionDenied, which
// another deployment (Vertex AI, another account) does not share, not the
// caller's invalid argument.
func GoogleDeploymentRefused(status, msg string) bool {
	if status != "FAILED_PRECONDITION" {
		return false
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "location is not supported") || strings.Contains(m, "not available in your country") ||
		strings.Contains(m, "enable billing")
}

// modelAccessRE matches a provider's refusal of the deployment's model to
// the account, project or key that asked, in its exact words: Vertex AI's
// 400 FAILED_PRECONDITION "Project `…` is not allowed to use Publisher
// Model `projects/…/publishers/google/models/gemini-1.5-pro-preview-0514`"
// (google/oss-fuzz-gen#369 for Gemini, yym68686/uni-api#41 for Claude on
// Vertex; some clients quote it without the project's name), and Amazon
// Bedrock's 403 AccessDeniedException "You don't have access to the model
// with the specified model ID." (the model's access not granted in that
// account and region: gaiin-platform/amplify-genai-backend#62 through
// Anthropic's Bedrock SDK).
var modelAccessRE = regexp.MustCompile("^(?:Project (?:`[^`]*` )?is not allowed to use Publisher Model `[^`]+`|You don't have access to the model with the specified model ID)\\.?$")

// ModelAccessRefused reports whether msg is a provider's refusal of the
// model to this deployment (modelAccessRE): the request is valid and the
// model exists, but this project, account or region may not use it. The
// adapters read it as KindPermissionDenied (PermissionDenied
// UPSTREAM_PERMISSION_DENIED, the provider's words saying which model),
// whatever the status (Vertex AI's 400, Bedrock's 403), as the Gemini
// FAILED_PRECONDITIONs that refuse the project or its location
// (GoogleDeploymentRefused) and Groq's 403 "The model … is blocked at the
// organization level" are: never retried on the same deployment, and a
// route falls back, since another project, key or region may have the
// model. A model the provider does not know at all stays not found.
func ModelAccessRefused(msg string) bool { return modelAccessRE.MatchString(strings.TrimSpace(msg)) }

// errorInfoQuota is the violation a RATE_LIMIT_EXCEEDED ErrorInfo names
// when no QuotaFailure came with it, as Google's API front end writes a
// quota's refusal ({"reason": "RATE_LIMIT_EXCEEDED", "metadata":
// {"quota_metric": …, "quota_limit": "ApiRequestsPerMinutePerProjectPerRegion",
// "quota_limit_value": "0", "quota_location": "us-south1", "service": …}}):
// the metric, the limit's id and value, the service and the location as
// QuotaFailure's fields and location dimension (the name Gemini's own
// violations give it). nil when the metadata names no quota.
func errorInfoQuota(md map[string]string, clean func(string) string) *errdetails.QuotaFailure_Violation {
	if md["quota_metric"] == "" && md["quota_limit"] == "" {
		return nil
	}
	v := &errdetails.QuotaFailure_Violation{
		ApiService: clean(md["service"]), QuotaMetric: clean(md["quota_metric"]), QuotaId: clean(md["quota_limit"]),
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(md["quota_limit_value"]), 10, 64); err == nil {
		v.QuotaValue = n
	}
	if loc := md["quota_location"]; loc != "" {
		v.QuotaDimensions = map[string]string{"location": clean(loc)}
	}
	return v
}

// GoogleQuotaViolation is one google.rpc.QuotaFailure violation as
// Google's JSON APIs write it (Gemini, Vertex AI): every field of the
// message, int64 values as JSON strings ("quotaValue": "250000"), a value
// of 0 left out (proto3 JSON omits defaults: "limit: 0" in the message, no
// quotaValue in the violation).
type GoogleQuotaViolation struct {
	Subject          string            `json:"subject"`
	Description      string            `json:"description"`
	APIService       string            `json:"apiService"`
	QuotaMetric      string            `json:"quotaMetric"`
	QuotaID          string            `json:"quotaId"`
	QuotaDimensions  map[string]string `json:"quotaDimensions"`
	QuotaValue       JSONInt64         `json:"quotaValue"`
	FutureQuotaValue JSONInt64         `json:"futureQuotaValue"`
}

// Proto is the violation as google.rpc.QuotaFailure.Violation, every
// field as sent, text passed through clean (the adapter's redaction of
// its key); an absent quotaValue is 0, as proto3 reads it, an absent
// futureQuotaValue unset (the field has presence).
func (v *GoogleQuotaViolation) Proto(clean func(string) string) *errdetails.QuotaFailure_Violation {
	out := &errdetails.QuotaFailure_Violation{
		Subject: clean(v.Subject), Description: clean(v.Description), ApiService: clean(v.APIService),
		QuotaMetric: clean(v.QuotaMetric), QuotaId: clean(v.QuotaID), QuotaValue: v.QuotaValue.Value,
	}
	if len(v.QuotaDimensions) > 0 {
		out.QuotaDimensions = make(map[string]string, len(v.QuotaDimensions))
		for k, d := range v.QuotaDimensions {
			out.QuotaDimensions[clean(k)] = clean(d)
		}
	}
	if v.FutureQuotaValue.Set {
		n := v.FutureQuotaValue.Value
		out.FutureQuotaValue = &n
	}
	return out
}

// GoogleHelpLink is one google.rpc.Help link as Google's JSON APIs write it.
type GoogleHelpLink struct {
	Description string `json:"description"`
	URL         string `json:"url"`
}

// JSONInt64 is a protobuf int64 in JSON: a decimal string or a number.
// Set is false when it is absent, null or not an integer; reading it
// never fails, so one odd value does not lose the rest of an error body.
type JSONInt64 struct {
	Value int64
	Set   bool
}

// UnmarshalJSON reads a string or a number; anything else leaves n unset.
func (n *JSONInt64) UnmarshalJSON(b []byte) error {
	*n = JSONInt64{}
	s := strings.TrimSpace(string(b))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var str string
		if json.Unmarshal(b, &str) != nil {
			return nil
		}
		s = strings.TrimSpace(str)
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.Value, n.Set = v, true
	}
	return nil
}

// RetryAdvice is a provider's x-should-retry header.
type RetryAdvice uint8

const (
	RetryUnsaid      RetryAdvice = iota // no header, or a value other than true/false
	RetryAdvised                        // x-should-retry: true
	RetryDiscouraged                    // x-should-retry: false
)

// retryAdvice reads x-should-retry as the official OpenAI and Anthropic
// SDKs do: exactly "true" or "false", anything else says nothing.
func retryAdvice(h http.Header) RetryAdvice {
	switch h.Get("X-Should-Retry") {
	case "true":
		return RetryAdvised
	case "false":
		return RetryDiscouraged
	}
	return RetryUnsaid
}

// NewHTTPError builds the Error for a non-2xx response from its status and
// headers: Kind from the status, RetryAfter from retry-after-ms /
// retry-after, ShouldRetry from x-should-retry, and the request id from
// the named header. The adapter then
// fills Code, Message and Param from the body and may refine Kind and
// RetryAfter.
func NewHTTPError(providerName string, resp *http.Response, requestIDHeader string) *Error {
	date := ResponseDate(resp.Header)
	e := &Error{
		Provider:    providerName,
		Kind:        KindForStatus(resp.StatusCode),
		HTTPStatus:  resp.StatusCode,
		RetryAfter:  RetryAfter(resp.Header, date),
		Date:        date,
		ShouldRetry: retryAdvice(resp.Header),
		Message:     statusMessage(resp), // the adapter's body parsing refines it
	}
	if requestIDHeader != "" {
		e.RequestID = HeaderValue(resp.Header, requestIDHeader)
	}
	return e
}

// statusMessage is the message of an error answer whose body says
// nothing usable: the status's text, "HTTP 529" for a status without one
// (Anthropic's overloaded, a proxy's 520-524), and for a redirect (which
// the gateway follows only on the configured host) where it led.
func statusMessage(resp *http.Response) string {
	msg := http.StatusText(resp.StatusCode)
	if msg == "" {
		msg = "HTTP " + strconv.Itoa(resp.StatusCode)
		if cf := cloudflareStatus[resp.StatusCode]; cf != "" {
			msg += " (" + cf + ")"
		}
	}
	if enc := UnreadEncoding(resp.Header); enc != "" {
		// Its body is not read (the pipeline's transport refuses it):
		// say why the provider's words are missing.
		msg += " (the body is in Content-Encoding " + enc + ", which the gateway cannot read)"
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc, err := resp.Location(); err == nil {
			// Scheme and host only: a query can carry a key.
			msg += fmt.Sprintf(": redirected to %s://%s, not followed (the gateway follows redirects only on the configured base_url's host, ten at most)", loc.Scheme, loc.Host)
		}
	}
	return msg
}

// ProxyMessage is the text of a JSON error body written by what stands in
// front of a provider rather than by the provider: a top-level string
// "message" (Kong's rate limiting, {"message":"API rate limit exceeded"};
// AWS API Gateway's {"message":"Too Many Requests"}), "detail" (a FastAPI
// server's) or "error" ({"error":"Forbidden"}), the first present,
// trimmed and valid UTF-8. "" for any other body, which adapters then
// leave to the status's text (not the raw JSON).
func ProxyMessage(body []byte) string {
	var b struct {
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Error   json.RawMessage `json:"error"`
	}
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &b) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{b.Message, b.Detail, b.Error} {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s = strings.TrimSpace(s); s != "" {
				return strings.ToValidUTF8(s, "\uFFFD")
			}
		}
	}
	return ""
}

// PlainTextMessage is the text of an error body that is neither JSON nor
// markup: a proxy's own words in front of the provider (Envoy's
// "upstream connect error or disconnect/reset before headers. reset
// reason: connection termination", Go's "404 page not found"), its
// blanks collapsed, at most 300 bytes. "" for an empty body, JSON, a
// markup page, or bytes that are not text (invalid UTF-8, control
// characters: a body in a coding the gateway did not decode), which
// leave the message to the status's text. The words an error event in
// plain text carries are kept the same way (Anthropic's stream).
func PlainTextMessage(body []byte) string {
	t := plainText(body)
	if t == nil {
		return ""
	}
	return Shorten(strings.Join(strings.Fields(string(t)), " "), 300)
}

// IsPlainText reports whether an error body is words PlainTextMessage
// would take as its message (not empty, JSON, markup, or bytes that are
// not text), for an adapter that shapes the message itself (Gemini
// redacts the whole text before cutting it).
func IsPlainText(body []byte) bool { return plainText(body) != nil }

// plainText is body trimmed (blanks, a byte order mark) when it is plain
// text, nil otherwise (PlainTextMessage).
func plainText(body []byte) []byte {
	t := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(body), []byte("\uFEFF")))
	if len(t) == 0 || t[0] == '{' || t[0] == '[' || IsMarkup(t) || !utf8.Valid(t) {
		return nil
	}
	for _, c := range t {
		if c < ' ' && c != '\t' && c != '\r' && c != '\n' || c == 0x7f {
			return nil
		}
	}
	return t
}

// cloudflareStatus names the statuses Cloudflare answers with itself
// when the origin behind it (a provider, or the proxy in front of one)
// fails, by the titles of its own error pages ("example.com | 522:
// Connection timed out"); no standard text exists for them, and "HTTP
// 522" alone does not say that Cloudflare, not the provider, answered.
// The kind stays the status's (a 5xx: retried, Unavailable).
var cloudflareStatus = map[int]string{
	520: "Cloudflare: Web server is returning an unknown error",
	521: "Cloudflare: Web server is down",
	522: "Cloudflare: Connection timed out",
	523: "Cloudflare: Origin is unreachable",
	524: "Cloudflare: A timeout occurred",
	525: "Cloudflare: SSL handshake failed",
	526: "Cloudflare: Invalid SSL certificate",
}

// IsMarkup reports whether an error body is a markup page (HTML or XML:
// a proxy's or load balancer's error page in front of the provider)
// rather than the provider's own words. Adapters leave such a body out of
// the message, which keeps the status's text (statusMessage): the page
// says nothing the status does not, and would fill the client's status
// and every retry reason with tags.
func IsMarkup(body []byte) bool {
	for len(body) > 0 {
		switch {
		case body[0] == ' ' || body[0] == '\t' || body[0] == '\r' || body[0] == '\n':
			body = body[1:]
		case len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF: // a UTF-8 BOM, before or after blanks
			body = body[3:]
		default:
			return body[0] == '<'
		}
	}
	return false
}

// maskedRE matches a masked credential as providers echo one: its
// visible ends around a run of asterisks ("sk-proj-********abcd").
var maskedRE = regexp.MustCompile(`[A-Za-z0-9_\-.]*\*{4,}[A-Za-z0-9_\-]*`)

// RedactMaskedSecret replaces with repl each masked form of secret in
// text: a run of at least four asterisks between a start of secret and an
// end of it that show at least four of its characters together, as
// OpenAI's 401 shows the key it refused ("Incorrect API key provided:
// sk-e2e-te********************0000."). Those ends are still the key's:
// they tell a caller which of the gateway's keys the deployment holds
// and part of it. Other asterisks (Markdown, a key that is not the
// secret) are left.
func RedactMaskedSecret(text, secret, repl string) string {
	if len(secret) < 8 || !strings.Contains(text, "****") {
		return text
	}
	return maskedRE.ReplaceAllStringFunc(text, func(m string) string {
		i, j := strings.IndexByte(m, '*'), strings.LastIndexByte(m, '*')
		pre, suf := strings.TrimLeft(m[:i], "."), m[j+1:]
		if len(pre)+len(suf) < 4 || len(pre)+len(suf) >= len(secret) || !strings.HasPrefix(secret, pre) || !strings.HasSuffix(secret, suf) {
			return m
		}
		return m[:len(m[:i])-len(pre)] + repl
	})
}

// RetryAfter reads the delay a provider asked for: retry-after-ms
// (milliseconds, OpenAI and Azure), else x-ms-retry-after-ms (Azure's
// services, milliseconds: the Azure SDKs' throttling policy reads
// "retry-after-ms", "x-ms-retry-after-ms" and "Retry-After" in that
// order), else retry-after in seconds or as an HTTP date (relative to
// now, the answer's Date). A value that does not parse, is not positive
// or is a date already past gives way to the next header; 0 when none
// gives a delay.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	for _, name := range [...]string{"Retry-After-Ms", "X-Ms-Retry-After-Ms"} {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
				return scaled(ms, time.Millisecond)
			}
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0) { // NaN too
			return 0
		}
		return scaled(secs, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// scaled is n units as a Duration, the longest Duration for a value
// beyond it (a header of "99999999999" seconds or "Inf" converted
// directly wraps to a negative Duration, which read as no delay at all).
// n is positive.
func scaled(n float64, unit time.Duration) time.Duration {
	if d := n * float64(unit); d < float64(math.MaxInt64) {
		return time.Duration(d)
	}
	return time.Duration(math.MaxInt64)
}

// TransportError classifies an error from http.Client.Do or from reading a
// response body: the caller's cancellation, a deadline or timeout, an
// answer cut short, or a connection failure. An *Error the transport
// returned (pipeline's htmlAnswer) is returned as it is.
func TransportError(providerName string, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		// The transport's own verdict on what it read (an HTML page
		// instead of an answer): as it is, the adapter's name on it.
		pe.Provider = providerName
		return pe
	}
	e := &Error{Provider: providerName, Err: err}
	var ne net.Error
	var le *LimitError
	switch {
	case errors.As(err, &le):
		e.Kind = KindResourceExhausted
		e.Message = le.Msg
	case errors.Is(err, context.Canceled):
		e.Kind = KindCanceled
		e.Message = "request canceled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = KindTimeout
		e.Message = "deadline exceeded"
	case errors.As(err, &ne) && ne.Timeout():
		e.Kind = KindTimeout
		e.Message = "timeout talking to provider"
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, new(flate.CorruptInputError)):
		// A body labelled gzip that is not (a proxy adding the header to
		// plain bytes) or whose gzip is corrupt: what the provider's side
		// sent, read whole, not a connection that failed; the same
		// answer would come again (a cut gzip body is io.ErrUnexpectedEOF,
		// below).
		e.Kind = KindBadResponse
		e.Message = "the body is not the gzip its Content-Encoding names: " + err.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The answer was cut: the connection closed inside a body
		// (Content-Length or chunked framing unfinished). The Stream
		// contract's kind for a cut stream; retried like a 5xx before the
		// first relayed byte.
		e.Kind = KindUnavailable
		e.Message = "the provider closed the connection in the middle of its answer"
	default:
		e.Kind = KindConnection
		e.Message = "connection error: " + redactURLError(err)
	}
	return e
}

// ErrBrokeMidAnswer marks (in Error.Err, wrapping the transport's own
// error) a connection that broke (a reset, a broken pipe) or closed (a
// body cut short of its length, none at all) while the provider's answer
// was read, after its headers: unlike KindConnection's
// failures, the provider had answered, so it may have billed the call,
// and its request id and rate limits are known. Transient like a body
// cut short: KindUnavailable, retried while nothing was relayed.
var ErrBrokeMidAnswer = errors.New("the connection broke in the middle of the provider's answer")

// brokeMidAnswer is the Err of BodyReadError's failure: ErrBrokeMidAnswer
// that unwraps to what the transport said.
type brokeMidAnswer struct{ err error }

func (b *brokeMidAnswer) Error() string        { return b.err.Error() }
func (b *brokeMidAnswer) Unwrap() error        { return b.err }
func (b *brokeMidAnswer) Is(target error) bool { return target == ErrBrokeMidAnswer }

// BodyReadError classifies an error from reading the body of an answer
// whose headers came (a unary answer's body, a stream's events) as
// TransportError does, but for a connection failure: there the provider
// had answered, so it is not KindConnection ("before any response
// byte") but the kind of an answer cut in the middle, KindUnavailable
// (as a clean close inside the body is, io.ErrUnexpectedEOF), its
// message saying that the provider answered and may have billed the
// call, its Err ErrBrokeMidAnswer.
func BodyReadError(providerName string, err error) *Error {
	e := TransportError(providerName, err)
	if e.Kind == KindConnection && e.Err == err {
		e.Kind = KindUnavailable
		e.Message = "the provider answered, then the connection broke in the middle of its answer (the call may have been billed): " + redactURLError(err)
		e.Err = &brokeMidAnswer{err}
	} else if e.Kind == KindUnavailable && e.Err == err && errors.Is(err, io.ErrUnexpectedEOF) {
		// Closed inside the body: the provider answered too (its
		// status is a retry reason's upstream_status, as for a reset);
		// kind and message stay TransportError's.
		e.Err = &brokeMidAnswer{err}
	}
	return e
}

// redactURLError drops the URL (which may carry a key= query parameter)
// from a *url.Error's text.
func redactURLError(err error) string {
	type unwrapper interface{ Unwrap() error }
	var ue interface {
		error
		Timeout() bool
	}
	if errors.As(err, &ue) {
		if u, ok := ue.(unwrapper); ok && u.Unwrap() != nil {
			return u.Unwrap().Error()
		}
	}
	return err.Error()
}

// AnswerFailed adds to an error about a 2xx answer (its body could not be
// read or parsed, or held an error object) what the answer's head
// reported: the request id when the error names none, and meta (request
// id, rate limits) under what the error's own meta says. err is returned
// unchanged when it is not an *Error; meta may be nil.
func AnswerFailed(err error, requestID string, meta *llmrelayv1.ResponseMeta) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	if pe.RequestID == "" {
		pe.RequestID = requestID
	}
	if meta != nil {
		if pe.Meta != nil {
			MergeMeta(meta, pe.Meta)
		}
		pe.Meta = meta
	}
	return err
}

// ErrNotAnAnswer marks (in Error.Err) a 2xx answer that is not the API's
// answer (the pipeline's transport tells): a web page, or a body in a
// content coding the gateway cannot read (UnreadEncoding); the
// deployment's base_url or what stands in front of it is at fault, never
// the request.
var ErrNotAnAnswer = errors.New("the answer is not the API's (a web page, or a content coding the gateway cannot read)")

// UnreadEncoding is the Content-Encoding of an answer whose body the
// transports left encoded: any coding but gzip (which the gateway asks
// for, and its transports decode, removing the header) and identity; ""
// for none. A proxy in front of a provider may compress with Brotli or
// zstd whatever the client accepts.
func UnreadEncoding(h http.Header) string {
	enc := strings.TrimSpace(strings.Join(h.Values("Content-Encoding"), ", "))
	switch strings.ToLower(enc) {
	case "", "identity", "gzip", "x-gzip":
		return ""
	}
	return Shorten(enc, 40)
}

// ErrStreamCut marks (in Error.Err) a stream that ended before the
// provider's final event: the connection closed, or the body ended, mid
// answer. Unlike output that does not parse, a cut is transient, so the
// retry policy retries it while nothing has been relayed.
var ErrStreamCut = errors.New("stream ended before the provider's final event")

// StreamCut is the KindBadResponse Error of a stream cut before its final
// event (ErrStreamCut).
func StreamCut(providerName string, format string, args ...any) *Error {
	e := BadResponse(providerName, format, args...)
	e.Err = ErrStreamCut
	return e
}

// BadResponse is the Error for provider output that could not be parsed.
// A JSON type mismatch among args is said in the wire's words (which field
// held what), not encoding/json's, which names the adapter's Go types
// ("cannot unmarshal array into Go value of type gemini.generateContentResponse");
// what an error wrapping it says around it is kept.
func BadResponse(providerName string, format string, args ...any) *Error {
	cloned := false
	for i, a := range args {
		var te *json.UnmarshalTypeError
		if err, ok := a.(error); ok && errors.As(err, &te) {
			if !cloned { // the caller's slice (args...) stays as it was
				args, cloned = slices.Clone(args), true
			}
			words := jsonTypeMismatch(te)
			if s, raw := err.Error(), te.Error(); s != raw && strings.Contains(s, raw) {
				words = strings.Replace(s, raw, words, 1)
			}
			args[i] = words
		}
	}
	return &Error{Provider: providerName, Kind: KindBadResponse, Message: fmt.Sprintf(format, args...)}
}

// jsonTypeMismatch says what a JSON type error found and where, without the
// Go type names: "content is a JSON string where an array belongs"; for a
// number that does not fit the field's type (a fraction or too large for
// an integer, a negative count, beyond a float's range) "n is a JSON
// number 1.5, not a 64-bit integer".
func jsonTypeMismatch(te *json.UnmarshalTypeError) string {
	where := "the body"
	if te.Field != "" {
		where = te.Field
	}
	want := "another type"
	if te.Type != nil {
		switch k := te.Type.Kind(); k {
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.Slice, reflect.Array:
			want = "an array"
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "a boolean"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			if strings.HasPrefix(te.Value, "number") {
				// A number, but not one the field holds.
				return fmt.Sprintf("%s is a JSON %s, not %s", where, te.Value, numberType(te.Type))
			}
			want = "a number"
			if k < reflect.Float32 {
				want = "an integer"
			}
		}
	}
	return fmt.Sprintf("%s is a JSON %s where %s belongs", where, te.Value, want)
}

// numberType names a numeric Go type in JSON's terms: "a 64-bit integer".
func numberType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return fmt.Sprintf("a %d-bit floating-point number", t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a %d-bit unsigned integer", t.Bits())
	}
	return fmt.Sprintf("a %d-bit integer", t.Bits())
}

// BaseURL validates a provider base URL (http or https, a host, no query
// or fragment) and returns it without a trailing slash.
func BaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", errors.New("invalid base URL: it does not parse as a URL") // url's error quotes it, credentials and all
	}
	// Errors show the URL without user info and query: both can carry
	// credentials.
	shown := *u
	shown.User, shown.RawQuery, shown.Fragment = nil, "", ""
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("invalid base URL %q: scheme must be http or https", shown.String())
	case u.Host == "":
		return "", fmt.Errorf("invalid base URL %q: no host", shown.String())
	case u.User != nil:
		return "", fmt.Errorf("invalid base URL %q: no user info allowed (keys go in api_key)", shown.String())
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("invalid base URL %q: no query or fragment allowed", shown.String())
	}
	u.RawPath = ""
	u.Path = strings.TrimRight(u.Path, "/")
	return u.String(), nil
}

// BodyCutAfterEndWarning is the warning of a unary answer whose body
// held one whole JSON value but whose framing broke after it
// (ReadBody).
const BodyCutAfterEndWarning = "the connection broke after the provider's complete answer (the body did not end cleanly); the answer is complete"

// BodyIdleAfterEndWarning is the warning of a unary answer whose body
// held one whole JSON value but did not end: the idle timeout ended it
// (ReadBody).
const BodyIdleAfterEndWarning = "the provider kept the body open after its complete answer; it was ended by the idle timeout (the answer is complete)"

// ReadBody reads a success body of at most limit bytes: a TransportError
// when reading fails or the body is empty, a BadResponse when the body is
// larger. A body whose
// length the provider declared is read into one buffer of that size.
//
// A body that is one complete JSON object or array when the connection
// broke (a chunked body without its last chunk, a reset, fewer bytes
// than declared: the framing, not the answer) is the answer: it is
// returned with BodyCutAfterEndWarning, which the adapter puts in the
// answer's warnings, as a stream complete before its connection broke
// is (CutAfterEnd). Retried, it would be paid for twice. So is one
// whose body stayed open after it until the idle timeout ended the read
// (BodyIdleAfterEndWarning, as a stream's IdleAfterEndWarning). A body
// cut inside its JSON still fails as before (transient, retried).
//
// A body that is an event stream (StreamAnswer: a server that ignored
// "stream": false) is a KindBadResponse Error carrying it, which the
// pipeline folds into the answer with the adapter's stream reader.
func ReadBody(providerName string, resp *http.Response, limit int64) (body []byte, warning string, e *Error) {
	var err error
	if n := resp.ContentLength; n > limit {
		return nil, "", BadResponse(providerName, "response body larger than %d bytes (Content-Length %d)", limit, n)
	} else if n >= 0 {
		if r, ok := resp.Body.(Reserver); ok {
			// Charged before the buffer exists: four large answers at
			// once must fail, not take the memory first.
			if err := r.Reserve(n); err != nil {
				return nil, "", TransportError(providerName, err)
			}
		}
		body = make([]byte, n)
		var m int
		m, err = io.ReadFull(resp.Body, body)
		if err == nil {
			// The declared length is all there is: the next read must
			// say EOF (a body longer than declared is not possible on
			// HTTP/1.1 and HTTP/2, but a RoundTripper could lie).
			var one [1]byte
			if k, rerr := resp.Body.Read(one[:]); k > 0 {
				return nil, "", TransportError(providerName, fmt.Errorf("response body longer than its Content-Length %d", n))
			} else if rerr != nil && rerr != io.EOF {
				err = rerr
			}
		} else {
			body = body[:m]
		}
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	if err != nil {
		idle := errors.Is(err, ErrIdleTimeout)
		if int64(len(body)) <= limit && (idle || CutAfterEnd(err)) {
			if mt := streamMediaType(resp.Header, body); mt != "" {
				// An event stream that stayed open, or broke, after what
				// it sent: its reader tells a complete stream from a cut
				// one, as it does for a stream request.
				e := streamAnswerError(providerName, resp, body, mt)
				e.Err.(*StreamAnswer).tail = err
				return nil, "", e
			}
		}
		if int64(len(body)) > limit || !(idle || CutAfterEnd(err)) || !wholeJSON(body) {
			return nil, "", BodyReadError(providerName, err)
		}
		warning = BodyCutAfterEndWarning
		if idle {
			warning = BodyIdleAfterEndWarning
		}
	}
	if int64(len(body)) > limit {
		return nil, "", BadResponse(providerName, "response body larger than %d bytes", limit)
	}
	if mt := streamMediaType(resp.Header, body); mt != "" {
		// The events a streaming request gets (a server that ignored
		// "stream": false): the pipeline reads them with the adapter's
		// stream reader (StreamAnswer).
		return nil, "", streamAnswerError(providerName, resp, body, mt)
	} else if warning == "" {
		if j, ok := jsonThenDone(resp.Header, body); ok {
			body, warning = j, JSONThenDoneWarning
		}
	}
	if len(body) == 0 {
		// No API answers a call with nothing: the connection closed
		// after the head (a body delimited by the close, or a proxy's
		// Content-Length: 0). Transient like a body cut short (and like
		// an empty stream, a cut), not output that failed to parse.
		e := BodyReadError(providerName, io.ErrUnexpectedEOF)
		e.Message = "the provider sent no answer after its headers (empty body)"
		return nil, "", e
	}
	return body, warning, nil
}

// wholeJSON reports whether b is one complete JSON object or array
// (blanks around it allowed): no prefix of a longer answer is (its
// brackets would still be open), unlike a number or a literal.
func wholeJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t)
}

// CloseTruncatedJSON repairs an error body cut inside its JSON object (a
// connection that closed mid-body, a proxy's or the gateway's read limit
// cutting a long one): what it held up to its last complete member or
// element, its open objects and arrays closed
// ({"error":{"message":"Rate limit reached …","type":"requests","par →
// {"error":{"message":"Rate limit reached …","type":"requests"}}), so
// the adapter reads its message, type and code as it would read the
// whole (the message alone states the delay, a spent quota or a context
// overflow). ok is false, and b is returned, when b is not an object cut
// short: valid JSON, no object, or one broken otherwise than by its end.
func CloseTruncatedJSON(b []byte) (out []byte, ok bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' || json.Valid(t) {
		return b, false
	}
	type level struct {
		object   bool
		expected bool // an object expects a key next
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var stack []level
	cut, closers := -1, ""
	closing := func() string {
		var sb strings.Builder
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].object {
				sb.WriteByte('}')
			} else {
				sb.WriteByte(']')
			}
		}
		return sb.String()
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) || cut < 0 {
				return b, false
			}
			break
		}
		if len(stack) == 0 && cut >= 0 {
			return b, false // a second value after the first: not cut short
		}
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
		} else if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expected {
			stack[len(stack)-1].expected = false // a key: nothing complete yet
			continue
		} else if isDelim {
			stack = append(stack, level{object: d == '{', expected: d == '{'})
			cut, closers = int(dec.InputOffset()), closing()
			continue
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expected = true
		}
		if _, num := tok.(json.Number); num && int(dec.InputOffset()) == len(t) {
			// A number at the very end may be cut inside (429 → 42):
			// not complete, whatever it reads as.
			break
		}
		cut, closers = int(dec.InputOffset()), closing()
		if len(stack) == 0 {
			break
		}
	}
	if len(stack) == 0 {
		return b, false // complete, with something after it
	}
	out = append(append(make([]byte, 0, cut+len(closers)), t[:cut]...), closers...)
	if !json.Valid(out) {
		return b, false
	}
	return out, true
}
