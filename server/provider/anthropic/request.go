package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// invalid is the error for a request this adapter cannot express.
func invalid(param, format string, args ...any) *provider.Error {
	return &provider.Error{
		Provider: providerName,
		Kind:     provider.KindInvalidRequest,
		Param:    param,
		Message:  fmt.Sprintf(format, args...),
	}
}

// buildRequest turns a normalized request into the JSON body, the
// anthropic-beta values to send, and warnings about what was adapted.
func (p *Provider) buildRequest(req *provider.Request, stream bool) ([]byte, []string, []string, error) {
	if req == nil {
		return nil, nil, nil, invalid("", "nil request")
	}
	if req.Model == "" {
		return nil, nil, nil, invalid("model", "model is required")
	}
	opts := req.Options
	if opts == nil {
		opts = &llmrelayv1.GenerationOptions{}
	}
	w := &messagesRequest{Model: req.Model, MaxTokens: p.defaultMaxTokens, Stream: stream}
	var warnings []string

	conv := req.Messages
	if req.DropSignatures {
		// The deployment refused a thinking block's signature as not its
		// own (another organization's, the Claude API's on Bedrock or
		// Vertex AI): every thinking and redacted_thinking block is left
		// out, as Anthropic allows for earlier turns ("you can omit
		// thinking blocks from previous turns"); a tool loop whose turn
		// then begins without one goes without thinking
		// (thinkingForTurn), as the API's own refusal of such a turn
		// advises ("To avoid this requirement, disable `thinking`").
		var w string
		if conv, w = provider.WithoutReasoning(conv, "anthropic"); w != "" {
			warnings = append(warnings, w)
		}
	}
	system, msgs, warns, err := convertMessages(conv, systemInConversation(req.Model), takesUnsignedThinking(p.baseURL, req.Model))
	if err != nil {
		return nil, nil, nil, err
	}
	warnings = append(warnings, warns...)
	w.System = system
	w.Messages = msgs

	if err := applyOptions(w, opts); err != nil {
		return nil, nil, nil, err
	}
	if len(req.Tools) > 0 {
		tools, toolWarns, err := convertTools(req.Tools)
		if err != nil {
			return nil, nil, nil, err
		}
		warnings = append(warnings, toolWarns...)
		w.Tools = tools
		w.ToolChoice, err = convertToolChoice(opts)
		if err != nil {
			return nil, nil, nil, err
		}
	} else if tc := opts.GetToolChoice(); tc.GetFunctionName() != "" || tc.GetMode() == llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED {
		return nil, nil, nil, invalid("options.tool_choice", "tool_choice requires tools, and the request has none")
	}

	var betas []string
	if po := req.ProviderOptions; po != nil {
		if a := po.GetAnthropic(); a != nil {
			if a.GetUserId() != "" {
				w.Metadata = &wireMetadata{UserID: a.GetUserId()}
			}
			betas = splitBetas(a.GetBetas())
		}
	}

	if usesFileIDs(req.Messages) {
		betas = append(betas, filesBeta)
	}
	if err := checkModelSampling(w, opts, req.Model); err != nil {
		return nil, nil, nil, err
	}
	thinkWarns, err := p.thinkingForTurn(w, req, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	warnings = append(warnings, thinkWarns...)

	if err := applyResponseFormat(w, req, &warnings); err != nil {
		return nil, nil, nil, err
	}
	if rf := opts.GetResponseFormat(); rf.GetStrict() && rf.GetType() == llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA && !req.NativeStructuredOutput {
		// The forced tool's input follows its schema as the model
		// manages: only output_config.format (structured_output: native)
		// constrains the answer.
		warnings = append(warnings, "options.response_format.strict not honoured: this model answers a JSON schema through a forced tool, which anthropic does not hold to the schema "+
			"(configure structured_output: native on models with structured outputs); the server still validates the answer")
	}

	body, err := json.Marshal(w)
	if err != nil {
		return nil, nil, nil, invalid("", "encode request: %v", err)
	}
	extra := provider.ExtraFields{Reserved: []string{"model", "stream"}}
	if opts.MaxTokens == nil {
		// The configured default_max_tokens (the API requires a value),
		// not the request's: extra_body may set its own.
		extra.Defaults = []string{"max_tokens"}
	}
	body, extraWarnings, err := provider.MergeExtra(body, req.ProviderOptions.GetExtraBody(), extra)
	if err != nil {
		return nil, nil, nil, invalid("provider_options.extra_body", "%v", err)
	}
	return body, betas, append(warnings, extraWarnings...), nil
}

// applyOptions maps the generation options. Options Anthropic has no
// equivalent for are an error rather than silently dropped (the server
// removes them first when the caller asked for ignore_invalid_options).
func applyOptions(w *messagesRequest, o *llmrelayv1.GenerationOptions) error {
	if o.MaxTokens != nil {
		if o.GetMaxTokens() <= 0 {
			return invalid("options.max_tokens", "max_tokens must be positive, got %d", o.GetMaxTokens())
		}
		w.MaxTokens = o.GetMaxTokens()
	}
	w.Temperature = o.Temperature
	w.TopP = o.TopP
	w.TopK = o.TopK
	for i, s := range o.GetStop() {
		if strings.TrimSpace(s) == "" {
			// The API's 400 "stop_sequences: each stop sequence must
			// contain non-whitespace" names its own field.
			return invalid(fmt.Sprintf("options.stop[%d]", i), "%q: anthropic takes only stop sequences with a non-whitespace character", s)
		}
	}
	w.StopSequences = o.GetStop()
	switch {
	case o.Seed != nil:
		return invalid("options.seed", "anthropic does not support seed")
	case o.PresencePenalty != nil:
		return invalid("options.presence_penalty", "anthropic does not support presence_penalty")
	case o.FrequencyPenalty != nil:
		return invalid("options.frequency_penalty", "anthropic does not support frequency_penalty")
	}
	// reasoning_effort: applyReasoning, by the model's generation, once
	// tools are set; response_format: applyResponseFormat, after thinking.
	return nil
}

// convertMessages splits system messages out into `system` and converts the
// rest, merging consecutive messages of the same Anthropic role. With
// inline (systemInConversation), a system message after the conversation
// began stays where it is, as a message of role "system", when the API
// takes it there: right after a user turn and before an assistant turn or
// at the end; consecutive ones are one message. One placed otherwise goes
// to the system prompt, as on every other model, with a warning.
func convertMessages(in []*llmrelayv1.Message, inline bool, unsigned unsignedThinking) (any, []wireMessage, []string, error) {
	var (
		systemBlocks []contentBlockParam
		out          []wireMessage
		warnings     []string
		pairs        = callPairs{answered: map[string]bool{}}
		// inlineAt are the request's indexes of the system messages kept
		// in the conversation, by their wire message.
		inlineAt = map[int][]int{}
	)
	for i, m := range in {
		if m == nil {
			return nil, nil, nil, invalid(fmt.Sprintf("messages[%d]", i), "message is null")
		}
		if m.GetName() != "" {
			warnings = append(warnings, fmt.Sprintf("messages[%d]: name %q not sent (anthropic has no message names)", i, m.GetName()))
		}
		var role string
		switch m.GetRole() {
		case llmrelayv1.Role_ROLE_SYSTEM:
			var blocks []contentBlockParam
			for j, part := range m.GetParts() {
				t, ok := part.GetKind().(*llmrelayv1.Part_Text)
				if !ok {
					return nil, nil, nil, invalid(fmt.Sprintf("messages[%d].parts[%d]", i, j), "system messages may only hold text")
				}
				if strings.TrimSpace(t.Text) != "" {
					blocks = append(blocks, contentBlockParam{Type: "text", Text: t.Text})
				}
			}
			n := len(out)
			switch {
			case n == 0:
				systemBlocks = append(systemBlocks, blocks...)
			case !inline:
				warnings = append(warnings, fmt.Sprintf("messages[%d]: a system message after the conversation began is sent in the system prompt, before every message (anthropic has no system role in messages on this model)", i))
				systemBlocks = append(systemBlocks, blocks...)
			case len(blocks) == 0:
			case out[n-1].Role == "system":
				out[n-1].Content = append(out[n-1].Content, blocks...)
				inlineAt[n-1] = append(inlineAt[n-1], i)
			case out[n-1].Role == "user":
				out = append(out, wireMessage{Role: "system", Content: blocks})
				inlineAt[n] = []int{i}
			default:
				warnings = append(warnings, fmt.Sprintf("messages[%d]: a system message after an assistant turn is sent in the system prompt, before every message (anthropic takes one in the conversation only right after a user turn)", i))
				systemBlocks = append(systemBlocks, blocks...)
			}
			continue
		case llmrelayv1.Role_ROLE_USER, llmrelayv1.Role_ROLE_TOOL:
			role = "user"
		case llmrelayv1.Role_ROLE_ASSISTANT:
			role = "assistant"
		default:
			return nil, nil, nil, invalid(fmt.Sprintf("messages[%d].role", i), "unsupported role %s", m.GetRole())
		}
		blocks, warns, err := convertParts(i, m, unsigned)
		if err != nil {
			return nil, nil, nil, err
		}
		warnings = append(warnings, warns...)
		if len(blocks) == 0 {
			warnings = append(warnings, fmt.Sprintf("messages[%d]: empty message not sent", i))
			continue
		}
		if err := pairs.add(i, m, role); err != nil {
			return nil, nil, nil, err
		}
		if n := len(out); n > 0 && out[n-1].Role == "system" && role != "assistant" {
			// A system message in the conversation must come before an
			// assistant turn: this one goes to the system prompt, and the
			// user turns around it are one.
			for _, at := range inlineAt[n-1] {
				warnings = append(warnings, fmt.Sprintf("messages[%d]: a system message followed by a user turn is sent in the system prompt, before every message (anthropic takes one in the conversation only before an assistant turn or at the end)", at))
			}
			systemBlocks = append(systemBlocks, out[n-1].Content...)
			delete(inlineAt, n-1)
			out = out[:n-1]
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	if err := pairs.unanswered(); err != nil {
		return nil, nil, nil, err
	}
	if err := checkPrefill(in, out); err != nil {
		return nil, nil, nil, err
	}
	if len(out) == 0 {
		return nil, nil, nil, invalid("messages", "the request needs at least one user or assistant message")
	}
	// Anthropic requires tool_result blocks first in a user turn; merging a
	// user message before a tool message could have put text first.
	for i := range out {
		if out[i].Role == "user" {
			slices.SortStableFunc(out[i].Content, func(a, b contentBlockParam) int {
				return boolRank(a.Type != "tool_result") - boolRank(b.Type != "tool_result")
			})
		}
	}
	var system any
	switch len(systemBlocks) {
	case 0:
	case 1:
		system = systemBlocks[0].Text
	default:
		system = systemBlocks
	}
	return system, out, warnings, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// imageBlock is an image block, and the warning when the image asks for a
// detail level Anthropic has no place for.
func imageBlock(param string, img *llmrelayv1.Image) (contentBlockParam, string, error) {
	b, err := convertImage(param, img)
	if err != nil {
		return contentBlockParam{}, "", err
	}
	if d := img.GetDetail(); d == llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW || d == llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH {
		return b, fmt.Sprintf("%s.image.detail %s not sent (anthropic has no image detail level: it sizes images itself)", param, d), nil
	}
	return b, "", nil
}

// convertParts converts one user, assistant or tool message's parts.
func convertParts(i int, m *llmrelayv1.Message, unsigned unsignedThinking) ([]contentBlockParam, []string, error) {
	var (
		blocks   []contentBlockParam
		warnings []string
	)
	for j, part := range m.GetParts() {
		param := fmt.Sprintf("messages[%d].parts[%d]", i, j)
		switch k := part.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			// Empty and whitespace-only text says nothing, and Anthropic
			// refuses it ("text content blocks must contain non-whitespace
			// text") when a message has no other text: a web search
			// answer whose only text block was "\n", sent back, wedged
			// every later turn (LibreChat-AI/agents#124).
			if strings.TrimSpace(k.Text) != "" {
				blocks = append(blocks, contentBlockParam{Type: "text", Text: k.Text})
			}
		case *llmrelayv1.Part_Refusal:
			// A refusal in the history is what the assistant said.
			if strings.TrimSpace(k.Refusal) != "" {
				blocks = append(blocks, contentBlockParam{Type: "text", Text: k.Refusal})
			}
		case *llmrelayv1.Part_Image:
			b, warning, err := imageBlock(param, k.Image)
			if err != nil {
				return nil, nil, err
			}
			if warning != "" {
				warnings = append(warnings, warning)
			}
			blocks = append(blocks, b)
		case *llmrelayv1.Part_File:
			if m.GetRole() != llmrelayv1.Role_ROLE_USER {
				return nil, nil, invalid(param+".file", "files belong in user messages")
			}
			b, err := convertFile(param+".file", k.File)
			if err != nil {
				return nil, nil, err
			}
			blocks = append(blocks, b)
		case *llmrelayv1.Part_ToolCall:
			if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
				return nil, nil, invalid(param, "tool calls belong in assistant messages")
			}
			tc := k.ToolCall
			if tc.GetCallId() == "" || tc.GetName() == "" {
				return nil, nil, invalid(param, "tool call needs a call_id and a name")
			}
			input, ok := toolInput(tc.GetArguments())
			if !ok {
				warnings = append(warnings, fmt.Sprintf("%s: tool call %s arguments are not a JSON object; sent input {}", param, tc.GetCallId()))
			}
			if tc.GetSignature() != "" {
				warnings = append(warnings, fmt.Sprintf("%s: tool call %s signature not sent (anthropic has no tool call signatures)", param, tc.GetCallId()))
			}
			blocks = append(blocks, contentBlockParam{Type: "tool_use", ID: tc.GetCallId(), Name: tc.GetName(), Input: input})
		case *llmrelayv1.Part_Reasoning:
			if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
				return nil, nil, invalid(param, "reasoning belongs in assistant messages")
			}
			b, warn := reasoningBlock(k.Reasoning, unsigned)
			if warn != "" {
				warnings = append(warnings, param+": "+warn)
				continue
			}
			blocks = append(blocks, b)
		case *llmrelayv1.Part_ProviderItem:
			// A block of an earlier answer (a server tool's call or
			// result, a compaction): back as sent, in its place. A turn
			// paused by pause_turn continues only with them.
			if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
				return nil, nil, invalid(param+".provider_item", "provider items belong in assistant messages")
			}
			it := k.ProviderItem
			if !isItemBlock(it.GetType()) {
				warnings = append(warnings, provider.DroppedItemWarning(i, j, it, "the Anthropic Messages format"))
				continue
			}
			if !json.Valid([]byte(it.GetJson())) {
				return nil, nil, invalid(param+".provider_item.json", "not JSON")
			}
			blocks = append(blocks, contentBlockParam{Type: it.GetType(), raw: json.RawMessage(it.GetJson())})
		case *llmrelayv1.Part_ToolResult:
			tr := k.ToolResult
			if tr.GetCallId() == "" {
				return nil, nil, invalid(param, "tool result needs the call_id of its tool call")
			}
			b := contentBlockParam{Type: "tool_result", ToolUseID: tr.GetCallId(), IsError: tr.GetIsError()}
			if len(tr.GetParts()) > 0 {
				blocks2, warns, err := resultBlocks(param, tr)
				if err != nil {
					return nil, nil, err
				}
				warnings = append(warnings, warns...)
				if len(blocks2) > 0 {
					b.ContentBlocks = blocks2
					blocks = append(blocks, b)
					continue
				}
			}
			if c := tr.GetContent(); c != "" {
				b.Content = &c
			} else if tr.GetIsError() {
				// The API refuses an error result without content
				// ("content cannot be empty if `is_error` is true",
				// bytedance/trae-agent#230): the model is told there was
				// no message instead.
				c := emptyErrorResult
				b.Content = &c
				warnings = append(warnings, fmt.Sprintf("%s: an error tool result without content was sent as %q (Anthropic refuses an empty one)", param, emptyErrorResult))
			}
			blocks = append(blocks, b)
		case nil:
			return nil, nil, invalid(param, "empty part")
		default:
			return nil, nil, invalid(param, "unsupported part type %T", k)
		}
	}
	return blocks, warnings, nil
}

// resultBlocks are a tool result with parts (ToolResult.parts) as the
// tool_result's content blocks: its content as the first text block, then
// text, image and document blocks in order (the Messages API's
// ToolResultBlockParam content: TextBlockParam | ImageBlockParam |
// SearchResultBlockParam | DocumentBlockParam, anthropics/anthropic-sdk-python
// src/anthropic/types/tool_result_block_param.py). Empty and
// whitespace-only text is left out, as in a message (the API refuses an
// empty text block).
func resultBlocks(param string, tr *llmrelayv1.ToolResult) ([]contentBlockParam, []string, error) {
	var (
		out      []contentBlockParam
		warnings []string
	)
	if c := tr.GetContent(); strings.TrimSpace(c) != "" {
		out = append(out, contentBlockParam{Type: "text", Text: c})
	}
	for n, p := range tr.GetParts() {
		where := fmt.Sprintf("%s.tool_result.parts[%d]", param, n)
		switch k := p.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			if strings.TrimSpace(k.Text) != "" {
				out = append(out, contentBlockParam{Type: "text", Text: k.Text})
			}
		case *llmrelayv1.Part_Image:
			b, warning, err := imageBlock(where, k.Image)
			if err != nil {
				return nil, nil, err
			}
			if warning != "" {
				warnings = append(warnings, warning)
			}
			out = append(out, b)
		case *llmrelayv1.Part_File:
			b, err := convertFile(where+".file", k.File)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, b)
		default:
			return nil, nil, invalid(where, "a tool result's parts are text, image or file")
		}
	}
	return out, warnings, nil
}

// emptyErrorResult is the content of an error tool result that has none.
const emptyErrorResult = "the tool reported an error without a message"

// reasoningBlock is the block a Reasoning part goes back as, in its
// position in the assistant turn: a redacted part as redacted_thinking
// with its signature as data, any other as thinking with its text and
// signature. A part the API cannot take (it verifies every signature) is
// not sent, and warn says why: one without a signature, and one with an id
// (reasoning items with ids come from another provider, OpenAI Responses,
// whose encrypted content Anthropic would reject). To an endpoint that
// writes and wants back thinking without a signature
// (takesUnsignedThinking) an unsigned part goes back as a thinking block
// without one, or with an empty one where that endpoint's clients send it
// so.
func reasoningBlock(r *llmrelayv1.Reasoning, unsigned unsignedThinking) (b contentBlockParam, warn string) {
	switch {
	case r.GetId() != "":
		return b, fmt.Sprintf("reasoning item %q not sent (an id marks another provider's reasoning; anthropic thinking blocks have none)", r.GetId())
	case r.GetSignature() == "" && r.GetRedacted():
		return b, "redacted reasoning without data (signature) not sent"
	case r.GetSignature() == "" && unsigned == unsignedOmitted:
		text := r.GetText()
		return contentBlockParam{Type: "thinking", Thinking: &text}, ""
	case r.GetSignature() == "" && unsigned == unsignedEmpty:
		raw, err := json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{"thinking", r.GetText(), ""})
		if err != nil {
			// Strings always encode.
			return b, fmt.Sprintf("reasoning without a signature not sent (%v)", err)
		}
		return contentBlockParam{Type: "thinking", raw: raw}, ""
	case r.GetSignature() == "":
		return b, "reasoning without a signature not sent (anthropic accepts only signed thinking blocks)"
	case r.GetRedacted():
		return contentBlockParam{Type: "redacted_thinking", Data: r.GetSignature()}, ""
	}
	text := r.GetText()
	return contentBlockParam{Type: "thinking", Thinking: &text, Signature: r.GetSignature()}, ""
}

// toolInput is the tool_use `input` for stored arguments: the arguments
// JSON object compacted (key order kept), `{}` when they are empty, and `{}`
// with ok=false when they are not a JSON object (the API accepts only an
// object; the caller's history still holds the original text).
func toolInput(args string) (json.RawMessage, bool) {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}"), true
	}
	if !fold.ValidArguments(args) {
		return json.RawMessage("{}"), false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(args)); err != nil {
		return json.RawMessage("{}"), false
	}
	return buf.Bytes(), true
}

func convertImage(param string, img *llmrelayv1.Image) (contentBlockParam, error) {
	if img == nil {
		return contentBlockParam{}, invalid(param, "empty image")
	}
	switch src := img.GetSource().(type) {
	case *llmrelayv1.Image_Data:
		if img.GetMimeType() == "" {
			return contentBlockParam{}, invalid(param+".image.mime_type", "mime_type is required with inline image data")
		}
		if len(src.Data) == 0 {
			return contentBlockParam{}, invalid(param+".image.data", "image data is empty")
		}
		mediaType, ok := imageMediaType(provider.ImageMediaType(img))
		if !ok {
			return contentBlockParam{}, invalid(param+".image.mime_type", "%s", imageTypeReason(img.GetMimeType()))
		}
		return contentBlockParam{Type: "image", Source: &imageSource{
			Type: "base64", MediaType: mediaType, Data: base64.StdEncoding.EncodeToString(src.Data),
		}}, nil
	case *llmrelayv1.Image_Url:
		u := src.Url
		lower := strings.ToLower(u)
		switch {
		case strings.HasPrefix(lower, "data:"):
			mediaType, data, err := parseDataURL(u)
			if err != nil {
				return contentBlockParam{}, invalid(param+".image.url", "%v", err)
			}
			sent, ok := imageMediaType(mediaType)
			if !ok {
				return contentBlockParam{}, invalid(param+".image.url", "data: URL of %s", imageTypeReason(mediaType))
			}
			return contentBlockParam{Type: "image", Source: &imageSource{Type: "base64", MediaType: sent, Data: data}}, nil
		case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
			return contentBlockParam{Type: "image", Source: &imageSource{Type: "url", URL: u}}, nil
		default:
			return contentBlockParam{}, invalid(param+".image.url", "image URL must be http(s) or a data: URL")
		}
	default:
		return contentBlockParam{}, invalid(param, "image has neither url nor data")
	}
}

// imageMediaTypes are the only media types the Messages API takes for an
// inline (base64) image: its Base64ImageSource.media_type is the enum
// "image/jpeg", "image/png", "image/gif", "image/webp" (the Python SDK's
// Base64ImageSourceParam), and any other value is a 400 naming the wire path
// ("messages.0.content.1.image.source.base64.media_type: Input should be
// 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"). image/jpg, the
// common misspelling of image/jpeg, is sent as image/jpeg.
var imageMediaTypes = map[string]string{
	"image/jpeg": "image/jpeg", "image/jpg": "image/jpeg", "image/png": "image/png",
	"image/gif": "image/gif", "image/webp": "image/webp",
}

// imageMediaType is the media type to send for an inline image of type mt
// (compared without case), and whether Anthropic takes it.
func imageMediaType(mt string) (string, bool) {
	sent, ok := imageMediaTypes[strings.ToLower(strings.TrimSpace(mt))]
	return sent, ok
}

func imageTypeReason(mt string) string {
	return fmt.Sprintf("%q: anthropic takes inline images as image/jpeg, image/png, image/gif or image/webp only: convert the image", mt)
}

// filesBeta is the anthropic-beta value a document by file_id needs.
const filesBeta = "files-api-2025-04-14"

// convertFile builds a document block: a PDF as base64, by URL or by
// uploaded file id; plain text as a text source (the text itself) or by
// file id. Audio and other types are refused: Anthropic has no block for
// them.
func convertFile(param string, f *llmrelayv1.File) (contentBlockParam, error) {
	if field, reason := provider.CheckFile("anthropic-messages", f); reason != "" {
		if field != "" {
			param += "." + field
		}
		return contentBlockParam{}, invalid(param, "%s", reason)
	}
	var src imageSource
	switch s := f.GetSource().(type) {
	case *llmrelayv1.File_Data:
		if provider.MediaType(f) == "text/plain" {
			if !utf8.Valid(s.Data) {
				return contentBlockParam{}, invalid(param+".data", "text/plain data is not UTF-8 text")
			}
			src = imageSource{Type: "text", MediaType: "text/plain", Data: string(s.Data)}
		} else {
			src = imageSource{Type: "base64", MediaType: "application/pdf", Data: base64.StdEncoding.EncodeToString(s.Data)}
		}
	case *llmrelayv1.File_Url:
		src = imageSource{Type: "url", URL: s.Url}
	case *llmrelayv1.File_FileId:
		src = imageSource{Type: "file", FileID: s.FileId}
	default:
		return contentBlockParam{}, invalid(param, "a file needs a url, data or file_id")
	}
	// The filename is the document's title, which the model reads and
	// citations name (document_title), as the AI SDK sends it.
	return contentBlockParam{Type: "document", Source: &src, Title: f.GetFilename()}, nil
}

// usesFileIDs reports whether a message sends a file by id (the Files API
// beta header is then required).
func usesFileIDs(msgs []*llmrelayv1.Message) bool {
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			if _, ok := p.GetFile().GetSource().(*llmrelayv1.File_FileId); ok {
				return true
			}
			for _, rp := range p.GetToolResult().GetParts() {
				if _, ok := rp.GetFile().GetSource().(*llmrelayv1.File_FileId); ok {
					return true
				}
			}
		}
	}
	return false
}

// parseDataURL splits data:<media type>;base64,<data>. Anthropic takes
// base64 only.
func parseDataURL(u string) (mediaType, data string, err error) {
	head, payload, ok := strings.Cut(u[len("data:"):], ",")
	if !ok {
		return "", "", fmt.Errorf("malformed data: URL (no comma)")
	}
	params := strings.Split(head, ";")
	mediaType = strings.TrimSpace(params[0])
	isBase64 := false
	for _, p := range params[1:] {
		if strings.EqualFold(strings.TrimSpace(p), "base64") {
			isBase64 = true
		}
	}
	if !isBase64 {
		return "", "", fmt.Errorf("data: URL must be base64-encoded")
	}
	if mediaType == "" {
		return "", "", fmt.Errorf("data: URL has no media type")
	}
	if payload == "" {
		return "", "", fmt.Errorf("data: URL has no data")
	}
	return mediaType, payload, nil
}

// toolNameRE is the Messages API's rule for a tool name, as its 400 says:
// "tools.0.custom.name: String should match pattern
// '^[a-zA-Z0-9_-]{1,128}$'" (no dots or colons, which the gateway's own
// rule allows for Gemini).
var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

func convertTools(in []*llmrelayv1.Tool) ([]wireTool, []string, error) {
	out := make([]wireTool, 0, len(in))
	var warnings []string
	for i, t := range in {
		if !toolNameRE.MatchString(t.GetName()) {
			return nil, nil, invalid(fmt.Sprintf("tools[%d].name", i), "%q: anthropic takes 1-128 letters, digits, _ and - only", t.GetName())
		}
		schema := json.RawMessage(`{"type":"object"}`)
		if t.GetParameters() != "" {
			raw, err := provider.SchemaJSON(t.GetParameters())
			if err != nil {
				return nil, nil, invalid(fmt.Sprintf("tools[%d].parameters", i), "schema: %v", err)
			}
			schema = provider.TypedObjectSchema(raw)
		}
		if t.GetStrict() {
			// Strict tool use shares structured outputs' schema rules:
			// every object closed (see applyResponseFormat).
			var warns []string
			schema, warns = strictSchema(schema, fmt.Sprintf("tools[%d].parameters", i), "check the arguments in the tool")
			warnings = append(warnings, warns...)
		}
		out = append(out, wireTool{Name: t.GetName(), Description: t.GetDescription(), InputSchema: schema, Strict: t.GetStrict()})
	}
	return out, warnings, nil
}

// convertToolChoice maps tool_choice and parallel_tool_calls (Anthropic
// puts disable_parallel_tool_use inside tool_choice).
func convertToolChoice(o *llmrelayv1.GenerationOptions) (*wireToolChoice, error) {
	disableParallel := o.ParallelToolCalls != nil && !o.GetParallelToolCalls()
	var tc *wireToolChoice
	switch c := o.GetToolChoice().GetChoice().(type) {
	case *llmrelayv1.ToolChoice_FunctionName:
		if c.FunctionName == "" {
			return nil, invalid("options.tool_choice.function_name", "empty function name")
		}
		tc = &wireToolChoice{Type: "tool", Name: c.FunctionName}
	case *llmrelayv1.ToolChoice_Mode:
		switch c.Mode {
		case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
			tc = &wireToolChoice{Type: "auto"}
		case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
			tc = &wireToolChoice{Type: "any"}
		case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
			// disable_parallel_tool_use is not allowed with none.
			return &wireToolChoice{Type: "none"}, nil
		}
	}
	if disableParallel {
		if tc == nil {
			tc = &wireToolChoice{Type: "auto"}
		}
		tc.DisableParallelToolUse = true
	}
	return tc, nil
}

// systemInConversation reports whether model takes system messages inside
// the conversation (role "system" in messages), with the API's placement
// rules (right after a user turn, before an assistant turn or at the end,
// never two in a row): Claude Opus 4.8 and later Opus, Sonnet 5 and later,
// Haiku 5.5 and later, Fable and Mythos 5 and later. Anthropic's
// "Mid-conversation system messages" page named Opus 4.8 when it came;
// live answers are recorded on Opus 4.8 and Fable 5
// (real_pyd_anthropic_lazy_advertisement_live_*,
// real_pyd_anthropic_fable_5_lazy_advertisement_live_*) and on Sonnet 5.5
// (real_do_system_update_sonnet55_stream, through DigitalOcean's
// Messages endpoint), and LangChain's model profiles declare it for
// Opus 4.8, Opus 5 and 5.5, Sonnet 5 and 5.5, Haiku 5.5, Fable 5 and 5.1,
// Mythos 5 and 5.1 (@langchain/anthropic 1.5.13). Versions after those
// known are taken to keep it, as the models' other rules are
// (fixedSampling, noForcedTool); the models before refuse the role. Ids
// written for Vertex AI (claude-opus-4-8@…) or Bedrock (anthropic.…,
// ARNs), where the feature is not offered, keep the system prompt, and so
// does an id without a version (claude-mythos-preview).
func systemInConversation(model string) bool {
	s := strings.ToLower(model)
	if strings.Contains(s, "@") || strings.Contains(s, "anthropic.") || strings.HasPrefix(s, "arn:") {
		return false
	}
	m := parseClaude(model)
	switch m.family {
	case "opus":
		return m.major > 4 || (m.major == 4 && m.minor >= 8)
	case "sonnet", "fable", "mythos":
		return m.major >= 5
	case "haiku":
		return m.major > 5 || (m.major == 5 && m.minor >= 5)
	}
	return false
}

// unsignedThinking is how an endpoint takes back the thinking blocks it
// wrote without a signature (takesUnsignedThinking).
type unsignedThinking int

const (
	// unsignedRefused: not at all (Anthropic, which verifies every
	// signature; proxies in front of it): such a part is left out.
	unsignedRefused unsignedThinking = iota
	// unsignedOmitted: as a thinking block without a signature field.
	unsignedOmitted
	// unsignedEmpty: as a thinking block with an empty signature.
	unsignedEmpty
)

// takesUnsignedThinking reports whether the endpoint at base writes
// thinking blocks without a signature for model and wants them back, and
// in which form:
//   - Kimi's Anthropic-compatible endpoints, the coding one
//     (api.kimi.com/coding) and Moonshot's (api.moonshot.ai/anthropic,
//     api.moonshot.cn/anthropic): Kimi thinks server-side and refused a
//     tool-call turn sent without its thinking ("thinking is enabled but
//     reasoning_content is missing in assistant tool call message at index
//     N", NousResearch/hermes-agent#13826, #14018); it takes the unsigned
//     block back (hermes-agent#49143, against the live endpoint) "only
//     when it is sent with an empty signature" (anomalyco/opencode#44713,
//     for Kimi coding and Moonshot), the form its own answers carry
//     (hermes-agent#73609 keeps their signature "" for the replay);
//   - MiniMax's (api.minimax.io/anthropic, api.minimaxi.com/anthropic):
//     it takes unsigned thinking back without a signature, and a tool-call
//     turn replayed without its thinking makes the follow-up stop thinking
//     (hermes-agent#75779, curl against the live endpoint, July 2026);
//   - the Vercel AI Gateway's Messages endpoint (ai-gateway.vercel.sh)
//     for a model that is not Claude: it writes such a model's thinking
//     unsigned (DeepSeek's, served by Baseten) and took it back with an
//     empty signature in the tool loop's next request
//     (testdata/real_vercelgw_deepseek_tool_stream_*, opencode's
//     recording); a Claude model's thinking it relays signed, and
//     Anthropic behind it verifies every signature.
//
// Anthropic verifies every signature, and so does any proxy in front of
// it: every other base URL gets signed blocks only.
// isMiniMax reports whether base is MiniMax's Anthropic-compatible
// endpoint (api.minimax.io, api.minimaxi.com).
func isMiniMax(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	return host == "api.minimax.io" || host == "api.minimaxi.com"
}

func takesUnsignedThinking(base, model string) unsignedThinking {
	u, err := url.Parse(base)
	if err != nil {
		return unsignedRefused
	}
	switch host := strings.ToLower(u.Hostname()); host {
	case "api.kimi.com", "api.moonshot.ai", "api.moonshot.cn":
		return unsignedEmpty
	case "api.minimax.io", "api.minimaxi.com":
		return unsignedOmitted
	case "ai-gateway.vercel.sh":
		if !strings.Contains(strings.ToLower(model), "claude") {
			return unsignedEmpty
		}
	}
	return unsignedRefused
}
