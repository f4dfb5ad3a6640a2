package openai

import (
	"encoding/json"
	"net/url"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// DeepSeek's API (api.deepseek.com) switches thinking with
// {"thinking": {"type": "enabled"|"disabled"}} and sets its effort with a
// top-level reasoning_effort of low, high or max (its Thinking Mode guide:
// minimal and low map to low, medium, high and xhigh to high, max to max;
// "none" is a value of its Responses API only). Thinking is on by default.
// maruel/genai's recordings of deepseek-flash with thinking off
// (real_maruel_deepseek_flash_stop and the other deepseek-flash cassettes)
// send {"thinking":{"type":"disabled"}}, which DeepSeek answered without
// reasoning. Reasoning effort none was sent as reasoning_effort "none",
// which does not turn thinking off; max went as OpenAI's xhigh, which
// DeepSeek maps to high.

// thinkingToggle is DeepSeek's thinking switch.
type thinkingToggle struct {
	Type string `json:"type"`
}

// deepseekHost reports whether baseURL is DeepSeek's API.
func deepseekHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.deepseek.com")
}

// deepseekThinking sets a DeepSeek request's thinking for the reasoning
// effort asked for: none turns thinking off (and sends no effort), max is
// DeepSeek's max; the others go as reasoningEffortWire wrote them.
func deepseekThinking(w *chatRequest, e llmrelayv1.ReasoningEffort) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.ReasoningEffort = ""
		w.Thinking = &thinkingToggle{Type: "disabled"}
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		w.ReasoningEffort = "max"
	}
}

// DeepSeek's models write a tool call with control tokens of their own
// (<｜tool▁calls▁begin｜>, <｜tool▁call▁begin｜>, <｜tool▁sep｜>,
// <｜tool▁call▁end｜>, <｜tool▁calls▁end｜>), which the server parses into
// tool_calls. When it does not (deepseek-reasoner offered a tool in July
// 2025 answered a JSON call in the text then <｜tool▁call▁end｜><｜tool▁calls▁end｜>,
// finish stop: testdata/real_maruel_deepseek_reasoner_sqrt_text_call.http;
// a server without DeepSeek's tool parser does the same), the call is
// text: relayed as sent (guessing a call from it would invent an id and
// a structure the API never gave), with a warning, which it had not.

// dsToolToken opens each of DeepSeek's tool-call control tokens.
const dsToolToken = "<｜tool▁"

// warnDeepSeekToolText is the warning of text holding them.
const warnDeepSeekToolText = "the text holds DeepSeek's tool-call control tokens (<｜tool▁…｜>): the model wrote a tool call as text, which the server did not parse into a tool call; relayed as text"

// toolTokenText reports whether text holds a DeepSeek tool-call control
// token.
func toolTokenText(text string) bool { return strings.Contains(text, dsToolToken) }

// noteToolTokens warns, once, when the stream's text holds a DeepSeek
// tool-call control token, also one cut between two deltas (the part of
// it that ends a delta is kept for the next, in rare state). Not inlined
// into delta, whose frame an idle stream's stack keeps.
//
//go:noinline
func (s *chatStream) noteToolTokens(text string, meta *llmrelayv1.ResponseMeta) {
	if s.toolTextWarned {
		return
	}
	t := text
	if s.rare != nil && s.rare.toolTokenTail != "" {
		t = s.rare.toolTokenTail + text
		s.rare.toolTokenTail = ""
	}
	if toolTokenText(t) {
		s.toolTextWarned = true
		meta.Warnings = append(meta.Warnings, warnDeepSeekToolText)
		return
	}
	for n := min(len(t), len(dsToolToken)-1); n > 0; n-- {
		if strings.HasSuffix(t, dsToolToken[:n]) {
			s.rareOf().toolTokenTail = t[len(t)-n:]
			return
		}
	}
}

// deepseekNoSchema is the refusal of a JSON schema response format on
// DeepSeek's Chat Completions API, which takes response_format text or
// json_object only (its Create Chat Completion reference and JSON Output
// guide) and answers json_schema with a 400 that names no field: "This
// response_format type is unavailable now" (testdata/dialect_deepseek_err_400_json_schema.http,
// live on deepseek-v4-pro and deepseek-chat in llm-exe/llm-exe#662,
// deepseek-v4-flash in UKGovernmentBEIS/inspect_ai#4916). Refused before
// the call, naming the field and what DeepSeek takes; sending json_object
// instead would drop the schema the caller asked the answer to follow.
// An extra_body response_format (the caller's own) is sent as given.
const deepseekNoSchema = "DeepSeek's Chat Completions API takes no JSON schema response format (only json_object; it answers " +
	"json_schema with 400 'This response_format type is unavailable now'): use RESPONSE_FORMAT_TYPE_JSON_OBJECT and " +
	"describe the JSON in the prompt (DeepSeek requires the word \"json\" in it)"

// extraSets reports whether the extra_body object sets the top-level field
// key (it replaces what the adapter would send there).
func extraSets(extra, key string) bool {
	if extra == "" {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(extra), &fields) != nil {
		return false
	}
	_, ok := fields[key]
	return ok
}
