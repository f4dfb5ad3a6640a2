package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// includeEncryptedReasoning asks for reasoning items' encrypted content, so
// that a stateless (store: false) conversation can carry reasoning state.
const includeEncryptedReasoning = "reasoning.encrypted_content"

// includeLogprobs asks for output text logprobs (the Responses API's
// equivalent of Chat Completions' logprobs: true).
const includeLogprobs = "message.output_text.logprobs"

// buildResponsesRequest encodes a normalized request as a Responses API
// body. The request is stateless: the whole conversation is sent as input
// items, store is false unless OpenAIOptions.store says otherwise, and
// previous_response_id is never used. It returns warnings for options the
// format cannot carry.
func (p *Provider) buildResponsesRequest(req *provider.Request, stream bool) ([]byte, []string, error) {
	body, warnings, _, err := p.buildResponses(req, stream)
	return body, warnings, err
}

// buildResponses is buildResponsesRequest, with where each input item of
// the body came from in the request (nil when provider_options.extra_body
// replaced the input).
func (p *Provider) buildResponses(req *provider.Request, stream bool) ([]byte, []string, []respItemFrom, error) {
	body, warnings, froms, err := p.encodeResponses(req, stream)
	if err != nil {
		return nil, nil, nil, err
	}
	if extraSetsInput(req.ProviderOptions.GetExtraBody()) {
		froms = nil
	}
	return body, warnings, froms, nil
}

func (p *Provider) encodeResponses(req *provider.Request, stream bool) ([]byte, []string, []respItemFrom, error) {
	if req == nil {
		return nil, nil, nil, p.invalid("nil request")
	}
	if err := p.checkToolResults(req.Messages, true); err != nil {
		return nil, nil, nil, err
	}
	if err := p.checkLimits(req, nil); err != nil {
		return nil, nil, nil, err
	}
	warnings := toolMessageWarnings(req.Messages, false)
	w := respRequest{Model: req.Model, Stream: stream}
	oo := req.ProviderOptions.GetOpenai()
	w.Store = oo.GetStore()
	items, warns, err := p.encodeInputItems(req.Messages, req.Reasoning, w.Store)
	if err != nil {
		return nil, nil, nil, err
	}
	if req.DropSignatures {
		var dw string
		if items, dw = withoutReasoningItems(items); dw != "" {
			warns = append(warns, dw)
		}
	}
	w.Input, warnings = items, append(warnings, warns...)
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		params, err := p.toolParameters(t)
		if err != nil {
			return nil, nil, nil, err
		}
		w.Tools = append(w.Tools, respTool{Type: "function", Name: t.GetName(), Description: t.GetDescription(), Strict: t.Strict, Parameters: params})
	}
	for _, m := range req.HostedMCP {
		w.Tools = append(w.Tools, hostedMCPTool(m))
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
			w.ToolChoice = respNamedToolChoice{Type: "function", Name: c.FunctionName}
		}
	}
	w.ParallelToolCalls = o.ParallelToolCalls
	if samplingDropped(req, o) {
		if o.Temperature != nil || o.TopP != nil {
			warnings = append(warnings, warnReasoningSampling)
		}
	} else {
		w.Temperature = o.Temperature
		w.TopP = o.TopP
	}
	w.MaxOutputTokens = o.MaxTokens
	if effort := reasoningEffortWire(o.GetReasoningEffort()); effort != "" {
		w.Reasoning = &respReasoning{Effort: effort}
		if wire, warn, ok := ollamaEffort(p.baseURL, req.Model, o.GetReasoningEffort(), `{"reasoning": {"effort": "max"}}`); ok && p.ollama {
			w.Reasoning.Effort = wire
			if warn != "" {
				warnings = append(warnings, warn)
			}
		} else if o.GetReasoningEffort() == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX {
			warnings = append(warnings, warnMaxEffort)
		}
	}
	if sum := req.ProviderOptions.GetOpenai().GetReasoningSummary(); sum != "" {
		if w.Reasoning == nil {
			w.Reasoning = &respReasoning{}
		}
		w.Reasoning.Summary = sum
	}
	if rf := o.GetResponseFormat(); rf != nil {
		switch rf.GetType() {
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT:
			w.Text = &respText{Format: respTextFormat{Type: "text"}}
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
			w.Text = &respText{Format: respTextFormat{Type: "json_object"}}
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
			f := respTextFormat{Type: "json_schema", Name: rf.GetSchemaName(), Strict: rf.Strict}
			if f.Name == "" {
				f.Name = "response"
			}
			if rf.GetSchema() != "" {
				schema, err := provider.SchemaJSON(rf.GetSchema())
				if err != nil {
					return nil, nil, nil, p.invalid("response_format schema: %v", err)
				}
				f.Schema = schema
			}
			w.Text = &respText{Format: f}
		}
	}
	for _, dropped := range []struct {
		name string
		set  bool
	}{
		{"stop", len(o.GetStop()) > 0},
		{"seed", o.Seed != nil},
		{"presence_penalty", o.PresencePenalty != nil},
		{"frequency_penalty", o.FrequencyPenalty != nil},
		{"top_k", o.TopK != nil},
	} {
		if dropped.set {
			warnings = append(warnings, dropped.name+" is not part of the OpenAI Responses format and was not sent (use provider_options.extra_body for compatible servers)")
		}
	}
	if oo != nil {
		w.SafetyIdentifier = oo.GetUser()
		if len(oo.GetMetadata()) > 0 {
			w.Metadata = oo.GetMetadata()
		}
		w.ServiceTier = oo.GetServiceTier()
		if oo.GetLogprobs() {
			w.Include = append(w.Include, includeLogprobs)
		}
		w.TopLogprobs = oo.TopLogprobs
	}
	if req.Reasoning && !w.Store {
		w.Include = append(w.Include, includeEncryptedReasoning)
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, nil, nil, p.invalid("encode request: %v", err)
	}
	body, extraWarnings, err := provider.MergeExtraBody(body, req.ProviderOptions.GetExtraBody(), "model", "stream", "store", "include")
	if err != nil {
		return nil, nil, nil, p.invalid("%v", err)
	}
	return body, append(warnings, extraWarnings...), respFroms(w.Input), nil
}

// reasoningEffortWire is the wire value of a reasoning effort; "" when
// unset.
func reasoningEffortWire(e llmrelayv1.ReasoningEffort) string {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		return "none"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL:
		return "minimal"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW:
		return "low"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:
		return "medium"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH:
		return "high"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		// OpenAI's highest level is xhigh (gpt-5.1-codex-max and later);
		// MAX gets it, with warnMaxEffort.
		return "xhigh"
	}
	return ""
}

// warnMaxEffort says what reasoning_effort MAX became: OpenAI names no
// level above xhigh.
const warnMaxEffort = "reasoning_effort MAX: OpenAI's highest level is xhigh; sent xhigh"

// encodeInputItems converts the conversation into input items. Assistant
// turns become reasoning, output_text message and function_call items (in
// part order); tool messages become one function_call_output item per
// tool_result, keyed by the call's call_id. store says whether the request
// is stored (reasoning items can then be resolved by id alone).
func (p *Provider) encodeInputItems(in []*llmrelayv1.Message, reasoning, store bool) ([]respInputItem, []string, error) {
	out := make([]respInputItem, 0, len(in))
	var warnings []string
	namesDropped := false
	for i, m := range in {
		if m == nil {
			continue
		}
		if m.GetName() != "" && !namesDropped {
			namesDropped = true
			warnings = append(warnings, "message names are not part of the OpenAI Responses format and were not sent")
		}
		switch m.GetRole() {
		case llmrelayv1.Role_ROLE_SYSTEM:
			role := "system"
			if reasoning {
				role = "developer"
			}
			content, err := p.encodeInputContent(m.GetParts(), i, false)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, respInputItem{Type: "message", Role: role, Content: content, from: messageFrom(i, m.GetParts())})
		case llmrelayv1.Role_ROLE_USER:
			content, err := p.encodeInputContent(m.GetParts(), i, true)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, respInputItem{Type: "message", Role: "user", Content: content, from: messageFrom(i, m.GetParts())})
		case llmrelayv1.Role_ROLE_ASSISTANT:
			items, warns, err := p.encodeAssistantItems(m.GetParts(), i, store)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, items...)
			warnings = append(warnings, warns...)
		case llmrelayv1.Role_ROLE_TOOL:
			n := 0
			for j, part := range m.GetParts() {
				tr := part.GetToolResult()
				if tr == nil {
					return nil, nil, p.invalid("messages[%d]: tool messages carry tool_result parts only", i)
				}
				if tr.GetCallId() == "" {
					return nil, nil, p.invalid("messages[%d]: tool_result without call_id", i)
				}
				output := tr.GetContent()
				item := respInputItem{Type: "function_call_output", CallID: tr.GetCallId(), Output: &output, from: respFrom{msg: i, part: j}}
				if len(tr.GetParts()) > 0 {
					items, err := p.encodeResultOutput(tr, i, j)
					if err != nil {
						return nil, nil, err
					}
					item.Output, item.OutputItems = nil, items
					item.from.content = make([]int, 0, len(items))
					if tr.GetContent() != "" {
						item.from.content = append(item.from.content, -1)
					}
					for n := range tr.GetParts() {
						item.from.content = append(item.from.content, n)
					}
				}
				out = append(out, item)
				n++
			}
			if n == 0 {
				return nil, nil, p.invalid("messages[%d]: tool message without tool_result parts", i)
			}
		default:
			return nil, nil, p.invalid("messages[%d]: unsupported role %s", i, m.GetRole())
		}
	}
	out, dropped := pairReasoning(out, !p.strictLimits())
	warnings = append(warnings, dropped...)
	return out, warnings, nil
}

// pairReasoning sends each reasoning item only as the Responses API can
// pair it with the output item that followed it in the answer: the API
// refuses an input whose reasoning item lacks that item ("Item 'rs_…' of
// type 'reasoning' was provided without its required following item",
// param input), recognised by its id. By the item after it:
//   - a function call (paired by call_id), a hosted tool's item sent back
//     as a provider item, or an assistant message sent by its item id
//     (Part.item_id): sent as it is;
//   - an assistant message without an item id (a history written by hand
//     or by another gateway): sent without its own id when it has
//     encrypted content (or, for a server that reads it,
//     Provider.rawReasoningBack, its reasoning_text content), which
//     carries it alone; left out with a warning
//     when its id is all it has (a stored response's reference, which
//     only resolves paired);
//   - anything else (another reasoning item, a user, system or tool
//     message, nothing): its following item is not in the request (a
//     hosted tool's call from a history without its provider items: the
//     four reasoning items of
//     testdata/real_responses_code_interpreter.http come back one after
//     the other; an empty message), so it is left out with a warning, as
//     OpenAI's Agents SDKs leave out the reasoning items whose following
//     call they dropped (openai-agents-python #3207, -js #1280).
//
// runs (a server that is not OpenAI's or Azure's) keeps a reasoning item
// followed by other reasoning items when the run ends with a call, a
// provider item or an assistant message: the answer had them one after
// the other (meta/muse-spark-1.3 through the Vercel AI Gateway, whose
// recorded follow-up sends both and was answered: anomalyco/opencode's
// vercel-native/continues-responses-muse-reasoning-and-tools), where
// OpenAI's rule left all but the last out.
//
// The items it returns share in's array.
func pairReasoning(in []respInputItem, runs bool) ([]respInputItem, []string) {
	var warnings []string
	out := in[:0]
	for i, it := range in {
		if it.Type == "reasoning" {
			follows := "nothing follows it"
			if i+1 < len(in) {
				switch next := in[i+1]; {
				case next.Type == "function_call" || next.raw != nil:
					// A call, or the hosted item that followed it in the
					// answer (a provider item).
					follows = ""
				case next.Type == "message" && next.Role == "assistant":
					follows = ""
					if it.ID != "" && next.ID == "" {
						if it.EncryptedContent == "" && len(it.Content) == 0 {
							warnings = append(warnings, fmt.Sprintf("reasoning item %s was not sent: the Responses API refuses a reasoning item "+
								"sent by its id without the item that followed it in the answer, and the message after it has no item_id", it.ID))
							continue
						}
						it.ID = ""
					}
				case next.Type == "reasoning":
					follows = "another reasoning item follows it"
					if runs {
						j := i + 1
						for j < len(in) && in[j].Type == "reasoning" {
							j++
						}
						if j < len(in) && (in[j].Type == "function_call" || in[j].raw != nil || (in[j].Type == "message" && in[j].Role == "assistant")) {
							follows = ""
						}
					}
				case next.Type == "message":
					follows = "a " + next.Role + " message follows it"
				default:
					follows = "a " + next.Type + " item follows it"
				}
			}
			if follows != "" {
				id := it.ID
				if id == "" {
					id = "(without id)"
				}
				warnings = append(warnings, fmt.Sprintf("reasoning item %s was not sent: %s, not the message or call it led to "+
					"(a hosted tool's call or an empty message, which the contract has no place for), and OpenAI refuses a reasoning item without its following item", id, follows))
				continue
			}
		}
		out = append(out, it)
	}
	return out, warnings
}

// encodeInputContent encodes system/user content as input_text and
// input_image parts.
func (p *Provider) encodeInputContent(parts []*llmrelayv1.Part, i int, images bool) ([]respInputContent, error) {
	if len(parts) == 0 {
		empty := ""
		return []respInputContent{{Type: "input_text", Text: &empty}}, nil
	}
	out := make([]respInputContent, 0, len(parts))
	for j, part := range parts {
		switch k := part.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			t := k.Text
			out = append(out, respInputContent{Type: "input_text", Text: &t})
		case *llmrelayv1.Part_File:
			if !images {
				return nil, p.invalid("messages[%d]: files are allowed in user messages only", i)
			}
			c, err := p.encodeInputFile(k.File, i, j)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		case *llmrelayv1.Part_Image:
			if !images {
				return nil, p.invalid("messages[%d]: images are allowed in user messages only", i)
			}
			iu, err := p.encodeImage(k.Image, i)
			if err != nil {
				return nil, err
			}
			// detail is required on a message's input_image.
			detail := iu.Detail
			if detail == "" {
				detail = "auto"
			}
			out = append(out, respInputContent{Type: "input_image", ImageURL: iu.URL, Detail: detail})
		default:
			return nil, p.invalid("messages[%d]: unsupported part %T in this role", i, part.GetKind())
		}
	}
	return out, nil
}

// encodeResultOutput is a tool result with parts (ToolResult.parts) as a
// function_call_output's output items: its content as the first
// input_text, then input_text, input_image and input_file items in order
// (the output's list form: ResponseFunctionCallOutputItemParam =
// ResponseInputTextContentParam | ResponseInputImageContentParam |
// ResponseInputFileContentParam, openai/openai-python
// src/openai/types/responses/response_function_call_output_item_param.py
// @ 1db4657d0ac77a2e68aad7c2b748064b35a25d4a), each as in a user message.
func (p *Provider) encodeResultOutput(tr *llmrelayv1.ToolResult, i, j int) ([]respInputContent, error) {
	out := make([]respInputContent, 0, len(tr.GetParts())+1)
	if c := tr.GetContent(); c != "" {
		out = append(out, respInputContent{Type: "input_text", Text: &c})
	}
	for n, part := range tr.GetParts() {
		where := fmt.Sprintf("messages[%d].parts[%d].tool_result.parts[%d]", i, j, n)
		switch k := part.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			t := k.Text
			out = append(out, respInputContent{Type: "input_text", Text: &t})
		case *llmrelayv1.Part_Image:
			iu, err := p.encodeImage(k.Image, i)
			if err != nil {
				return nil, err
			}
			// detail only when asked for: optional on an output item
			// ("Defaults to `auto`", ResponseInputImageContentParam,
			// unlike a message's input_image), and the follow-up OpenAI
			// answered sends none (anomalyco/opencode's
			// openai-responses-gpt-5-5-image-tool-result recording).
			out = append(out, respInputContent{Type: "input_image", ImageURL: iu.URL, Detail: iu.Detail})
		case *llmrelayv1.Part_File:
			if field, reason := provider.CheckFile(formatResponses, k.File); reason != "" {
				where += ".file"
				if field != "" {
					where += "." + field
				}
				return nil, p.invalidParam(where, "%s", reason)
			}
			c, err := p.encodeInputFile(k.File, i, j)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		default:
			return nil, p.invalidParam(where, "a tool result's parts are text, image or file")
		}
	}
	return out, nil
}

// encodeInputFile builds an input_file: inline data as a data: URL with a
// file name, an uploaded file_id, or a file_url. Audio is refused: the
// Responses API's input content is text, image and file only.
func (p *Provider) encodeInputFile(f *llmrelayv1.File, i, j int) (respInputContent, error) {
	if field, reason := provider.CheckFile(formatResponses, f); reason != "" {
		return respInputContent{}, p.invalidFile(i, j, field, reason)
	}
	switch src := f.GetSource().(type) {
	case *llmrelayv1.File_Data:
		return respInputContent{Type: "input_file", Filename: provider.Filename(f),
			FileData: "data:" + provider.MediaType(f) + ";base64," + base64.StdEncoding.EncodeToString(src.Data)}, nil
	case *llmrelayv1.File_FileId:
		return respInputContent{Type: "input_file", FileID: src.FileId, Filename: f.GetFilename()}, nil
	case *llmrelayv1.File_Url:
		return respInputContent{Type: "input_file", FileURL: src.Url, Filename: f.GetFilename()}, nil
	}
	return respInputContent{}, p.invalidFile(i, j, "", "a file needs a url, data or file_id")
}

// encodeAssistantItems encodes an assistant turn: runs of text and refusal
// parts become a message item with output_text / refusal content (text
// parts of another phase than the item's text begin a new item, which
// carries their phase: Part.phase), each tool
// call a function_call item, each reasoning part a reasoning item, in part
// order. Reasoning the Responses API cannot resolve is left out with a
// warning: a part without encrypted content (its signature) unless the
// request is stored and the part has an item id, and a redacted part
// (Anthropic redacted_thinking, not OpenAI state). Tool-call signatures
// (Gemini thoughtSignature) have no place in a function_call item and are
// left out with a warning.
func (p *Provider) encodeAssistantItems(parts []*llmrelayv1.Part, i int, store bool) ([]respInputItem, []string, error) {
	var (
		out      []respInputItem
		cur      []respInputContent
		curParts []int  // the part each of cur's entries is
		phase    string // the phase of cur's text
		hasText  bool   // cur has text
		item     string // cur's message item id (Part.item_id)
		warnings []string
	)
	flush := func() {
		if len(cur) > 0 {
			m := respInputItem{Type: "message", Role: "assistant", Content: cur, Phase: phase}
			if item != "" {
				// The output message it came from, by its id: the
				// Responses API pairs a reasoning item with it.
				m.ID, m.Status = item, "completed"
				for c := range cur {
					if cur[c].Type == "output_text" {
						cur[c].Annotations = &[]struct{}{}
					}
				}
			}
			m.from = respFrom{msg: i, part: -1, content: curParts}
			out = append(out, m)
			cur, curParts = nil, nil
		}
		phase, hasText, item = "", false, ""
	}
	// newItem flushes cur when the part is of another message item than
	// cur's (an item id set and different).
	newItem := func(p *llmrelayv1.Part) {
		if id := p.GetItemId(); id != "" {
			if id != item && len(cur) > 0 {
				flush()
			}
			item = id
		}
	}
	signaturesDropped := false
	for j, part := range parts {
		switch k := part.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			if hasText && part.GetPhase() != phase {
				flush()
			}
			newItem(part)
			t := k.Text
			cur, curParts = append(cur, respInputContent{Type: "output_text", Text: &t}), append(curParts, j)
			phase, hasText = part.GetPhase(), true
		case *llmrelayv1.Part_Refusal:
			newItem(part)
			r := k.Refusal
			cur, curParts = append(cur, respInputContent{Type: "refusal", Refusal: &r}), append(curParts, j)
		case *llmrelayv1.Part_ToolCall:
			flush()
			tc := k.ToolCall
			if tc.GetCallId() == "" {
				return nil, nil, p.invalid("messages[%d]: tool_call without call_id", i)
			}
			args := tc.GetArguments()
			if args == "" {
				args = "{}"
			}
			if tc.GetSignature() != "" && !signaturesDropped {
				signaturesDropped = true
				warnings = append(warnings, fmt.Sprintf("messages[%d]: tool call signatures are not part of the OpenAI Responses format and were not sent", i))
			}
			out = append(out, respInputItem{Type: "function_call", CallID: tc.GetCallId(), Name: tc.GetName(), Arguments: &args, from: respFrom{msg: i, part: j}})
		case *llmrelayv1.Part_Reasoning:
			item, warning := reasoningInputItem(k.Reasoning, i, j, store, p.rawReasoningBack(), p.summaryReasoningBack())
			if warning != "" {
				warnings = append(warnings, warning)
				continue
			}
			flush()
			item.from = respFrom{msg: i, part: j}
			out = append(out, item)
		case *llmrelayv1.Part_ProviderItem:
			// A hosted tool's item of an earlier answer (web_search_call,
			// code_interpreter_call, mcp_call, …): back as sent, in its
			// place, where a reasoning item before it pairs with it.
			it := k.ProviderItem
			if respOwnItems[it.GetType()] || !json.Valid([]byte(it.GetJson())) {
				warnings = append(warnings, provider.DroppedItemWarning(i, j, it, "the OpenAI Responses format"))
				continue
			}
			flush()
			out = append(out, respInputItem{Type: it.GetType(), raw: json.RawMessage(it.GetJson()), from: respFrom{msg: i, part: j}})
		case nil:
		default:
			return nil, nil, p.invalid("messages[%d]: assistant messages carry text, refusal, reasoning, tool_call and provider_item parts only", i)
		}
	}
	flush()
	if len(out) == 0 {
		empty := ""
		out = append(out, respInputItem{Type: "message", Role: "assistant", Content: []respInputContent{{Type: "output_text", Text: &empty}},
			from: respFrom{msg: i, part: -1, content: []int{-1}}})
	}
	return out, warnings, nil
}

// withoutReasoningItems leaves the reasoning items out of the input
// (provider.Request.DropSignatures): the deployment refused their
// encrypted content ("invalid_encrypted_content", "The encrypted content
// … could not be verified": another organization's or project's, or an
// Azure resource's) or an item id it does not hold ("Item with id 'rs_…'
// not found. … Try again with `store` set to true, or remove this item
// from your input."). Removing them is what the refusal asks, and the
// function calls and messages that followed them do not need them: the
// adapter sends calls by call_id, without their item ids. The warning,
// "" when there were none, counts them. The result shares in's array.
func withoutReasoningItems(in []respInputItem) ([]respInputItem, string) {
	out, n := in[:0], 0
	for _, it := range in {
		if it.Type == "reasoning" {
			n++
			continue
		}
		out = append(out, it)
	}
	if n == 0 {
		return out, ""
	}
	return out, fmt.Sprintf("the Responses API refused the conversation's reasoning items as another organization's or project's (%s); "+
		"this attempt left out %d reasoning item(s) (encrypted content and ids), so the model does not see its earlier reasoning", provider.SignatureRetryNote, n)
}

// reasoningInputItem encodes a Reasoning part (messages[i].parts[j]) as a
// reasoning input item: {type:"reasoning", id (if any), summary (the text
// as one summary_text part; [] without text), encrypted_content (the
// signature)}. raw (Provider.rawReasoningBack) sends the text of a part
// without a signature as the item's reasoning_text content instead, with
// an empty summary, where it would otherwise not be sent; sum
// (Provider.summaryReasoningBack) sends it as its summary text, without
// encrypted content (and, summaryBackNoID, without its id). The warning
// says why a part cannot be sent.
func reasoningInputItem(r *llmrelayv1.Reasoning, i, j int, store, raw bool, sum summaryBack) (respInputItem, string) {
	switch {
	case r.GetRedacted():
		return respInputItem{}, fmt.Sprintf("messages[%d].parts[%d]: redacted reasoning is not OpenAI reasoning state and was not sent", i, j)
	case raw && r.GetSignature() == "" && r.GetText() != "":
		// The reasoning text of a server that has no encrypted content
		// (vLLM, llama.cpp, DeepSeek): its own reasoning_text, which it
		// reads back (Provider.rawReasoningBack).
		t := r.GetText()
		return respInputItem{Type: "reasoning", ID: r.GetId(), Summary: &[]respSummaryPart{},
			Content: []respInputContent{{Type: "reasoning_text", Text: &t}}}, ""
	case raw && r.GetSignature() == "" && r.GetText() == "":
		// Nothing to send to a server that reads reasoning back as its
		// text: llama.cpp refuses a reasoning item without content, or
		// with content [] ("item['content'] is not an array", "… is
		// empty": tools/server/server-chat.cpp), stored request or not;
		// it resolves no item ids.
		return respInputItem{}, fmt.Sprintf("messages[%d].parts[%d]: reasoning without text or encrypted content was not sent: "+
			"this server reads reasoning back as its text", i, j)
	case sum != summaryBackNone && r.GetSignature() == "" && r.GetText() != "":
		// gpt-oss on Bedrock's Mantle endpoint: no encrypted content;
		// its reasoning goes back as its summary text, as opencode's
		// recorded follow-up sent it and Bedrock answered
		// (testdata/real_opencode_mantle_gptoss20b_replay_stream_3.next_request.json);
		// kimi-k2.6 on DigitalOcean the same without the item's id
		// (testdata/real_opencode_digitalocean_kimi_tool_loop_stream_1.next_request.json).
		summary := summaryEntries(r)
		id := r.GetId()
		if sum == summaryBackNoID {
			id = ""
		}
		return respInputItem{Type: "reasoning", ID: id, Summary: &summary}, ""
	case r.GetSignature() == "" && (!store || r.GetId() == ""):
		return respInputItem{}, fmt.Sprintf("messages[%d].parts[%d]: reasoning without encrypted content (signature) was not sent: "+
			"only a stored request can resolve a reasoning item by its id alone", i, j)
	}
	summary := summaryEntries(r)
	return respInputItem{Type: "reasoning", ID: r.GetId(), Summary: &summary, EncryptedContent: r.GetSignature()}, ""
}

// summaryEntries is a reasoning item's summary as it goes back: one
// summary_text entry per part of Reasoning.summary_parts, as OpenAI and
// Azure listed them, when the parts still join to its text; else (one
// part, a client-built history, a text the caller changed) the text as
// one entry; none for no text.
func summaryEntries(r *llmrelayv1.Reasoning) []respSummaryPart {
	summary := []respSummaryPart{}
	if sp := r.GetSummaryParts(); len(sp) > 1 && strings.Join(sp, reasoningSeparator) == r.GetText() {
		for _, t := range sp {
			summary = append(summary, respSummaryPart{Type: "summary_text", Text: t})
		}
		return summary
	}
	if r.GetText() != "" {
		summary = append(summary, respSummaryPart{Type: "summary_text", Text: r.GetText()})
	}
	return summary
}

// rawReasoningBack says whether reasoning without encrypted content goes
// back as its reasoning_text content: where earlier turns' reasoning is
// sent back as reasoning_content on Chat Completions (WithReasoningReplay
// "reasoning_content", auto for api.deepseek.com), never to OpenAI or
// Azure, which resolve reasoning by encrypted content or stored id only.
// The servers that answer with reasoning_text and no encrypted content
// read it there: DeepSeek's Responses API merges such an item into the
// assistant message after it (vercel/ai's
// packages/deepseek/src/responses/convert-to-deepseek-responses-input.ts
// sends {type:"reasoning", summary:[], content:[{type:"reasoning_text"}]}),
// llama.cpp's server refuses a reasoning item without content ("item
// ['content'] is not an array", tools/server/server-chat.cpp) and makes
// content[0].text the turn's reasoning_content, and vLLM's gpt-oss path
// reads content[0].text (vllm-project/vllm#28248, #34496).
func (p *Provider) rawReasoningBack() bool {
	return p.replay == replayReasoningContent && !p.strictLimits()
}

// summaryReasoningBack says whether reasoning without encrypted content
// goes back as its summary text (reasoningInputItem): where earlier
// turns' reasoning goes back in a reasoning field on Chat Completions
// (WithReasoningReplay "reasoning", auto for Bedrock's bedrock-mantle.*
// hosts), never to OpenAI or Azure. gpt-oss on Mantle's /v1/responses
// streams its reasoning as reasoning_text with no encrypted content, and
// opencode's recorded tool loop sent every turn's back as
// {type: reasoning, id, summary: [{summary_text, text}], encrypted_content:
// null}, which Bedrock answered; left out, gpt-oss lost the reasoning of
// its tool-call turns, which it keeps until the final answer.
//
// DigitalOcean's serverless inference (inference.do-ai.run) gets the same
// on the Responses API only, without the item's id, when its reasoning
// replay is left to auto (its Chat Completions replay stays none): it
// serves open models through LiteLLM's hosted_vllm, whose stream (vLLM's)
// gives reasoning as reasoning_text with no encrypted content and item ids
// that response.completed renames (a bare 16-hex id streamed, rs_… at the
// end); opencode's recorded follow-up sent kimi-k2.6's tool-call
// reasoning back as {type: reasoning, summary: [{summary_text, text}],
// encrypted_content: null} with no id, and DigitalOcean answered
// (testdata/real_opencode_digitalocean_kimi_tool_loop_stream_1.next_request.json).
// Left out, the model lost the reasoning that led to its call. The
// OpenAI models it serves give encrypted content (asked for on every
// unstored reasoning request), which goes back as to OpenAI.
func (p *Provider) summaryReasoningBack() summaryBack {
	switch {
	case p.strictLimits():
		return summaryBackNone
	case p.replay == replayReasoningField:
		return summaryBackWithID
	case !p.replaySet && p.digitalOcean:
		return summaryBackNoID
	}
	return summaryBackNone
}

// summaryBack is how reasoning without encrypted content goes back on the
// Responses API as its summary text (Provider.summaryReasoningBack).
type summaryBack uint8

const (
	summaryBackNone   summaryBack = iota // not so (raw text, or left out)
	summaryBackWithID                    // with the item's id (Bedrock's Mantle)
	summaryBackNoID                      // without it (DigitalOcean)
)

// hostedMCPTool is an MCP server OpenAI calls itself: the Authorization
// header goes in its own field (the token, without "Bearer "), the other
// headers as headers; the gateway cannot ask the client for approvals, so
// none are required.
func hostedMCPTool(m provider.HostedMCP) respTool {
	t := respTool{Type: "mcp", ServerLabel: m.Label, ServerURL: m.URL, AllowedTools: m.AllowedTools, RequireApproval: "never"}
	for k, v := range m.Headers {
		if strings.EqualFold(k, "Authorization") {
			t.Authorization = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(v, "Bearer "), "bearer "))
			continue
		}
		if t.Headers == nil {
			t.Headers = map[string]string{}
		}
		t.Headers[k] = v
	}
	return t
}
