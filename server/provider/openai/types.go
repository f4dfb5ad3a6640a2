package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Wire types of the OpenAI Chat Completions and Embeddings APIs (and Azure
// OpenAI's additions). Response types are lenient: fields whose shape
// varies between OpenAI and compatible servers are json.RawMessage and are
// interpreted by hand in response.go and stream.go.

// chatRequest is the body of POST /chat/completions. Field order is the
// order on the wire.
type chatRequest struct {
	Model               string            `json:"model"`
	Messages            []chatMessage     `json:"messages"`
	Tools               []chatTool        `json:"tools,omitempty"`
	ToolChoice          any               `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      *responseFormat   `json:"response_format,omitempty"`
	Temperature         *float64          `json:"temperature,omitempty"`
	TopP                *float64          `json:"top_p,omitempty"`
	MaxTokens           *int32            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int32            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string            `json:"reasoning_effort,omitempty"`
	EnableThinking      *bool             `json:"enable_thinking,omitempty"`      // DashScope's Qwen thinking switch (dashscope.go)
	Thinking            *thinkingToggle   `json:"thinking,omitempty"`             // DeepSeek's, Z.ai's and Moonshot's thinking switch (deepseek.go, thinkswitch.go)
	ChatTemplateArgs    *templateArgs     `json:"chat_template_args,omitempty"`   // Baseten's thinking switch (thinkswitch.go)
	ReasoningSwitch     *reasoningSwitch  `json:"reasoning,omitempty"`            // Together's thinking switch (thinkswitch.go); OpenRouter's reasoning.enabled false on a repaired Claude loop (relaysig.go)
	ChatTemplateKwargs  *templateKwargs   `json:"chat_template_kwargs,omitempty"` // vLLM's, SGLang's and llama.cpp's (WithThinkingSwitch)
	Stop                []string          `json:"stop,omitempty"`
	Seed                *int64            `json:"seed,omitempty"`
	RandomSeed          *int64            `json:"random_seed,omitempty"` // Mistral's name for seed (mistralRequest)
	PresencePenalty     *float64          `json:"presence_penalty,omitempty"`
	FrequencyPenalty    *float64          `json:"frequency_penalty,omitempty"`
	User                string            `json:"user,omitempty"`
	Store               *bool             `json:"store,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	ServiceTier         string            `json:"service_tier,omitempty"`
	Logprobs            *bool             `json:"logprobs,omitempty"`
	TopLogprobs         *int32            `json:"top_logprobs,omitempty"`
	Stream              bool              `json:"stream,omitempty"`
	StreamOptions       *streamOptions    `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is one request message. Content is a JSON string, an array of
// content parts, or null (assistant messages with only tool calls).
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	Refusal    string          `json:"refusal,omitempty"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	// droppedSignatures counts the tool-call signatures of an assistant
	// turn not sent (the server takes none); never marshalled.
	droppedSignatures int
	// droppedItems names the provider items of an assistant turn not sent
	// (Chat Completions has no place for them), one warning each.
	droppedItems []string
	// ReasoningContent is an assistant turn's reasoning sent back, only
	// to servers that require it (p.replay; request.go).
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	// Reasoning is the same under the name gpt-oss servers use
	// (replayReasoningField).
	Reasoning *string `json:"reasoning,omitempty"`
	// ReasoningDetails are an assistant turn's reasoning blocks sent back
	// to an aggregator that gave them (OpenRouter).
	ReasoningDetails []outDetail `json:"reasoning_details,omitempty"`
	// ThoughtSignature is Gemini's signature of an assistant turn sent
	// back to Venice as a key of the message, the form it gave it in
	// (formatThoughtSignature).
	ThoughtSignature string `json:"thought_signature,omitempty"`
	// ReasoningText and ReasoningOpaque send a turn's reasoning back to
	// GitHub Copilot as it gave it (formatReasoningOpaque).
	ReasoningText   *string `json:"reasoning_text,omitempty"`
	ReasoningOpaque string  `json:"reasoning_opaque,omitempty"`
	// unsentReasoning is the reasoning of an assistant turn without tool
	// calls that DeepSeek needs back when its user turn had tool calls
	// (deepseekSegments), and unsentParts the parts it holds; never
	// marshalled.
	unsentReasoning *string
	unsentParts     int
}

// contentPart is a request content part: {"type":"text","text":...} or
// {"type":"image_url","image_url":{"url":...,"detail":...}}.
type contentPart struct {
	Type       string      `json:"type"`
	Text       *string     `json:"text,omitempty"`
	ImageURL   *imageURL   `json:"image_url,omitempty"`
	File       *chatFile   `json:"file,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
}

// chatFile is a Chat Completions file part: inline data (a data: URL) with
// its name, or an uploaded file's id.
type chatFile struct {
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// inputAudio is a Chat Completions input_audio part: base64 wav or mp3.
type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
	// ExtraContent carries a Gemini thought signature back to Google's
	// OpenAI-compatible endpoint, which answers 400 on Gemini 3 without it.
	ExtraContent *extraContent `json:"extra_content,omitempty"`
	// ThoughtSignature carries it back to Venice, which gave it so.
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// extraContent is Google's extension of a Chat Completions tool call:
// {"google":{"thought_signature":"..."}}.
type extraContent struct {
	Google *struct {
		ThoughtSignature string `json:"thought_signature"`
	} `json:"google"`
}

// signature is the thought signature in e, "" when there is none.
func (e *extraContent) signature() string {
	if e == nil || e.Google == nil {
		return ""
	}
	return e.Google.ThoughtSignature
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

// chatResponse is a chat.completion object, and also a
// chat.completion.chunk (Delta instead of Message in the choices).
type chatResponse struct {
	ID                  string          `json:"id"`
	Object              string          `json:"object"`
	Created             flexInt         `json:"created"`
	Model               string          `json:"model"`
	Choices             []chatChoice    `json:"choices"`
	Usage               *wireUsage      `json:"usage"`
	SystemFingerprint   string          `json:"system_fingerprint"`
	ServiceTier         string          `json:"service_tier"`
	PromptFilterResults json.RawMessage `json:"prompt_filter_results"`
	// Provider is OpenRouter's name of the upstream that served the call
	// ("OpenAI", "Anthropic", …), on the answer and on every chunk.
	Provider upstreamName `json:"provider"`
	// Error is set on an error event inside a stream.
	Error json.RawMessage `json:"error"`
	// ChunkExtras holds the objects of one server each, made only when a
	// chunk has one: the stream's struct keeps its size class
	// (TestStreamHoldsLittle). Exported for encoding/json, which sets an
	// embedded pointer only to an exported type.
	*ChunkExtras
}

// upstreamName is a string; any other JSON value (a server whose
// "provider" is not OpenRouter's name) is none, without a warning.
type upstreamName string

func (u *upstreamName) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) != nil {
		s = ""
	}
	*u = upstreamName(s)
	return nil
}

// ChunkExtras are top-level objects of one server each.
type ChunkExtras struct {
	// XGroq is Groq's own object ({id, usage}); a Groq stream may carry
	// its usage only there, in the last chunk.
	XGroq *xGroq `json:"x_groq"`
	// Timings is llama.cpp's server timing object, sent beside the usage.
	Timings *llamaTimings `json:"timings"`
	// BaseResp is MiniMax's status object: a status_code other than 0 is
	// an error, which MiniMax sends with HTTP 200 (minimaxError).
	BaseResp *baseResp `json:"base_resp"`
	// ErrorType is text-generation-inference's classification beside a
	// string error ({"error":"…","error_type":"validation"}).
	ErrorType string `json:"error_type"`
	// Citations (URLs) and SearchResults ({title,url,date,…}) are the
	// sources of Perplexity's answers, top-level on the response and on
	// every chunk; kept as sent in meta.extended.
	Citations     json.RawMessage `json:"citations"`
	SearchResults json.RawMessage `json:"search_results"`
	// Images (return_images: search images, not generated ones) and
	// RelatedQuestions (return_related_questions) are Perplexity's too.
	Images           json.RawMessage `json:"images"`
	RelatedQuestions json.RawMessage `json:"related_questions"`
	// PromptAnnotations is the name Azure's 2023 preview API versions
	// gave prompt_filter_results (the prompt's content filter verdicts
	// by prompt_index; testdata/real_azsdk_chat_content_filter_categories.http):
	// reported as prompt_filter_results.
	PromptAnnotations json.RawMessage `json:"prompt_annotations"`
	// TimeInfo is Cerebras's timing object ({queue_time, prompt_time,
	// completion_time, total_time, created}: seconds, and a Unix time),
	// on the answer and on a stream's last chunk; kept as sent in
	// meta.extended["time_info"].
	TimeInfo json.RawMessage `json:"time_info"`
	// Moderation is OpenAI's moderation of the input and output, asked
	// with the request's moderation option (a last chunk without choices
	// on a stream: testdata/real_pyd_openai_moderation_stream.http); kept
	// as sent in meta.extended["moderation"].
	Moderation json.RawMessage `json:"moderation"`
	// Stats, ModelInfo and Runtime are LM Studio's (its /api/v0 answers:
	// tokens per second, time to first token, generation time, stop
	// reason and draft-model counts; the model's architecture,
	// quantization, format and context length; the inference runtime),
	// and PerfMetrics Fireworks' (asked with perf_metrics_in_response),
	// on the answer or a stream's last chunk; each kept as sent in
	// meta.extended under its own name, as time_info and timings are.
	Stats       json.RawMessage `json:"stats"`
	ModelInfo   json.RawMessage `json:"model_info"`
	Runtime     json.RawMessage `json:"runtime"`
	PerfMetrics json.RawMessage `json:"perf_metrics"`
	// UsageBreakdown is Groq's per-model usage of its compound systems
	// ({"models": [{"model", "usage"}]}: the reasoning tokens of the
	// models it ran are only there, the top-level usage has none:
	// maruel/genai's cassette,
	// testdata/real_maruel_groq_compound_mini_text.http); {"models":
	// null} for other models. Kept as sent in
	// meta.extended["usage_breakdown"] when it names models.
	UsageBreakdown json.RawMessage `json:"usage_breakdown"`
	// LatencyCheckpoint and Routing are Azure OpenAI's, on a stream's
	// usage chunk (testdata/real_svir_azure_async_flagged_stream.http):
	// its timings in milliseconds (engine_ttft_ms, service_ttlt_ms,
	// user_visible_ttft_ms, …) and the replica that served the call
	// (serving_pipereplica); each kept as sent in meta.extended under its
	// own name.
	LatencyCheckpoint json.RawMessage `json:"latency_checkpoint"`
	Routing           json.RawMessage `json:"routing"`
	// Cost is Venice's charge for the call ({"usd": …, "diem": …}), on a
	// stream's usage chunk beside the usage object
	// (testdata/real_venice_*_stream_*.http), kept as sent in
	// meta.extended["cost"].
	Cost json.RawMessage `json:"cost"`
}

// serverStats are the timing and serving objects of ChunkExtras kept as
// sent in meta.extended, by key.
func (x *ChunkExtras) serverStats() [numServerStats]struct {
	key string
	raw json.RawMessage
} {
	return [numServerStats]struct {
		key string
		raw json.RawMessage
	}{{extTimeInfo, x.TimeInfo}, {extTimings, x.timingsRaw()}, {"stats", x.Stats}, {"model_info", x.ModelInfo}, {"runtime", x.Runtime}, {"perf_metrics", x.PerfMetrics},
		{"usage_breakdown", x.usageBreakdownRaw()}, {extLatencyCheckpoint, x.LatencyCheckpoint}, {extRouting, x.Routing}, {"cost", x.Cost}}
}

// numServerStats is how many objects serverStats names.
const numServerStats = 10

// usageBreakdownRaw is usage_breakdown when its models are a list (Groq
// sends {"models": null} beside every other model's answer), else nil.
func (x *ChunkExtras) usageBreakdownRaw() json.RawMessage {
	if len(x.UsageBreakdown) == 0 || x.UsageBreakdown[0] != '{' {
		return nil
	}
	var b struct {
		Models json.RawMessage `json:"models"`
	}
	if json.Unmarshal(x.UsageBreakdown, &b) != nil || len(b.Models) == 0 || b.Models[0] != '[' {
		return nil
	}
	return x.UsageBreakdown
}

func (x *ChunkExtras) timingsRaw() json.RawMessage {
	if x.Timings == nil {
		return nil
	}
	return x.Timings.raw
}

// promptFilter is Azure's prompt_filter_results, or its older name
// prompt_annotations; nil when the response has neither.
func (c *chatResponse) promptFilter() json.RawMessage {
	if isPresent(c.PromptFilterResults) {
		return c.PromptFilterResults
	}
	if c.ChunkExtras != nil && isPresent(c.PromptAnnotations) {
		return c.PromptAnnotations
	}
	return nil
}

// baseResp is MiniMax's {"status_code": n, "status_msg": "…"}.
type baseResp struct {
	StatusCode flexInt    `json:"status_code"`
	StatusMsg  flexString `json:"status_msg"`
}

// llamaTimings is llama.cpp's timings object: cache_n, the prompt tokens
// served from its cache (prompt_tokens counts them too), is read as the
// cached count where the usage has none (builds that send no
// prompt_tokens_details report it only there:
// testdata/real_fantasy_llamacpp_gpt_oss_thinking_stream.http); the whole
// object (prompt_n, prompt_ms, predicted_n, predicted_ms, the rates) is
// kept as sent in meta.extended["timings"], as Cerebras's time_info is.
type llamaTimings struct {
	CacheN *flexInt `json:"cache_n"`
	// raw is the object as sent.
	raw json.RawMessage
}

func (t *llamaTimings) UnmarshalJSON(b []byte) error {
	type plain llamaTimings
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	t.raw = append(json.RawMessage(nil), b...)
	return nil
}

type xGroq struct {
	ID    string     `json:"id"`
	Usage *wireUsage `json:"usage"`
	// Seed is the sampling seed Groq used (x_groq.seed), kept in
	// meta.extended["seed"] (seedText).
	Seed json.RawMessage `json:"seed"`
}

// usage is the response's usage: the standard field, else Groq's
// x_groq.usage, else the first choice's usage (Moonshot's streams put it
// in the choice that finishes: testdata/real_moonshot_choice_usage_stream.http).
func (c *chatResponse) usage() *wireUsage {
	u := c.Usage
	switch {
	case u != nil:
	case c.ChunkExtras != nil && c.XGroq != nil && c.XGroq.Usage != nil:
		u = c.XGroq.Usage
	case len(c.Choices) > 0:
		u = c.Choices[0].Usage
	}
	if u != nil && c.ChunkExtras != nil && c.Timings != nil {
		u.timingsCacheN = c.Timings.CacheN
	}
	return u
}

// finishReason is a choice's finish_reason. A value that is no string (a
// shape a compatible server or proxy may send) is kept as its JSON text
// (provider.OddEnumText), a finish of OTHER, as the other adapters keep
// theirs, instead of being dropped with a warning.
type finishReason string

func (r *finishReason) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = finishReason(s)
		return nil
	}
	if !json.Valid(b) {
		return errors.New("finish_reason: invalid JSON")
	}
	*r = finishReason(provider.OddEnumText(b))
	return nil
}

type chatChoice struct {
	Index        flexInt       `json:"index"`
	Message      *respMessage  `json:"message"`
	Delta        *respMessage  `json:"delta"`
	FinishReason *finishReason `json:"finish_reason"`
	// NativeFinishReason is OpenRouter's: the upstream model's own finish
	// reason ("STOP", "end_turn", "MAX_TOKENS", …) beside its normalized
	// finish_reason; null until the finishing chunk.
	NativeFinishReason   *finishReason   `json:"native_finish_reason"`
	Logprobs             json.RawMessage `json:"logprobs"`
	ContentFilterResults json.RawMessage `json:"content_filter_results"`
	// ContentFilterResult (singular) is what Azure sends instead of, or
	// beside, the verdicts when its completion filter could not run:
	// {"error": {"code": "content_filter_error", "message": "The contents
	// are not filtered"}}.
	ContentFilterResult json.RawMessage `json:"content_filter_result"`
	// ContentFilterOffsets is the range of the answer an Azure
	// annotation chunk's verdicts are for ({"check_offset":140,
	// "start_offset":140,"end_offset":259}: the asynchronous filter's,
	// testdata/real_svir_azure_async_flagged_stream.http); kept in
	// meta.extended["content_filter_offsets"], and the blocking
	// verdict's in ["content_filter_blocked_offsets"].
	ContentFilterOffsets json.RawMessage `json:"content_filter_offsets"`
	// Usage is Moonshot's: its streams send the usage inside the choice
	// that carries the finish reason, with no top-level usage.
	Usage *wireUsage `json:"usage"`
	// StopReason (vLLM) and MatchedStop (SGLang) say what ended the
	// answer: the stop string that matched, a stop token id (a number),
	// or null (EOS, length).
	StopReason  json.RawMessage `json:"stop_reason"`
	MatchedStop json.RawMessage `json:"matched_stop"`
	// Error is OpenRouter's choice-level error ({code, message,
	// metadata}: its response schema's ErrorResponse), sent beside
	// finish_reason "error" when the upstream failed mid-answer.
	Error json.RawMessage `json:"error"`
	// Seed is the sampling seed Together used, in the choice (null on a
	// stream's chunks but the last); kept in meta.extended["seed"]
	// (seedText).
	Seed json.RawMessage `json:"seed"`
}

// respMessage is a response message or a stream delta.
type respMessage struct {
	Role string `json:"role"`
	// Phase is the phase of the message's text (the Vercel AI Gateway's
	// delta.phase, "commentary" for a preamble before a tool call:
	// testdata/real_vercelgw_chat_muse_tool_stream_1.http): Part.phase.
	Phase string `json:"phase"`
	// ExecutedTools are the tools Groq's compound models ran themselves
	// (web search, code execution): not client calls, reported only.
	ExecutedTools json.RawMessage `json:"executed_tools"`
	Content       json.RawMessage `json:"content"`
	Refusal       *string         `json:"refusal"`
	ToolCalls     toolCallList    `json:"tool_calls"`
	FunctionCall  *respFunction   `json:"function_call"`
	// The reasoning of OpenAI-compatible servers, read by reasoning.go:
	// reasoning_content (DeepSeek, vLLM, Qwen), reasoning (Ollama's /v1,
	// OpenRouter, newer vLLM) and reasoning_details (OpenRouter's typed
	// blocks with signatures).
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
	// ThoughtSignature is Gemini's thought signature of the message (of
	// its text) as Venice writes it for gemini-3-8-flash: a key of the
	// message, on a stream in a delta of its own after the text
	// (testdata/real_venice_gemini38_tool_stream_2.http). Read as a
	// reasoning block's signature in formatThoughtSignature.
	ThoughtSignature string `json:"thought_signature"`
	// ReasoningText and ReasoningOpaque are GitHub Copilot's reasoning:
	// the readable text, and the model's reasoning state to send back
	// (Gemini's thought signature through Copilot, on the finish chunk's
	// delta: testdata/real_talkcody_copilot_gemini3_stream.http), read
	// as a reasoning block in formatReasoningOpaque.
	ReasoningText   *string `json:"reasoning_text"`
	ReasoningOpaque string  `json:"reasoning_opaque"`
	// Annotations are the message's citations (url_citation: OpenAI's
	// search models, OpenRouter's web plugin). The contract has no
	// citation part: they are kept as sent in meta.extended["annotations"].
	Annotations json.RawMessage `json:"annotations"`
	// Images are generated images (OpenRouter's image models:
	// [{"type":"image_url","image_url":{"url":"data:image/png;base64,…"}}]),
	// which the contract cannot return: reported in a warning.
	Images json.RawMessage `json:"images"`
	// Audio is a gpt-4o-audio model's spoken answer (audio.go), which the
	// contract has no part for: its id, transcript and expiry are kept.
	Audio json.RawMessage `json:"audio"`
	// ProviderMetadata is the Vercel AI Gateway's (on the finish chunk's
	// delta): its routing names the provider that served the call
	// (provider.VercelGateway: the routed provider and the cost).
	ProviderMetadata json.RawMessage `json:"provider_metadata"`
}

// toolCallList is a message's or delta's tool_calls: an array, or the
// lone call object text-generation-inference 1.4 sent in its place
// (testdata/real_tgidocs_guidance_tool_call.http).
type toolCallList []respToolCall

// UnmarshalJSON reads an array of calls, or one call object as a list of
// one.
func (l *toolCallList) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var one respToolCall
		if err := json.Unmarshal(t, &one); err != nil {
			return err
		}
		*l = toolCallList{one}
		return nil
	}
	return json.Unmarshal(b, (*[]respToolCall)(l))
}

type respToolCall struct {
	// Index keys stream deltas; nil when absent.
	Index *flexInt `json:"index"`
	// ID is a string; text-generation-inference sends a number (0).
	ID       flexString    `json:"id"`
	Type     string        `json:"type"`
	Function *respFunction `json:"function"`
	// Custom is the custom-tool call shape ({"name","input"}).
	Custom *respCustom `json:"custom"`
	// ExtraContent holds Gemini's thought signature (Google's
	// OpenAI-compatible endpoint).
	ExtraContent *extraContent `json:"extra_content"`
	// ThoughtSignature is Gemini's thought signature as Venice writes it,
	// a key of the call itself (testdata/real_venice_gemini_parallel_*).
	ThoughtSignature string `json:"thought_signature"`
}

// signature is the call's thought signature, Google's or Venice's; "" when
// there is none.
func (tc *respToolCall) signature() string {
	if s := tc.ExtraContent.signature(); s != "" {
		return s
	}
	return tc.ThoughtSignature
}

type respFunction struct {
	Name string `json:"name"`
	// Arguments is a JSON string on OpenAI; some compatible servers send
	// an object.
	Arguments json.RawMessage `json:"arguments"`
	// Parameters is where text-generation-inference 1.4 put the
	// arguments (an object), with no arguments key.
	Parameters json.RawMessage `json:"parameters"`
}

// arguments is the call's arguments text: arguments, else TGI 1.4's
// parameters.
func (f *respFunction) arguments() string {
	if !isPresent(f.Arguments) && isPresent(f.Parameters) {
		return argumentsText(f.Parameters)
	}
	return argumentsText(f.Arguments)
}

type respCustom struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

type wireUsage struct {
	PromptTokens            flexInt        `json:"prompt_tokens"`
	CompletionTokens        flexInt        `json:"completion_tokens"`
	TotalTokens             flexInt        `json:"total_tokens"`
	PromptTokensDetails     *promptDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails *complDetails  `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's cached prompt count (older
	// DeepSeek answers have no prompt_tokens_details).
	PromptCacheHitTokens *flexInt `json:"prompt_cache_hit_tokens"`
	// CachedTokens is Moonshot's cached prompt count, at the top of the
	// usage object (no prompt_tokens_details).
	CachedTokens *flexInt `json:"cached_tokens"`
	// ReasoningTokens is SGLang's reasoning count, at the top of the
	// usage object (no completion_tokens_details); part of
	// completion_tokens.
	ReasoningTokens *flexInt `json:"reasoning_tokens"`
	// reasoningApart: the server counts a top-level reasoning_tokens
	// outside completion_tokens (Perplexity: topReasoningOutside).
	reasoningApart bool
	// timingsCacheN is llama.cpp's timings.cache_n from beside the usage
	// object (chatResponse.usage), its only cached prompt count.
	timingsCacheN *flexInt
	// Raw is the usage object as sent: the fields no counter holds (audio
	// and prediction tokens, OpenRouter's cost, fields added later) are read
	// from it into meta.extended (usageDetails).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the counters and keeps the object's bytes.
func (u *wireUsage) UnmarshalJSON(b []byte) error {
	type plain wireUsage
	err := json.Unmarshal(b, (*plain)(u)) // a type error still decodes the rest
	u.Raw = append(json.RawMessage(nil), b...)
	return err
}

type promptDetails struct {
	CachedTokens flexInt `json:"cached_tokens"`
	// CacheWriteTokens: OpenRouter's prompt tokens written to the cache.
	CacheWriteTokens flexInt `json:"cache_write_tokens"`
}

type complDetails struct {
	ReasoningTokens flexInt `json:"reasoning_tokens"`
}

// embedRequest is the body of POST /embeddings.
type embedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions *int32   `json:"dimensions,omitempty"`
	// OutputDimension is Voyage's and Mistral's name for dimensions.
	OutputDimension *int32 `json:"output_dimension,omitempty"`
	// EncodingFormat is "base64" for OpenAI's and Azure's own APIs, as
	// their SDKs ask: float32 bytes are exact and about a quarter of the
	// float JSON; unset elsewhere (float is every server's default).
	EncodingFormat string `json:"encoding_format,omitempty"`
	User           string `json:"user,omitempty"`
	// Truncation is sent false to Voyage AI (its default true cuts an
	// over-long input silently); unset elsewhere.
	Truncation *bool `json:"truncation,omitempty"`
}

type embedResponse struct {
	// ID and Created: Mistral, vLLM and other compatible servers send
	// them (OpenAI does not).
	ID      string  `json:"id"`
	Created flexInt `json:"created"`
	// RequestID: Together's answers carry it in the body; a request-id
	// header wins over it.
	RequestID string      `json:"request_id"`
	Object    string      `json:"object"`
	Data      []embedData `json:"data"`
	Model     string      `json:"model"`
	Usage     *wireUsage  `json:"usage"`
	// Provider is OpenRouter's name of the upstream that served the
	// embeddings ("OpenAI"), as on its chat answers.
	Provider upstreamName    `json:"provider"`
	Error    json.RawMessage `json:"error"`
}

type embedData struct {
	Object string `json:"object"`
	// Index is nil when the entry has none.
	Index *flexInt `json:"index"`
	// Embedding is an array of numbers (encoding_format float) or a
	// base64 string of little-endian float32 (encoding_format base64).
	Embedding json.RawMessage `json:"embedding"`
}

// flexInt accepts a JSON integer, a float with an integral value, a numeric
// string, or null (0). Anything else is 0 rather than a failure of the
// whole response: counters are informational.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*n = flexInt(i)
		return nil
	}
	if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= -1<<62 && f <= 1<<62 {
		*n = flexInt(int64(f))
		return nil
	}
	*n = 0
	return nil
}

// flexString accepts a JSON string, number, bool or null; other values are
// kept as compact JSON text (valid UTF-8). Error codes are strings on OpenAI but numbers
// on some compatible servers.
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0, string(b) == "null":
		*s = ""
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = flexString(v)
	default:
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			return err
		}
		// Compact keeps the bytes of strings as sent: invalid UTF-8
		// (a call id sent as an object, found by FuzzStream) could not
		// go into a proto string.
		*s = flexString(strings.ToValidUTF8(c.String(), "\uFFFD"))
	}
	return nil
}

// wireError is the "error" object of an error body or stream error event.
type wireError struct {
	Message    flexString      `json:"message"`
	Type       flexString      `json:"type"`
	Param      flexString      `json:"param"`
	Code       flexString      `json:"code"`
	InnerError *wireInnerError `json:"innererror"`
	// FailedGeneration is what the model wrote when Groq rejects it
	// (tool_use_failed: not a valid tool call), kept in the error's
	// extended details.
	FailedGeneration *string `json:"failed_generation"`
	// HTTPStatusCode is the status text-generation-inference gives an
	// error event inside a 200 stream ({"error":{"message":…,
	// "http_status_code":422}}).
	HTTPStatusCode flexInt `json:"http_status_code"`
	// ContentFilters is Azure's Responses API account of a refused
	// prompt ([{"blocked":true,"source_type":"prompt",
	// "content_filter_results":{…},"content_filter_offsets":{…}}]), where
	// Chat Completions errors have innererror.content_filter_result.
	ContentFilters json.RawMessage `json:"content_filters"`
	// Metadata is OpenRouter's: for a flagged input (403) it holds the
	// moderation's reasons, flagged_input, provider_name and model_slug.
	Metadata json.RawMessage `json:"metadata"`
}

// moderationReasons are the reasons of OpenRouter's moderation metadata
// ({"reasons": ["harassment"], …}); nil for other metadata.
func (we *wireError) moderationReasons() []string {
	if !isPresent(we.Metadata) {
		return nil
	}
	var m struct {
		Reasons []string `json:"reasons"`
	}
	if json.Unmarshal(we.Metadata, &m) != nil {
		return nil
	}
	return m.Reasons
}

// wireInnerError is Azure's innererror (content filter verdicts).
type wireInnerError struct {
	Code                flexString      `json:"code"`
	ContentFilterResult json.RawMessage `json:"content_filter_result"`
}
