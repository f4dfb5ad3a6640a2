package openai

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// maxVoyageEmbedInputs is the most inputs Voyage AI's /v1/embeddings takes
// in one request ("The maximum length of the list is 1,000",
// docs.voyageai.com/reference/embeddings-api); the gateway takes 2048.
const maxVoyageEmbedInputs = 1000

// maxMistralEmbedInputs is the most inputs Mistral's /v1/embeddings takes
// in one request: 257 are refused with "Too many inputs in request, split
// into more batches." (code 3210), found against the live API by
// raphaelmansuy/edgequake-llm (its PR #74 and the fix after it: 256 pass,
// 257 fail) and by a Rust client's MAX_DOCUMENTS (the same two counts);
// the error states no limit.
const maxMistralEmbedInputs = 256

// maxGeminiEmbedInputs is the most inputs the Gemini API's
// OpenAI-compatible /embeddings takes in one request: it embeds them with
// batchEmbedContents, which refuses more ("* BatchEmbedContentsRequest.
// requests: at most 100 requests can be in one batch", a 400
// INVALID_ARGUMENT through that endpoint as geldata/gel#9032 quotes it;
// StarTrail-org/LEANN#214 caps its batches to 100 for that host). The
// Gemini adapter splits its own requests so (gemini.maxBatchEmbed).
const maxGeminiEmbedInputs = 100

// maxDashScopeEmbedInputs is the most inputs DashScope's compatible-mode
// /embeddings takes in one request for its current models
// (text-embedding-v3 and v4: "batch size is invalid, it should not be
// larger than 10", batchLimitRE); v1 and v2 took 25, which parts of 10
// serve too, in more requests.
const maxDashScopeEmbedInputs = 10

// MaxEmbedInputs is the most inputs one embeddings request to this API may
// carry where the base URL tells it (Voyage AI, Mistral, the Gemini API's
// compatible endpoint, DashScope), 0 otherwise. The gateway sends a call with more as
// several requests (providers[].max_embedding_inputs overrides it, e.g.
// for a TEI server).
func (p *Provider) MaxEmbedInputs() int {
	switch {
	case voyageHost(p.baseURL):
		return maxVoyageEmbedInputs
	case mistralHost(p.baseURL):
		return maxMistralEmbedInputs
	case geminiAPIHost(p.baseURL):
		return maxGeminiEmbedInputs
	case dashscopeHost(p.baseURL):
		return maxDashScopeEmbedInputs
	}
	return 0
}

// geminiAPIHost reports whether baseURL is the Gemini API's
// (generativelanguage.googleapis.com; not Vertex AI's hosts).
func geminiAPIHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "generativelanguage.googleapis.com")
}

// voyageHost reports whether baseURL is Voyage AI's API (api.voyageai.com).
func voyageHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "voyageai.com" || strings.HasSuffix(h, ".voyageai.com")
}

// tokenSizeRE matches NVIDIA NIM's refusal of an embedding input longer
// than the model takes (its truncate defaults to NONE): 400
// {"error":"Input length 1728 exceeds maximum allowed token size 512"}
// (the body a public failure log quotes; garrytan/gbrain#4530 and
// run-llama/llama_index#15180 the words for nv-embedqa-e5-v5, and
// elastic/elasticsearch's NvidiaEmbeddingsResponseHandler reads them as
// content too large).
var tokenSizeRE = regexp.MustCompile(`(?i)\binput length \d+ exceeds maximum allowed token size \d+\b`)

// tpmTooLargeRE reads OpenAI's 429 for a request of more tokens than the
// organization's whole per-minute limit: "Request too large for gpt-4o in
// organization org-… on tokens per min (TPM): Limit 30000, Requested
// 36278. The input or output tokens must be reduced in order to run
// successfully." (type tokens, code rate_limit_exceeded: Aider-AI/aider#1880,
// testdata/err_429_request_too_large.http), the same words for its
// embedding models (text-embedding-3-small: "Limit 1000000, Requested
// 1003160").
var tpmTooLargeRE = regexp.MustCompile(`(?i)\brequest too large for\b.{0,300}?\bon tokens per min \(TPM\): limit (\d{1,12}), requested (\d{1,12})\b`)

// tpmParts is the fewest requests a TPM refusal's counts need (requested
// over limit, rounded up), 0 when the message is not one.
func tpmParts(msg string) int {
	m := tpmTooLargeRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	limit, err1 := strconv.ParseInt(m[1], 10, 64)
	asked, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil || limit <= 0 || asked <= limit {
		return 0
	}
	return int(min((asked+limit-1)/limit, 1<<20))
}

// voyageInputRE reads the input Voyage AI names when one is longer than
// the model's context and truncation is off: "Request to model
// 'voyage-4-large' failed. The example at index 0 in your batch has too
// many tokens and does not fit into the model's context window of 32000
// tokens. …" (a 400 with {"detail": …}, as latitude-dev/latitude-llm#3554
// quotes it).
var voyageInputRE = regexp.MustCompile(`(?i)\bexample at index (\d+) in your batch\b`)

// embedInputParam names the input an embeddings error is about, as
// OpenAI's own "Invalid 'input[0]': …" does (param input[N]), where the
// message says it another way (Voyage's "example at index N in your
// batch"): the caller learns which input to shorten. It also marks
// Ollama's NaN refusal (ollamaNaN) of a request of inputs inputs.
func embedInputParam(err error, inputs int) error {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Kind == provider.KindInvalidRequest && tokenSizeRE.MatchString(pe.Message) {
		// One input over the model's tokens, as NVIDIA NIM says it:
		// the same input fails on this model every time; another
		// deployment's model may take it (context length, as OpenAI's
		// "maximum input length" is).
		pe.Kind = provider.KindContextLength
	}
	if pe != nil && pe.Param == "" {
		if m := voyageInputRE.FindStringSubmatch(pe.Message); m != nil {
			pe.Param = "input[" + m[1] + "]"
		}
	}
	if pe != nil && inputs > 1 && (pe.Kind == provider.KindInvalidRequest || pe.Kind == provider.KindContextLength) {
		switch {
		case batchTooLarge(pe):
			// The inputs together are over the provider's cap on a
			// request's tokens (not one input over the model's
			// context): the gateway sends them again in smaller
			// requests. Mistral's words read as a context-length
			// error, OpenAI's as an invalid request.
			pe.BatchTooLarge, pe.BatchParts = true, batchParts(pe.Message)
		case batchLimit(pe.Message) > 0 && batchLimit(pe.Message) < inputs:
			// Too many inputs for one request, the limit said: the
			// gateway sends them in requests of at most that many.
			pe.BatchTooLarge, pe.BatchLimit = true, batchLimit(pe.Message)
		}
	}
	if pe != nil && inputs > 1 && pe.Kind == provider.KindRateLimited {
		if parts := tpmParts(pe.Message); parts > 1 {
			// One request of more tokens than the organization's whole
			// per-minute budget: no wait lets it pass, but parts of
			// fewer tokens each do (waiting between them as the
			// ordinary 429s say).
			pe.BatchTooLarge, pe.BatchParts = true, parts
		}
	}
	if pe != nil && pe.HTTPStatus >= 500 && pe.Kind == provider.KindUnsupported {
		// Ollama's 500 for a model that cannot embed (its runner's "this
		// model does not support embeddings", through /v1/embeddings as
		// chunkhound/chunkhound#41 quotes it; refineKind reads it as an
		// operation the model does not do, provider.OllamaRefusalKind):
		// not a server fault; the same request fails again on any server
		// with that model, so it is not retried (a route falls back).
		pe.ShouldRetry = provider.RetryDiscouraged
	}
	if pe != nil && pe.Kind == provider.KindUnavailable && ollamaNaN(pe.Message) {
		// The model computed a NaN for an input (bge-m3 and
		// nomic-embed-text on some texts), which Ollama's JSON encoder
		// refuses with a 500, through its /v1 routes as through
		// /api/embed: the same input fails the same way every time with
		// this model, so it is not retried here (another deployment,
		// another model, may serve it).
		pe.ShouldRetry = provider.RetryDiscouraged
		pe.Message += " (the model computed a NaN for this input, which Ollama cannot send as JSON: the same input fails again with this model)"
		if inputs > 1 {
			pe.Message += fmt.Sprintf(" (one of the %d inputs fails the whole batch; Ollama does not say which: embed them apart to find it)", inputs)
		}
	}
	return err
}

// ollamaNaNRE matches Ollama's error when the model's output holds a NaN
// (or an infinity), which Go's encoding/json cannot write: "failed to
// encode response: json: unsupported value: NaN" (ollama/ollama#9639,
// #14657, the latter through /v1/embeddings; hang-in/seCall#5 quotes the
// native body whole).
var ollamaNaNRE = regexp.MustCompile(`(?i)json: unsupported value: [+-]?(nan|inf)`)

// ollamaNaN reports whether an error message is that refusal.
func ollamaNaN(msg string) bool { return ollamaNaNRE.MatchString(msg) }

// batchTokensRE matches a refusal of an embeddings request's tokens summed
// over its inputs: Mistral's "Too many tokens in batch. Max is 16384 got
// 17555" (aurelio-labs/semantic-router#297), OpenAI's "Requested 453357
// tokens, max 300000 tokens per request" (its code max_tokens_per_request,
// OpenDataBox/CrackSQL#27), Voyage AI's "The max allowed tokens per
// submitted batch is 120000. Your batch has 121138 tokens after
// truncation." (its 400 {"detail": …}, sigoden/aichat#825), and Mistral's
// code 3210 of 2025 on, for the tokens or the number of inputs ("Too many
// tokens overall, split into more batches.", "Too many inputs in request,
// split into more batches.": raphaelmansuy/edgequake-llm#74), neither
// with a count, and GitHub Models' 413 tokens_limit_reached ("Request body
// too large for gpt-4o model. Max size: 8000 tokens.", the body
// eslint/tsc-meetings#593 quotes; "… text-embedding-3-small … Max size:
// 64000 tokens" for its embeddings, nlweb-ai/NLWeb#164), the cap without
// the count asked.
var batchTokensRE = regexp.MustCompile(`(?i)\btoo many tokens in (?:the )?batch\b|\btokens per request\b|\bmax allowed tokens per submitted batch\b|\bsplit into more batches\b|\brequest body too large for\b.{0,200}?\bmax size: \d{1,12} tokens\b`)

// batchTooLarge reports whether an embeddings error refuses the request's
// inputs together: OpenAI's code max_tokens_per_request, or the words of
// batchTokensRE.
func batchTooLarge(pe *provider.Error) bool {
	return pe.Code == "max_tokens_per_request" || batchTokensRE.MatchString(pe.Message)
}

// batchLimitRE reads the most inputs a server takes in one embeddings
// request from its refusal of more: Azure OpenAI's "Too many inputs. The
// max number of inputs is 16.  We hope to increase …" (its deployments of
// text-embedding-ada-002 before 2024: Mintplex-Labs/anything-llm#184
// quotes the body whole), TEI's "batch size 64 > maximum allowed batch
// size 32" (its 413), Cohere's "invalid request: total number of texts
// must be at most 96 - received 131" (misbahsy/RAGTune#2 quotes it),
// DashScope's "<400> InternalError.Algo.InvalidParameter: Value error,
// batch size is invalid, it should not be larger than 10.: input.contents"
// (its compatible-mode /v1/embeddings for text-embedding-v3 and v4, whose
// limit is 10 inputs where v1 and v2 took 25: jjyaoao/HelloAgents#27
// quotes the body whole), and Gemini's "at most 100 requests can be in
// one batch" (maxGeminiEmbedInputs), through a proxy that does not tell
// the host.
var batchLimitRE = regexp.MustCompile(`(?i)\bthe max number of inputs is (\d{1,6})\b|\bmaximum allowed batch size (\d{1,6})\b|\bnumber of texts must be at most (\d{1,6})\b|\bbatch size is invalid, it should not be larger than (\d{1,6})\b|\bat most (\d{1,6}) requests can be in one batch\b`)

// batchLimit is the limit a refusal's message states, 0 when none.
func batchLimit(msg string) int {
	m := batchLimitRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(strings.Join(m[1:], ""))
	if err != nil {
		return 0
	}
	return n
}

// batchTokensCountRE reads the tokens asked and allowed from a refusal of
// a request's tokens together: OpenAI's "Requested 453357 tokens, max
// 300000 tokens per request", Mistral's "Max is 16384 got 17555", Voyage's
// "The max allowed tokens per submitted batch is 120000. Your batch has
// 121138 tokens".
var batchTokensCountRE = regexp.MustCompile(`(?i)\brequested (\d{1,12}) tokens, max (\d{1,12}) tokens\b|\bmax is (\d{1,12}) got (\d{1,12})\b|\bper submitted batch is (\d{1,12})\. your batch has (\d{1,12}) tokens\b`)

// batchParts is the fewest requests a refusal's counts need (the tokens
// asked over those allowed, rounded up), 0 when it gives none.
func batchParts(msg string) int {
	m := batchTokensCountRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	asked, allowed := m[1], m[2]
	switch {
	case m[4] != "":
		asked, allowed = m[4], m[3]
	case m[6] != "":
		asked, allowed = m[6], m[5]
	}
	a, err1 := strconv.ParseInt(asked, 10, 64)
	b, err2 := strconv.ParseInt(allowed, 10, 64)
	if err1 != nil || err2 != nil || b <= 0 || a <= b {
		return 0
	}
	return int(min((a+b-1)/b, 1<<20))
}
