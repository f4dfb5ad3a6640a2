package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// parseResponse turns a 2xx /v1/messages body into a Result.
func parseResponse(raw []byte, h http.Header) (*provider.Result, error) {
	var m messageResponse
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, provider.BadResponse(providerName, "decode message: %v", err)
	}
	if m.Type == "error" || m.Error != nil {
		return nil, eventError(m.Error, m.RequestID, h)
	}
	if m.Type != "" && m.Type != "message" {
		return nil, provider.BadResponse(providerName, "unexpected response type %q", m.Type)
	}
	if m.Type == "" && m.ID == "" && m.Content == nil && m.StopReason == nil && m.Usage == nil {
		// Not a message at all ({}, null, {"error":null}): an answer the
		// caller cannot use, not an empty one (the openai adapter's rule).
		return nil, provider.BadResponse(providerName, "the response is not a message: it has no type, id, content, stop_reason or usage")
	}
	meta := headerMeta(h)
	meta.ResponseId = m.ID
	meta.ResolvedModel = m.Model

	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	var cites unaryCitations
	var fallbacks []any
	toolIDs := map[string]int{} // tool_use id (as keyed) -> its content index
	made := map[string]bool{}   // the ids made for blocks without one
	taken := func(id string) bool { _, ok := toolIDs[id]; return ok }
	textLast := false            // the last block that said anything was text (textRun)
	var blocks []json.RawMessage // the content as sent, for provider items
	for i, b := range m.Content {
		if b.Type != "text" {
			textLast = false
		}
		switch b.Type {
		case "text":
			if w := cites.add(i, &b); w != "" {
				meta.Warnings = append(meta.Warnings, w)
			}
			if b.Text != "" {
				textRun(msg, b.Text, textLast)
				textLast = true
			}
		case "tool_use":
			if w := toolsetWarning(i, b.ToolsetName); w != "" {
				meta.Warnings = append(meta.Warnings, w)
			}
			switch j, ok := toolIDs[b.ID]; {
			case b.ID == "":
				// A call without an id cannot be answered (the tool
				// result names its call by id): it is keyed by a made
				// id, none of an earlier call, as the stream keys it
				// and the other adapters key theirs.
				b.ID = provider.MadeCallID(int(meta.ToolCallCount), taken)
				made[b.ID] = true
				toolIDs[b.ID] = i
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("content[%d]: tool_use block without an id; keyed as %s", i, b.ID))
			case ok && made[b.ID]:
				// Sent with the id made for an earlier block: keyed by
				// another made id, as the stream (which cannot know the
				// later ids when it makes one) keys it.
				sentID := b.ID
				b.ID = provider.MadeCallID(int(meta.ToolCallCount), taken)
				made[b.ID] = true
				toolIDs[b.ID] = i
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("content[%d]: tool_use block repeats the id %s made for block %d; keyed as %s", i, sentID, j, b.ID))
			case ok:
				// Calls are keyed by their id: two blocks with one id
				// would be one call to the gateway and in the next
				// request. The stream refuses them as well (Anthropic
				// never sends them; re-keying would invent an id the
				// API never issued, sent back with the tool result).
				return nil, provider.BadResponse(providerName, "tool_use blocks %d and %d have the same id %s", j, i, b.ID)
			default:
				toolIDs[b.ID] = i
			}
			args := provider.ArgumentsText(b.Input, "{}")
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
				CallId: b.ID, Name: b.Name, Arguments: args, ArgumentsValid: fold.ValidArguments(args),
			}}})
			meta.ToolCallCount++
		case "thinking", "redacted_thinking":
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: reasoningOf(&b)}})
		case "fallback":
			fallbacks = append(fallbacks, fallbackRecord(&b))
			if to := fallbackTo(&b); to != "" {
				meta.ResolvedModel = to
			}
			meta.Warnings = append(meta.Warnings, fmt.Sprintf("content[%d]: %s", i, fallbackWarning(&b)))
		default:
			if !isItemBlock(b.Type) {
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("content[%d]: content block %s", i, unsupportedBlock(&b)))
				continue
			}
			if blocks == nil {
				var err error
				if blocks, err = rawContent(raw); err != nil || len(blocks) != len(m.Content) {
					// The body decoded as a message a moment ago.
					return nil, provider.BadResponse(providerName, "decode message content: %v", err)
				}
			}
			js, ok := provider.ItemJSON(blocks[i])
			if !ok {
				return nil, provider.BadResponse(providerName, "content[%d]: the block is not a JSON object", i)
			}
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{
				Type: b.Type, Json: js,
			}}})
			if note := itemNote(&b); note != "" {
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("content[%d]: content block %s", i, note))
			}
		}
	}
	cites.set(meta)
	if len(fallbacks) > 0 {
		provider.SetExtended(meta, extFallback, fallbacks)
	}
	stop := ""
	if m.StopReason != nil {
		stop = string(*m.StopReason)
	}
	meta.ProviderFinishReason = stop
	meta.FinishReason = provider.ToolCallsFinish(finishReason(stop), int(meta.ToolCallCount))
	if stop == "" {
		// "In non-streaming mode this value is always non-null. In
		// streaming mode, it is null in the message_start event and
		// non-null otherwise." (anthropic-sdk-python, types/message.py,
		// Message.stop_reason). A whole answer without one is not the
		// API's: a stream's message_start passed on as the answer, or a
		// proxy's answer put together from a stream cut before its
		// message_delta. Nothing says how it ended: it may be cut, and
		// the finish stays unspecified (never STOP) with this warning.
		meta.Warnings = append(meta.Warnings, noStopReasonWarning)
	}
	if n := len(msg.Parts); n > 0 {
		// A tool_use block last in an answer cut short (the token limit,
		// the context window, a streaming classifier's refusal) is the
		// call being written when the answer stopped: the API reports the
		// input parsed so far, an object that may parse but is not the
		// whole call (the stream shows the cut JSON text).
		if tc := msg.Parts[n-1].GetToolCall(); tc != nil && tc.ArgumentsValid {
			if cut := cutBy(stop); cut != "" {
				tc.ArgumentsValid = false
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("tool call %s was cut by %s; its arguments are partial", tc.CallId, cut))
			}
		}
	}
	if m.StopSequence != nil && *m.StopSequence != "" {
		provider.SetExtended(meta, "stop_sequence", *m.StopSequence)
	}
	setStopDetails(meta, m.StopDetails)
	setContainer(meta, m.Container)
	setContextManagement(meta, m.ContextManagement)
	setInputTransformations(meta, m.InputTransformations, false)
	setUpstreamProvider(meta, m.ProviderMetadata)
	setDiagnostics(meta, m.Diagnostics)
	if m.Usage != nil {
		var u usageState
		u.update(m.Usage)
		meta.Usage = u.normalized()
		if m.Usage.ServiceTier != "" {
			provider.SetExtended(meta, "service_tier", m.Usage.ServiceTier)
		}
		usageDetails(m.Usage).Set(meta)
		meta.Warnings = append(meta.Warnings, oddUsageWarnings(m.Usage)...)
		if w := u.thinkingWarning(); w != "" {
			meta.Warnings = append(meta.Warnings, w)
		}
	}
	return &provider.Result{Message: msg, Meta: meta}, nil
}

// reasoningOf converts a thinking block (text and signature) or a
// redacted_thinking block (its encrypted data becomes the signature, the
// part is marked redacted). Every such block is kept, even an empty one:
// the signature must go back with the conversation.
func reasoningOf(b *contentBlock) *llmrelayv1.Reasoning {
	if b.Type == "redacted_thinking" {
		return &llmrelayv1.Reasoning{Redacted: true, Signature: b.Data}
	}
	return &llmrelayv1.Reasoning{Text: b.Thinking, Signature: b.Signature}
}

// noStopReasonWarning is the warning of a whole answer without a
// stop_reason.
const noStopReasonWarning = "the answer has no stop_reason, which Anthropic sends in every whole answer (null only in a stream's message_start): it is a proxy's, or was cut before its end; how it ended is unknown and it may be incomplete"

// finishReason is the table from stop_reason to ours (the tool-call rule,
// provider.ToolCallsFinish, is applied by the caller).
func finishReason(stop string) llmrelayv1.FinishReason {
	switch stop {
	case "":
		return llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED
	case "end_turn", "stop_sequence":
		return llmrelayv1.FinishReason_FINISH_REASON_STOP
	case "max_tokens", "model_context_window_exceeded":
		return llmrelayv1.FinishReason_FINISH_REASON_LENGTH
	case "tool_use":
		return llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
	case "refusal", "sensitive":
		// sensitive: a safety filter's stop that Anthropic-compatible
		// endpoints send (Z.ai's word for its output filter, which the
		// openai adapter reads as content filter too; Messages API
		// clients handle it beside refusal, earendil-works/pi's
		// "Content flagged by safety filters (not yet in SDK types)").
		return llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	default:
		// pause_turn (a server tool loop at its limit), compaction (the
		// answer paused after its compaction block, pause_after_compaction:
		// the client sends the block back and asks again), reasons added
		// later. The first two are unfinished answers to resume, neither
		// stopped nor cut (testdata/pause_turn*.http,
		// compaction_pause*.http).
		return llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
}

// cutBy names what cut an answer short for the stop reasons that end it
// mid-output ("" for the others): max_tokens, model_context_window_exceeded
// and refusal (a streaming classifier stops the answer where it is, text or
// tool call; testdata/refusal_in_tool_call.http).
func cutBy(stop string) string {
	switch stop {
	case "max_tokens":
		return "the token limit"
	case "model_context_window_exceeded":
		return "the context window"
	case "refusal":
		return "a refusal"
	case "sensitive":
		return "a content filter"
	}
	return ""
}

// usagePaths are the usage fields usageState and the service_tier meta
// read.
var usagePaths = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
	"output_tokens_details.thinking_tokens", "service_tier"}

// usageDetails are the usage fields no counter holds, and those that held
// no value a counter could take (wireUsage.Odd), as sent.
func usageDetails(u *wireUsage) provider.UsageDetails {
	return provider.ReadUsageDetails(u.Raw, provider.MappedExcept(usagePaths, u.Odd)...)
}

// oddUsageWarnings are the warnings for u's odd fields.
func oddUsageWarnings(u *wireUsage) []string {
	var w []string
	for _, k := range u.Odd {
		w = append(w, provider.OddUsageWarning(k))
	}
	return w
}

// usageState holds Anthropic's usage counts as last reported. Each count in
// an update replaces the previous one: the API's counts are cumulative.
type usageState struct {
	input, output, cacheRead, cacheCreation, thinking int64
	compaction                                        compactionUsage
	seen                                              bool
}

func (s *usageState) update(u *wireUsage) {
	if u == nil {
		return
	}
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
			s.seen = true
		}
	}
	set(&s.input, u.InputTokens)
	set(&s.output, u.OutputTokens)
	set(&s.cacheRead, u.CacheReadInputTokens)
	set(&s.cacheCreation, u.CacheCreationInputTokens)
	if d := u.OutputTokensDetails; d != nil {
		set(&s.thinking, d.ThinkingTokens)
	}
	// The top-level counts leave out the compaction iterations (the
	// summary the API wrote before answering); they are added back so the
	// usage is the request's. Other iterations are in the top-level counts
	// already (server tool loops) or are another model's (the advisor
	// tool's advisor_message): not added.
	var comp compactionUsage
	found := false
	for _, it := range u.Iterations {
		if it.Type != "compaction" {
			continue
		}
		found = true
		comp.input += sat(deref(it.InputTokens))
		comp.output += sat(deref(it.OutputTokens))
		comp.cacheRead += sat(deref(it.CacheReadInputTokens))
		comp.cacheCreation += sat(deref(it.CacheCreationInputTokens))
	}
	if found {
		// Counts are cumulative: the latest report replaces the previous.
		s.compaction = comp
		s.seen = true
	}
}

// thinkingWarning says that the reported thinking tokens exceed the output
// tokens they are part of ("" when they do not): the reasoning tokens are
// capped at the output tokens, and the warning keeps the count sent
// (testdata/real_oll_thinking_streaming_with_events.http: 1024 thinking of
// 216 output).
func (s *usageState) thinkingWarning() string {
	if s.thinking <= s.output {
		return ""
	}
	return fmt.Sprintf("usage: output_tokens_details.thinking_tokens %d exceeds output_tokens %d; reasoning tokens capped at %d",
		s.thinking, s.output, sat(s.output))
}

// compactionUsage is the sum of the compaction iterations' counts.
type compactionUsage struct {
	input, output, cacheRead, cacheCreation int64
}

func deref(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// normalized converts to the gateway's usage: Anthropic's input_tokens
// exclude cache reads and writes, ours include both; output_tokens
// include thinking_tokens, as ours include reasoning_tokens.
func (s *usageState) normalized() *llmrelayv1.Usage {
	c := s.compaction
	read := sat(sat(s.cacheRead) + c.cacheRead)
	creation := sat(sat(s.cacheCreation) + c.cacheCreation)
	in := sat(s.input) + c.input + read + creation
	out := sat(sat(s.output) + c.output)
	return &llmrelayv1.Usage{
		InputTokens:              provider.Count(in),
		OutputTokens:             provider.Count(out),
		TotalTokens:              provider.Count(in + out),
		CachedInputTokens:        provider.Count(read),
		CacheCreationInputTokens: provider.Count(creation),
		ReasoningTokens:          provider.Count(min(sat(s.thinking), out)),
	}
}

// sat bounds a count so sums cannot overflow; negative counts become 0.
func sat(v int64) int64 {
	if v < 0 {
		return 0
	}
	return min(v, math.MaxInt32)
}

// headerRequestID is the answer's request id: Anthropic's request-id,
// else x-amzn-RequestId, which Amazon Bedrock sends on every answer of
// Claude's (its InvokeModel's, as boto3's response metadata records it:
// "x-amzn-requestid", "x-amzn-bedrock-invocation-latency",
// "x-amzn-bedrock-input-token-count", …) and a relay in front of Bedrock
// passes on, and no request-id.
func headerRequestID(h http.Header) string {
	if v := provider.HeaderValue(h, requestIDHeader); v != "" {
		return v
	}
	return provider.HeaderValue(h, "X-Amzn-Requestid")
}

// bedrockHeaderPrefix starts the headers Amazon Bedrock adds to a model's
// answer: x-amzn-bedrock-invocation-latency (milliseconds),
// -input-token-count, -output-token-count,
// -cache-read-input-token-count, -cache-write-input-token-count (its
// count of the call, which Claude's usage repeats) and
// -performanceconfig-latency ("standard", "optimized").
const bedrockHeaderPrefix = "X-Amzn-Bedrock-"

// bedrockHeaders keeps each x-amzn-bedrock-* header of h in
// meta.extended, as bedrock_<rest of the name, lower case, '-' as '_'>
// (bedrock_invocation_latency, bedrock_input_token_count), an integer as
// a number, anything else as sent.
func bedrockHeaders(meta *llmrelayv1.ResponseMeta, h http.Header) {
	for name, vs := range h {
		rest, ok := strings.CutPrefix(http.CanonicalHeaderKey(name), bedrockHeaderPrefix)
		if !ok || rest == "" || len(vs) == 0 {
			continue
		}
		v := strings.TrimSpace(vs[0])
		if v == "" {
			continue
		}
		key := "bedrock_" + strings.ReplaceAll(strings.ToLower(rest), "-", "_")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			provider.SetExtended(meta, key, n)
			continue
		}
		provider.SetExtended(meta, key, strings.ToValidUTF8(v, "\uFFFD"))
	}
}

// headerMeta reads the response headers every answer has: request-id (or
// Bedrock's x-amzn-RequestId), the anthropic-ratelimit-* headers, and
// Bedrock's x-amzn-bedrock-* ones.
func headerMeta(h http.Header) *llmrelayv1.ResponseMeta {
	meta := newMeta()
	meta.ProviderRequestId = headerRequestID(h)
	bedrockHeaders(meta, h)
	var rl llmrelayv1.RateLimit
	found := false
	setInt := func(name string, dst **int64) {
		if n, ok := headerInt(h, name); ok {
			*dst = &n
			found = true
		}
	}
	setTime := func(name string, dst **timestamppb.Timestamp) {
		if t, ok := headerTime(h, name); ok {
			*dst = timestamppb.New(t)
			found = true
		}
	}
	setInt("Anthropic-Ratelimit-Requests-Limit", &rl.RequestsLimit)
	setInt("Anthropic-Ratelimit-Requests-Remaining", &rl.RequestsRemaining)
	setTime("Anthropic-Ratelimit-Requests-Reset", &rl.RequestsResetTime)
	setInt("Anthropic-Ratelimit-Tokens-Limit", &rl.TokensLimit)
	setInt("Anthropic-Ratelimit-Tokens-Remaining", &rl.TokensRemaining)
	setTime("Anthropic-Ratelimit-Tokens-Reset", &rl.TokensResetTime)
	if found {
		meta.RateLimit = &rl
	}
	// Every budget is a window (RateLimit.windows): requests and tokens
	// as above, the input and output token limits and a Claude
	// subscription's unified windows, which the typed fields have no
	// place for.
	meta.RateLimit = provider.AnthropicWindows(meta.RateLimit, h)
	unifiedLimits(meta, h)
	return meta
}

// unifiedLimits keeps in meta.extended the unified limit headers of a
// Claude subscription's answer that are no window's
// (provider.AnthropicUnifiedWindows holds each window's status, reset and
// utilization): anthropic-ratelimit-unified-representative-claim,
// -fallback-percentage, -overage-disabled-reason, and a window's value of
// another form than the window holds, one key each,
// ratelimit_unified_<rest of the name> with '-' as '_'
// (ratelimit_unified_representative_claim), a percentage as a number,
// anything else as sent.
func unifiedLimits(meta *llmrelayv1.ResponseMeta, h http.Header) {
	for name, vs := range h {
		rest, ok := strings.CutPrefix(http.CanonicalHeaderKey(name), provider.UnifiedPrefix)
		if !ok || rest == "" || len(vs) == 0 {
			continue
		}
		v := strings.TrimSpace(vs[0])
		if v == "" || provider.UnifiedTyped(strings.ToLower(rest), v) {
			continue
		}
		key := "ratelimit_unified_" + strings.ReplaceAll(strings.ToLower(rest), "-", "_")
		var value any = v
		switch {
		case strings.HasSuffix(key, "_percentage"):
			if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				value = f
			}
		}
		provider.SetExtended(meta, key, value)
	}
}

func headerInt(h http.Header, name string) (int64, bool) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

func headerTime(h http.Header, name string) (time.Time, bool) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// setStopDetails keeps the stop_details object Anthropic sends with some
// stop reasons (a refusal's category, explanation and recommended model)
// as meta.extended.stop_details; null or absent adds nothing.
func setStopDetails(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) bool {
	return setExtendedJSON(meta, "stop_details", raw)
}

// setContainer keeps the code-execution container an answer ran in ({id,
// expires_at}: the id lets the next request reuse it) as
// meta.extended.container; null or absent adds nothing.
func setContainer(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) bool {
	return setExtendedJSON(meta, "container", raw)
}

// setContextManagement keeps the context edits the API applied (cleared
// tool uses or thinking turns, and the input tokens they freed) as
// meta.extended.context_management; a report with no edit
// ({applied_edits: []}), null or absent adds nothing.
func setContextManagement(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) bool {
	var cm map[string]json.RawMessage
	if json.Unmarshal(raw, &cm) != nil || len(cm) == 0 {
		return false
	}
	empty := true
	for _, v := range cm {
		switch t := string(bytes.TrimSpace(v)); t {
		case "[]", "null", "{}":
		default:
			empty = false
		}
	}
	if empty {
		return false
	}
	return setExtendedJSON(meta, "context_management", raw)
}

// extUpstreamProvider is the provider a gateway routed the call to
// (meta.extended.upstream_provider, as the openai adapter names
// OpenRouter's and Hugging Face's).
const extUpstreamProvider = "upstream_provider"

// setUpstreamProvider sets meta.extended.upstream_provider and
// gateway_cost from a Vercel AI Gateway's provider_metadata
// (provider.VercelGateway; testdata/real_vercelgw_deepseek_tool_stream_*).
// Reports whether it set either.
func setUpstreamProvider(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) bool {
	upstream, cost := provider.VercelGateway(raw)
	if cost != "" {
		provider.SetExtended(meta, extGatewayCost, cost)
	}
	if upstream != "" {
		provider.SetExtended(meta, extUpstreamProvider, upstream)
	}
	return upstream != "" || cost != ""
}

// toolsetWarning is the warning for content block i, a tool_use naming
// the client toolset toolset (none when it names none): the contract's
// tool call cannot carry the toolset, so the call goes back without the
// toolset_name the API's block params take beside it, and the client
// must know the tool by its name alone.
func toolsetWarning(i int, toolset string) string {
	if toolset == "" {
		return ""
	}
	return fmt.Sprintf("content[%d]: tool_use names the toolset %q, which a tool call cannot carry: it goes back in later requests without its toolset_name", i, strings.ToValidUTF8(toolset, "\uFFFD"))
}

// extGatewayCost is the Vercel AI Gateway's charge for the call.
const extGatewayCost = "gateway_cost"

// setDiagnostics keeps the cache diagnostics beta's report
// (cache-diagnosis-2026-04-07, asked for with diagnostics.previous_message_id:
// Anthropic's "Cache diagnostics" page) as sent, in
// meta.extended.diagnostics: what changed since the previous request
// (model, system, tools, messages) and the input tokens past the
// divergence, which the usage cannot say. null (not asked for; every
// DigitalOcean-relayed answer carries "diagnostics": null) sets nothing.
func setDiagnostics(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) bool {
	return setExtendedJSON(meta, "diagnostics", raw)
}

// setExtendedJSON sets meta.extended[key] to the JSON value raw and reports
// whether it did; null or absent sets nothing.
func setExtendedJSON(meta *llmrelayv1.ResponseMeta, key string, raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return false
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		// The enclosing event decoded, so this cannot fail; keep the text.
		v = string(t)
	}
	provider.SetExtended(meta, key, v)
	return true
}

// setInputTransformations keeps the input_transformations array (the
// thinking blocks of the history the API removed before the model saw
// them, with their path and reason) as meta.extended.input_transformations
// and reports whether it set it. An empty array (nothing removed) is kept
// only with keepEmpty: a stream's message_delta list replaces the one
// message_start gave. null or absent adds nothing.
func setInputTransformations(meta *llmrelayv1.ResponseMeta, raw json.RawMessage, keepEmpty bool) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return false
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		// The enclosing event decoded, so this cannot fail; keep the text.
		v = string(t)
	}
	if l, ok := v.([]any); ok && len(l) == 0 && !keepEmpty {
		return false
	}
	provider.SetExtended(meta, "input_transformations", v)
	return true
}

// unsupportedBlock describes a content block type the contract has no
// place for and that is not a provider item (isItemBlock), for a warning.
func unsupportedBlock(b *contentBlock) string {
	return fmt.Sprintf("type %q not supported; ignored", b.Type)
}

// serverToolFailure says why a server tool's result is a failure: its
// content is an `*_error` object (web_fetch_tool_result_error,
// web_search_tool_result_error, code_execution_tool_result_error, ...)
// whose error_code the warning repeats, with its error_message when it has
// one (tool_search_tool_result_error and
// text_editor_code_execution_tool_result_error do: "Invalid regular
// expression pattern: missing ]: [", testdata/real_vercel_tool_search_error_2),
// or the block says is_error (an MCP tool's). "" for a result that is not a
// failure.
func serverToolFailure(b *contentBlock) string {
	var c struct {
		Type         string `json:"type"`
		ErrorCode    string `json:"error_code"`
		ErrorMessage string `json:"error_message"`
	}
	if json.Unmarshal(b.Content, &c) == nil && strings.HasSuffix(c.Type, "_error") {
		out := c.Type
		if c.ErrorCode != "" {
			out = fmt.Sprintf("%s %q", c.Type, c.ErrorCode)
		}
		if m := strings.TrimSpace(c.ErrorMessage); m != "" {
			out += fmt.Sprintf(" (%q)", provider.Shorten(strings.ToValidUTF8(m, "\uFFFD"), maxFailureMessage))
		}
		return out
	}
	if b.IsError {
		if t := firstResultText(b.Content); t != "" {
			return fmt.Sprintf("is_error (%q)", provider.Shorten(strings.ToValidUTF8(t, "\uFFFD"), maxFailureMessage))
		}
		return "is_error"
	}
	return ""
}

// firstResultText is the first text of a tool result's content, which the
// MCP connector's mcp_tool_result sends as a string or as a list of text
// blocks ({"type":"text","text":…}, Anthropic's MCP connector page); ""
// when it has none. A failed MCP call's reason is there.
func firstResultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	for _, b := range blocks {
		if t := strings.TrimSpace(b.Text); b.Type == "text" && t != "" {
			return t
		}
	}
	return ""
}

// maxFailureMessage bounds the bytes of a server tool's error_message a
// warning repeats.
const maxFailureMessage = 512

// maxNamedFiles bounds the file ids one warning lists.
const maxNamedFiles = 16

// serverToolFiles names the files a code-execution result says the sandbox
// wrote (its content's `*_output` entries with a file_id: the only way to
// fetch them, through the Files API), for the warning about the block:
// "the files file_a, file_b" ("" when there are none). Dropping the block
// without them would lose the files the caller asked for
// (testdata/real_pyd_anthropic_code_execution_file_outputs.http).
func serverToolFiles(b *contentBlock) string {
	var c struct {
		Content []struct {
			FileID string `json:"file_id"`
		} `json:"content"`
	}
	if json.Unmarshal(b.Content, &c) != nil {
		return ""
	}
	var ids []string
	for _, f := range c.Content {
		if f.FileID != "" {
			ids = append(ids, strconv.Quote(f.FileID))
		}
	}
	switch n := len(ids); {
	case n == 0:
		return ""
	case n == 1:
		return "the file " + ids[0]
	case n > maxNamedFiles:
		return fmt.Sprintf("the files %s and %d more", strings.Join(ids[:maxNamedFiles], ", "), n-maxNamedFiles)
	default:
		return "the files " + strings.Join(ids, ", ")
	}
}

// textRun adds a text block's text to the message: to the text part
// before it when the last block that said anything was text too (text
// blocks in a row, one per cited span, are one part), else as a new part
// (text after a server-tool block, which is not a part, or after another
// part). The stream splits its text the same way (stream.beginsPart).
func textRun(msg *llmrelayv1.Message, text string, textLast bool) {
	if n := len(msg.Parts); textLast && n > 0 {
		if t, ok := msg.Parts[n-1].GetKind().(*llmrelayv1.Part_Text); ok {
			t.Text += text
			return
		}
	}
	msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: text}})
}
