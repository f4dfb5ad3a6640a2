package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Keys of ResponseMeta.extended set by this adapter.
const (
	extSystemFingerprint = "system_fingerprint"
	extServiceTier       = "service_tier"
	extProcessingMS      = "openai_processing_ms"
	extAzureDeployment   = "azure_deployment"
	extAzureRegion       = "azure_region"
	// extGroqRegion is the Groq region that served the call
	// (x-groq-region: "yul", "msp"), as Azure's is azure_region.
	extGroqRegion           = "groq_region"
	extPromptFilterResults  = "prompt_filter_results"
	extContentFilterResults = "content_filter_results"
	extContentFilterResult  = "content_filter_result"
	extLogprobs             = "logprobs"
	extReasoningLogprobs    = "reasoning_logprobs"
	extAnnotations          = "annotations"
	// extUpstreamProvider is the upstream that served a routed call:
	// OpenRouter's "provider" body field, Hugging Face's router's
	// x-inference-provider header.
	extUpstreamProvider = "upstream_provider"
	// extGatewayCost is the Vercel AI Gateway's charge for the call
	// (provider.VercelGateway), as the anthropic adapter keeps it.
	extGatewayCost = "gateway_cost"
	// extUpstreamRequestID is the request id of the upstream a router
	// relayed an error from, as the upstream's body gave it (OpenRouter's
	// metadata.raw); the error's own request id stays the router's.
	extUpstreamRequestID = "upstream_request_id"
	// extNativeFinishReason is the upstream model's own finish reason an
	// aggregator gives beside its normalized one (OpenRouter's
	// native_finish_reason: "STOP", "end_turn", "MAX_TOKENS", …);
	// provider_finish_reason keeps the finish_reason the answer has.
	extNativeFinishReason = "native_finish_reason"
	// extStopSequence is the stop string vLLM (stop_reason) or SGLang
	// (matched_stop) says ended the answer (also meta.stop_sequence);
	// extStopTokenID the stop token id they give instead (a number).
	extStopSequence = "stop_sequence"
	extStopTokenID  = "stop_token_id"
	// Perplexity's sources and extras, as sent.
	extCitations        = "citations"
	extSearchResults    = "search_results"
	extSearchImages     = "search_images"
	extRelatedQuestions = "related_questions"
	// extSizeLimit is the tokens a Mistral call was charged (queryCost).
	extSizeLimit = "rate_limit_by_size"
	// extModeration is OpenAI's moderation results (Chat Completions and
	// Responses), as sent.
	extModeration = "moderation"
	// extToolUsage is the Responses API's usage of hosted tools
	// (tool_usage: image_gen tokens, web_search calls, …), as sent.
	extToolUsage = "tool_usage"
	// extTimeInfo is Cerebras's time_info object, as sent.
	extTimeInfo = "time_info"
	// extLatencyCheckpoint and extRouting are Azure OpenAI's
	// latency_checkpoint (timings in milliseconds) and routing (the
	// serving replica) objects of a stream's usage chunk, as sent.
	extLatencyCheckpoint = "latency_checkpoint"
	extRouting           = "routing"
	// extContentFilterOffsets is the range of the answer ({check_offset,
	// start_offset, end_offset}) Azure's latest content filter
	// annotation is for, as sent; extContentFilterBlockedOffsets the
	// range of the annotation whose verdict blocked the answer.
	extContentFilterOffsets        = "content_filter_offsets"
	extContentFilterBlockedOffsets = "content_filter_blocked_offsets"
	// extTimings is llama.cpp's server timings object, as sent.
	extTimings = "timings"
	// extSeed is the sampling seed the server says it used (Together's
	// choice seed, Groq's x_groq.seed): the JSON number's text, a string
	// (seedText).
	extSeed = "seed"
)

// decodeLenient unmarshals JSON, tolerating fields of an unexpected type:
// those are skipped and reported as a warning, the rest is kept. Syntax
// errors fail.
func decodeLenient(raw []byte, v any) (warning string, err error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return "", errors.New("not a JSON object")
	}
	err = json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("ignored response field %q: unexpected JSON %s", te.Field, te.Value), nil
	}
	return "", err
}

// parseChatResponse converts a chat.completion body.
func (p *Provider) parseChatResponse(raw []byte) (*provider.Result, error) {
	var w chatResponse
	var warn string
	if !decodeChunkFast(raw, &w, nil, nil) {
		w = chatResponse{}
		var err error
		if warn, err = decodeLenient(raw, &w); err != nil {
			return nil, provider.BadResponse(p.name, "invalid chat completion JSON: %v", err)
		}
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		// An error object in a 2xx body (some compatible servers).
		e := p.errorFromObject(w.Error, 0, "", nil)
		if w.ChunkExtras != nil {
			applyErrorType(e, w.ErrorType, true)
		}
		// OpenRouter's rate limit met while the answer was made: the
		// error object's metadata.headers (a reset in seconds would need
		// the Date, which the body does not have; OpenRouter's is a Unix
		// time).
		withRouterRateLimit(e, w.Error, nil)
		return nil, e
	}
	if w.ChunkExtras != nil {
		if e := p.minimaxError(w.BaseResp, 0); e != nil {
			// MiniMax answers a failed call with HTTP 200 and a
			// base_resp status (testdata/dialect_minimax_base_resp_1008.http).
			return nil, e
		}
	}
	if w.Choices == nil && w.ID == "" && w.Object == "" && w.Model == "" && w.usage() == nil {
		// Not a chat completion at all (no choices key, no id, object,
		// model or usage): an answer the caller cannot use, not an empty
		// one. "choices": [] alone stays an empty answer with a warning.
		return nil, notAnswer(provider.BadResponse(p.name, "the response is not a chat completion: it has no choices, id, model or usage"))
	}
	if len(w.Choices) == 0 && w.Object == "error" {
		// vLLM's and others' error object ({"object":"error","message":
		// ...,"code":404}) with status 200.
		return nil, notAnswer(provider.BadResponse(p.name, "the response is an error object"))
	}
	meta := &llmrelayv1.ResponseMeta{}
	if warn != "" {
		meta.Warnings = append(meta.Warnings, warn)
	}
	p.bodyMeta(meta, &w)
	meta.ProviderRequestId = bodyRequestID(raw)
	if w.ChunkExtras != nil {
		setSources(meta, w.ChunkExtras)
		for _, f := range w.serverStats() {
			if isPresent(f.raw) {
				setExtendedJSON(meta, f.key, f.raw)
			}
		}
		if isPresent(w.Moderation) {
			setExtendedJSON(meta, extModeration, w.Moderation)
		}
		if w.XGroq != nil {
			setSeed(meta, w.XGroq.Seed)
		}
	}
	if meta.ProviderRequestId == "" && w.ChunkExtras != nil && w.XGroq != nil {
		// Groq's x_groq.id, the same id as its x-request-id header (which
		// wins when present: headerMeta runs after this).
		meta.ProviderRequestId = strings.ToValidUTF8(w.XGroq.ID, "\uFFFD")
	}
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	if len(w.Choices) == 0 {
		meta.Warnings = append(meta.Warnings, "response has no choices")
	}
	if len(w.Choices) > 1 {
		meta.Warnings = append(meta.Warnings, fmt.Sprintf("response has %d choices; only the first is used", len(w.Choices)))
	}
	finish := ""
	hasText := false
	if len(w.Choices) > 0 {
		c := w.Choices[0]
		if c.FinishReason != nil {
			finish = string(*c.FinishReason)
		}
		if c.NativeFinishReason != nil && *c.NativeFinishReason != "" {
			provider.SetExtended(meta, extNativeFinishReason, validUTF8(string(*c.NativeFinishReason)))
		}
		setSeed(meta, c.Seed)
		m := c.Message
		if m == nil {
			m = c.Delta // tolerate servers that answer with a delta
		}
		if m != nil {
			if isPresent(m.ExecutedTools) {
				meta.Warnings = append(meta.Warnings, warnExecutedTools)
			}
			images, iw := imageItems(m.Images)
			if iw != "" {
				meta.Warnings = append(meta.Warnings, iw)
			}
			unaryAudio(m.Audio, meta)
			if anns, warn := annotationList(m.Annotations); warn != "" {
				meta.Warnings = append(meta.Warnings, warn)
			} else if len(anns) > 0 {
				setExtendedJSON(meta, extAnnotations, m.Annotations)
			}
			// The model reasons before it answers: reasoning parts first.
			pieces, warns := reasoningPieces(m)
			meta.Warnings = append(meta.Warnings, warns...)
			msg.Parts = append(msg.Parts, reasoningParts(pieces)...)
			text, refusal, ok := contentText(m.Content)
			if !ok {
				meta.Warnings = append(meta.Warnings, "message content has an unrecognized shape; kept as JSON text")
			}
			if m.Refusal != nil {
				refusal += *m.Refusal
			}
			hasText = text != ""
			if toolTokenText(text) {
				meta.Warnings = append(meta.Warnings, warnDeepSeekToolText)
			}
			text = prefilledThink(w.Model, text, len(pieces) > 0)
			textParts := provider.ThinkPartsDialect(text, p.think)
			if m.Phase != "" {
				// The message's phase (the Vercel AI Gateway's): its text's.
				for _, tp := range textParts {
					if _, ok := tp.GetKind().(*llmrelayv1.Part_Text); ok {
						tp.Phase = validUTF8(m.Phase)
					}
				}
			}
			msg.Parts = append(msg.Parts, textParts...)
			if refusal != "" {
				msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: refusal}})
			}
			for _, it := range images {
				msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Type: it.Type, Json: it.JSON}}})
			}
			ids := newUnaryCallIDs()
			for _, tc := range m.ToolCalls {
				ids.sent[string(tc.ID)] = tc.ID != ""
			}
			keyed := make([]string, len(m.ToolCalls)) // the id each call is keyed by
			dropped, repeats := 0, callRepeats{}
			for i, tc := range m.ToolCalls {
				if j := repeats.of(m.ToolCalls, i); j >= 0 {
					// The same call (id, name and whole arguments) again:
					// one call, as the stream relays it (repeatOf).
					meta.Warnings = append(meta.Warnings, repeatWarning(keyed[j]))
					dropped++
					continue
				}
				call, w := toolCallFromWire(tc, i-dropped, ids)
				keyed[i] = call.CallId
				if w != "" {
					meta.Warnings = append(meta.Warnings, w)
				}
				msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: call}})
				meta.ToolCallCount++
			}
			if fc := m.FunctionCall; fc != nil {
				id := ids.made(len(m.ToolCalls))
				meta.Warnings = append(meta.Warnings, "legacy function_call without an id; keyed as "+id)
				args := argumentsText(fc.Arguments)
				msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: id, Name: fc.Name, Arguments: args, ArgumentsValid: fold.ValidArguments(args)}}})
				meta.ToolCallCount++
			}
		}
		if isPresent(c.ContentFilterResults) {
			setExtendedJSON(meta, extContentFilterResults, c.ContentFilterResults)
			if w := filterError(c.ContentFilterResults, "answer"); w != "" {
				meta.Warnings = append(meta.Warnings, w)
			}
		}
		if isPresent(c.ContentFilterResult) {
			setContentFilterResult(meta, c.ContentFilterResult)
		}
		if rl := reasoningLogprobs(raw); isPresent(rl) {
			// Cerebras's reasoning tokens' logprobs (maruel/genai's
			// cassette, testdata/real_maruel_cerebras_oss_logprobs.http):
			// kept as sent, as logprobs are; they were dropped unsaid.
			setExtendedJSON(meta, extReasoningLogprobs, rl)
		}
		if isPresent(c.Logprobs) {
			setExtendedJSON(meta, extLogprobs, c.Logprobs)
		}
		setStopMatch(meta, c.StopReason, c.MatchedStop)
	}
	meta.ProviderFinishReason = finish
	meta.FinishReason = provider.ToolCallsFinish(mapFinishReason(finish), int(meta.ToolCallCount))
	if cw := cutChatLastCall(msg, cutBy(finish), hasText); cw != "" {
		meta.Warnings = append(meta.Warnings, cw)
	}
	if u := w.usage(); u != nil {
		u.reasoningApart = p.perplexity
		meta.Usage = normalizeUsage(u)
		d, odd := usageDetailsAndOdd(u)
		d.Set(meta)
		meta.Warnings = append(meta.Warnings, odd...)
		if t := usageServiceTier(d); t != "" && w.ServiceTier == "" {
			provider.SetExtended(meta, extServiceTier, t)
		}
	}
	if e := p.interrupted(finish, choiceError(w.Choices)); e != nil {
		// The server broke the answer off: what it said so far is no
		// answer (docs/decisions.md); its id, model and usage go with the
		// error.
		e.Meta = meta
		return nil, e
	}
	return &provider.Result{Message: msg, Meta: meta}, nil
}

// finishInsufficientResource is DeepSeek's finish_reason for an answer its
// inference system broke off ("the request is interrupted due to
// insufficient resource of the inference system", DeepSeek's API docs).
const finishInsufficientResource = "insufficient_system_resource"

// finishNetworkError is Z.ai's (Zhipu's) finish_reason for an answer whose
// inference failed on the server ("'network_error' 表示模型推理异常": the
// model's inference went wrong, docs.bigmodel.cn, chat completion and
// async-result references).
const finishNetworkError = "network_error"

// finishError is OpenRouter's finish_reason for an answer that ended
// with an error ("error if the model finishes the request with an
// error", its finish reasons; native_finish_reason keeps the upstream's
// own): a mid-stream error comes as a chunk with finish_reason "error",
// with or without a top-level error object. Without one, the answer read
// as complete (FINISH_REASON_OTHER), what was generated before the error
// passed off as the whole answer.
const finishError = "error"

// finishAbort is vLLM's finish_reason for a request its engine aborted
// (FINISHED_ABORTED: an engine shutdown, a sleep-mode or scale-down pause,
// an abort request), sent in the last chunk before [DONE] as if the
// answer were complete (vllm-project/vllm#57082; its ServingTokens path
// keeps it too, vllm-project/vllm#47933). The model did not end it: what
// was generated is a part, and a tool call being written was cut.
const finishAbort = "abort"

// interruptions are the finish reasons that say the server, not the model,
// ended the answer, with what the error says of each.
var interruptions = map[string]string{
	finishInsufficientResource: "its inference system ran out of resources",
	finishNetworkError:         "its model inference failed",
	finishError:                "it failed while generating",
	finishAbort:                "its engine aborted the request",
}

// interrupted is the error of a finish reason that says the server, not
// the model, ended the answer: kind unavailable, code the finish reason,
// retried while nothing has been relayed
// (testdata/dialect_deepseek_insufficient_resource*.http,
// dialect_zai_network_error*.http). It is nil for every other finish
// reason.
//
// choiceErr is the choice's own error object (OpenRouter's choices[].error,
// {code, message}), when it sent one: the error is then read from it as
// an error inside a 2xx answer is (its code an HTTP status read as that
// status: a 429 rate limited, a 502 unavailable), its message the
// provider's.
func (p *Provider) interrupted(finish string, choiceErr json.RawMessage) *provider.Error {
	why, ok := interruptions[finish]
	if !ok {
		return nil
	}
	if isPresent(choiceErr) {
		e := p.errorFromObject(choiceErr, http.StatusOK, "", nil)
		if e.Err == nil && e.Message != "" {
			if e.Code == "" {
				e.Code = finish
			}
			e.Message = "the provider interrupted the answer (finish_reason " + finish + "): " + e.Message
			return e
		}
	}
	return &provider.Error{Provider: p.name, Kind: provider.KindUnavailable, HTTPStatus: http.StatusOK,
		Code:    finish,
		Message: "the provider interrupted the answer: " + why + " (finish_reason " + finish + ")"}
}

// choiceError is the first choice's error object, nil when it has none.
func choiceError(choices []chatChoice) json.RawMessage {
	for _, c := range choices {
		if c.Index == 0 && isPresent(c.Error) {
			return c.Error
		}
	}
	return nil
}

// setStopMatch reports what vLLM's stop_reason or SGLang's matched_stop
// says ended the answer: a string is the stop sequence that matched
// (meta.stop_sequence), a number the stop token id (meta.extended
// stop_token_id: the contract has no field for it). Null says nothing.
// It reports whether one was set.
func setStopMatch(meta *llmrelayv1.ResponseMeta, raws ...json.RawMessage) bool {
	for _, raw := range raws {
		if !isPresent(raw) {
			continue
		}
		t := bytes.TrimSpace(raw)
		if t[0] == '"' {
			var s string
			if json.Unmarshal(t, &s) == nil && s != "" {
				provider.SetExtended(meta, extStopSequence, validUTF8(s))
				return true
			}
			continue
		}
		var n json.Number
		if err := json.Unmarshal(t, &n); err != nil {
			meta.Warnings = append(meta.Warnings, "stop_reason/matched_stop is neither a string nor a number; ignored")
			continue
		}
		if id, err := n.Int64(); err == nil {
			provider.SetExtended(meta, extStopTokenID, float64(id))
			return true
		}
	}
	return false
}

// setSources reports Perplexity's citations, search results, search
// images and related questions in meta.extended, as sent (absent, null
// and [] say nothing). The images are the search's, not generated ones:
// search_images.
func setSources(meta *llmrelayv1.ResponseMeta, x *ChunkExtras) {
	for _, f := range []struct {
		key string
		raw json.RawMessage
	}{{extCitations, x.Citations}, {extSearchResults, x.SearchResults}, {extSearchImages, x.Images}, {extRelatedQuestions, x.RelatedQuestions}} {
		if isPresent(f.raw) && string(bytes.TrimSpace(f.raw)) != "[]" {
			setExtendedJSON(meta, f.key, f.raw)
		}
	}
}

// seedText is a seed's JSON number text ("" for absent, null or another
// JSON value). Seeds are unsigned 64-bit numbers on some servers
// (Together's 15092511270073158000 in
// testdata/real_oljs_together_stream.http is beyond int64, and a float64
// holds it only to within 2048), so the text is kept, not a number.
func seedText(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return ""
	}
	var n json.Number
	if json.Unmarshal(t, &n) != nil {
		return ""
	}
	return n.String()
}

// setSeed keeps a seed in meta.extended["seed"] (seedText).
func setSeed(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) {
	if s := seedText(raw); s != "" {
		provider.SetExtended(meta, extSeed, s)
	}
}

// usageServiceTier is the service tier Mistral reports inside its usage
// object ("service_tier": "standard"; no top-level service_tier): the
// response's tier when the response names none itself. It stays among the
// usage details too, as sent.
func usageServiceTier(d provider.UsageDetails) string {
	t, _ := d["service_tier"].(string)
	return t
}

// annotationList reads a message's or delta's annotations: none when absent,
// null or [], a warning when they are not an array.
func annotationList(raw json.RawMessage) ([]json.RawMessage, string) {
	if !isPresent(raw) {
		return nil, ""
	}
	var anns []json.RawMessage
	if err := json.Unmarshal(raw, &anns); err != nil {
		return nil, "message annotations are not an array; ignored"
	}
	return anns, ""
}

// imageItems are a message's generated images (OpenRouter's image models:
// "images": [{"type": "image_url", "image_url": {"url":
// "data:image/png;base64,…"}}]) as provider items of their type, in order:
// the contract's image part is an input, and an image a model made is
// answer the caller paid for (it was dropped with a warning). A shape
// other than a list of objects is warned.
func imageItems(raw json.RawMessage) ([]*provider.ProviderItem, string) {
	if !isPresent(raw) {
		return nil, ""
	}
	var imgs []json.RawMessage
	if err := json.Unmarshal(raw, &imgs); err != nil {
		return nil, "message images have an unrecognized shape; ignored"
	}
	items := make([]*provider.ProviderItem, 0, len(imgs))
	for _, img := range imgs {
		js, ok := provider.ItemJSON(img)
		if !ok {
			return nil, "message images have an unrecognized shape; ignored"
		}
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(img, &head) != nil || head.Type == "" {
			head.Type = "image"
		}
		items = append(items, &provider.ProviderItem{Type: head.Type, JSON: js})
	}
	return items, ""
}

// warnExecutedTools reports Groq's executed_tools, which have no place in
// the answer.
const warnExecutedTools = "executed_tools (tools the server ran itself) not supported; ignored"

// reasoningLogprobs is choice 0's reasoning_logprobs, Cerebras's
// logprobs of the reasoning tokens (gpt-oss) in the shape of logprobs,
// read only from a body (or a stream's chunk: mergeReasoningLogprobs)
// that has the key: chatChoice has no field for it (a larger chatChoice
// grew every idle stream's goroutine stack past its first 8 KiB:
// server's TestIdleStreamStack).
func reasoningLogprobs(raw []byte) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"reasoning_logprobs"`)) {
		return nil
	}
	var v struct {
		Choices []struct {
			ReasoningLogprobs json.RawMessage `json:"reasoning_logprobs"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &v) != nil || len(v.Choices) == 0 {
		return nil
	}
	return v.Choices[0].ReasoningLogprobs
}

// bodyRequestID is the request id Z.ai sends in the body of an answer
// ("request_id", beside "id"), read only from a body that has the key (the
// decoders skip it: chunks and the common answer do not have it). A
// request-id header wins over it (headerMeta).
func bodyRequestID(raw []byte) string {
	if !bytes.Contains(raw, []byte(`"request_id"`)) {
		return ""
	}
	var v struct {
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.RequestID
}

// bodyMeta copies the response-level fields shared by responses and chunks.
func (p *Provider) bodyMeta(meta *llmrelayv1.ResponseMeta, w *chatResponse) {
	meta.ResponseId = w.ID
	meta.ResolvedModel = w.Model
	setCreated(meta, w.Created)
	if w.SystemFingerprint != "" {
		provider.SetExtended(meta, extSystemFingerprint, w.SystemFingerprint)
	}
	if w.ServiceTier != "" {
		provider.SetExtended(meta, extServiceTier, w.ServiceTier)
	}
	if pf := w.promptFilter(); pf != nil {
		setExtendedJSON(meta, extPromptFilterResults, pf)
		meta.Warnings = append(meta.Warnings, promptFilterErrors(pf)...)
	}
	if w.Provider != "" {
		provider.SetExtended(meta, extUpstreamProvider, validUTF8(string(w.Provider)))
	}
}

// setCreated sets create_time from a Unix "created" value (0: unknown).
func setCreated(meta *llmrelayv1.ResponseMeta, created flexInt) {
	// Beyond year 9999 is not a timestamp (and not representable).
	if created > 0 && created < 253402300800 {
		meta.CreateTime = timestamppb.New(time.Unix(int64(created), 0).UTC())
	}
}

// headerMeta fills the meta fields read from response headers.
func (p *Provider) headerMeta(meta *llmrelayv1.ResponseMeta, h http.Header, model string) {
	if id := p.requestID(h); id != "" {
		meta.ProviderRequestId = id
	}
	meta.RateLimit = provider.OpenAIRateLimit(h)
	if meta.RateLimit == nil {
		meta.RateLimit = windowedRateLimit(h)
	}
	if meta.RateLimit == nil {
		meta.RateLimit = anthropicRateLimit(h)
	}
	// Every budget is a window (RateLimit.windows): OpenAI's and Azure's
	// (OpenAIRateLimit), the per-window ones, Anthropic's, the
	// unprefixed and bare ones, Mistral's by-size windows, OpenAI's
	// input images.
	meta.RateLimit = windowedWindows(meta.RateLimit, h)
	meta.RateLimit = provider.AnthropicWindows(meta.RateLimit, h)
	meta.RateLimit = unprefixedLimits(meta.RateLimit, h)
	meta.RateLimit = bareRateLimit(meta.RateLimit, h)
	meta.RateLimit = bySizeWindows(meta.RateLimit, h)
	meta.RateLimit = inputImagesWindow(meta.RateLimit, h)
	if b := bareLimitBelowRemaining(meta.RateLimit, h); b != nil {
		provider.SetExtended(meta, extBareRateLimit, b)
	}
	if b := queryCost(h); b != nil {
		provider.SetExtended(meta, extSizeLimit, b)
	}
	dynamicWindows(meta, h)
	rateLimitExtras(meta, h)
	if v := strings.TrimSpace(h.Get("Openai-Processing-Ms")); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			provider.SetExtended(meta, extProcessingMS, n)
		} else {
			provider.SetExtended(meta, extProcessingMS, v)
		}
	}
	if p.azure && model != "" {
		provider.SetExtended(meta, extAzureDeployment, model)
	}
	// The Azure region that served the call (x-ms-region: "East US"):
	// which of a resource's regions answered, for data-zone and global
	// deployments the one the platform chose. Read whatever the adapter
	// was configured as: Azure AI Foundry's model-inference route
	// ({resource}.services.ai.azure.com/models) is an OpenAI-compatible
	// base URL (testdata/real_rubyllm_azure_foundry_grok.http).
	if v := strings.TrimSpace(h.Get("X-Ms-Region")); v != "" {
		provider.SetExtended(meta, extAzureRegion, validUTF8(v))
	}
	azureSpillover(meta, h)
	// The tier Azure AI Foundry processed the call in
	// (azureai-processed-tier: "default", beside azureai-requested-tier),
	// the service tier when the body names none.
	if v := strings.TrimSpace(h.Get("Azureai-Processed-Tier")); v != "" && meta.ServiceTier == "" {
		provider.SetExtended(meta, extServiceTier, validUTF8(v))
	}
	if v := strings.TrimSpace(h.Get("X-Groq-Region")); v != "" {
		provider.SetExtended(meta, extGroqRegion, validUTF8(v))
	}
	if v := strings.TrimSpace(h.Get("X-Inference-Provider")); v != "" {
		// Hugging Face's router names the provider that served the call.
		provider.SetExtended(meta, extUpstreamProvider, validUTF8(v))
	}
}

// isPresent reports whether a raw field was sent and is not null.
func isPresent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// sent is isPresent, deciding what a chunk's fields hold most often
// (absent, or the "null" the fast decoder keeps) without trimming: the
// stream loop asks it of every chunk's choice.
func sent(raw json.RawMessage) bool {
	return len(raw) != 0 && string(raw) != "null" && isPresent(raw)
}

// setContentFilterResult reports a choice's Azure content_filter_result
// (singular) in meta.extended, and warns when it says the completion
// filter failed: the text was not screened, which a caller relying on
// Azure's filtering must know.
func setContentFilterResult(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) {
	setExtendedJSON(meta, extContentFilterResult, raw)
	var v filterErrorWire
	if err := json.Unmarshal(raw, &v); err != nil {
		meta.Warnings = append(meta.Warnings, "content_filter_result is not an object: "+err.Error())
		return
	}
	if v.Error != nil {
		meta.Warnings = append(meta.Warnings, "Azure content filter error ("+string(v.Error.Code)+"): "+string(v.Error.Message))
	}
}

// filterErrorWire is the error Azure puts where a filter's verdicts
// would be when the filter did not run.
type filterErrorWire struct {
	Error *struct {
		Code    flexString `json:"code"`
		Message flexString `json:"message"`
	} `json:"error"`
}

// filterError is the warning for an error inside Azure's
// content_filter_results (plural): the filter did not run on the answer
// or the prompt ("of" names which), and says so where its verdicts would
// be: {"error": {"code": "content_filter_error", "message": "The contents
// are not filtered"}} (Microsoft's content filtering concepts page, whose
// example moved from content_filter_result to content_filter_results;
// Azure/azure-sdk-for-js reads it in both places). The warning was given
// for the singular field only. An error of empty code and message
// (GitHub Copilot's Azure front sends one beside its verdicts) is none.
func filterError(raw json.RawMessage, of string) string {
	if !bytes.Contains(raw, []byte(`"error"`)) {
		return ""
	}
	var v filterErrorWire
	if json.Unmarshal(raw, &v) != nil || v.Error == nil || v.Error.Code == "" && v.Error.Message == "" {
		return ""
	}
	return "Azure content filter error on the " + of + " (" + validUTF8(string(v.Error.Code)) + "): " + validUTF8(string(v.Error.Message))
}

// promptFilterErrors are filterError's warnings for each prompt of
// Azure's prompt_filter_results.
func promptFilterErrors(raw json.RawMessage) []string {
	if !bytes.Contains(raw, []byte(`"error"`)) {
		return nil
	}
	var list []struct {
		Results json.RawMessage `json:"content_filter_results"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []string
	for _, p := range list {
		if w := filterError(p.Results, "prompt"); w != "" && !slices.Contains(out, w) && len(out) < 4 {
			out = append(out, w)
		}
	}
	return out
}

// setExtendedJSON stores a raw JSON value in meta.extended.
func setExtendedJSON(meta *llmrelayv1.ResponseMeta, key string, raw json.RawMessage) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		provider.SetExtended(meta, key, string(raw))
		return
	}
	provider.SetExtended(meta, key, numbersToFloat(v))
}

// numbersToFloat converts json.Number values (kept exact while decoding) to
// float64 so that structpb accepts every value.
func numbersToFloat(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToFloat(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = numbersToFloat(e)
		}
		return x
	default:
		return v
	}
}

// contentText reads message content: a string, null, or an array of text
// and refusal parts (concatenated). ok is false for another shape, whose
// JSON text is then returned as text so that nothing is lost.
func contentText(raw json.RawMessage) (text, refusal string, ok bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "", "", true
	}
	switch t[0] {
	case '"':
		// Fast path (every stream chunk): raw is a JSON value already
		// validated by the enclosing decode, so a string without escapes
		// and with valid UTF-8 is its own text.
		if len(t) >= 2 && t[len(t)-1] == '"' {
			if in := t[1 : len(t)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
				return string(in), "", true
			}
		}
		var s string
		if err := json.Unmarshal(t, &s); err == nil {
			return s, "", true
		}
	case '[':
		var parts []struct {
			Type    string  `json:"type"`
			Text    *string `json:"text"`
			Refusal *string `json:"refusal"`
		}
		if err := json.Unmarshal(t, &parts); err == nil {
			var tb, rb strings.Builder
			ok := true
			for _, pt := range parts {
				switch {
				case pt.Type == "reasoning":
					// Databricks' reasoning summary, read by
					// reasoningPieces (thinkingText).
				case pt.Text != nil:
					tb.WriteString(*pt.Text)
				case pt.Refusal != nil:
					rb.WriteString(*pt.Refusal)
				case pt.Type == "thinking":
					// Mistral's reasoning, read by reasoningPieces.
				default:
					ok = false
				}
			}
			if ok {
				return tb.String(), rb.String(), true
			}
		}
	}
	return validUTF8(string(t)), "", false
}

// validUTF8 replaces invalid UTF-8 (possible in raw JSON text) so that the
// value can go into a proto string.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// argumentsText: OpenAI sends the arguments as a JSON string; absent is "".
func argumentsText(raw json.RawMessage) string { return provider.ArgumentsText(raw, "") }

// unaryCallIDs keys the calls of a unary answer as the streams key them:
// a call without id, or repeating the id of an earlier call, gets a made
// id, never one the answer's other calls have (sent holds every id the
// server sent in the answer).
type unaryCallIDs struct {
	sent map[string]bool
	used map[string]bool
}

func newUnaryCallIDs(sent ...string) *unaryCallIDs {
	k := &unaryCallIDs{sent: map[string]bool{}, used: map[string]bool{}}
	for _, id := range sent {
		if id != "" {
			k.sent[id] = true
		}
	}
	return k
}

func (k *unaryCallIDs) taken(id string) bool { return k.sent[id] || k.used[id] }

// made is a made id for call i, marked used.
func (k *unaryCallIDs) made(i int) string {
	id := provider.MadeCallID(i, k.taken)
	k.used[id] = true
	return id
}

// use marks id used and reports whether an earlier call had it.
func (k *unaryCallIDs) use(id string) bool {
	if k.used[id] {
		return true
	}
	k.used[id] = true
	return false
}

// callRepeats finds the calls of a unary answer that repeat an earlier
// one whole: sent with its id, naming its function, with the same whole
// arguments (the same JSON but for white space). The stream drops such a
// repeat (chatStream.repeatOf); a call with the id and other arguments or
// another name is a second call, re-keyed (toolCallFromWire).
type callRepeats map[string]int

// of is the position of the call calls[i] repeats, -1 when none; a call
// that can be repeated is noted.
func (r callRepeats) of(calls []respToolCall, i int) int {
	c := &calls[i]
	if c.ID == "" || c.Function == nil || c.Function.Name == "" {
		return -1
	}
	args := c.Function.arguments()
	var compact bytes.Buffer
	if !strings.HasSuffix(strings.TrimRight(args, " \t\r\n"), "}") || !fold.ValidArguments(args) || json.Compact(&compact, []byte(args)) != nil {
		return -1
	}
	key := string(c.ID) + "\x00" + c.Function.Name + "\x00" + compact.String()
	if j, ok := r[key]; ok {
		return j
	}
	r[key] = i
	return -1
}

// repeatWarning is the warning for a call sent again whole, dropped; id
// is the id the call is keyed by.
func repeatWarning(id string) string {
	return fmt.Sprintf("tool call %s was sent again whole; the repeat was dropped", id)
}

// toolCallFromWire converts one response tool call; i is its position. A
// call without id, or repeating an earlier call's (two calls, each with
// its name and arguments: the stream separates them too), is keyed by a
// made id, with a warning.
func toolCallFromWire(tc respToolCall, i int, ids *unaryCallIDs) (*llmrelayv1.ToolCall, string) {
	call := &llmrelayv1.ToolCall{CallId: string(tc.ID), Signature: tc.signature()}
	switch {
	case tc.Function != nil:
		call.Name = tc.Function.Name
		call.Arguments = tc.Function.arguments()
		call.ArgumentsValid = fold.ValidArguments(call.Arguments)
	case tc.Custom != nil:
		// Custom tools take free text input, not a JSON object.
		call.Name = tc.Custom.Name
		call.Arguments = tc.Custom.Input
		call.ArgumentsValid = fold.ValidArguments(call.Arguments)
	}
	var warning string
	switch {
	case call.CallId == "":
		call.CallId = ids.made(i)
		warning = fmt.Sprintf("tool call %d has no id; keyed as %s", i, call.CallId)
	case ids.use(call.CallId):
		sent := call.CallId
		call.CallId = ids.made(i)
		warning = fmt.Sprintf("tool call %d repeats the id %s of an earlier call; keyed as %s", i, sent, call.CallId)
	}
	return call, warning
}

// mapFinishReason is the table from finish_reason to ours (the tool-call
// rule, provider.ToolCallsFinish, is applied by the caller).
func mapFinishReason(raw string) llmrelayv1.FinishReason {
	switch raw {
	case "":
		return llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED
	case "stop", "eos", "eos_token", "end_turn", "stop_sequence":
		return llmrelayv1.FinishReason_FINISH_REASON_STOP
	case "length", "max_tokens", "model_length", "model_context_window_exceeded":
		// model_length: Mistral's answer stopped by the model's context
		// window, not max_tokens (its OpenAPI spec's finish reasons: stop,
		// length, model_length, error, tool_calls; laravel/ai#955,
		// camel-ai/camel#4266); model_context_window_exceeded: z.ai's
		// (Zhipu's) for the same, as Anthropic names it
		// (anomalyco/opencode#18813). Both read as complete answers
		// (FINISH_REASON_OTHER), a tool call they cut as a whole one.
		return llmrelayv1.FinishReason_FINISH_REASON_LENGTH
	case "tool_calls", "function_call":
		return llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
	case "content_filter", "sensitive":
		// sensitive: Z.ai's (Zhipu's) output filter stopped the answer
		// (testdata/dialect_zai_sensitive_stream.http).
		return llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	default:
		return llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
}

// chatUsagePaths are the usage fields normalizeUsage reads. DeepSeek's
// prompt_cache_miss_tokens is input_tokens - cached_input_tokens;
// cached_tokens is Moonshot's.
var chatUsagePaths = []string{"prompt_tokens", "completion_tokens", "total_tokens",
	"prompt_tokens_details.cached_tokens", "prompt_tokens_details.cache_write_tokens", "completion_tokens_details.reasoning_tokens",
	"prompt_cache_hit_tokens", "prompt_cache_miss_tokens", "cached_tokens", "reasoning_tokens"}

// usageDetails are the usage fields no counter holds (see
// usageDetailsAndOdd).
func usageDetails(u *wireUsage) provider.UsageDetails {
	d, _ := usageDetailsAndOdd(u)
	return d
}

// usageDetailsAndOdd are the usage fields no counter holds (audio and
// prediction tokens, OpenRouter's cost, fields added later), and the
// counters' fields that held no count (flexInt read them as 0: an object,
// a bool, a string that is no number), kept as sent; odd are the warnings
// for the latter.
func usageDetailsAndOdd(u *wireUsage) (d provider.UsageDetails, odd []string) {
	if w := reasoningExcessWarning(u); w != "" {
		odd = append(odd, w)
	}
	if noUsageDetails(u.Raw) {
		return nil, odd // the common case, without decoding the object into maps
	}
	paths := oddCounts(u.Raw, chatUsagePaths)
	return provider.ReadUsageDetails(u.Raw, provider.MappedExcept(chatUsagePaths, paths)...), append(odd, oddWarnings(paths)...)
}

// reasoningExcessWarning says that the reasoning tokens a usage reports
// exceed its output tokens, where no total shows them counted apart
// (reasoningOutside): the contract's output tokens include the reasoning
// tokens, so normalizeUsage caps them at the output, and the warning keeps
// the count sent (the AI SDK's Mistral fixture,
// testdata/real_mistral_usage_details_stream.http: 7 reasoning of 2
// completion tokens, total 22 = 20 + 2), as the Anthropic adapter does
// for thinking_tokens. "" when they do not.
func reasoningExcessWarning(u *wireUsage) string {
	c := usageCounts(u)
	if c.ReasoningTokens <= c.OutputTokens {
		return ""
	}
	return fmt.Sprintf("usage: reasoning_tokens %d exceed the output tokens %d; reasoning tokens capped at %d",
		c.ReasoningTokens, c.OutputTokens, c.OutputTokens)
}

// oddCounts are those of paths whose values in the usage object raw are
// no count flexInt reads (it reads them as 0).
func oddCounts(raw []byte, paths []string) []string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	var odd []string
	for _, p := range paths {
		o, v := obj, json.RawMessage(nil)
		for key := range strings.SplitSeq(p, ".") {
			if o == nil {
				v = nil
				break
			}
			v = o[key]
			o = nil
			_ = json.Unmarshal(v, &o) // not an object: the path ends here
		}
		if v != nil && !flexCount(v) {
			odd = append(odd, p)
		}
	}
	return odd
}

// flexCount reports whether flexInt reads v as a count (null and "" as
// nothing said, which is no odd value either).
func flexCount(v []byte) bool {
	t := bytes.TrimSpace(v)
	if string(t) == "null" || string(t) == `""` {
		return true
	}
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return false
		}
		t = []byte(s)
	}
	if _, err := strconv.ParseInt(string(t), 10, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(string(t), 64)
	return err == nil && f >= -1<<62 && f <= 1<<62
}

// oddWarnings are the warnings for the usage fields oddCounts found.
func oddWarnings(paths []string) []string {
	var w []string
	for _, p := range paths {
		w = append(w, provider.OddUsageWarning(p))
	}
	return w
}

// noUsageDetails reports that provider.ReadUsageDetails(raw,
// chatUsagePaths...) finds nothing: raw is an object each of whose leaves
// is at a path of chatUsagePaths or empty as ReadUsageDetails sees it (0,
// false, "", null, [], {}), like OpenAI's zero audio and prediction
// counts. False means "maybe some": anything else (another value, a key
// with escapes, nesting deeper than ReadUsageDetails flattens) is left to
// it (FuzzNoUsageDetails checks this against it). Invalid JSON may give
// either answer: ReadUsageDetails finds nothing in it either way.
func noUsageDetails(raw []byte) bool {
	d := fastDecoder{b: raw}
	var path [64]byte
	if !d.noDetails(path[:0], 0) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

// maxUsageNesting is how deep provider.ReadUsageDetails flattens nested
// usage objects (its maxUsageDepth): an object nested deeper is one value.
const maxUsageNesting = 4

// noDetails walks an object at the given nesting level whose path (joined
// keys, "." after each) is prefix.
func (d *fastDecoder) noDetails(prefix []byte, depth int) bool {
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return true
	}
	for {
		key, _, ok := d.str()
		if !ok || !d.consume(':') {
			return false
		}
		path := append(prefix, key...)
		mapped := false
		for _, m := range chatUsagePaths {
			if string(path) == m {
				mapped = true
				break
			}
		}
		d.ws()
		switch {
		case mapped:
			// A counter's field: a plain integer (the common case) says
			// nothing more; any other value may hold no count (oddCounts
			// decides).
			ok = d.plainInt()
		case d.i < len(d.b) && d.b[d.i] == '{':
			if depth < maxUsageNesting {
				ok = d.noDetails(append(path, '.'), depth+1)
			} else {
				ok = d.consume('{') && d.consume('}') // a value: empty only when {}
			}
		default:
			ok = d.emptyValue()
		}
		if !ok {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume('}')
	}
}

// plainInt reads an integer written as JSON digits (optionally negative,
// up to 18 digits: no overflow) or null.
func (d *fastDecoder) plainInt() bool {
	d.ws()
	if bytes.HasPrefix(d.b[d.i:], []byte("null")) {
		d.i += 4
		return true
	}
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - start
	if n == 0 || n > 18 {
		return false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

// emptyValue reads a scalar or array that ReadUsageDetails drops as empty:
// 0, false, "", null, [].
func (d *fastDecoder) emptyValue() bool {
	d.ws()
	for _, lit := range []string{"0", "-0", "false", `""`, "null"} {
		if bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
			d.i += len(lit)
			if d.i < len(d.b) {
				// 0 must end there (not 01, 0.5, 0e3); the others end
				// anyway, and what follows is checked by the caller.
				switch c := d.b[d.i]; {
				case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E':
					return false
				}
			}
			return true
		}
	}
	return d.consume('[') && d.consume(']')
}

// normalizeUsage converts OpenAI usage: prompt_tokens already include
// cached tokens and completion_tokens include reasoning tokens. Reasoning
// tokens beyond the output tokens are capped at them
// (reasoningExcessWarning says so).
func normalizeUsage(u *wireUsage) *llmrelayv1.Usage {
	out := usageCounts(u)
	out.ReasoningTokens = min(out.ReasoningTokens, out.OutputTokens)
	return out
}

// usageCounts are the counts of u as the contract defines them, the
// reasoning tokens as sent.
func usageCounts(u *wireUsage) *llmrelayv1.Usage {
	out := &llmrelayv1.Usage{
		InputTokens:  provider.Count(int64(u.PromptTokens)),
		OutputTokens: provider.Count(int64(u.CompletionTokens)),
		TotalTokens:  provider.Count(int64(u.TotalTokens)),
	}
	out.TotalTokens = provider.UsageTotal(out.TotalTokens, out.InputTokens, out.OutputTokens)
	switch {
	case u.PromptTokensDetails != nil:
		out.CachedInputTokens = provider.Count(int64(u.PromptTokensDetails.CachedTokens))
		out.CacheCreationInputTokens = provider.Count(int64(u.PromptTokensDetails.CacheWriteTokens))
	case u.PromptCacheHitTokens != nil:
		out.CachedInputTokens = provider.Count(int64(*u.PromptCacheHitTokens))
	case u.CachedTokens != nil:
		out.CachedInputTokens = provider.Count(int64(*u.CachedTokens))
	case u.timingsCacheN != nil && int64(*u.timingsCacheN) <= int64(u.PromptTokens):
		// llama.cpp: the cached prompt tokens, part of prompt_tokens (a
		// count above them is no such part, and is not read).
		out.CachedInputTokens = provider.Count(int64(*u.timingsCacheN))
	}
	switch {
	case u.CompletionTokensDetails != nil:
		out.ReasoningTokens = provider.Count(int64(u.CompletionTokensDetails.ReasoningTokens))
	case u.ReasoningTokens != nil:
		// SGLang: reasoning_tokens at the top of the usage object, part
		// of completion_tokens (testdata/dialect_sglang_matched_stop.http).
		out.ReasoningTokens = provider.Count(int64(*u.ReasoningTokens))
	}
	if reasoningOutside(u) {
		// xAI's grok models (on xAI's API and on Azure) count the
		// reasoning apart: completion_tokens is the answer alone and
		// total_tokens = prompt + completion + reasoning. Our output
		// includes the reasoning.
		out.OutputTokens = provider.Count(int64(u.CompletionTokens) + int64(u.CompletionTokensDetails.ReasoningTokens))
		out.TotalTokens = provider.UsageTotal(out.TotalTokens, out.InputTokens, out.OutputTokens)
	} else if topReasoningOutside(u) {
		// Perplexity's sonar-deep-research: reasoning_tokens (1879) beside
		// completion_tokens (40) and total_tokens = prompt + completion
		// (48), each billed at its own price in cost
		// (reasoning_tokens_cost): the answer's tokens and the reasoning's
		// apart (testdata/real_maruel_perplexity_sonar_deep_research_text.http).
		// Our output and total include the reasoning.
		out.OutputTokens = provider.Count(int64(u.CompletionTokens) + int64(*u.ReasoningTokens))
		out.TotalTokens = provider.Count(int64(out.InputTokens) + int64(out.OutputTokens))
	}
	return out
}

// topReasoningOutside reports whether a top-level reasoning_tokens (no
// completion_tokens_details) counts tokens outside completion_tokens:
// Perplexity's always do (its pricing bills reasoning tokens at their own
// price, and its cost object has reasoning_tokens_cost beside
// output_tokens_cost); elsewhere, a count above the completion tokens
// cannot be a part of them (SGLang's, which is, never is), nor can one
// the total counts beside them: GitHub Copilot's Gemini gives
// completion_tokens 647, reasoning_tokens 542 and total_tokens 42155 =
// prompt 40966 + 647 + 542 (testdata/real_talkcody_copilot_gemini3_stream.http;
// SGLang's total is prompt + completion).
func topReasoningOutside(u *wireUsage) bool {
	if u.CompletionTokensDetails != nil || u.ReasoningTokens == nil || *u.ReasoningTokens <= 0 {
		return false
	}
	return u.reasoningApart || int64(*u.ReasoningTokens) > int64(u.CompletionTokens) ||
		int64(u.TotalTokens) == int64(u.PromptTokens)+int64(u.CompletionTokens)+int64(*u.ReasoningTokens)
}

// reasoningOutside reports whether the usage counts the reasoning tokens
// outside completion_tokens: its total is the prompt, completion and
// reasoning tokens (not the prompt and completion tokens alone, as the
// reasoning tokens are not zero). Without that evidence the counts are
// taken as OpenAI defines them, even where the reasoning tokens exceed
// the completion tokens.
func reasoningOutside(u *wireUsage) bool {
	if u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens <= 0 {
		return false
	}
	return int64(u.TotalTokens) == int64(u.PromptTokens)+int64(u.CompletionTokens)+int64(u.CompletionTokensDetails.ReasoningTokens)
}

// parseEmbedResponse converts an embeddings list; want is the number of
// inputs. The result holds one vector per input in input order, or the
// answer is refused: the data entries are put in order by their index
// (servers may send them in any order), and an index out of range, given
// twice or missing, a count other than want, an empty vector or vectors of
// different lengths are bad responses, never a silently shifted list. Where
// no entry has an index, the list order is the input order.
func (p *Provider) parseEmbedResponse(raw []byte, want int) (*provider.Result, error) {
	return p.parseEmbedAnswer(raw, want, "")
}

// parseEmbedAnswer is parseEmbedResponse for a request that asked
// output_dtype (embedOutputDtype): a base64 vector of 8-bit values is
// read a byte a value.
func (p *Provider) parseEmbedAnswer(raw []byte, want int, dtype string) (*provider.Result, error) {
	var w embedResponse
	warn, err := decodeLenient(raw, &w)
	if err != nil {
		return nil, provider.BadResponse(p.name, "invalid embeddings JSON: %v", err)
	}
	if isPresent(w.Error) {
		return nil, p.errorFromObject(w.Error, 0, "", nil)
	}
	meta := &llmrelayv1.ResponseMeta{ResponseId: w.ID, ResolvedModel: w.Model, ProviderRequestId: w.RequestID}
	setCreated(meta, w.Created)
	if w.Provider != "" {
		provider.SetExtended(meta, extUpstreamProvider, validUTF8(string(w.Provider)))
	}
	if warn != "" {
		meta.Warnings = append(meta.Warnings, warn)
	}
	if len(w.Data) != want {
		return nil, provider.BadResponse(p.name, "%d embeddings for %d inputs", len(w.Data), want)
	}
	withIndex := 0
	for _, d := range w.Data {
		if d.Index != nil {
			withIndex++
		}
	}
	if withIndex != 0 && withIndex != len(w.Data) {
		return nil, provider.BadResponse(p.name, "%d of %d embeddings have no index", len(w.Data)-withIndex, len(w.Data))
	}
	out := make([]*llmrelayv1.Embedding, len(w.Data))
	dims := -1
	for pos, d := range w.Data {
		i := pos
		if d.Index != nil {
			if *d.Index < 0 || int64(*d.Index) >= int64(len(out)) {
				return nil, provider.BadResponse(p.name, "embedding index %d out of range for %d inputs", int64(*d.Index), want)
			}
			i = int(*d.Index)
			if out[i] != nil {
				return nil, provider.BadResponse(p.name, "embedding index %d given twice", i)
			}
		}
		vals, err := embeddingValues(d.Embedding, dtype)
		if err != nil {
			return nil, provider.BadResponse(p.name, "embedding %d: %v", i, err)
		}
		switch {
		case len(vals) == 0:
			return nil, provider.BadResponse(p.name, "embedding %d is empty", i)
		case dims >= 0 && len(vals) != dims:
			return nil, provider.BadResponse(p.name, "embedding %d has %d values where the others have %d", i, len(vals), dims)
		}
		dims = len(vals)
		out[i] = &llmrelayv1.Embedding{Index: int32(i), Values: vals}
	}
	meta.EmbeddingsCount = int32(len(out))
	if u := w.Usage; u != nil && (u.PromptTokens != 0 || u.TotalTokens != 0 || u.CompletionTokens != 0) {
		// All zeros is no count (LM Studio and early llama.cpp servers
		// always answer so): no text embeds in zero tokens.
		meta.Usage = normalizeUsage(u)
		if meta.Usage.InputTokens == 0 && meta.Usage.OutputTokens == 0 {
			// Voyage counts total_tokens only: every token of an
			// embedding request is an input token.
			meta.Usage.InputTokens = meta.Usage.TotalTokens
		}
		d, odd := usageDetailsAndOdd(u)
		d.Set(meta)
		meta.Warnings = append(meta.Warnings, odd...)
	}
	return &provider.Result{Embeddings: out, Meta: meta}, nil
}

// embeddingValues reads an embedding as a number array or as base64 of
// little-endian float32 values; a NaN or infinite value is an error.
// With an 8-bit output_dtype (byteDtype) the base64 holds one byte a
// value, int8 (int8, binary) or uint8 (uint8, ubinary), as Voyage's and
// Mistral's base64 "NumPy array" of that type: each byte is a value, read
// as float32 (exactly), not four bytes a float32.
func embeddingValues(raw json.RawMessage, dtype string) ([]float32, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("base64 embedding: %w", err)
		}
		if signed, ok := byteDtype(dtype); ok {
			vals := make([]float32, len(b))
			for i, x := range b {
				if signed {
					vals[i] = float32(int8(x))
				} else {
					vals[i] = float32(x)
				}
			}
			return vals, nil
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("base64 embedding of %d bytes is not float32s", len(b))
		}
		vals := make([]float32, len(b)/4)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
			if f := float64(vals[i]); math.IsNaN(f) || math.IsInf(f, 0) {
				// Float JSON cannot carry these; base64 can, and a
				// vector with one is no use to any index.
				return nil, fmt.Errorf("value %d of the base64 embedding is %v", i, vals[i])
			}
		}
		return vals, nil
	}
	var vals []float32
	if err := json.Unmarshal(t, &vals); err != nil {
		var nested [][]float32
		if json.Unmarshal(t, &nested) == nil {
			// llama-cpp-python (and llama.cpp's own /embedding) answer so
			// for a model whose embeddings are not pooled: one vector per
			// token, not one per input.
			return nil, fmt.Errorf("a list of %d vectors (one per token: the server did not pool them), not one vector", len(nested))
		}
		return nil, fmt.Errorf("embedding values: %w", err)
	}
	if bytes.Contains(t, []byte("null")) {
		if err := nullValues(t, len(vals)); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// byteDtype reports whether output_dtype (Voyage AI's and Mistral's
// embeddings field: float, int8, uint8, binary, ubinary) asks for 8-bit
// values, and whether they are signed: int8 and binary (bit-packed) are
// int8s, uint8 and ubinary uint8s.
func byteDtype(dtype string) (signed, ok bool) {
	switch dtype {
	case "int8", "binary":
		return true, true
	case "uint8", "ubinary":
		return false, true
	}
	return false, false
}

// embedOutputDtype is the output_dtype of an embeddings request body
// (sent through extra_body), "" when it has none.
func embedOutputDtype(body []byte) string {
	if !bytes.Contains(body, []byte(`"output_dtype"`)) {
		return ""
	}
	var r struct {
		OutputDtype string `json:"output_dtype"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	return r.OutputDtype
}

// nullValues is the error of a number array (of n values) holding nulls,
// which decoding into float32s leaves as zeros: a server writes the NaN
// or infinity a model computed as null (serde_json: Hugging Face TEI;
// orjson: michaelfeil/infinity, whose /embeddings answered a list of nulls
// for stella_en_1.5B_v5 in float16, michaelfeil/infinity#328;
// JSON.stringify), and a vector of zeros passed on for it matches nothing,
// or everything, in any index. nil when no value is null.
func nullValues(t []byte, n int) error {
	var ptrs []*float32
	if json.Unmarshal(t, &ptrs) != nil {
		return nil
	}
	first, nulls := -1, 0
	for i, v := range ptrs {
		if v == nil {
			nulls++
			if first < 0 {
				first = i
			}
		}
	}
	if nulls == 0 {
		return nil
	}
	return fmt.Errorf("%d of its %d values are null, from value %d (not numbers: a NaN or infinity the model computed, as servers write them)", nulls, n, first)
}

// errNotAnswer marks the error of a 2xx body that is no answer: the
// caller reads it as an error body (errorInAnswer), as the stream reads
// JSON sent instead of events (jsonInsteadOfStream).
var errNotAnswer = errors.New("the body is no answer")

func notAnswer(e *provider.Error) *provider.Error {
	e.Err = errNotAnswer
	return e
}

// errorInAnswer is the error a 2xx body that is no answer states (an
// error object, a FastAPI detail, a base_resp status: bodyError), so that
// a unary call fails as a stream with the same body does; else err.
func (p *Provider) errorInAnswer(err error, raw []byte, resp *http.Response, model string, sec secrets) error {
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Err != errNotAnswer {
		return err
	}
	if e := p.bodyError(raw, resp, model, sec); e != nil {
		return e
	}
	return err
}
