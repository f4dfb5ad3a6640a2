package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Generated call ids: "gcall_" + 24 hex digits of
// sha256(responseId, call index). Gemini sends no call ids (newer models may;
// those are used as is), so the gateway derives ids that are stable for a
// recorded answer, equal for the unary and streamed form of one answer, and
// unique in a conversation because responseId is.
const (
	genIDPrefix = "gcall_"
	genIDHex    = 24
)

// Extended keys set by this adapter (meta.extended).
const (
	extSafetyRatings       = "gemini.safety_ratings"
	extCitationMetadata    = "gemini.citation_metadata"
	extGroundingMetadata   = "gemini.grounding_metadata"
	extURLContextMetadata  = "gemini.url_context_metadata"
	extFinishMessage       = "gemini.finish_message"
	extPromptSafetyRatings = "gemini.prompt_safety_ratings"
	extBlockReason         = "gemini.block_reason"
	extToolUsePromptTokens = "gemini.tool_use_prompt_tokens"
	extAvgLogprobs         = "gemini.avg_logprobs"
	extLogprobsResult      = "gemini.logprobs_result"
	// extContinuationToken is the candidate's continuationToken: the
	// answer stopped at the API's output cap per response, and sending
	// the token back as the request's top-level continuationToken
	// (provider_options.extra_body) makes the API go on where it stopped.
	extContinuationToken = "gemini.continuation_token"
	// extTurnToken is the response's top-level turnToken, kept as sent.
	extTurnToken = "gemini.turn_token"
	// extModelStatus is the response's modelStatus, kept whole.
	extModelStatus = "gemini.model_status"
)

// modelStatus is what modelStatusWarning reads of a response's
// modelStatus.
type modelStatus struct {
	ModelStage     string `json:"modelStage"`
	RetirementTime string `json:"retirementTime"`
	Message        string `json:"message"`
}

// modelStatusMeta keeps a response's modelStatus in meta.extended and
// returns the warning for a model on its way out, "" for another.
func modelStatusMeta(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) string {
	if !present(raw) {
		return ""
	}
	provider.SetExtended(meta, extModelStatus, rawValue(raw))
	var ms modelStatus
	if json.Unmarshal(raw, &ms) != nil {
		return ""
	}
	return modelStatusWarning(ms)
}

// modelStatusWarning says that the model is LEGACY ("on the path to
// deprecation in near future. Only existing customers can use this
// model."), DEPRECATED or RETIRED ("These models cannot be used."), or has
// a retirement time, with the API's message; "" for a model in another
// stage without one.
func modelStatusWarning(ms modelStatus) string {
	stage := ms.ModelStage
	switch stage {
	case "LEGACY", "DEPRECATED", "RETIRED":
	default:
		if ms.RetirementTime == "" {
			return ""
		}
	}
	w := "gemini reports the model"
	if stage != "" {
		w += " in stage " + stage
	}
	if ms.RetirementTime != "" {
		w += ", to be retired at " + ms.RetirementTime
	}
	if ms.Message != "" {
		w += ": " + ms.Message
	}
	return w
}

// serviceTierHeader is the response header in which the Developer API
// reports the tier that served the call ("standard", "priority", ...),
// also when the body's usageMetadata has no serviceTier.
const serviceTierHeader = "X-Gemini-Service-Tier"

// warnNoResponseID is recorded when call ids had to be derived without a
// responseId.
const warnNoResponseID = "gemini sent no responseId: tool call ids derived from the call's name, arguments and position"

// generatedID derives a call id from what both the unary answer and the
// stream have: the response id and the call's position in the response.
// Without a response id it falls back to the call's content.
func generatedID(responseID string, index int, name, args string) string {
	h := sha256.New()
	if responseID != "" {
		h.Write([]byte(responseID))
	} else {
		h.Write([]byte("\x00" + name + "\x00" + args))
	}
	h.Write([]byte("\x00" + strconv.Itoa(index)))
	return genIDPrefix + hex.EncodeToString(h.Sum(nil))[:genIDHex]
}

// isGeneratedID reports whether id is one generatedID made (such ids are
// never sent back to Gemini as functionCall/functionResponse ids).
func isGeneratedID(id string) bool {
	rest, ok := strings.CutPrefix(id, genIDPrefix)
	if !ok || len(rest) != genIDHex {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// usagePaths are the usageMetadata fields toUsage and the
// tool_use_prompt_tokens meta read.
var usagePaths = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount",
	"toolUsePromptTokenCount", "totalTokenCount"}

// extServiceTier is the meta.extended key of the service tier, the one the
// OpenAI and Anthropic adapters use; provider.SetExtended also fills the
// typed meta.service_tier from it.
const extServiceTier = "service_tier"

// oddUsageWarnings are the warnings for u's counts that held no count.
func oddUsageWarnings(u *usageMetadata) []string {
	if u == nil {
		return nil
	}
	var w []string
	for _, k := range u.Odd {
		w = append(w, provider.OddUsageWarning("usageMetadata."+k))
	}
	return w
}

// setUsageDetails stores the usageMetadata fields no counter holds in
// meta.extended.usage_details, and serviceTier ("standard", ...) also as
// the service tier, like OpenAI's and Anthropic's (it stays among the
// details as sent, as Mistral's usage.service_tier does).
func setUsageDetails(meta *llmrelayv1.ResponseMeta, d provider.UsageDetails) {
	d.Set(meta)
	if tier := serviceTierOf(d); tier != "" {
		provider.SetExtended(meta, extServiceTier, tier)
	}
}

// serviceTierOf is the usage details' serviceTier ("" if none, or not a
// string).
func serviceTierOf(d provider.UsageDetails) string {
	tier, _ := d["serviceTier"].(string)
	return tier
}

// usageDetails are the usageMetadata fields no counter holds. The
// *TokensDetails lists of {modality, tokenCount} become one entry per
// modality ("promptTokensDetails.IMAGE": 258).
func usageDetails(u *usageMetadata) provider.UsageDetails {
	if u == nil {
		return nil
	}
	d := provider.ReadUsageDetails(u.Raw, provider.MappedExcept(usagePaths, u.Odd)...)
	for k, v := range d {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		byModality := map[string]any{}
		seen := map[string]bool{}
		for _, e := range list {
			m, _ := e.(map[string]any)
			modality, _ := m["modality"].(string)
			n, isNumber := m["tokenCount"].(float64)
			if len(m) > 2 || modality == "" || seen[modality] || (m["tokenCount"] != nil && !isNumber) {
				byModality = nil
				break
			}
			seen[modality] = true
			if n != 0 { // proto3 JSON omits a zero count
				byModality[modality] = n
			}
		}
		if byModality == nil {
			continue // not the documented shape: kept as sent
		}
		delete(d, k)
		for modality, n := range byModality {
			d[k+"."+modality] = n
		}
	}
	return d
}

// toUsage normalizes usageMetadata: input = promptTokenCount (includes
// cached) + toolUsePromptTokenCount (the search results a grounded answer
// read: billed as input, and counted in totalTokenCount, so without them
// total != input + output), output = candidates + thoughts, total =
// totalTokenCount when at least input + output, else input + output.
func toUsage(u *usageMetadata) *llmrelayv1.Usage {
	if u == nil {
		return nil
	}
	prompt, _ := promptTokens(u)
	in := provider.Count(prompt + max(u.ToolUsePromptTokenCount, 0))
	out := provider.Count(u.CandidatesTokenCount + max(u.ThoughtsTokenCount, 0))
	total := provider.UsageTotal(provider.Count(u.TotalTokenCount), in, out)
	return &llmrelayv1.Usage{
		InputTokens:       in,
		OutputTokens:      out,
		TotalTokens:       total,
		CachedInputTokens: provider.Count(u.CachedContentTokenCount),
		ReasoningTokens:   provider.Count(u.ThoughtsTokenCount),
	}
}

// promptTokens is u's promptTokenCount; when the API left it out but its
// totalTokenCount counts more than the output and tool-use prompt counts
// (gemini-3.1-flash-lite reading a video by URL:
// testdata/real_maruel_gemini31_flash_lite_video_url_no_prompt_count.http,
// 1 candidate token of 297), the rest of the total, which is what the
// prompt cost (derived true). A prompt is never free: reading the absent
// count as 0 said the request cost no input.
func promptTokens(u *usageMetadata) (n int64, derived bool) {
	if u.PromptTokenCount != 0 {
		return u.PromptTokenCount, false
	}
	rest := u.TotalTokenCount - max(u.CandidatesTokenCount, 0) - max(u.ThoughtsTokenCount, 0) - max(u.ToolUsePromptTokenCount, 0)
	if rest <= 0 {
		return u.PromptTokenCount, false
	}
	return rest, true
}

// derivedPromptWarning says that the input count was derived.
func derivedPromptWarning(u *usageMetadata) string {
	n, _ := promptTokens(u)
	return fmt.Sprintf("usageMetadata has no promptTokenCount: the input counted is totalTokenCount less the output and tool-use prompt counts (%d)", n)
}

// finishReason maps Gemini's finishReason (the candidate's).
func finishReason(r string) llmrelayv1.FinishReason {
	switch r {
	case "":
		return llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED
	case "STOP":
		return llmrelayv1.FinishReason_FINISH_REASON_STOP
	case "MAX_TOKENS",
		// The answer reached the API's output cap per response (32768
		// candidate tokens in testdata/continuation_header_tier_1.http)
		// and can be continued with the candidate's continuationToken.
		"CONTINUATION":
		return llmrelayv1.FinishReason_FINISH_REASON_LENGTH
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION",
		// Vertex AI: the response was blocked by a Model Armor template
		// (its finishMessage names the filters).
		"MODEL_ARMOR":
		return llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	default:
		// MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE, UNEXPECTED_TOOL_CALL,
		// TOO_MANY_TOOL_CALLS, FINISH_REASON_UNSPECIFIED, future values.
		return llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
}

// rawValue decodes provider JSON for meta.extended; text that does not
// decode is kept as a string.
func rawValue(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
}

// grounded reports whether a groundingMetadata (or urlContextMetadata)
// holds anything: a grounded stream sends an empty object on every chunk
// before the last (testdata/real_pyd_google_model_web_search_tool_stream_1.http).
func grounded(raw json.RawMessage) bool {
	if !present(raw) {
		return false
	}
	t := bytes.TrimSpace(raw)
	if t[0] != '{' || t[len(t)-1] != '}' {
		return true
	}
	return len(bytes.TrimSpace(t[1:len(t)-1])) > 0
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// blockedError is the error for a prompt Gemini refused to answer
// (promptFeedback.blockReason and no candidates). Its meta keeps what the
// answer reports: the response id, the model version, the prompt's token
// count and the usageMetadata fields no counter holds (per-modality
// counts, serviceTier, Vertex AI's trafficType), as an answer's meta does.
func blockedError(w *generateContentResponse) *provider.Error {
	pf := w.PromptFeedback
	msg := "prompt blocked by Gemini: " + string(pf.BlockReason)
	if pf.BlockReasonMessage != "" {
		msg += ": " + pf.BlockReasonMessage
	}
	e := &provider.Error{Provider: providerName, Kind: provider.KindContentFilter, Code: string(pf.BlockReason), Message: msg,
		Extended: map[string]any{extBlockReason: string(pf.BlockReason)}}
	if present(pf.SafetyRatings) {
		e.Extended[extPromptSafetyRatings] = rawValue(pf.SafetyRatings)
	}
	e.Meta = &llmrelayv1.ResponseMeta{Usage: toUsage(w.UsageMetadata)}
	responseMeta(e.Meta, w)
	setUsageDetails(e.Meta, usageDetails(w.UsageMetadata))
	e.Meta.Warnings = append(e.Meta.Warnings, oddUsageWarnings(w.UsageMetadata)...)
	return e
}

// streamError converts an error object found in a 200 body, as httpError
// reads one (applyStatusMeta); date is the answer's.
func (p *Provider) streamError(st *statusError, date time.Time) *provider.Error {
	e := &provider.Error{Provider: providerName, Kind: provider.KindUnavailable, Message: "error in response"}
	p.applyStatusMeta(e, st, date)
	// HTTPStatus stays 0 (applyStatus classifies by the error's own
	// code); the answer's 200 was received (provider.Error.InAnswer).
	e.InAnswer = true
	return e
}

// answer accumulates the converted parts of one response (all chunks of a
// stream, or the one unary body), so that the unary and the streamed form
// of one answer convert alike.
type answer struct {
	responseID string
	calls      int
	// reasoning counts the reasoning blocks started so far.
	reasoning int
	// openThought: the last output item was an unsigned thought block, which
	// a following thought part continues.
	openThought bool
	warnedID    bool
	// warnedKinds: the part kinds already reported as not supported (a
	// part of an item kind whose content is not a JSON object).
	warnedKinds []string
	// pending is the call whose arguments are being streamed, if any.
	pending *streamedCall
	// ids are the ids of the answer's calls so far (callID).
	ids []string
	// cutOpen: a call still being streamed when the answer ended was
	// closed cut (convert).
	cutOpen bool
	// names are the functions the answer's calls name, once each, in
	// order (unexpectedCallWarning).
	names []string
}

// unexpectedCallWarning is the warning for an answer Gemini ended with
// UNEXPECTED_TOOL_CALL ("Model generated a tool call but no tools were
// enabled in the request"; the finishMessage says "Unexpected tool call:
// Model tried to call an undeclared function: NAME"), "" for another: its
// calls are relayed as the model wrote them, but none is a call of one of
// the request's functions to run, which the finish alone (OTHER) did not
// say to a caller reading the calls.
func (a *answer) unexpectedCallWarning(finish, message string) string {
	if finish != "UNEXPECTED_TOOL_CALL" || a.calls == 0 {
		return ""
	}
	w := "finishReason UNEXPECTED_TOOL_CALL: the model called a function the request does not declare (" +
		strings.Join(a.names, ", ") + "), relayed as written, not one to run"
	if message != "" {
		w += ": " + message
	}
	return w
}

// called records a call of the function name.
func (a *answer) called(name string) {
	a.calls++
	if !slices.Contains(a.names, name) {
		a.names = append(a.names, name)
	}
}

// finish maps the candidate's finishReason r for an answer with its
// calls: STOP with calls is TOOL_CALLS, unless a call was cut open
// (cutOpen): then the turn is not one whose calls can be run, OTHER.
func (a *answer) finish(r string) llmrelayv1.FinishReason {
	f := provider.ToolCallsFinish(finishReason(r), a.calls)
	if a.cutOpen && f == llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		return llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
	return f
}

// itemKind says which field of an item is set.
type itemKind int

const (
	itemText itemKind = iota + 1
	itemCall
	itemReasoning
	itemProvider
)

// item is one converted output piece: text, a whole tool call, or a piece
// of a reasoning block.
type item struct {
	kind      itemKind
	text      string
	call      *llmrelayv1.ToolCall
	reasoning provider.ReasoningDelta
	// pitem is an itemProvider's item (partItem).
	pitem provider.ProviderItem
	// cut: the call was still being streamed (willContinue) when the
	// answer ended; its arguments are partial (call.ArgumentsValid false)
	// and cut says why.
	cut string
}

// convert appends a candidate's parts to out as output items in model
// order.
//
//   - functionCall: a tool call with its id; its thoughtSignature becomes
//     ToolCall.signature.
//   - thought parts (thought: true): reasoning. Consecutive thought parts
//     form one block until a part carrying a thoughtSignature closes it
//     with that signature.
//   - other parts: their text; a thoughtSignature on them (Gemini signs the
//     last text part of an answer, or streams it in a final empty text
//     part) becomes a signature-only reasoning block right after that
//     text, which the request encoder re-attaches to the text part.
//   - a functionCall with willContinue: true starts a call whose arguments
//     the following parts stream as partialArgs; it becomes one whole
//     tool call when a part without willContinue closes it, when another
//     call starts, or when the answer ends (final) with it still open: then
//     its arguments are those streamed so far, a partial call (item.cut),
//     however the answer ended (finish, the candidate's finishReason; a
//     MAX_TOKENS end is the token limit's cut, which the callers report
//     for the last call whichever way it came).
func (a *answer) convert(out []item, parts []respPart, final bool, finish string, warn func(string)) []item {
	for _, pt := range parts {
		if fc := pt.FunctionCall; fc != nil && (a.pending != nil || fc.WillContinue) {
			if fc.Name != "" && a.pending != nil {
				out = a.closeCall(out, warn) // another call starts
			}
			if fc.Name != "" || a.pending == nil {
				// A nameless start is kept as a nameless call, as a
				// nameless whole call is.
				a.pending = &streamedCall{id: fc.ID, name: fc.Name, signature: pt.ThoughtSignature}
				a.openThought = false
				if present(fc.Args) {
					warn("streamed function call " + fc.Name + " also has args; ignored")
				}
			} else if pt.ThoughtSignature != "" && a.pending.signature == "" {
				a.pending.signature = pt.ThoughtSignature
			}
			for _, pa := range fc.PartialArgs {
				if err := a.pending.add(pa); err != nil {
					warn(err.Error() + "; ignored")
				}
			}
			if !fc.WillContinue {
				out = a.closeCall(out, warn)
			}
			continue
		}
		if it, ok := partItem(&pt); ok && pt.FunctionCall == nil {
			// Code execution or a built-in tool (tools Gemini runs
			// itself), generated media: the part as it came (its
			// thoughtSignature with it), to go back unchanged.
			a.openThought = false
			out = append(out, item{kind: itemProvider, pitem: it})
			if pt.Text == nil || *pt.Text == "" {
				continue
			}
		} else if kind := unsupportedPartKind(&pt); kind != "" && pt.FunctionCall == nil {
			// One that is not a JSON object, never dropped silently:
			// reported once per kind and answer.
			if !slices.Contains(a.warnedKinds, kind) {
				a.warnedKinds = append(a.warnedKinds, kind)
				warn(fmt.Sprintf("response part of type %q not supported; ignored", kind))
			}
			if (pt.Text == nil || *pt.Text == "") && pt.ThoughtSignature == "" {
				continue
			}
		}
		switch {
		case pt.FunctionCall != nil:
			args := provider.ArgumentsText(pt.FunctionCall.Args, "{}")
			valid := fold.ValidArguments(args)
			id := a.callID(pt.FunctionCall.ID, pt.FunctionCall.Name, args, warn)
			a.called(pt.FunctionCall.Name)
			a.openThought = false
			out = append(out, item{kind: itemCall, call: &llmrelayv1.ToolCall{
				CallId: id, Name: pt.FunctionCall.Name, Arguments: args, ArgumentsValid: valid,
				Signature: pt.ThoughtSignature,
			}})
		case pt.Thought:
			var t string
			if pt.Text != nil {
				t = *pt.Text
			}
			if t == "" && pt.ThoughtSignature == "" {
				continue
			}
			if !a.openThought {
				a.reasoning++
			}
			out = append(out, item{kind: itemReasoning, reasoning: provider.ReasoningDelta{
				Index: a.reasoning - 1, Text: t, Signature: pt.ThoughtSignature,
			}})
			a.openThought = pt.ThoughtSignature == ""
		default:
			if pt.Text != nil && *pt.Text != "" {
				a.openThought = false
				out = append(out, item{kind: itemText, text: *pt.Text})
			}
			if pt.ThoughtSignature != "" {
				a.reasoning++
				a.openThought = false
				out = append(out, item{kind: itemReasoning, reasoning: provider.ReasoningDelta{
					Index: a.reasoning - 1, Signature: pt.ThoughtSignature,
				}})
			}
		}
	}
	if final && a.pending != nil {
		out = a.closeCall(out, warn)
		if finishReason(finish) != llmrelayv1.FinishReason_FINISH_REASON_LENGTH {
			last := &out[len(out)-1]
			last.call.ArgumentsValid = false
			last.cut = openCallWarning(last.call.CallId, finish)
			a.cutOpen = true
		}
	}
	return out
}

// openCallWarning says that call id was still being streamed when the
// answer ended with finishReason finish ("" for none).
func openCallWarning(id, finish string) string {
	if finish == "" {
		finish = "none"
	}
	return "tool call " + id + " was still being streamed (willContinue) when the answer ended (finishReason " + finish + "); its arguments are partial"
}

// closeCall converts the streamed call in progress (if any) into a whole
// tool call.
func (a *answer) closeCall(out []item, warn func(string)) []item {
	c := a.pending
	if c == nil {
		return out
	}
	a.pending = nil
	args := c.text()
	id := a.callID(c.id, c.name, args, warn)
	a.called(c.name)
	return append(out, item{kind: itemCall, call: &llmrelayv1.ToolCall{
		CallId: id, Name: c.name, Arguments: args, ArgumentsValid: fold.ValidArguments(args),
		Signature: c.signature,
	}})
}

// callID is the id of the answer's next call: Gemini's id, else one
// made (generatedID). An id Gemini already gave an earlier call of the
// answer is made anew too, with a warning: calls are keyed by their id
// (the stream's fragments, the gateway's fold), so two calls sharing one
// would become one call with both argument texts run together. A made
// id is never sent back to Gemini (the next turn's call and result go
// without one).
func (a *answer) callID(id, name, args string, warn func(string)) string {
	if id != "" && slices.Contains(a.ids, id) {
		made := generatedID(a.responseID, a.calls, name, args)
		warn(fmt.Sprintf("tool call %d repeats the id %q of an earlier call; keyed as %s", a.calls, id, made))
		id = made
	}
	if id == "" {
		if a.responseID == "" && !a.warnedID {
			a.warnedID = true
			warn(warnNoResponseID)
		}
		id = generatedID(a.responseID, a.calls, name, args)
	}
	a.ids = append(a.ids, id)
	return id
}

// cutCallWarning says that cut (cutBy) cut the call id.
func cutCallWarning(id, cut string) string {
	return "tool call " + id + " was cut by " + cut + "; its arguments are partial"
}

// cutBy names what stopped an answer mid-output, from its finishReason
// ("" when the answer ended on its own): the token limit (MAX_TOKENS,
// CONTINUATION), a safety or content stop (SAFETY, RECITATION, BLOCKLIST,
// PROHIBITED_CONTENT, SPII, ...: finishReason's CONTENT_FILTER values,
// "the token generation stopped" for it, the API reference's words), or
// MALFORMED_FUNCTION_CALL ("the function call generated by the model is
// invalid"). A functionCall last in such an answer is the call being
// written when it stopped: Gemini sends the arguments parsed so far, an
// object that may parse but is not the whole call.
func cutBy(finish string) string {
	switch finishReason(finish) {
	case llmrelayv1.FinishReason_FINISH_REASON_LENGTH:
		return "the token limit"
	case llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER:
		return "a content filter (finishReason " + finish + ")"
	}
	if finish == "MALFORMED_FUNCTION_CALL" {
		return "a malformed function call (finishReason MALFORMED_FUNCTION_CALL)"
	}
	return ""
}

// candidateMeta sets the candidate's extended values on meta.
func candidateMeta(meta *llmrelayv1.ResponseMeta, c *candidate) {
	if present(c.SafetyRatings) {
		provider.SetExtended(meta, extSafetyRatings, rawValue(c.SafetyRatings))
	}
	if present(c.CitationMetadata) {
		provider.SetExtended(meta, extCitationMetadata, rawValue(c.CitationMetadata))
	}
	if grounded(c.GroundingMetadata) {
		provider.SetExtended(meta, extGroundingMetadata, rawValue(c.GroundingMetadata))
	}
	if grounded(c.URLContextMetadata) {
		provider.SetExtended(meta, extURLContextMetadata, rawValue(c.URLContextMetadata))
	}
	if c.FinishMessage != "" {
		provider.SetExtended(meta, extFinishMessage, c.FinishMessage)
	}
	if present(c.AvgLogprobs) {
		provider.SetExtended(meta, extAvgLogprobs, rawValue(c.AvgLogprobs))
	}
	if present(c.LogprobsResult) {
		provider.SetExtended(meta, extLogprobsResult, rawValue(c.LogprobsResult))
	}
	if c.ContinuationToken != "" {
		provider.SetExtended(meta, extContinuationToken, c.ContinuationToken)
	}
}

// headerServiceTier sets the service tier from the X-Gemini-Service-Tier
// header when the body reported none: the body's usageMetadata.serviceTier
// wins when both are there.
func headerServiceTier(meta *llmrelayv1.ResponseMeta, h http.Header) {
	if tier := strings.TrimSpace(h.Get(serviceTierHeader)); tier != "" && meta.GetServiceTier() == "" {
		provider.SetExtended(meta, extServiceTier, tier)
	}
}

// responseMeta sets the fields every response or chunk may carry.
func responseMeta(meta *llmrelayv1.ResponseMeta, w *generateContentResponse) {
	meta.ResponseId = w.ResponseID
	meta.ResolvedModel = w.ModelVersion
	if w.TurnToken != "" {
		provider.SetExtended(meta, extTurnToken, w.TurnToken)
	}
	if w.CreateTime != "" {
		if t, err := time.Parse(time.RFC3339Nano, w.CreateTime); err == nil {
			meta.CreateTime = timestamppb.New(t)
		}
	}
}

// firstCandidate returns the candidate with index 0 (an absent index is 0),
// the one answer the contract has room for, and how many other candidates
// the response carries: the adapter always asks for one, but a
// generationConfig.candidateCount set through extra_body asks for more,
// and their parts must neither be mixed into the answer (a stream sends
// each candidate's chunks separately) nor dropped unsaid.
func firstCandidate(cs []candidate) (c *candidate, others int) {
	for i := range cs {
		if c == nil && cs[i].Index == 0 {
			c = &cs[i]
		} else {
			others++
		}
	}
	return c, others
}

// extraCandidatesWarning reports the candidates firstCandidate left out.
func extraCandidatesWarning(n int) string {
	return fmt.Sprintf("gemini sent %d candidate(s) besides candidate 0 (generationConfig.candidateCount > 1): only candidate 0 is returned, the others are dropped", n)
}

// toResult converts a unary generateContent response.
func (p *Provider) toResult(w *generateContentResponse) (*provider.Result, error) {
	if w.Error != nil {
		// Generate reads an error body with its answer's Date first.
		return nil, p.streamError(w.Error, time.Now())
	}
	if len(w.Candidates) == 0 {
		if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
			return nil, blockedError(w)
		}
		return nil, provider.BadResponse(providerName, "response has no candidates")
	}
	meta := &llmrelayv1.ResponseMeta{}
	responseMeta(meta, w)
	if warning := modelStatusMeta(meta, w.ModelStatus); warning != "" {
		meta.Warnings = append(meta.Warnings, warning)
	}
	c, others := firstCandidate(w.Candidates)
	if c == nil {
		return nil, provider.BadResponse(providerName, "response has %d candidates, none with index 0", len(w.Candidates))
	}
	if others > 0 {
		meta.Warnings = append(meta.Warnings, extraCandidatesWarning(others))
	}
	a := &answer{responseID: w.ResponseID}
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	var parts []respPart
	if c.Content != nil {
		parts = c.Content.Parts
	}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: text.String()}})
			text.Reset()
		}
	}
	// cur is the reasoning block the next piece of the same index extends.
	var cur *llmrelayv1.Reasoning
	curIndex := -1
	for _, it := range a.convert(nil, parts, true, string(c.FinishReason), func(s string) { meta.Warnings = append(meta.Warnings, s) }) {
		switch it.kind {
		case itemText:
			cur = nil
			text.WriteString(it.text)
		case itemCall:
			flush()
			cur = nil
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: it.call}})
			if it.cut != "" {
				meta.Warnings = append(meta.Warnings, it.cut)
			}
		case itemProvider:
			flush()
			cur = nil
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Type: it.pitem.Type, Json: it.pitem.JSON}}})
		case itemReasoning:
			flush()
			if cur == nil || curIndex != it.reasoning.Index {
				cur, curIndex = &llmrelayv1.Reasoning{}, it.reasoning.Index
				msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: cur}})
			}
			cur.Text += it.reasoning.Text
			cur.Signature += it.reasoning.Signature
		}
	}
	flush()

	meta.ProviderFinishReason = string(c.FinishReason)
	meta.FinishReason = a.finish(string(c.FinishReason))
	if w := a.unexpectedCallWarning(string(c.FinishReason), c.FinishMessage); w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	if n, cut := len(msg.Parts), cutBy(string(c.FinishReason)); n > 0 && cut != "" {
		// A functionCall last in an answer the token limit, a safety
		// stop or a malformed call cut is the call being written when it
		// stopped: Gemini sends the arguments parsed so far, an object
		// that parses but is not the whole call.
		if tc := msg.Parts[n-1].GetToolCall(); tc != nil && tc.ArgumentsValid {
			tc.ArgumentsValid = false
			meta.Warnings = append(meta.Warnings, cutCallWarning(tc.CallId, cut))
		}
	}
	meta.ToolCallCount = int32(a.calls)
	meta.Usage = toUsage(w.UsageMetadata)
	setUsageDetails(meta, usageDetails(w.UsageMetadata))
	meta.Warnings = append(meta.Warnings, oddUsageWarnings(w.UsageMetadata)...)
	if w.UsageMetadata != nil {
		if _, derived := promptTokens(w.UsageMetadata); derived {
			meta.Warnings = append(meta.Warnings, derivedPromptWarning(w.UsageMetadata))
		}
	}
	if w.UsageMetadata != nil && w.UsageMetadata.ToolUsePromptTokenCount > 0 {
		provider.SetExtended(meta, extToolUsePromptTokens, float64(w.UsageMetadata.ToolUsePromptTokenCount))
	}
	candidateMeta(meta, c)
	if w.PromptFeedback != nil && present(w.PromptFeedback.SafetyRatings) {
		provider.SetExtended(meta, extPromptSafetyRatings, rawValue(w.PromptFeedback.SafetyRatings))
	}
	return &provider.Result{Message: msg, Meta: meta}, nil
}

// parseEmbeddings reads an embedContent (one input) or batchEmbedContents
// response and checks it: one vector per input, none empty, all of one
// length, every value a finite float32 (the API writes float32s; a value
// out of their range became ±Inf in the conversion and would be passed on
// as a vector no index can use).
func parseEmbeddings(raw []byte, n int) ([]*llmrelayv1.Embedding, *usageMetadata, error) {
	var (
		vecs  []*contentEmbedding
		usage *usageMetadata
	)
	if n == 1 {
		var r embedContentResponse
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, nil, provider.BadResponse(providerName, "decoding embedContent response: %v", err)
		}
		if r.Embedding != nil {
			vecs = []*contentEmbedding{r.Embedding}
		}
		usage = r.UsageMetadata
	} else {
		var r batchEmbedContentsResponse
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, nil, provider.BadResponse(providerName, "decoding batchEmbedContents response: %v", err)
		}
		vecs, usage = r.Embeddings, r.UsageMetadata
	}
	if len(vecs) != n {
		return nil, nil, provider.BadResponse(providerName, "got %d embeddings for %d inputs", len(vecs), n)
	}
	out := make([]*llmrelayv1.Embedding, n)
	for i, v := range vecs {
		var vals []float32
		if v != nil {
			var err error
			if vals, err = float32Values(v.Values); err != nil {
				return nil, nil, provider.BadResponse(providerName, "embedding %d: %v", i, err)
			}
		}
		if len(vals) == 0 {
			return nil, nil, provider.BadResponse(providerName, "embedding %d has no values", i)
		}
		if i > 0 && len(vals) != len(out[0].Values) {
			return nil, nil, provider.BadResponse(providerName, "embedding %d has %d values where the first has %d", i, len(vals), len(out[0].Values))
		}
		out[i] = &llmrelayv1.Embedding{Index: int32(i), Values: vals}
	}
	return out, usage, nil
}

// float32Values reads an embedding's values (a JSON array of numbers, or
// null: none) as float32s, each parsed from its decimal at float32
// precision: the float32 nearest the number sent. Parsed as float64 and
// then converted, a decimal a hair above the midpoint of two float32s
// (0.0078272507525980473, as a server printing 17 digits sends) rounds
// to the midpoint first and then, by ties to even, to the float32 below:
// one bit off. A value beyond float32's range, or anything but a number,
// is an error naming the value.
func float32Values(raw json.RawMessage) ([]float32, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("values are not a list of numbers")
	}
	var vals []float32
	for j := 0; dec.More(); j++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("value %d: %v", j, err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, fmt.Errorf("value %d is not a number", j)
		}
		f, err := strconv.ParseFloat(string(num), 32)
		if err != nil {
			// Out of float32's range: said as its float64 (±Inf past
			// float64's too, which is what ParseFloat returns then).
			wide, _ := strconv.ParseFloat(string(num), 64)
			return nil, fmt.Errorf("value %d (%g) is not a float32", j, wide)
		}
		vals = append(vals, float32(f))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, fmt.Errorf("values are not a list of numbers")
	}
	return vals, nil
}

// embedErrorBody is the error object of an embedding answer that has one
// ({"error": {...}} under a 2xx status), nil otherwise.
func embedErrorBody(raw []byte) *statusError {
	if !bytes.Contains(raw, []byte(`"error"`)) {
		return nil
	}
	var w struct {
		Error *statusError `json:"error"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return nil
	}
	return w.Error
}

// embedUsage is an embedding response's usageMetadata as Usage: its
// promptTokenCount is the input, there is no output. nil when the
// response has none.
func embedUsage(u *usageMetadata) *llmrelayv1.Usage {
	if u == nil {
		return nil
	}
	in := provider.Count(u.PromptTokenCount)
	return &llmrelayv1.Usage{InputTokens: in, TotalTokens: provider.UsageTotal(provider.Count(u.TotalTokenCount), in, 0)}
}
