package openai

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// OpenAI's own API (and Azure OpenAI, which validates requests the same
// way) documents limits that compatible servers do not share (vLLM takes
// any number of stop sequences, tool names with dots, more logprobs): they
// are checked here, for api.openai.com and Azure only, so that a request
// beyond them is InvalidArgument naming the request's field rather than the
// provider's 400 naming its own ("tools[0].function.name", "stop").
const (
	// "Up to 4 sequences where the API will stop generating further
	// tokens" (Chat Completions reference, stop).
	openAIMaxStop = 4
	// "An integer between 0 and 20 specifying the number of most likely
	// tokens to return at each token position" (top_logprobs, both APIs).
	openAIMaxTopLogprobs = 20
	// metadata: "Set of 16 key-value pairs … Keys are strings with a
	// maximum length of 64 characters. Values are strings with a maximum
	// length of 512 characters."
	openAIMaxMetadata         = 16
	openAIMaxMetadataKeyLen   = 64
	openAIMaxMetadataValueLen = 512
)

// openAIToolName is what OpenAI takes as a function name: "Must be a-z,
// A-Z, 0-9, or contain underscores and dashes, with a maximum length of
// 64." The gateway's own rule is wider (Gemini takes dots and colons, and
// 128 characters).
var openAIToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// strictLimits reports whether the adapter talks to OpenAI's or Azure's own
// API, whose documented limits checkLimits enforces.
func (p *Provider) strictLimits() bool { return p.azure || p.openAI }

// invalidParam is an invalid request naming the request field param.
func (p *Provider) invalidParam(param, format string, args ...any) *provider.Error {
	msg := param + ": " + fmt.Sprintf(format, args...)
	return &provider.Error{Provider: p.name, Kind: provider.KindInvalidRequest, Param: param, Message: msg}
}

// checkLimits refuses, naming the field, what OpenAI's and Azure's APIs
// refuse of a request that both formats send: tool names outside OpenAI's
// charset or length, top_logprobs outside 0-20, more metadata than 16
// pairs of bounded size, and (for Chat Completions, which takes stop)
// more than 4 stop sequences; stop is what the request sends.
func (p *Provider) checkLimits(req *provider.Request, stop []string) error {
	if !p.strictLimits() {
		return nil
	}
	for i, t := range req.Tools {
		if t != nil && !openAIToolName.MatchString(t.GetName()) {
			return p.invalidParam("tools["+strconv.Itoa(i)+"].name",
				"%q: %s takes 1-64 letters, digits, _ and - only", t.GetName(), p.apiName())
		}
	}
	if len(stop) > openAIMaxStop {
		return p.invalidParam("options.stop", "%s takes at most %d stop sequences, got %d", p.apiName(), openAIMaxStop, len(stop))
	}
	oo := req.ProviderOptions.GetOpenai()
	if n := oo.GetTopLogprobs(); oo != nil && oo.TopLogprobs != nil && (n < 0 || n > openAIMaxTopLogprobs) {
		return p.invalidParam("provider_options.openai.top_logprobs", "%s takes 0 to %d, got %d", p.apiName(), openAIMaxTopLogprobs, n)
	}
	if err := p.checkMetadata(oo.GetMetadata()); err != nil {
		return err
	}
	return p.checkImages(req.Messages)
}

// openAIImageTypes are the image types OpenAI's vision input takes: "PNG
// (.png), JPEG (.jpeg and .jpg), WEBP (.webp), and non-animated GIF (.gif)"
// (the images and vision guide); other types are a 400. image/jpg, a
// common spelling of the .jpg type, is let through.
var openAIImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/jpg": true, "image/webp": true, "image/gif": true}

// checkImages refuses, naming the field, an inline image (bytes, or a
// data: URL) of a type OpenAI's and Azure's APIs do not take. An image by
// http(s) URL is the provider's to fetch and judge.
func (p *Provider) checkImages(msgs []*llmrelayv1.Message) error {
	for i, m := range msgs {
		for j, part := range m.GetParts() {
			img := part.GetImage()
			if img == nil {
				continue
			}
			var field, mt string
			switch src := img.GetSource().(type) {
			case *llmrelayv1.Image_Data:
				if len(src.Data) == 0 || img.GetMimeType() == "" {
					continue // the encoder refuses it
				}
				field, mt = "mime_type", provider.ImageMediaType(img)
			case *llmrelayv1.Image_Url:
				if len(src.Url) < 5 || !strings.EqualFold(src.Url[:5], "data:") {
					continue
				}
				head, _, _ := strings.Cut(src.Url[5:], ",")
				head, _, _ = strings.Cut(head, ";")
				field, mt = "url", strings.TrimSpace(head)
			default:
				continue // the encoder refuses it
			}
			if !openAIImageTypes[strings.ToLower(mt)] {
				return p.invalidParam(fmt.Sprintf("messages[%d].parts[%d].image.%s", i, j, field),
					"%q: %s takes PNG, JPEG, WEBP and non-animated GIF images only: convert the image", mt, p.apiName())
			}
		}
	}
	return nil
}

// checkMetadata checks OpenAI's metadata bounds, naming the entry as the
// server names map entries (metadata["key"]).
func (p *Provider) checkMetadata(md map[string]string) error {
	const field = "provider_options.openai.metadata"
	if len(md) > openAIMaxMetadata {
		return p.invalidParam(field, "%s takes at most %d key-value pairs, got %d", p.apiName(), openAIMaxMetadata, len(md))
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad entry is the same on every call
	for _, k := range keys {
		entry := field + "[" + strconv.Quote(k) + "]"
		if n := len([]rune(k)); n > openAIMaxMetadataKeyLen {
			return p.invalidParam(entry, "%s takes keys of at most %d characters, got %d", p.apiName(), openAIMaxMetadataKeyLen, n)
		}
		if n := len([]rune(md[k])); n > openAIMaxMetadataValueLen {
			return p.invalidParam(entry, "%s takes values of at most %d characters, got %d", p.apiName(), openAIMaxMetadataValueLen, n)
		}
	}
	return nil
}

// apiName names the API whose limit a request broke.
func (p *Provider) apiName() string {
	if p.azure {
		return "Azure OpenAI"
	}
	return "OpenAI"
}

// checkToolResults refuses, naming the field, a tool result OpenAI's and
// Azure's APIs refuse: one whose call_id answers no call. Chat Completions
// (responses false) takes a tool message only after the assistant message
// with its call ("messages with role 'tool' must be a response to a
// preceding message with 'tool_calls'"): the call must be one of the
// nearest earlier assistant message's. The Responses API pairs a
// function_call_output with a function_call item of its call_id anywhere
// before it ("No tool call found for function call output with call_id").
// Compatible servers are left to judge: some take results without calls.
func (p *Provider) checkToolResults(msgs []*llmrelayv1.Message, responses bool) error {
	if !p.strictLimits() {
		return nil
	}
	var last []string // the call ids of the nearest earlier assistant message
	all := map[string]bool{}
	for i, m := range msgs {
		switch m.GetRole() {
		case llmrelayv1.Role_ROLE_ASSISTANT:
			last = last[:0]
			for _, part := range m.GetParts() {
				if tc := part.GetToolCall(); tc != nil {
					last = append(last, tc.GetCallId())
					all[tc.GetCallId()] = true
				}
			}
		case llmrelayv1.Role_ROLE_TOOL:
			for j, part := range m.GetParts() {
				tr := part.GetToolResult()
				if tr == nil {
					continue
				}
				id := tr.GetCallId()
				if id == "" {
					continue // the encoder refuses it (the server first)
				}
				known := all[id]
				if !responses {
					known = contains(last, id)
				}
				if known {
					continue
				}
				where := "the nearest earlier assistant message"
				if responses {
					where = "any earlier assistant message"
				}
				return p.invalidParam(fmt.Sprintf("messages[%d].parts[%d].tool_result.call_id", i, j),
					"%q answers no tool call of %s: %s refuses a result without its call", id, where, p.apiName())
			}
		}
	}
	return nil
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// toolMessageWarnings says what of the tool messages the OpenAI formats
// have no place for: a result's is_error (a tool message and a
// function_call_output carry the content only: the content must say the
// tool failed) and, in Chat Completions (chat), a tool message's name (a
// tool message has role, tool_call_id and content). The Responses format
// warns about every message name itself.
func toolMessageWarnings(msgs []*llmrelayv1.Message, chat bool) []string {
	var errs, names []string
	for i, m := range msgs {
		if m.GetRole() != llmrelayv1.Role_ROLE_TOOL {
			continue
		}
		if chat && m.GetName() != "" {
			names = append(names, fmt.Sprintf("messages[%d]", i))
		}
		for j, part := range m.GetParts() {
			if part.GetToolResult().GetIsError() {
				errs = append(errs, fmt.Sprintf("messages[%d].parts[%d]", i, j))
			}
		}
	}
	var warnings []string
	if len(errs) > 0 {
		warnings = append(warnings, fmt.Sprintf("is_error of %d tool result(s) not sent (%s): the OpenAI formats have no error flag on a tool result, the model reads the content only",
			len(errs), joinShort(errs)))
	}
	if len(names) > 0 {
		warnings = append(warnings, fmt.Sprintf("the name of %d tool message(s) not sent (%s): Chat Completions tool messages have no name", len(names), joinShort(names)))
	}
	return warnings
}

// joinShort lists up to 5 field paths, then how many more.
func joinShort(fields []string) string {
	const most = 5
	if len(fields) <= most {
		return strings.Join(fields, ", ")
	}
	return strings.Join(fields[:most], ", ") + fmt.Sprintf(" and %d more", len(fields)-most)
}
