package ollama

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// builtRequest is a /api/chat body ready to send.
type builtRequest struct {
	body []byte
	// salt is a short hash of the conversation sent; tool call ids made
	// for this answer are derived from it (see callID).
	salt string
	// warnings are request options Ollama cannot honour, for the meta.
	warnings []string
	// window is what the answer's counts are checked against.
	window window
}

// noSilentCut is the value of /api/chat's "truncate" and "shift" and
// /api/embed's "truncate" unless the caller sets them in extra_body. Both
// default to true in Ollama: "truncate" drops the oldest messages, then
// the middle of the prompt, until it fits num_ctx (/api/embed: the end of
// each input), and "shift" discards half of the context when the answer
// fills it and goes on generating; the answer looks normal either way. Sent
// false, an over-long prompt is a 400 "the input length exceeds the
// context length" (a context-length error) and an answer that fills the
// window ends with done_reason "length". Ollama versions without the
// fields ignore them (and still cut: window's checks then warn).
func noSilentCut() *bool { f := false; return &f }

// window is what the request told Ollama about the context window, read
// from the body sent (so that extra_body's options count too).
type window struct {
	numCtx     int64 // 0: the model's default, unknown here
	numPredict int64 // 0 or negative: unbounded (Ollama's default -1)
	// format: the body has a "format" (JSON mode or a schema), under
	// which a thinking model's eval_count leaves the thinking out (see
	// formatCountWarning).
	format bool
}

// readWindow reads num_ctx and num_predict from a /api/chat body.
func readWindow(body []byte) window {
	var b struct {
		Options struct {
			NumCtx     flexInt `json:"num_ctx"`
			NumPredict flexInt `json:"num_predict"`
		} `json:"options"`
		Format json.RawMessage `json:"format"`
	}
	if json.Unmarshal(body, &b) != nil {
		return window{}
	}
	return window{numCtx: b.Options.NumCtx.Value, numPredict: b.Options.NumPredict.Value, format: hasFormat(b.Format)}
}

// hasFormat reports whether a body's "format" value is set: anything but
// absent or null. Ollama's ChatHandler tests req.Format != nil, so even
// "format": "" (no constraint) takes the two-pass path.
func hasFormat(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// warnings says where an answer's counts show the context window cut it:
// a prompt of num_ctx tokens (Ollama kept num_ctx of a longer one: an
// Ollama without "truncate", or truncate asked for), and a "length" end
// that max_tokens did not cause (the window filled: shift false).
func (w window) warnings(m metrics, doneReason string) []string {
	var out []string
	if w.numCtx > 0 && m.PromptEvalCount.Present && m.PromptEvalCount.Value >= w.numCtx {
		out = append(out, fmt.Sprintf("the prompt took %d tokens, all of num_ctx %d: Ollama most likely cut it to fit the context window", m.PromptEvalCount.Value, w.numCtx))
	}
	if doneReason == "length" && (w.numPredict <= 0 || (m.EvalCount.Present && m.EvalCount.Value < w.numPredict)) {
		msg := "the answer ended at the context window, not at max_tokens"
		if w.numCtx > 0 {
			msg += fmt.Sprintf(" (num_ctx %d)", w.numCtx)
		}
		out = append(out, msg+": raise num_ctx for a longer answer")
	}
	return out
}

// formatCountWarning says when eval_count leaves the thinking out: with a
// format set, a local Ollama (ollama/ollama server/routes.go, ChatHandler's
// structuredOutputsState) lets a thinking model think unconstrained, stops
// it when the content starts, and runs it again with the thinking in the
// prompt and the format applied; the done line's counts are the second
// run's only, so the thinking's tokens are in neither eval_count nor, where
// the template drops them, prompt_eval_count. ollama.com counts the whole
// answer; its done line has no load_duration, which a local runner always
// sends, so only a local runner's counts are warned about. thought and
// answered: the answer has thinking and content (the second run happened).
// "" otherwise.
func (w window) formatCountWarning(m metrics, thought, answered bool) string {
	if !w.format || !thought || !answered || !m.EvalCount.Present || !m.LoadDuration.Present {
		return ""
	}
	return fmt.Sprintf("eval_count %d leaves out the thinking: with a format set, Ollama runs a thinking model twice (the thinking, then the constrained answer) and counts only the second run; output tokens are understated", m.EvalCount.Value)
}

func invalidRequest(param, format string, args ...any) *provider.Error {
	return &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

// buildChatRequest translates a normalized request into an /api/chat body.
func buildChatRequest(req *provider.Request, stream bool) (*builtRequest, error) {
	if req == nil {
		return nil, invalidRequest("", "nil request")
	}
	if req.Model == "" {
		return nil, invalidRequest("model", "model is required")
	}
	var warnings []string
	msgs, w, err := buildMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, w...)

	out := chatRequest{Model: req.Model, Messages: msgs, Stream: stream}
	opts := req.Options
	if opts == nil {
		opts = &llmrelayv1.GenerationOptions{}
	}
	tools, w, err := buildTools(req.Tools, opts)
	if err != nil {
		return nil, err
	}
	out.Tools = tools
	warnings = append(warnings, w...)

	wo := &wireOptions{
		Temperature: opts.Temperature, TopP: opts.TopP, TopK: opts.TopK, NumPredict: opts.MaxTokens,
		Stop: opts.Stop, Seed: opts.Seed, PresencePenalty: opts.PresencePenalty, FrequencyPenalty: opts.FrequencyPenalty,
	}
	if opts.ParallelToolCalls != nil && !*opts.ParallelToolCalls {
		warnings = append(warnings, "parallel_tool_calls=false is not supported by Ollama; ignored")
	}
	if out.Format, err = buildFormat(opts.ResponseFormat); err != nil {
		return nil, err
	}
	var thinkWarn string
	out.Think, thinkWarn = thinkFromEffort(opts.ReasoningEffort, req.Model)
	out.Truncate, out.Shift = noSilentCut(), noSilentCut()

	var extra string
	if po := req.ProviderOptions; po != nil {
		extra = po.ExtraBody
		if oo := po.GetOllama(); oo != nil {
			wo.NumCtx = oo.NumCtx
			wo.RepeatPenalty = oo.RepeatPenalty
			if out.KeepAlive, err = formatKeepAlive(oo.KeepAlive); err != nil {
				return nil, err
			}
			if oo.Think != nil {
				out.Think, thinkWarn = json.RawMessage(fmt.Sprint(*oo.Think)), ""
				if !*oo.Think && levelThinker(req.Model) {
					thinkWarn = "provider_options.ollama.think=false: Ollama ignores it for gpt-oss, which always thinks (set reasoning_effort low for the least)"
				}
			}
		}
	}
	if thinkWarn != "" {
		warnings = append(warnings, thinkWarn)
	}
	if !wo.empty() {
		out.Options = wo
	}

	msgJSON, err := marshal(out.Messages)
	if err != nil {
		return nil, invalidRequest("messages", "encode messages: %v", err)
	}
	sum := sha256.Sum256(msgJSON)
	body, err := marshal(out)
	if err != nil {
		return nil, invalidRequest("", "encode request: %v", err)
	}
	win := window{format: hasFormat(out.Format)}
	if wo.NumCtx != nil {
		win.numCtx = int64(*wo.NumCtx)
	}
	if wo.NumPredict != nil {
		win.numPredict = int64(*wo.NumPredict)
	}
	if extra != "" {
		body, w, err = mergeExtraBody(body, extra)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, w...)
		win = readWindow(body)
	}
	return &builtRequest{body: body, salt: hex.EncodeToString(sum[:8]), warnings: warnings, window: win}, nil
}

// buildMessages maps the conversation. Text and refusal parts become the
// message content (joined with "\n"), images go to images (base64; Ollama
// renders them before the text, so text interleaved with images is
// warned), tool
// calls to tool_calls, and each tool result becomes its own "tool" message
// with tool_name taken from the part or looked up by call_id among earlier
// assistant tool calls. An assistant message's reasoning parts become its
// thinking (joined with "\n\n"): Ollama has one thinking text per message,
// which its templates render before the content, so the parts' position
// among the other parts cannot be kept. Ollama has no place for reasoning
// signatures or tool call signatures: they are dropped with a warning, and
// a reasoning part without text (redacted) is dropped with a warning.
func buildMessages(in []*llmrelayv1.Message) ([]wireMessage, []string, error) {
	var out []wireMessage
	var warnings []string
	names := map[string]string{} // call_id -> function name
	for i, m := range in {
		if m == nil {
			return nil, nil, invalidRequest(fmt.Sprintf("messages[%d]", i), "message %d is null", i)
		}
		role, ok := roleNames[m.Role]
		if !ok {
			return nil, nil, invalidRequest(fmt.Sprintf("messages[%d].role", i), "message %d has no supported role (%s)", i, m.Role)
		}
		if m.Name != "" {
			warnings = append(warnings, fmt.Sprintf("messages[%d]: name is not supported by Ollama; dropped", i))
		}
		msg := wireMessage{Role: role}
		var texts, thinking []string
		var results []wireMessage
		// Ollama puts a message's images before its text (server/prompt.go
		// chatPrompt prefixes an [img-N] tag per image to the content):
		// text interleaved with images (text, image, text or image, text,
		// image) loses which text goes with which image, warned once a
		// message; text then images, or images then text, keeps its sense.
		var interleave mixOrder
		for j, p := range m.Parts {
			where := fmt.Sprintf("messages[%d].parts[%d]", i, j)
			switch k := p.GetKind().(type) {
			case *llmrelayv1.Part_Text:
				if k.Text != "" && interleave.add(partText) {
					warnings = append(warnings, interleaveWarning(where))
				}
				texts = append(texts, k.Text)
			case *llmrelayv1.Part_Refusal:
				if k.Refusal != "" && interleave.add(partText) {
					warnings = append(warnings, interleaveWarning(where))
				}
				texts = append(texts, k.Refusal)
			case *llmrelayv1.Part_Image:
				b64, err := imageBase64(k.Image, where)
				if err != nil {
					return nil, nil, err
				}
				if d := k.Image.GetDetail(); d == llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW || d == llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH {
					warnings = append(warnings, fmt.Sprintf("%s.image.detail %s not sent (Ollama has no image detail level)", where, d))
				}
				if interleave.add(partImage) {
					warnings = append(warnings, interleaveWarning(where))
				}
				msg.Images = append(msg.Images, b64)
			case *llmrelayv1.Part_File:
				// The server refuses file parts first (no ollama format has the
				// documents or audio capability); never dropped here either.
				return nil, nil, invalidRequest(where+".file", "%s: Ollama's chat API takes no document or audio input", where)
			case *llmrelayv1.Part_ToolCall:
				if m.Role != llmrelayv1.Role_ROLE_ASSISTANT {
					return nil, nil, invalidRequest(where, "%s: tool calls are only allowed in assistant messages", where)
				}
				tc := k.ToolCall
				if tc == nil || tc.Name == "" {
					return nil, nil, invalidRequest(where, "%s: tool call without a name", where)
				}
				args, ok := objectJSON(tc.Arguments)
				if !ok {
					warnings = append(warnings, fmt.Sprintf("%s: tool call %q arguments are not a JSON object; sent {} (Ollama needs an object)", where, tc.CallId))
				}
				if tc.Signature != "" {
					warnings = append(warnings, fmt.Sprintf("%s: tool call %q signature is not supported by Ollama; dropped", where, tc.CallId))
				}
				if tc.CallId != "" {
					names[tc.CallId] = tc.Name
				}
				msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: tc.CallId, Function: wireToolCallFunc{
					Index: len(msg.ToolCalls), Name: tc.Name, Arguments: args,
				}})
			case *llmrelayv1.Part_Reasoning:
				if m.Role != llmrelayv1.Role_ROLE_ASSISTANT {
					return nil, nil, invalidRequest(where, "%s: reasoning is only allowed in assistant messages", where)
				}
				r := k.Reasoning
				if r.GetText() == "" {
					if r.GetSignature() != "" || r.GetRedacted() {
						warnings = append(warnings, fmt.Sprintf("%s: reasoning without text (redacted or signature only) cannot be sent to Ollama; dropped", where))
					}
					continue
				}
				if r.Signature != "" {
					warnings = append(warnings, fmt.Sprintf("%s: reasoning signature is not supported by Ollama; sent the text only", where))
				}
				thinking = append(thinking, r.Text)
			case *llmrelayv1.Part_ProviderItem:
				warnings = append(warnings, provider.DroppedItemWarning(i, j, k.ProviderItem, "Ollama's chat API"))
			case *llmrelayv1.Part_ToolResult:
				tr := k.ToolResult
				if tr == nil {
					return nil, nil, invalidRequest(where, "%s: empty tool result", where)
				}
				name := tr.Name
				if name == "" {
					name = names[tr.CallId]
				}
				if name == "" {
					warnings = append(warnings, fmt.Sprintf("%s: no tool call with call_id %q precedes this result; sent without tool_name", where, tr.CallId))
				}
				content := provider.ToolResultText(tr)
				if tr.IsError {
					content = "Error: " + content
				}
				res := wireMessage{Role: "tool", Content: content, ToolName: name, ToolCallID: tr.CallId}
				// A result's images go in the tool message's images:
				// Ollama's prompt builder takes a message's images whatever
				// its role (ollama/ollama server/prompt.go chatPrompt), and
				// puts them before its text. Files have no place.
				for n, rp := range tr.GetParts() {
					rwhere := fmt.Sprintf("%s.tool_result.parts[%d]", where, n)
					switch rk := rp.GetKind().(type) {
					case *llmrelayv1.Part_Image:
						b64, err := imageBase64(rk.Image, rwhere)
						if err != nil {
							return nil, nil, err
						}
						res.Images = append(res.Images, b64)
					case *llmrelayv1.Part_File:
						return nil, nil, invalidRequest(rwhere+".file", "%s: Ollama's chat API takes no document or audio input", rwhere)
					}
				}
				results = append(results, res)
			default:
				return nil, nil, invalidRequest(where, "%s: empty or unknown part", where)
			}
		}
		msg.Content = strings.Join(texts, "\n")
		msg.Thinking = strings.Join(thinking, "\n\n")
		out = append(out, results...)
		if len(results) == 0 || msg.Content != "" || msg.Thinking != "" || len(msg.Images) > 0 || len(msg.ToolCalls) > 0 {
			out = append(out, msg)
		}
	}
	if out == nil {
		out = []wireMessage{}
	}
	return out, warnings, nil
}

// mixOrder follows the kinds of a message's text and image parts in order.
type mixOrder struct {
	last     int // 0 before the first part, else partText or partImage
	switches int
	warned   bool
}

const (
	partText = iota + 1
	partImage
)

// add records a part of kind and reports, once a message, that with it the
// message's text and images interleave: a second change of kind (text,
// image, text or image, text, image).
func (o *mixOrder) add(kind int) bool {
	if o.last != 0 && o.last != kind {
		o.switches++
	}
	o.last = kind
	if o.switches >= 2 && !o.warned {
		o.warned = true
		return true
	}
	return false
}

func interleaveWarning(where string) string {
	return fmt.Sprintf("%s: text and images interleave, but Ollama puts a message's images before all of its text: which text goes with which image is not kept", where)
}

var roleNames = map[llmrelayv1.Role]string{
	llmrelayv1.Role_ROLE_SYSTEM:    "system",
	llmrelayv1.Role_ROLE_USER:      "user",
	llmrelayv1.Role_ROLE_ASSISTANT: "assistant",
	llmrelayv1.Role_ROLE_TOOL:      "tool",
}

// objectJSON returns the arguments compacted when they are a JSON object,
// else {} and false.
func objectJSON(s string) (json.RawMessage, bool) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(t)) == nil {
			return buf.Bytes(), true
		}
	}
	return json.RawMessage("{}"), false
}

// imageBase64 returns the image as base64 for Ollama's images list: inline
// bytes, or a data: URL decoded. Ollama cannot fetch http(s) URLs.
func imageBase64(img *llmrelayv1.Image, where string) (string, error) {
	if img == nil {
		return "", invalidRequest(where, "%s: empty image", where)
	}
	switch src := img.Source.(type) {
	case *llmrelayv1.Image_Data:
		if len(src.Data) == 0 {
			return "", invalidRequest(where+".image.data", "%s: empty image data", where)
		}
		return base64.StdEncoding.EncodeToString(src.Data), nil
	case *llmrelayv1.Image_Url:
		u := strings.TrimSpace(src.Url)
		lower := strings.ToLower(u)
		switch {
		case strings.HasPrefix(lower, "data:"):
			data, err := decodeDataURL(u)
			if err != nil {
				return "", invalidRequest(where+".image.url", "%s: %v", where, err)
			}
			return base64.StdEncoding.EncodeToString(data), nil
		case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
			return "", invalidRequest(where+".image.url", "%s: image URLs are not supported by Ollama; send the image bytes (data) or a data: URL", where)
		default:
			return "", invalidRequest(where+".image.url", "%s: unsupported image URL scheme", where)
		}
	default:
		return "", invalidRequest(where, "%s: image has neither url nor data", where)
	}
}

// decodeDataURL decodes data:[<mediatype>][;base64],<data>.
func decodeDataURL(u string) ([]byte, error) {
	comma := strings.IndexByte(u, ',')
	if comma < 0 {
		return nil, fmt.Errorf("malformed data URL (no comma)")
	}
	meta, payload := u[len("data:"):comma], u[comma+1:]
	var data []byte
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		payload = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, payload)
		var err error
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if data, err = enc.DecodeString(payload); err == nil {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("data URL is not valid base64")
		}
	} else {
		s, err := url.PathUnescape(payload)
		if err != nil {
			return nil, fmt.Errorf("data URL has invalid percent-encoding")
		}
		data = []byte(s)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("data URL holds no data")
	}
	return data, nil
}

// buildTools maps the offered tools and applies tool_choice as far as
// Ollama can: none omits the tools, a named function offers only that
// function; Ollama cannot force a call, which is reported as a warning.
func buildTools(tools []*llmrelayv1.Tool, opts *llmrelayv1.GenerationOptions) ([]wireTool, []string, error) {
	var warnings []string
	only := ""
	switch c := opts.GetToolChoice().GetChoice().(type) {
	case *llmrelayv1.ToolChoice_Mode:
		switch c.Mode {
		case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
			return nil, nil, nil
		case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
			warnings = append(warnings, "tool_choice required is not supported by Ollama; the model may answer without a tool call")
		}
	case *llmrelayv1.ToolChoice_FunctionName:
		only = c.FunctionName
		warnings = append(warnings, fmt.Sprintf("tool_choice %q: Ollama cannot force a call; only that tool was offered", only))
	}
	var out []wireTool
	found := false
	for i, t := range tools {
		where := fmt.Sprintf("tools[%d]", i)
		if t == nil || t.Name == "" {
			return nil, nil, invalidRequest(where, "%s: tool without a name", where)
		}
		if only != "" && t.Name != only {
			continue
		}
		found = true
		params := json.RawMessage(`{"type":"object","properties":{}}`)
		if t.Parameters != "" {
			b, err := provider.SchemaJSON(t.Parameters)
			if err != nil {
				return nil, nil, invalidRequest(where+".parameters", "%s: parameters: %v", where, err)
			}
			params = b
		}
		if t.Strict != nil && *t.Strict {
			warnings = append(warnings, fmt.Sprintf("%s: strict is not supported by Ollama; ignored", where))
		}
		out = append(out, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if only != "" && !found {
		return nil, nil, invalidRequest("options.tool_choice.function_name", "tool_choice names %q, which is not among the tools", only)
	}
	return out, warnings, nil
}

// buildFormat maps response_format: "json" for any JSON object, the schema
// itself for a JSON schema.
func buildFormat(rf *llmrelayv1.ResponseFormat) (json.RawMessage, error) {
	switch rf.GetType() {
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
		return json.RawMessage(`"json"`), nil
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
		if rf.Schema == "" {
			return nil, invalidRequest("options.response_format.schema", "response_format json_schema needs a schema")
		}
		b, err := provider.SchemaJSON(rf.Schema)
		if err != nil {
			return nil, invalidRequest("options.response_format.schema", "schema: %v", err)
		}
		return b, nil
	default:
		return nil, nil
	}
}

// thinkFromEffort maps reasoning_effort to think. Ollama documents the
// levels "low"/"medium"/"high" for gpt-oss only, which ignores true and
// false ("GPT-OSS requires think to be set to low, medium, or high.
// Passing true/false is ignored for that model": docs.ollama.com,
// capabilities/thinking): there the levels go as named (minimal as "low",
// none as "low" too, with a warning: gpt-oss cannot stop thinking). Other
// thinking models take a bool; Ollamas before commit 122c68c answer 400
// "think value \"low\" is not supported for this model" to a level and
// later ones read any level as true, so a level goes as true with a
// warning, and none as false. OllamaOptions.think, when set, wins.
func thinkFromEffort(e llmrelayv1.ReasoningEffort, model string) (json.RawMessage, string) {
	var level string
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
		return nil, ""
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		if levelThinker(model) {
			return json.RawMessage(`"low"`), "reasoning_effort none: gpt-oss cannot turn thinking off on Ollama; sent think \"low\", the least"
		}
		return json.RawMessage("false"), ""
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW:
		level = "low"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:
		level = "medium"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH:
		level = "high"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		// Ollama's highest level is high.
		if levelThinker(model) {
			return json.RawMessage(`"high"`), fmt.Sprintf("reasoning_effort %s: Ollama's highest thinking level is high; sent think \"high\"", strings.TrimPrefix(e.String(), "REASONING_EFFORT_"))
		}
		level = "high"
	default:
		return nil, fmt.Sprintf("reasoning_effort %v is not supported by Ollama; ignored", e)
	}
	if levelThinker(model) {
		return json.RawMessage(`"` + level + `"`), ""
	}
	// The warning names the effort asked for (xhigh, not the high it
	// would have been for gpt-oss).
	return json.RawMessage("true"), fmt.Sprintf("reasoning_effort %s: Ollama takes thinking levels for gpt-oss only; sent think true", strings.ToLower(strings.TrimPrefix(e.String(), "REASONING_EFFORT_")))
}

// levelThinker reports whether model is gpt-oss (any tag or namespace:
// gpt-oss:20b, gpt-oss:120b-cloud, library/gpt-oss), the model family
// whose thinking Ollama sets by level.
func levelThinker(model string) bool { return provider.OllamaLevelThinker(model) }

// formatKeepAlive renders a duration the way Ollama documents it ("5m",
// "1h", "30s", "0s"; negative keeps the model loaded).
func formatKeepAlive(d *durationpb.Duration) (string, error) {
	if d == nil {
		return "", nil
	}
	if err := d.CheckValid(); err != nil {
		return "", invalidRequest("provider_options.ollama.keep_alive", "invalid keep_alive: %v", err)
	}
	s := d.AsDuration().String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s, nil
}

// mergeExtraBody is provider.MergeExtra with the fields the adapter
// sets itself reserved ("stream": the answer's parsing depends on it) and
// its own defaults free to override: "truncate" and "shift" (noSilentCut)
// are the gateway's choice, not the request's, and extra_body is how a
// caller opts back in to Ollama's cutting. extra_body's "options" is
// merged into the request's field by field: a caller adding num_ctx or
// mirostat keeps the temperature and num_predict the request asked for
// (a field both have takes extra_body's value, with a warning when it
// differs).
func mergeExtraBody(body []byte, extra string) ([]byte, []string, error) {
	extra, objects, warnings := provider.MergeExtraObjects(body, extra, func(k string) bool { return k == "options" }, nil)
	out, top, err := provider.MergeExtra(body, extra, provider.ExtraFields{Reserved: []string{"model", "stream"}, Defaults: append([]string{"truncate", "shift"}, objects...)})
	if err != nil {
		return nil, nil, invalidRequest("provider_options.extra_body", "%v", err)
	}
	return out, append(warnings, top...), nil
}

// buildEmbedRequest translates an embeddings request into an /api/embed
// body.
func buildEmbedRequest(req *provider.EmbedRequest) ([]byte, []string, error) {
	if req == nil {
		return nil, nil, invalidRequest("", "nil request")
	}
	if req.Model == "" {
		return nil, nil, invalidRequest("model", "model is required")
	}
	if len(req.Inputs) == 0 {
		return nil, nil, invalidRequest("inputs", "at least one input is required")
	}
	out := embedRequest{Model: req.Model, Input: req.Inputs, Truncate: noSilentCut()}
	if req.Dimensions != nil {
		if *req.Dimensions <= 0 {
			return nil, nil, invalidRequest("dimensions", "dimensions must be positive")
		}
		out.Dimensions = *req.Dimensions
	}
	var extra string
	if po := req.ProviderOptions; po != nil {
		extra = po.ExtraBody
		if oo := po.GetOllama(); oo != nil {
			ka, err := formatKeepAlive(oo.KeepAlive)
			if err != nil {
				return nil, nil, err
			}
			out.KeepAlive = ka
			if oo.NumCtx != nil {
				out.Options = &wireOptions{NumCtx: oo.NumCtx}
			}
		}
	}
	body, err := marshal(out)
	if err != nil {
		return nil, nil, invalidRequest("", "encode request: %v", err)
	}
	return mergeExtraBody(body, extra)
}
