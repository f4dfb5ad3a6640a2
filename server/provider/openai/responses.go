package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// opResponses is the Responses API operation path.
const opResponses = "responses"

// azureResponsesMinVersion is the first api-version Azure's classic
// route serves the Responses API with ({endpoint}/openai/responses,
// Microsoft's preview of March 2025; Mirascope's recording
// testdata/real_mira_azure_responses_content_filter_stream.http was
// answered there with it).
const azureResponsesMinVersion = "2025-03-01"

// checkResponsesRoute rejects an Azure provider on the classic routes
// whose api-version does not serve the Responses API: the classic
// deployment routes have no Responses operation; Azure serves it at
// {endpoint}/openai/responses?api-version=<a 2025-03-01-preview or later
// version> (model in the body), and on the v1 routes. Without an
// api-version set for the provider (the default, 2024-10-21, predates
// it), with one before 2025-03-01, or with an undated one (the v1
// routes' "preview" and "latest"), the request is refused here rather
// than sent to a route that cannot answer it.
func (p *Provider) checkResponsesRoute() error {
	if !p.azure || p.azureV1 {
		return nil
	}
	v := p.apiVer
	dated := len(v) >= len(azureResponsesMinVersion) && isDate(v[:len(azureResponsesMinVersion)])
	if !p.apiVerSet || !dated || v[:len(azureResponsesMinVersion)] < azureResponsesMinVersion {
		return p.invalid("the OpenAI Responses API is served on Azure's v1 routes ({endpoint}/openai/v1/responses) or, on the classic routes, "+
			"at {endpoint}/openai/responses with api-version 2025-03-01-preview or later (api-version %q does not serve it); "+
			"configure the Azure provider with v1 routes (WithAzureV1Routes) or such an api-version (WithAzureAPIVersion), or use the openai-chat format", v)
	}
	return nil
}

// isDate reports whether s is a YYYY-MM-DD date.
func isDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// generateResponses calls POST /responses.
func (p *Provider) generateResponses(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if err := p.checkResponsesRoute(); err != nil {
		return nil, err
	}
	body, warnings, froms, err := p.buildResponses(req, false)
	if err != nil {
		return nil, err
	}
	resp, sec, err := p.send(ctx, opResponses, req.Model, body, false)
	if err != nil {
		return nil, respInputField(err, froms)
	}
	defer resp.Body.Close()
	raw, cut, err := p.readBody(resp)
	if err != nil {
		return nil, provider.AnswerFailed(err, p.requestID(resp.Header), p.errorMeta(resp.Header, req.Model))
	}
	return p.responsesAnswer(raw, cut, resp, req, warnings, froms, sec)
}

// responsesAnswer converts the body of a Response object (cut: ReadBody's
// warning when the body's end was lost after a complete answer).
func (p *Provider) responsesAnswer(raw []byte, cut string, resp *http.Response, req *provider.Request, warnings []string, froms []respItemFrom, sec secrets) (*provider.Result, error) {
	model := req.Model
	res, err := p.parseResponsesAnswer(raw, model, req.Options.GetMaxTokens())
	if err != nil {
		return nil, respInputField(p.annotate(p.errorInAnswer(err, raw, resp, model, sec), resp, model, sec), froms)
	}
	p.headerMeta(res.Meta, resp.Header, model)
	for _, part := range res.Message.GetParts() {
		if c := part.GetToolCall(); c != nil {
			if w := parallelWrapperWarning(c.GetCallId(), c.GetName(), req.Tools); w != "" {
				res.Meta.Warnings = append(res.Meta.Warnings, w)
			}
		}
	}
	res.Meta.Warnings = append(warnings, res.Meta.Warnings...)
	if cut != "" {
		res.Meta.Warnings = append(res.Meta.Warnings, cut)
	}
	return res, nil
}

// streamResponses calls POST /responses with "stream": true.
func (p *Provider) streamResponses(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	if err := p.checkResponsesRoute(); err != nil {
		return nil, err
	}
	body, warnings, froms, err := p.buildResponses(req, true)
	if err != nil {
		return nil, err
	}
	resp, sec, err := p.send(ctx, opResponses, req.Model, body, true)
	if err != nil {
		return nil, respInputField(err, froms)
	}
	whole, err := p.jsonInsteadOfStream(resp, req.Model, sec, func(raw []byte, cut string) (*provider.Result, error) {
		return p.responsesAnswer(raw, cut, resp, req, warnings, froms, sec)
	})
	if err != nil {
		var e *provider.Error
		if errors.As(err, &e) {
			p.refineResponsesKind(e)
		}
		return nil, respInputField(err, froms)
	}
	if whole != nil {
		return whole, nil
	}
	s := p.newResponsesStream(resp, req.Model, warnings, sec)
	s.tools = req.Tools
	s.asked = req.Options.GetMaxTokens()
	return s, nil
}

// parseResponsesResponse converts a Response object. A failed response
// (status "failed", or an error object) is a *provider.Error.
func (p *Provider) parseResponsesResponse(raw []byte, model string) (*provider.Result, error) {
	return p.parseResponsesAnswer(raw, model, 0)
}

// parseResponsesAnswer is parseResponsesResponse for a request that asked
// for at most asked output tokens (0: no limit), which a response reported
// "completed" may have used up (limitCutHidden).
func (p *Provider) parseResponsesAnswer(raw []byte, model string, asked int32) (*provider.Result, error) {
	var w respResponse
	warn, err := decodeLenient(raw, &w)
	if err != nil {
		return nil, provider.BadResponse(p.name, "invalid response JSON: %v", err)
	}
	if isPresent(w.Error) || w.Status == "failed" {
		return nil, p.responseFailure(&w, model)
	}
	if w.Output == nil && w.ID == "" && w.Object == "" && w.Status == "" && w.Model == "" && w.Usage == nil {
		// Not a response object at all (as in the chat format): an answer
		// the caller cannot use, not an empty one.
		return nil, notAnswer(provider.BadResponse(p.name, "the body is not a Responses API response: it has no output, id, status, model or usage"))
	}
	if len(w.Output) == 0 && w.Object == "error" {
		return nil, notAnswer(provider.BadResponse(p.name, "the response is an error object"))
	}
	if len(w.Output) == 0 && w.Object != "" && w.Object != "response" {
		// Another API's object (a chat.completion from a server that
		// routed the request to its chat endpoint): not an empty answer.
		return nil, notAnswer(provider.BadResponse(p.name, "the body is a %q object, not a Responses API response", w.Object))
	}
	meta := &llmrelayv1.ResponseMeta{}
	if warn != "" {
		meta.Warnings = append(meta.Warnings, warn)
	}
	respBodyMeta(meta, &w)
	var (
		parts respParts
		calls int
		anns  annotationSet
	)
	ids := newUnaryCallIDs()
	for _, it := range w.Output {
		if it.Type == "function_call" || it.Type == "custom_tool_call" {
			ids.sent[it.CallID] = it.CallID != ""
			ids.sent[it.ID] = ids.sent[it.ID] || it.ID != ""
		}
	}
	for _, it := range w.Output {
		typ := it.Type
		if typ == "" && isPresent(it.Content) {
			// An item with content and no type: LiteLLM's proxy answers
			// a request its guardrail blocked in passthrough mode with
			// {"content": [{"type": "text", "text": <the violation
			// message>}]} as the only output item (testdata/litellm_responses_guardrail_passthrough.http).
			// It was ignored, and the answer was empty.
			typ = "message"
			meta.Warnings = append(meta.Warnings, "an output item without a type was read as a message (it has content)")
		}
		switch typ {
		case "message":
			segs, warns := messageItemContent(&it)
			for _, sg := range segs {
				parts.text(sg.text, it.Phase, it.ID, sg.refusal)
			}
			meta.Warnings = append(meta.Warnings, warns...)
			meta.Warnings = append(meta.Warnings, anns.add(&it)...)
		case "function_call", "custom_tool_call":
			call, warning := callFromItem(&it, calls, ids)
			if warning != "" {
				meta.Warnings = append(meta.Warnings, warning)
			}
			if it.Namespace != "" {
				meta.Warnings = append(meta.Warnings, namespaceWarning(call.CallId, string(it.Namespace)))
			}
			if w := callerWarning(call.CallId, it.Caller); w != "" {
				meta.Warnings = append(meta.Warnings, w)
			}
			if cut := itemCut(&it); cut != "" {
				call.ArgumentsValid = false
				meta.Warnings = append(meta.Warnings, cutCallWarning(call.CallId, cut))
			}
			parts.add(&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: call}})
			calls++
		case "reasoning":
			r, warns := reasoningFromItem(&it)
			parts.add(&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}})
			meta.Warnings = append(meta.Warnings, warns...)
		default:
			item, warning := hostedItem(&it)
			if item != nil {
				parts.add(&llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Type: item.Type, Json: item.JSON}}})
			}
			if warning != "" {
				meta.Warnings = append(meta.Warnings, warning)
			}
		}
	}
	anns.set(meta)
	var lp respLogprobs
	for i := range w.Output {
		lp.item(int64(i), &w.Output[i], meta)
	}
	lp.set(meta)
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts.done()}
	hidden := p.limitCutHidden(&w, asked)
	if hidden != "" {
		// Its last call, if the answer ends in one, was being written
		// when the limit stopped it, whatever its item's status says.
		meta.Warnings = append(meta.Warnings, hidden)
		if cw := cutLastCall(msg, cutByLimit); cw != "" {
			meta.Warnings = append(meta.Warnings, cw)
		}
	} else if n := len(w.Output); n > 0 && itemCut(&w.Output[n-1]) == "" && w.Output[n-1].Status != "completed" {
		// An incomplete response stopped in its last call (the stream
		// cuts it the same way: responsesStream.finish), unless the
		// server says the call was written whole (the limit hit after
		// it).
		if cw := cutLastCall(msg, respCut(&w)); cw != "" {
			meta.Warnings = append(meta.Warnings, cw)
		}
	}
	meta.ToolCallCount = int32(calls)
	if len(w.Output) == 0 {
		meta.Warnings = append(meta.Warnings, "response has no output items")
	}
	meta.ProviderFinishReason, meta.FinishReason = respFinish(&w, calls > 0)
	if hidden != "" {
		meta.ProviderFinishReason, meta.FinishReason = limitCutFinish(&w)
	}
	if warn := unfinishedWarning(w.Status); warn != "" {
		meta.Warnings = append(meta.Warnings, warn)
	}
	if w.Usage.counted() {
		meta.Usage = normalizeRespUsage(w.Usage)
		d, odd := respUsageDetails(w.Usage)
		d.Set(meta)
		meta.Warnings = append(meta.Warnings, odd...)
	} else if w.Usage != nil {
		meta.Warnings = append(meta.Warnings, warnZeroUsage)
	}
	return &provider.Result{Message: msg, Meta: meta}, nil
}

// respBodyMeta copies the response-level fields of a Response object.
func respBodyMeta(meta *llmrelayv1.ResponseMeta, w *respResponse) {
	meta.ResponseId = w.ID
	meta.ResolvedModel = w.Model
	setCreated(meta, w.CreatedAt)
	if w.ServiceTier != "" {
		provider.SetExtended(meta, extServiceTier, w.ServiceTier)
	}
	setRespContentFilters(meta, w)
	setRespExtras(meta, w)
}

// setRespExtras keeps a Response object's moderation results (when not
// null) and its hosted tools' usage (when it counts anything: OpenAI
// sends tool_usage with every count 0 on answers that ran no hosted tool,
// which says nothing) in meta.extended. A flagged input or output is also
// a warning (moderationWarnings).
func setRespExtras(meta *llmrelayv1.ResponseMeta, w *respResponse) {
	if isPresent(w.Moderation) {
		setExtendedJSON(meta, extModeration, w.Moderation)
		meta.Warnings = append(meta.Warnings, moderationWarnings(w.Moderation)...)
	}
	if isPresent(w.ToolUsage) && countsSomething(w.ToolUsage) {
		setExtendedJSON(meta, extToolUsage, w.ToolUsage)
	}
	if isPresent(w.ProviderMetadata) {
		// The provider the Vercel AI Gateway routed the call to
		// (testdata/real_opencode_vercelgw_grok47_tool_loop_stream.http).
		up, cost := provider.VercelGateway(w.ProviderMetadata)
		if up != "" {
			provider.SetExtended(meta, extUpstreamProvider, up)
		}
		if cost != "" {
			provider.SetExtended(meta, extGatewayCost, cost)
		}
	}
}

// moderationWarnings says which of a Response object's moderation results
// ({input, output}, each with flagged and categories) flagged their text:
// OpenAI answered status completed to pydantic-ai's block-policy request
// although it flagged the input (violence 0.95;
// testdata/real_pyd_openai_responses_moderation_block_policy.http), and
// the results alone, in meta.extended, tell a caller nothing unless it
// looks. The answer stays what the status says.
func moderationWarnings(raw json.RawMessage) []string {
	var m map[string]struct {
		Flagged    bool            `json:"flagged"`
		Categories map[string]bool `json:"categories"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var warnings []string
	for _, side := range []string{"input", "output"} {
		r, ok := m[side]
		if !ok || !r.Flagged {
			continue
		}
		var cats []string
		for c, on := range r.Categories {
			if on {
				cats = append(cats, c)
			}
		}
		slices.Sort(cats)
		w := "OpenAI's moderation flagged the " + side
		if len(cats) > 0 {
			w += " (" + strings.Join(cats, ", ") + ")"
		}
		warnings = append(warnings, w+"; the provider answered anyway (see meta.extended.moderation)")
	}
	return warnings
}

// countsSomething reports whether a JSON value holds a number other than
// 0, at any depth.
func countsSomething(raw json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			if f, err := n.Float64(); err != nil || f != 0 {
				return true
			}
		}
	}
}

// extContentFilters is the meta.extended key of Azure's Responses API
// content filter verdicts ("content_filters").
const extContentFilters = "content_filters"

// setRespContentFilters reports Azure's content_filters (the prompt's and
// the completion's verdicts) in meta.extended, as the chat adapter reports
// prompt_filter_results and content_filter_results.
func setRespContentFilters(meta *llmrelayv1.ResponseMeta, w *respResponse) {
	if isPresent(w.ContentFilters) {
		setExtendedJSON(meta, extContentFilters, w.ContentFilters)
	}
}

// respFinish maps a response's status (and incomplete reason) to the raw
// and normalized finish reasons; tool calls turn a normal stop into
// TOOL_CALLS (provider.ToolCallsFinish).
func respFinish(w *respResponse, hasToolCalls bool) (string, llmrelayv1.FinishReason) {
	raw := w.Status
	reason := ""
	if w.IncompleteDetails != nil {
		reason = w.IncompleteDetails.Reason
	}
	if raw == "incomplete" && reason != "" {
		raw += "/" + reason
	}
	var fr llmrelayv1.FinishReason
	switch {
	case w.Status == "":
		fr = llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED
	case w.Status == "completed":
		fr = llmrelayv1.FinishReason_FINISH_REASON_STOP
	case w.Status == "incomplete" && reason == "max_output_tokens":
		fr = llmrelayv1.FinishReason_FINISH_REASON_LENGTH
	case w.Status == "incomplete" && reason == "content_filter":
		fr = llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	default:
		fr = llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
	if hasToolCalls {
		fr = provider.ToolCallsFinish(fr, 1)
	}
	return raw, fr
}

// unfinishedWarning explains a status under which the response is not
// done yet: "queued" and "in_progress", which a background response
// (background: true) is created with; its output and usage come later,
// from GET /responses/{id}. "" for the other statuses.
func unfinishedWarning(status string) string {
	if status == "queued" || status == "in_progress" {
		return fmt.Sprintf("response status %q: the response is not finished (a background response); its output and usage are not there yet", status)
	}
	return ""
}

// respParts builds an assistant message's parts in model order, the way
// the stream fold (package fold) builds them from the deltas: consecutive
// text pieces of one phase merge into one text part (refusal pieces
// likewise); each tool call and each reasoning item is a part of its own.
type respParts struct {
	parts []*llmrelayv1.Part
	// The trailing text or refusal run, not yet a part.
	run      strings.Builder
	runKind  int    // 0 none, 1 text, 2 refusal
	runPhase string // the text run's phase
	runItem  string // the run's message item id (Part.item_id)
}

// add appends a part of its own.
func (b *respParts) add(p *llmrelayv1.Part) {
	b.flush()
	b.parts = append(b.parts, p)
}

// text appends a text (or refusal) piece of a message item (id item) of
// the given phase to the current run; empty pieces add nothing. Text of
// another phase than the run's begins a new part (refusals carry no
// phase), as does a piece of another item (one with an id other than the
// run's: the stream's fold rule, fold.Accumulator).
func (b *respParts) text(s, phase, item string, refusal bool) {
	if s == "" {
		return
	}
	kind := 1
	if refusal {
		kind, phase = 2, ""
	}
	if b.runKind != kind || b.runPhase != phase || (item != "" && item != b.runItem) {
		b.flush()
		b.runKind, b.runPhase, b.runItem = kind, phase, item
	}
	b.run.WriteString(s)
}

func (b *respParts) flush() {
	switch b.runKind {
	case 1:
		b.parts = append(b.parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: b.run.String()}, Phase: b.runPhase, ItemId: b.runItem})
	case 2:
		b.parts = append(b.parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: b.run.String()}, ItemId: b.runItem})
	}
	b.run.Reset()
	b.runKind, b.runPhase, b.runItem = 0, "", ""
}

// done returns the parts.
func (b *respParts) done() []*llmrelayv1.Part {
	b.flush()
	return b.parts
}

// respSegment is a text or refusal piece of a message item.
type respSegment struct {
	text    string
	refusal bool
}

// messageItemContent reads a message item's output_text and refusal parts
// in order. Content that is a plain string is text; parts of another type
// are reported in warnings.
func messageItemContent(it *respOutputItem) (segs []respSegment, warnings []string) {
	t := bytes.TrimSpace(it.Content)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err == nil {
			return []respSegment{{text: s}}, nil
		}
	}
	var parts []respContentPart
	if err := json.Unmarshal(t, &parts); err != nil {
		return nil, []string{fmt.Sprintf("message item %q has content of an unrecognized shape; ignored", it.ID)}
	}
	for _, pt := range parts {
		switch {
		case pt.Type == "refusal" && pt.Refusal != nil:
			segs = append(segs, respSegment{text: *pt.Refusal, refusal: true})
		case pt.Text != nil:
			segs = append(segs, respSegment{text: *pt.Text})
		case pt.Refusal != nil:
			segs = append(segs, respSegment{text: *pt.Refusal, refusal: true})
		default:
			warnings = append(warnings, fmt.Sprintf("ignored content part of type %q in message item %q", pt.Type, it.ID))
		}
	}
	return segs, warnings
}

// annotationSet collects annotations in order, each once (the same
// citation comes in output_item.done and again in the final response).
type annotationSet struct {
	list   []json.RawMessage
	warned bool
}

// add adds the annotations of a message item's output_text parts; a
// warning when they are not an array, or past maxAnnotations.
func (a *annotationSet) add(it *respOutputItem) []string {
	t := bytes.TrimSpace(it.Content)
	if len(t) == 0 || t[0] != '[' {
		return nil
	}
	var parts []respContentPart
	if json.Unmarshal(t, &parts) != nil {
		return nil // messageItemContent reports the shape
	}
	var warnings []string
	for _, pt := range parts {
		anns, warn := annotationList(pt.Annotations)
		if warn != "" {
			warnings = append(warnings, fmt.Sprintf("annotations of a content part in message item %q are not an array; ignored", it.ID))
			continue
		}
	next:
		for _, x := range anns {
			x = bytes.TrimSpace(x)
			for _, old := range a.list {
				if bytes.Equal(old, x) {
					continue next
				}
			}
			if len(a.list) >= maxAnnotations {
				if !a.warned {
					a.warned = true
					warnings = append(warnings, fmt.Sprintf("more than %d annotations; the rest ignored", maxAnnotations))
				}
				break
			}
			a.list = append(a.list, append(json.RawMessage(nil), x...))
		}
	}
	return warnings
}

// set stores the annotations in meta.extended["annotations"], if any.
func (a *annotationSet) set(meta *llmrelayv1.ResponseMeta) {
	if len(a.list) == 0 {
		return
	}
	raw, err := json.Marshal(a.list)
	if err != nil {
		meta.Warnings = append(meta.Warnings, "annotations: "+err.Error())
		return
	}
	setExtendedJSON(meta, extAnnotations, raw)
}

// messageItemText concatenates a message item's text and its refusal.
func messageItemText(it *respOutputItem) (text, refusal string, warnings []string) {
	segs, warnings := messageItemContent(it)
	var tb, rb strings.Builder
	for _, sg := range segs {
		if sg.refusal {
			rb.WriteString(sg.text)
		} else {
			tb.WriteString(sg.text)
		}
	}
	return tb.String(), rb.String(), warnings
}

// reasoningSeparator joins the summary parts of a reasoning item into one
// Reasoning text (unary and streamed alike).
const reasoningSeparator = fold.SummarySeparator

// reasoningFromItem converts a reasoning item: its id, its summary texts
// joined with reasoningSeparator (and the parts themselves when there are
// two or more: Reasoning.summary_parts), else, when the summary is empty,
// the raw chain of thought in its reasoning_text content parts, which
// open-weight models served through the Responses API (gpt-oss on
// OpenRouter, vLLM) send instead of a summary; and its encrypted_content
// as the signature to send back.
func reasoningFromItem(it *respOutputItem) (*llmrelayv1.Reasoning, []string) {
	r := &llmrelayv1.Reasoning{Id: it.ID, Signature: encryptedContent(it)}
	parts, warnings := summaryParts(it)
	if len(parts) > 0 {
		r.Text = strings.Join(parts, reasoningSeparator)
		if len(parts) > 1 {
			r.SummaryParts = parts
		}
		return r, warnings
	}
	raw, warns := reasoningContentText(it)
	r.Text = raw
	return r, append(warnings, warns...)
}

// reasoningContentText joins the non-empty texts of a reasoning item's
// reasoning_text content parts with reasoningSeparator.
func reasoningContentText(it *respOutputItem) (string, []string) {
	t := bytes.TrimSpace(it.Content)
	if len(t) == 0 || string(t) == "null" {
		return "", nil
	}
	var parts []respContentPart
	if err := json.Unmarshal(t, &parts); err != nil {
		return "", []string{fmt.Sprintf("reasoning item %q has content of an unrecognized shape; ignored", it.ID)}
	}
	var (
		b        strings.Builder
		warnings []string
	)
	for _, pt := range parts {
		switch {
		case pt.Type != "reasoning_text" || pt.Text == nil:
			warnings = append(warnings, fmt.Sprintf("ignored content part of type %q in reasoning item %q", pt.Type, it.ID))
		case *pt.Text != "":
			if b.Len() > 0 {
				b.WriteString(reasoningSeparator)
			}
			b.WriteString(*pt.Text)
		}
	}
	return b.String(), warnings
}

// summaryParts is the non-empty texts of a reasoning item's summary
// parts, in order. A summary that is a plain string is one part; parts
// without text are reported in warnings.
func summaryParts(it *respOutputItem) ([]string, []string) {
	t := bytes.TrimSpace(it.Summary)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err == nil {
			if s == "" {
				return nil, nil
			}
			return []string{s}, nil
		}
	}
	var parts []respContentPart
	if err := json.Unmarshal(t, &parts); err != nil {
		return nil, []string{fmt.Sprintf("reasoning item %q has a summary of an unrecognized shape; ignored", it.ID)}
	}
	var (
		texts    []string
		warnings []string
	)
	for _, pt := range parts {
		switch {
		case pt.Text == nil:
			warnings = append(warnings, fmt.Sprintf("ignored summary part of type %q in reasoning item %q", pt.Type, it.ID))
		case *pt.Text != "":
			texts = append(texts, *pt.Text)
		}
	}
	return texts, warnings
}

// encryptedContent is a reasoning item's encrypted_content ("" if absent).
func encryptedContent(it *respOutputItem) string {
	if !isPresent(it.EncryptedContent) {
		return ""
	}
	return argumentsText(it.EncryptedContent)
}

// callFromItem converts a function_call (or custom_tool_call) item; pos is
// the call's position. The call is keyed by call_id; without one, by the
// item id (with a warning), and without either by a made-up id. A
// call_id an earlier call has is replaced by the item id, else by a made
// id, with a warning, as the stream does (responsesStream.callKey).
func callFromItem(it *respOutputItem, pos int, ids *unaryCallIDs) (*llmrelayv1.ToolCall, string) {
	call := &llmrelayv1.ToolCall{Name: it.Name}
	if it.Input != nil && it.Type == "custom_tool_call" {
		call.Arguments = *it.Input
	} else {
		call.Arguments = argumentsText(it.Arguments)
	}
	call.ArgumentsValid = fold.ValidArguments(call.Arguments)
	if it.CallID == "" && it.ID == "" {
		call.CallId = ids.made(pos)
		return call, fmt.Sprintf("function_call %d has neither call_id nor item id; keyed as %s", pos, call.CallId)
	}
	id, warning := respCallID(it.CallID, it.ID, pos)
	if ids.use(id) {
		alt := it.ID
		if alt == "" || ids.used[alt] {
			alt = ids.made(pos)
		} else {
			ids.use(alt)
		}
		warning = fmt.Sprintf("function_call %d repeats the id %s of an earlier call; keyed as %s", pos, id, alt)
		id = alt
	}
	call.CallId = id
	return call, warning
}

// respCallID picks the id a call is keyed by: its call_id; else its item
// id; else a made-up one. The warning says which fallback was used.
func respCallID(callID, itemID string, pos int) (string, string) {
	switch {
	case callID != "":
		return callID, ""
	case itemID != "":
		return itemID, fmt.Sprintf("function_call item %s has no call_id; keyed by its item id", itemID)
	default:
		id := provider.FallbackCallID(pos)
		return id, fmt.Sprintf("function_call %d has neither call_id nor item id; keyed as %s", pos, id)
	}
}

// respUsagePaths are the usage fields normalizeRespUsage reads.
var respUsagePaths = []string{"input_tokens", "output_tokens", "total_tokens",
	"input_tokens_details.cached_tokens", "input_tokens_details.cache_write_tokens", "output_tokens_details.reasoning_tokens"}

// respUsageDetails are the Responses usage fields no counter holds, and
// the counters' fields that held no count, kept as sent; odd are the
// warnings for the latter (see usageDetails).
func respUsageDetails(u *respUsage) (d provider.UsageDetails, odd []string) {
	paths := oddCounts(u.Raw, respUsagePaths)
	return provider.ReadUsageDetails(u.Raw, provider.MappedExcept(respUsagePaths, paths)...), oddWarnings(paths)
}

// warnZeroUsage says why a usage object of zeros was not reported.
const warnZeroUsage = "the provider's usage counts no tokens at all (input, output and total 0); it is not reported as the answer's usage"

// counted reports whether a usage object counts anything. Azure answers a
// request its content filter stopped with input, output and total 0
// beside the text it sent (testdata/real_mira_azure_responses_content_filter_stream.http):
// zeros that count nothing are no usage, as an embeddings answer's
// (embed_zero_usage), not a count of zero tokens.
func (u *respUsage) counted() bool {
	return u != nil && (u.InputTokens != 0 || u.OutputTokens != 0 || u.TotalTokens != 0)
}

// normalizeRespUsage converts Responses API usage: input_tokens already
// include cached tokens and output_tokens include reasoning tokens.
func normalizeRespUsage(u *respUsage) *llmrelayv1.Usage {
	out := &llmrelayv1.Usage{
		InputTokens:  provider.Count(int64(u.InputTokens)),
		OutputTokens: provider.Count(int64(u.OutputTokens)),
		TotalTokens:  provider.Count(int64(u.TotalTokens)),
	}
	out.TotalTokens = provider.UsageTotal(out.TotalTokens, out.InputTokens, out.OutputTokens)
	if d := u.InputTokensDetails; d != nil {
		out.CachedInputTokens = provider.Count(int64(d.CachedTokens))
		out.CacheCreationInputTokens = provider.Count(int64(d.CacheWriteTokens))
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = provider.Count(int64(d.ReasoningTokens))
	}
	return out
}

// responseFailure is the error of a failed Response object. Its meta keeps
// what the object reports: the response id, the resolved model and the
// usage of what was processed before the failure.
func (p *Provider) responseFailure(w *respResponse, model string) *provider.Error {
	var e *provider.Error
	if !isPresent(w.Error) {
		e = &provider.Error{Provider: p.name, Kind: provider.KindUnavailable, HTTPStatus: http.StatusOK,
			Message: "response failed without an error object"}
		if w.ID != "" {
			e.Message += " (" + w.ID + ")"
		}
	} else {
		e = p.errorFromObject(w.Error, http.StatusOK, model, nil)
		p.refineResponsesKind(e)
	}
	meta := &llmrelayv1.ResponseMeta{}
	respBodyMeta(meta, w)
	if w.Usage.counted() {
		meta.Usage = normalizeRespUsage(w.Usage)
	}
	e.Meta = meta
	return e
}

// refineResponsesKind classifies the error codes specific to the Responses
// API's error object (invalid_prompt, invalid_image_*, image_*,
// vector_store_timeout, ...), which kindForCode leaves as unavailable.
func (p *Provider) refineResponsesKind(e *provider.Error) {
	if e.Kind != provider.KindUnavailable || e.HTTPStatus >= 300 {
		return
	}
	switch c := e.Code; {
	case c == "image_content_policy_violation":
		e.Kind = provider.KindContentFilter
	case c == "vector_store_timeout":
		e.Kind = provider.KindTimeout
	case strings.HasPrefix(c, "invalid_"), strings.HasPrefix(c, "image_"), strings.HasPrefix(c, "unsupported_"),
		c == "empty_image_file", c == "failed_to_download_image":
		e.Kind = provider.KindInvalidRequest
	}
}
