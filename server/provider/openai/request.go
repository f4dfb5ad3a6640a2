package openai

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// buildChatRequest encodes a normalized request as a Chat Completions body.
// It returns warnings for options the format cannot carry.
func (p *Provider) buildChatRequest(req *provider.Request, stream bool) ([]byte, []string, error) {
	if req == nil {
		return nil, nil, p.invalid("nil request")
	}
	if err := p.checkToolResults(req.Messages, false); err != nil {
		return nil, nil, err
	}
	conv, sigWarning := req.Messages, ""
	if req.DropSignatures && p.googleCompat {
		// Google refused the calls' thought signatures as another
		// account's ("Corrupted thought signature.", googleStatusError):
		// its documented placeholder instead, as the Gemini adapter sends.
		var n int
		if conv, n = provider.PlaceholderCallSignatures(conv, provider.GoogleSkipSignature); n > 0 {
			sigWarning = fmt.Sprintf("gemini refused the conversation's thought signatures as another account's or platform's (%s); "+
				"this attempt sent %d tool call(s) with Google's placeholder signature (%s)", provider.SignatureRetryNote, n, provider.GoogleSkipSignature)
		}
	}
	thinkingOff := false
	if req.DropSignatures && p.relaysReasoningState() {
		// The relay's upstream refused the state (an OpenRouter
		// metadata.raw in the upstream's words: errorFromObject).
		conv, sigWarning = relayWithoutSignatures(conv, p.name)
		// Claude behind the relay then refuses the tool loop's turn
		// without its thinking while thinking is on: off for this
		// attempt, in the relay's reasoning object (OpenRouter's and the
		// Vercel AI Gateway's reasoning.enabled; relayLoopLostThinking).
		thinkingOff = p.replay == replayReasoningDetails && relayLoopLostThinking(req.Model, req.Messages, conv)
	}
	msgs, droppedReasoning, err := p.encodeMessages(conv, req.Reasoning)
	if err != nil {
		return nil, nil, err
	}
	w, warnings, err := p.chatRequest(req, stream, msgs, droppedReasoning)
	if err != nil {
		return nil, nil, err
	}
	if sigWarning != "" {
		warnings = append(warnings, sigWarning)
	}
	if thinkingOff {
		w.ReasoningEffort, w.Thinking, w.EnableThinking, w.ChatTemplateKwargs = "", nil, nil, nil
		w.ReasoningSwitch = &reasoningSwitch{Enabled: false}
		warnings = append(warnings, warnRelayThinkingOff)
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, nil, p.invalid("encode request: %v", err)
	}
	body, extraWarnings, err := provider.MergeExtraBody(body, req.ProviderOptions.GetExtraBody(), "model", "stream", "stream_options")
	if err != nil {
		return nil, nil, p.invalid("%v", err)
	}
	return body, append(warnings, extraWarnings...), nil
}

// chatRequest builds the request buildChatRequest encodes, around the
// messages encoded before. The two are apart, and the request is on the heap (json.Marshal would copy it there
// anyway), so that the frames above the JSON encoder stay small: it runs
// at the bottom of the call's frames (docs/decisions.md, "An open stream's
// goroutine stays within 8 KiB").
//
//go:noinline
func (p *Provider) chatRequest(req *provider.Request, stream bool, msgs []chatMessage, droppedReasoning int) (*chatRequest, []string, error) {
	var warnings []string
	w := &chatRequest{Model: req.Model}
	switch {
	case droppedReasoning > 0 && p.replay == replayReasoningContent:
		// DeepSeek, Moonshot, Z.ai: reasoning_content goes back on
		// tool-call turns only (testdata/real_rubyllm_deepseek_reasoner_turns_2.http).
		warnings = append(warnings, fmt.Sprintf("%d reasoning part(s) of earlier assistant turns not sent: reasoning_content is sent back on tool-call turns only", droppedReasoning))
	case droppedReasoning > 0 && p.replay == replayReasoningField:
		warnings = append(warnings, fmt.Sprintf("%d reasoning part(s) of earlier assistant turns not sent: reasoning is sent back on tool-call turns only", droppedReasoning))
	case droppedReasoning > 0:
		warnings = append(warnings, fmt.Sprintf("%d reasoning part(s) of earlier assistant turns not sent: Chat Completions has no field for them", droppedReasoning))
	}
	sigs := 0
	for i := range msgs {
		sigs += msgs[i].droppedSignatures
	}
	if sigs > 0 {
		warnings = append(warnings, fmt.Sprintf("%d tool call signature(s) of earlier assistant turns not sent: only Google's OpenAI-compatible endpoint takes them", sigs))
	}
	for i := range msgs {
		warnings = append(warnings, msgs[i].droppedItems...)
	}
	w.Messages = msgs
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		params, err := p.toolParameters(t)
		if err != nil {
			return nil, nil, err
		}
		w.Tools = append(w.Tools, chatTool{Type: "function", Function: toolFunction{Name: t.GetName(), Description: t.GetDescription(), Strict: t.Strict, Parameters: params}})
	}
	o := req.Options
	if o == nil {
		o = &llmrelayv1.GenerationOptions{}
	}
	if tc := o.GetToolChoice(); tc != nil {
		switch c := tc.GetChoice().(type) {
		case *llmrelayv1.ToolChoice_Mode:
			if m := toolChoiceMode(c.Mode); m != "" {
				w.ToolChoice = m
			}
		case *llmrelayv1.ToolChoice_FunctionName:
			n := namedToolChoice{Type: "function"}
			n.Function.Name = c.FunctionName
			w.ToolChoice = n
		}
	}
	w.ParallelToolCalls = o.ParallelToolCalls
	if rf := o.GetResponseFormat(); rf != nil {
		switch rf.GetType() {
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT:
			w.ResponseFormat = &responseFormat{Type: "text"}
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
			w.ResponseFormat = &responseFormat{Type: "json_object"}
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
			if p.deepseek && !extraSets(req.ProviderOptions.GetExtraBody(), "response_format") {
				return nil, nil, p.invalidParam("options.response_format.type", "%s", deepseekNoSchema)
			}
			js := &jsonSchema{Name: rf.GetSchemaName(), Strict: rf.Strict}
			if js.Name == "" {
				js.Name = "response"
			}
			if rf.GetSchema() != "" {
				schema, err := provider.SchemaJSON(rf.GetSchema())
				if err != nil {
					return nil, nil, p.invalid("response_format schema: %v", err)
				}
				js.Schema = schema
			}
			w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: js}
		}
	}
	switch {
	case req.Reasoning && p.mistral:
		// Mistral's reasoning models (magistral) take max_tokens; its
		// validator refuses max_completion_tokens with a 422
		// ("extra_forbidden": testdata/dialect_mistral_err_422_extra_forbidden.http).
		w.MaxTokens = o.MaxTokens
	case req.Reasoning:
		w.MaxCompletionTokens = o.MaxTokens
	default:
		w.MaxTokens = o.MaxTokens
	}
	if samplingDropped(req, o) {
		if o.Temperature != nil || o.TopP != nil {
			warnings = append(warnings, warnReasoningSampling)
		}
	} else {
		w.Temperature = o.Temperature
		w.TopP = o.TopP
	}
	w.ReasoningEffort = reasoningEffortWire(o.GetReasoningEffort())
	switch {
	case p.deepseek:
		deepseekThinking(w, o.GetReasoningEffort())
	case (p.dashscope || p.zai || p.openRouter || p.venice) && o.GetReasoningEffort() == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		// DashScope names max (QwenLM/qwen-code#8472: low, medium,
		// high, xhigh, max for qwen3.8); so do Z.ai (GLM-5.2 and later:
		// thinkswitch.go), OpenRouter (openRouterHost) and Venice (none,
		// minimal, low, medium, high, xhigh, max: docs.venice.ai,
		// guides/features/reasoning-models).
		w.ReasoningEffort = "max"
		if p.zai {
			switchThinking(w, o.GetReasoningEffort())
		}
	case p.thinkSwitch:
		switchThinking(w, o.GetReasoningEffort())
		if wire, warn, ok := moonshotEffort(o.GetReasoningEffort()); ok && p.moonshot {
			w.ReasoningEffort = wire
			if warn != "" {
				warnings = append(warnings, warn)
			}
		} else if o.GetReasoningEffort() == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX {
			warnings = append(warnings, warnMaxEffort)
		}
	case p.ollama:
		if wire, warn, ok := ollamaEffort(p.baseURL, req.Model, o.GetReasoningEffort(), `{"reasoning_effort": "max"}`); ok {
			w.ReasoningEffort = wire
			if warn != "" {
				warnings = append(warnings, warn)
			}
		}
	case o.GetReasoningEffort() == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		warnings = append(warnings, warnMaxEffort)
	}
	if p.baseten {
		if warn := basetenThinking(w, o.GetReasoningEffort()); warn != "" {
			warnings = append(warnings, warn)
		}
	}
	if p.together {
		togetherThinking(w, o.GetReasoningEffort())
	}
	if p.templateKwargs {
		kwargsThinking(w, o.GetReasoningEffort())
	}
	if p.dashscope {
		if warn := dashscopeThinking(w, req); warn != "" {
			warnings = append(warnings, warn)
		}
	}
	w.Stop = o.GetStop()
	if req.Reasoning && len(w.Stop) > 0 && !p.azure && p.openAI {
		// OpenAI's reasoning models (o3, o4-mini, gpt-5*) answer stop with
		// a 400 unsupported_parameter (testdata/real_logfire_chat_stop_unsupported.http);
		// other servers' reasoning models (DeepSeek's, vLLM's) take it.
		// Azure is left as it is: no answer of its to stop was seen.
		w.Stop = nil
		warnings = append(warnings, warnReasoningStop)
	}
	if err := p.checkLimits(req, w.Stop); err != nil {
		return nil, nil, err
	}
	if oo := req.ProviderOptions.GetOpenai(); len(oo.GetMetadata()) > 0 && !oo.GetStore() && p.openAI {
		// OpenAI's 400 "The 'metadata' parameter is only allowed when
		// 'store' is enabled." names no param: metadata labels a stored
		// completion.
		return nil, nil, p.invalidParam("provider_options.openai.metadata", "OpenAI takes metadata on Chat Completions only with provider_options.openai.store true")
	}
	warnings = append(warnings, toolMessageWarnings(req.Messages, true)...)
	w.Seed = o.Seed
	w.PresencePenalty = o.PresencePenalty
	w.FrequencyPenalty = o.FrequencyPenalty
	if o.TopK != nil {
		warnings = append(warnings, "top_k is not part of the OpenAI chat format and was not sent (use provider_options.extra_body for compatible servers)")
	}
	if oo := req.ProviderOptions.GetOpenai(); oo != nil {
		w.User = oo.GetUser()
		w.Store = oo.Store
		if len(oo.GetMetadata()) > 0 {
			w.Metadata = oo.GetMetadata()
		}
		w.ServiceTier = oo.GetServiceTier()
		w.Logprobs = oo.Logprobs
		w.TopLogprobs = oo.TopLogprobs
		if oo.GetReasoningSummary() != "" {
			warnings = append(warnings, "provider_options.openai.reasoning_summary not sent: Chat Completions has no reasoning summaries (the OpenAI Responses format has)")
		}
	}
	if stream {
		w.Stream = true
		if !p.mistral {
			w.StreamOptions = &streamOptions{IncludeUsage: true}
		}
	}
	if p.mistral {
		warnings = mistralRequest(w, warnings)
	}
	if p.xai {
		warnings = xaiRequest(w, warnings)
	}
	return w, warnings, nil
}

// xaiRequest fits a request to api.x.ai, which answers 400 to a name on a
// message that is not the user's ({"code": "Client specified an invalid
// argument", "error": "Only messages of role 'user' can have a name."}, as
// BerriAI/litellm#9720 and pipecat-ai/pipecat#2274 quote it): such a name
// is not sent, with a warning.
func xaiRequest(w *chatRequest, warnings []string) []string {
	names := 0
	for i := range w.Messages {
		if m := &w.Messages[i]; m.Name != "" && m.Role != "user" {
			m.Name = ""
			names++
		}
	}
	if names > 0 {
		warnings = append(warnings, fmt.Sprintf("the name of %d non-user message(s) was not sent: api.x.ai takes a name on user messages only", names))
	}
	return warnings
}

// mistralRequest fits a request to api.mistral.ai, whose validator answers
// 422 "extra_forbidden" for a field it does not know (the bodies issue
// threads quote: max_completion_tokens, editor-code-assistant/eca#231;
// stream_options.include_usage, avante-corp/avante.nvim#2347 and
// openai/openai-agents-python#442; a user message's name,
// Gage-Technologies/mistral-go#2). Its streams end with the usage
// unasked (testdata/real_mag_mistral_parallel_function_call_stream.http was
// asked without stream_options), so chatRequest sends none there; the
// reasoning limit goes as max_tokens (chatRequest). Here: Mistral's roles
// are system, user, assistant and tool, so the developer role a reasoning
// request gives the system prompt is sent as system; a name on a system,
// user or assistant message is not sent, with a warning.
//
// Mistral also refuses a tool call id that is not 9 letters or digits (400
// "Tool call id was … but must be a-z, A-Z, 0-9, with a length of 9",
// code 3280: testdata/dialect_mistral_err_400_tool_call_id.http), which
// every id another provider gave (OpenAI's call_…, a failover's history)
// is: such an id goes as mistralCallID's digest of it, the same for the
// call and its result, with a warning. Mistral's own ids go unchanged.
func mistralRequest(w *chatRequest, warnings []string) []string {
	// The seed is random_seed at Mistral: its ChatCompletionRequest
	// (mistralai/client-python) has no seed, which the validator refuses
	// as an extra input (langchain-ai/langchain-azure#82 quotes
	// {"type":"extra_forbidden","loc":["body","seed"],…} for a Mistral
	// model).
	w.RandomSeed, w.Seed = w.Seed, nil
	names, ids := 0, map[string]bool{}
	for i := range w.Messages {
		m := &w.Messages[i]
		if m.Role == "developer" {
			m.Role = "system"
		}
		if m.Name != "" && m.Role != "tool" {
			m.Name = ""
			names++
		}
		for j := range m.ToolCalls {
			if id, ok := mistralCallID(m.ToolCalls[j].ID); ok {
				ids[m.ToolCalls[j].ID] = true
				m.ToolCalls[j].ID = id
			}
		}
		if id, ok := mistralCallID(m.ToolCallID); ok {
			ids[m.ToolCallID] = true
			m.ToolCallID = id
		}
	}
	if names > 0 {
		warnings = append(warnings, fmt.Sprintf("the name of %d message(s) was not sent: api.mistral.ai refuses it", names))
	}
	if len(ids) > 0 {
		warnings = append(warnings, fmt.Sprintf("%d tool call id(s) sent in the 9-character form api.mistral.ai requires", len(ids)))
	}
	return warnings
}

// mistralCallID is the id Mistral takes for a tool call id it refuses: 9
// letters and digits drawn from the SHA-256 of the id (the same id always
// gives the same one, so a call and its result still match), and true;
// an id Mistral takes (9 letters or digits, or none) is kept, false.
func mistralCallID(id string) (string, bool) {
	if id == "" || isMistralCallID(id) {
		return id, false
	}
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	sum := sha256.Sum256([]byte(id))
	var out [9]byte
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out[:]), true
}

func isMistralCallID(id string) bool {
	if len(id) != 9 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// Warnings of the options a reasoning model's Chat Completions request
// leaves out.
const (
	warnReasoningSampling = "temperature and top_p are not supported by reasoning models and were not sent"
	warnReasoningStop     = "stop is not supported by OpenAI's reasoning models and was not sent"
)

// samplingDropped reports whether a request leaves temperature and top_p
// out: a reasoning model's, unless it asks for no reasoning (effort
// none), with which OpenAI's gpt-5.1 and later take both (Logfire's
// recording testdata/real_logfire_responses_effort_none_sampling.http:
// gpt-5.4-nano answered temperature 0.4 and top_p 0.9 with effort none,
// and refused temperature with effort low,
// real_logfire_responses_temperature_unsupported.http).
func samplingDropped(req *provider.Request, o *llmrelayv1.GenerationOptions) bool {
	return req.Reasoning && o.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
}

func (p *Provider) invalid(format string, args ...any) *provider.Error {
	return &provider.Error{Provider: p.name, Kind: provider.KindInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// encodeMessages converts the conversation. Tool messages become one
// {"role":"tool"} message per tool_result part.
//
// Reasoning parts of assistant turns (from another provider, or from the
// Responses API) have no place in this format: they are left out and
// counted, for one warning.
func (p *Provider) encodeMessages(in []*llmrelayv1.Message, reasoning bool) ([]chatMessage, int, error) {
	droppedReasoning := 0
	out := make([]chatMessage, 0, len(in))
	for i, m := range in {
		if m == nil {
			continue
		}
		if m.GetRole() == llmrelayv1.Role_ROLE_TOOL {
			var err error
			if out, err = p.toolMessages(out, m, i); err != nil {
				return nil, 0, err
			}
			continue
		}
		out = append(out, chatMessage{})
		dropped, err := p.encodeMessage(&out[len(out)-1], m, i, reasoning)
		if err != nil {
			return nil, 0, err
		}
		droppedReasoning += dropped
	}
	if p.replay == replayReasoningContent && p.deepseek {
		droppedReasoning -= deepseekSegments(out)
	}
	return out, droppedReasoning, nil
}

// toolMessages appends a tool message's results, one message each.
//
//go:noinline
func (p *Provider) toolMessages(out []chatMessage, m *llmrelayv1.Message, i int) ([]chatMessage, error) {
	n := 0
	for j, part := range m.GetParts() {
		tr := part.GetToolResult()
		if tr == nil {
			return nil, p.invalid("messages[%d]: tool messages carry tool_result parts only", i)
		}
		// A tool message's content is a string or text parts
		// (ChatCompletionToolMessageParam): a result's text parts join its
		// content; an image or file has no place there and is refused
		// (the server refuses it first, naming the same field).
		for n, rp := range tr.GetParts() {
			if field, reason := provider.CheckToolResultPart("openai-chat", rp); reason != "" {
				return nil, p.invalidParam(fmt.Sprintf("messages[%d].parts[%d].tool_result.parts[%d].%s", i, j, n, field), "%s", reason)
			}
		}
		out = append(out, chatMessage{Role: "tool", ToolCallID: tr.GetCallId(), Content: mustJSON(provider.ToolResultText(tr))})
		n++
	}
	if n == 0 {
		return nil, p.invalid("messages[%d]: tool message without tool_result parts", i)
	}
	return out, nil
}

// encodeMessage encodes into cm a message of any role but tool (which may
// become several). It is apart from encodeMessages, and the assistant's from it,
// so that the frames above encodeContent stay small (encodeMessages took
// 1 KiB): the content is encoded below them, at the bottom of the call's
// frames (docs/decisions.md, "An open stream's goroutine stays within
// 8 KiB").
//
//go:noinline
func (p *Provider) encodeMessage(cm *chatMessage, m *llmrelayv1.Message, i int, reasoning bool) (dropped int, err error) {
	switch m.GetRole() {
	case llmrelayv1.Role_ROLE_SYSTEM:
		cm.Role = "system"
		if reasoning {
			cm.Role = "developer"
		}
		cm.Name = m.GetName()
		cm.Content, err = p.encodeContent(m.GetParts(), i, false)
		return 0, err
	case llmrelayv1.Role_ROLE_USER:
		cm.Role, cm.Name = "user", m.GetName()
		cm.Content, err = p.encodeContent(m.GetParts(), i, true)
		return 0, err
	case llmrelayv1.Role_ROLE_ASSISTANT:
		return p.assistantMessage(cm, m, i)
	}
	return 0, p.invalid("messages[%d]: unsupported role %s", i, m.GetRole())
}

// assistantMessage encodes an assistant turn into cm; dropped counts its reasoning
// parts not sent (Chat Completions has no field for them; servers that
// require reasoning_content get it on turns with tool calls, and
// aggregators the blocks they gave as reasoning_details: p.replay).
//
//go:noinline
func (p *Provider) assistantMessage(cm *chatMessage, m *llmrelayv1.Message, i int) (dropped int, err error) {
	cm.Role, cm.Name = "assistant", m.GetName()
	var text, reasoning strings.Builder
	hasText, reasonings, block := false, 0, 0
	var chunks []any // replayThinkingChunks: the content as Mistral's chunks, in order
	thinking := false
	for j, part := range m.GetParts() {
		switch k := part.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			text.WriteString(k.Text)
			hasText = true
			if p.replay == replayThinkingChunks {
				chunks = append(chunks, textChunk{Type: "text", Text: k.Text})
			}
		case *llmrelayv1.Part_Refusal:
			cm.Refusal += k.Refusal
		case *llmrelayv1.Part_Reasoning:
			block++ // its index among the turn's reasoning blocks
			if !k.Reasoning.GetRedacted() {
				reasoning.WriteString(k.Reasoning.GetText())
			}
			if p.replay == replayThinkTags && !k.Reasoning.GetRedacted() && k.Reasoning.GetText() != "" {
				// In its place in the content: the splitter kept the
				// bytes between the tags and after them unchanged, so
				// this is the content as the server sent it.
				text.WriteString(thinkOpen + k.Reasoning.GetText() + thinkClose)
				hasText = true
			} else if p.replay == replayThinkingChunks && !k.Reasoning.GetRedacted() && k.Reasoning.GetText() != "" {
				chunks = append(chunks, thinkingChunk{Type: "thinking", Thinking: []textChunk{{Type: "text", Text: k.Reasoning.GetText()}}, Closed: true})
				thinking = true
			} else if k.Reasoning.GetFormat() == formatReasoningOpaque {
				// Copilot's reasoning state goes back to Copilot as it
				// came, its text beside it (opencode's Copilot provider
				// sends reasoning_text only with reasoning_opaque).
				r := k.Reasoning
				if p.copilot && r.GetSignature() != "" && !r.GetRedacted() && cm.ReasoningOpaque == "" {
					cm.ReasoningOpaque = r.GetSignature()
					if t := r.GetText(); t != "" {
						cm.ReasoningText = &t
					}
				} else {
					reasonings++
				}
			} else if k.Reasoning.GetFormat() == formatThoughtSignature {
				// Gemini's signature of the turn as Venice gave it, a key
				// of the message, goes back so (opencode's recorded third
				// request, which Venice answered: "content":"400",
				// "thought_signature":…); its text, if any, went to
				// reasoning above. No other server gave it so.
				if sig := k.Reasoning.GetSignature(); p.venice && sig != "" && !k.Reasoning.GetRedacted() && cm.ThoughtSignature == "" {
					cm.ThoughtSignature = sig
					if k.Reasoning.GetText() != "" {
						reasonings++ // its text: reasoning_content on tool-call turns only
					}
				} else {
					reasonings++
				}
			} else if (p.replay == replayReasoningDetails || p.venice) && k.Reasoning.GetFormat() != "" {
				// Venice relays Claude's thinking as OpenRouter's
				// reasoning_details (signed) beside reasoning_content and
				// takes both back (testdata/real_venice_claude_tool_stream_2).
				// Its text also went to reasoning (reasoning_content).
				r := k.Reasoning
				if p.venice && strings.HasSuffix(r.GetFormat(), "-responses-v1") {
					// OpenAI's and xAI's reasoning through Venice
					// (openai-responses-v1, xai-responses-v1): its text came
					// as reasoning_content, the encrypted item as the one
					// detail, which alone goes back
					// (testdata/real_venice_gpt6luna_3.recorded_reasoning_details.json,
					// real_venice_grok43_tool_stream_2.recorded_request.json).
					r = &llmrelayv1.Reasoning{Signature: r.GetSignature(), Id: r.GetId(), Format: r.GetFormat(), Redacted: true}
				}
				if p.venice && r.GetFormat() == formatGemini && r.GetText() == "" && r.GetId() == "" && !r.GetRedacted() && r.GetSignature() != "" {
					// Gemini's signature of a text answer through Venice
					// came as a reasoning.text detail with no text (not
					// as reasoning.encrypted with the call's id) and goes
					// back so (testdata/real_venice_gemini3preview_tool_stream_3.recorded_request.json).
					cm.ReasoningDetails = append(cm.ReasoningDetails, outDetail{Type: detailText, Signature: r.GetSignature(), Format: formatGemini, Index: block - 1})
					continue
				}
				cm.ReasoningDetails = appendDetails(cm.ReasoningDetails, r, block-1)
			} else {
				reasonings++ // not sent (unless reasoning_content below)
			}
		case *llmrelayv1.Part_ToolCall:
			args := k.ToolCall.GetArguments()
			if args == "" {
				args = "{}"
			}
			wc := wireToolCall{ID: k.ToolCall.GetCallId(), Type: "function",
				Function: wireFunction{Name: k.ToolCall.GetName(), Arguments: args}}
			if sig := k.ToolCall.GetSignature(); sig != "" {
				if p.googleCompat {
					wc.ExtraContent = &extraContent{Google: &struct {
						ThoughtSignature string `json:"thought_signature"`
					}{sig}}
				} else if p.venice {
					wc.ThoughtSignature = sig
				} else {
					cm.droppedSignatures++
				}
			}
			cm.ToolCalls = append(cm.ToolCalls, wc)
		case *llmrelayv1.Part_ProviderItem:
			cm.droppedItems = append(cm.droppedItems, provider.DroppedItemWarning(i, j, k.ProviderItem, "Chat Completions"))
		case nil:
		default:
			return 0, p.invalid("messages[%d]: assistant messages carry text, refusal, reasoning, tool_call and provider_item parts only", i)
		}
	}
	switch {
	case thinking:
		b, err := json.Marshal(chunks)
		if err != nil {
			return 0, p.invalid("messages[%d]: encode thinking chunks: %v", i, err)
		}
		cm.Content = b
	case hasText:
		cm.Content = mustJSON(text.String())
	case len(cm.ToolCalls) > 0 || cm.Refusal != "":
		cm.Content = json.RawMessage("null")
	default:
		cm.Content = mustJSON("")
	}
	if p.replay == replayReasoningField && len(cm.ToolCalls) > 0 {
		if r := reasoning.String(); r != "" {
			cm.Reasoning = &r
		}
		return 0, nil
	}
	if p.replay == replayReasoningContent && len(cm.ToolCalls) > 0 {
		// DeepSeek answers 400 when a tool-call turn lacks the field (its
		// own turns always have reasoning in thinking mode; a turn from
		// elsewhere gets what text it has, possibly none).
		r := reasoning.String()
		if r == "" && p.venice {
			// Venice takes a tool-call turn without reasoning_content
			// when there was no reasoning text: GLM's turn without
			// reasoning, Gemini 3's with its signature as the one detail
			// (testdata/real_venice_glm53flash_tool_stream_2.recorded_request.json,
			// real_venice_gemini3preview_tool_stream_2.recorded_request.json).
			// The empty field is DeepSeek's own API's requirement.
			return 0, nil
		}
		cm.ReasoningContent = &r
		return 0, nil
	}
	if p.replay == replayReasoningContent && p.deepseek {
		// Sent if its user turn had tool calls (deepseekSegments).
		r := reasoning.String()
		cm.unsentReasoning, cm.unsentParts = &r, reasonings
	}
	return reasonings, nil
}

// deepseekSegments gives reasoning_content to every assistant turn
// between two user messages where the model called tools, and returns
// the reasoning parts so sent. DeepSeek's Thinking Mode guide: between two
// user messages, if the model made tool calls, the reasoning_content of
// the assistant messages between them must be passed back in all later
// requests, else 400 ("The `reasoning_content` in the thinking mode must be
// passed back to the API", which kimi-cli#2141 and openclaw#73417 quote
// for the assistant's text answer after the tool results: user, call,
// result, answer, user, …); without tool calls it is ignored. Only the
// turns with calls had it.
func deepseekSegments(msgs []chatMessage) int {
	sent := 0
	for start := 0; start < len(msgs); {
		end := start + 1
		for end < len(msgs) && msgs[end].Role != "user" {
			end++
		}
		seg := msgs[start:end]
		start = end
		calls := false
		for i := range seg {
			calls = calls || (seg[i].Role == "assistant" && len(seg[i].ToolCalls) > 0)
		}
		if !calls {
			continue
		}
		for i := range seg {
			if m := &seg[i]; m.unsentReasoning != nil && m.ReasoningContent == nil {
				m.ReasoningContent = m.unsentReasoning
				sent += m.unsentParts
			}
		}
	}
	return sent
}

// encodeContent encodes system/user content: a plain string when it is a
// single text part, else an array of content parts.
func (p *Provider) encodeContent(parts []*llmrelayv1.Part, i int, images bool) (json.RawMessage, error) {
	if len(parts) == 1 {
		if t, ok := parts[0].GetKind().(*llmrelayv1.Part_Text); ok {
			return mustJSON(t.Text), nil
		}
	}
	if len(parts) == 0 {
		return mustJSON(""), nil
	}
	arr := make([]contentPart, 0, len(parts))
	for j, part := range parts {
		switch k := part.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			text := k.Text
			arr = append(arr, contentPart{Type: "text", Text: &text})
		case *llmrelayv1.Part_Image:
			if !images {
				return nil, p.invalid("messages[%d]: images are allowed in user messages only", i)
			}
			iu, err := p.encodeImage(k.Image, i)
			if err != nil {
				return nil, err
			}
			arr = append(arr, contentPart{Type: "image_url", ImageURL: iu})
		case *llmrelayv1.Part_File:
			if !images {
				return nil, p.invalid("messages[%d]: files are allowed in user messages only", i)
			}
			cp, err := p.encodeFile(k.File, i, j)
			if err != nil {
				return nil, err
			}
			arr = append(arr, cp)
		default:
			return nil, p.invalid("messages[%d]: unsupported part %T in this role", i, part.GetKind())
		}
	}
	b, err := json.Marshal(arr)
	if err != nil {
		return nil, p.invalid("messages[%d]: %v", i, err)
	}
	return b, nil
}

// encodeFile builds a Chat Completions file part: a document as a file
// (inline data as a data: URL with a file name, or an uploaded file_id),
// audio as input_audio (base64 wav or mp3). What Chat Completions cannot
// take (files by URL, documents other than PDF inline, other audio) is
// InvalidArgument naming the field, never dropped.
func (p *Provider) encodeFile(f *llmrelayv1.File, i, j int) (contentPart, error) {
	if field, reason := provider.CheckFile("openai-chat", f); reason != "" {
		return contentPart{}, p.invalidFile(i, j, field, reason)
	}
	if provider.IsAudio(f) {
		return contentPart{Type: "input_audio", InputAudio: &inputAudio{
			Data: base64.StdEncoding.EncodeToString(f.GetData()), Format: provider.OpenAIAudioFormat(provider.MediaType(f))}}, nil
	}
	switch src := f.GetSource().(type) {
	case *llmrelayv1.File_Data:
		return contentPart{Type: "file", File: &chatFile{
			FileData: "data:" + provider.MediaType(f) + ";base64," + base64.StdEncoding.EncodeToString(src.Data),
			Filename: provider.Filename(f)}}, nil
	case *llmrelayv1.File_FileId:
		return contentPart{Type: "file", File: &chatFile{FileID: src.FileId, Filename: f.GetFilename()}}, nil
	}
	return contentPart{}, p.invalidFile(i, j, "", "a file needs data or a file_id")
}

// invalidFile refuses the file of messages[i].parts[j], naming its field.
func (p *Provider) invalidFile(i, j int, field, reason string) *provider.Error {
	param := fmt.Sprintf("messages[%d].parts[%d].file", i, j)
	if field != "" {
		param += "." + field
	}
	return &provider.Error{Provider: p.name, Kind: provider.KindInvalidRequest, Param: param, Message: param + ": " + reason}
}

// encodeImage builds an image_url: the URL as given, or a data: URL from
// inline bytes (mime type sniffed when not given).
func (p *Provider) encodeImage(img *llmrelayv1.Image, i int) (*imageURL, error) {
	iu := &imageURL{}
	switch img.GetDetail() {
	case llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO:
		iu.Detail = "auto"
	case llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW:
		iu.Detail = "low"
	case llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH:
		iu.Detail = "high"
	}
	switch src := img.GetSource().(type) {
	case *llmrelayv1.Image_Url:
		if src.Url == "" {
			return nil, p.invalid("messages[%d]: image with an empty url", i)
		}
		iu.URL = src.Url
	case *llmrelayv1.Image_Data:
		mt := provider.ImageMediaType(img)
		if mt == "" {
			mt = http.DetectContentType(src.Data)
			if !strings.HasPrefix(mt, "image/") {
				return nil, p.invalid("messages[%d]: image bytes without mime_type, and not a recognizable image", i)
			}
		}
		iu.URL = "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(src.Data)
	default:
		return nil, p.invalid("messages[%d]: image without url or data", i)
	}
	return iu, nil
}

func mustJSON(s string) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		// json.Marshal of a string cannot fail (invalid UTF-8 is coerced).
		panic(err)
	}
	return b
}

// buildEmbedRequest encodes an embeddings request. encoding_format is
// "base64" for OpenAI's and Azure's own APIs, as the official SDKs send it:
// the answer is the float32 values exactly, in about a quarter of the
// bytes of float JSON (2048 inputs of 3072 dimensions are some 126 MB as
// JSON, over the response limit). Elsewhere it is not sent: float is every
// server's default, not every compatible server speaks base64, and Voyage
// answers 400 to "float". Either answer is read.
//
// The warnings are extra_body's replacements of what the request asked
// (encoding_format, and Voyage's truncation, are the adapter's own
// choices: extra_body may set them).
func (p *Provider) buildEmbedRequest(req *provider.EmbedRequest) ([]byte, []string, error) {
	if req == nil {
		return nil, nil, p.invalid("nil request")
	}
	dims := req.Dimensions
	var adaWarning string
	if dims != nil && p.openAI && strings.HasPrefix(req.Model, "text-embedding-ada-002") {
		// "dimensions: … Only supported in text-embedding-3 and later
		// models" (Embeddings reference); OpenAI answers ada-002 with a
		// 400 naming no param, whatever the size, its own 1536 included:
		// that size is what the model gives unasked, so it is not sent.
		// Azure's deployment names do not tell the model: its refusal
		// is read (embedWithoutDimensions).
		if *dims != adaDimensions {
			return nil, nil, p.invalidParam("dimensions", "%s does not take dimensions (OpenAI: text-embedding-3 and later models only; its vectors have %d values)", req.Model, adaDimensions)
		}
		dims = nil
		adaWarning = fmt.Sprintf("%s takes no dimensions: not sent (its vectors have the %d values asked for)", req.Model, adaDimensions)
	}
	inputs := req.Inputs
	if inputs == nil {
		inputs = []string{}
	}
	w := embedRequest{Model: req.Model, Input: inputs, Dimensions: dims}
	if outputDimensionHost(p.baseURL) {
		// Voyage rejects "dimensions"; its name, and Mistral's
		// (codestral-embed), is output_dimension.
		w.Dimensions, w.OutputDimension = nil, dims
	}
	if p.azure || p.openAI {
		w.EncodingFormat = "base64"
	}
	if voyageHost(p.baseURL) {
		// Voyage cuts an input longer than the model's context without
		// a word unless truncation is false (its default is true): the
		// vector would be of part of the text. Off, as Ollama's
		// truncate is: the input is refused and named instead.
		off := false
		w.Truncation = &off
	}
	if oo := req.ProviderOptions.GetOpenai(); oo != nil {
		w.User = oo.GetUser()
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, nil, p.invalid("encode request: %v", err)
	}
	body, warnings, err := provider.MergeExtra(body, req.ProviderOptions.GetExtraBody(), provider.ExtraFields{Defaults: []string{"encoding_format", "truncation"}})
	if err != nil {
		return nil, nil, p.invalid("%v", err)
	}
	if adaWarning != "" {
		warnings = append(warnings, adaWarning)
	}
	return body, warnings, nil
}

// adaDimensions is the size of text-embedding-ada-002's vectors.
const adaDimensions = 1536

// openAIHost reports whether baseURL is OpenAI's own API.
func openAIHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// xaiHost reports whether baseURL is xAI's API (api.x.ai).
func xaiHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.x.ai")
}

// digitalOceanHost reports whether baseURL is DigitalOcean's serverless
// inference (inference.do-ai.run).
func digitalOceanHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "inference.do-ai.run")
}

// mistralHost reports whether baseURL is Mistral's API: api.mistral.ai, or
// another host of mistral.ai (codestral.mistral.ai serves the same API).
func mistralHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "mistral.ai" || strings.HasSuffix(h, ".mistral.ai")
}

// outputDimensionHost reports whether baseURL is an API that names the
// embedding dimensions output_dimension: Voyage AI's (api.voyageai.com)
// and Mistral's (api.mistral.ai).
func outputDimensionHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	for _, d := range []string{"voyageai.com", "mistral.ai"} {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// toolParameters is a tool's JSON Schema as sent (both formats).
func (p *Provider) toolParameters(t *llmrelayv1.Tool) (json.RawMessage, error) {
	params, err := provider.SchemaJSON(t.GetParameters())
	if err != nil {
		return nil, p.invalid("tool %q parameters: %v", t.GetName(), err)
	}
	return provider.TypedObjectSchema(params), nil
}

// toolChoiceMode is the wire value of a tool choice mode; "" when unset.
func toolChoiceMode(m llmrelayv1.ToolChoiceMode) string {
	switch m {
	case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		return "auto"
	case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		return "none"
	case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		return "required"
	default:
		return ""
	}
}

// outDetail is a reasoning_details entry sent back to an aggregator.
type outDetail struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Data      string `json:"data,omitempty"`
	Signature string `json:"signature,omitempty"`
	ID        string `json:"id,omitempty"`
	Format    string `json:"format"`
	Index     int    `json:"index"`
}

// appendDetails appends the reasoning_details entries of one Reasoning part
// (one block, at index) as OpenRouter gave them: readable text as
// reasoning.text (with its signature when the format signs the text,
// Claude's) or reasoning.summary (OpenAI's format), and opaque state as
// reasoning.encrypted with its id (OpenAI's encrypted reasoning, Gemini's
// thought signature).
func appendDetails(out []outDetail, r *llmrelayv1.Reasoning, index int) []outDetail {
	f, text, sig := r.GetFormat(), r.GetText(), r.GetSignature()
	encrypted := r.GetRedacted() || (sig != "" && (r.GetId() != "" || f == formatOpenAI || f == formatGemini))
	switch {
	case text == "":
	case f == formatOpenAI:
		out = append(out, outDetail{Type: detailSummary, Summary: text, Format: f, Index: index})
	case encrypted:
		out = append(out, outDetail{Type: detailText, Text: text, Format: f, Index: index})
	default:
		out = append(out, outDetail{Type: detailText, Text: text, Signature: sig, Format: f, Index: index})
	}
	if encrypted && sig != "" {
		out = append(out, outDetail{Type: detailEncrypted, Data: sig, ID: r.GetId(), Format: f, Index: index})
	}
	return out
}
