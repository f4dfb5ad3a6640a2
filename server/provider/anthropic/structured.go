package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Structured output. A JSON schema response_format goes to Anthropic in one
// of two ways, chosen per model (its structured_output setting, carried in
// Request.NativeStructuredOutput):
//   - native: output_config.format {type: json_schema, schema}; the answer
//     is the text of the message, constrained by the API. Only the models
//     that support structured outputs accept it.
//   - tool (default, every model): a tool named answerTool whose
//     input_schema is the schema, forced with tool_choice; its input is the
//     answer. The adapter turns that tool_use block back into the text of
//     the answer (unary and streamed), so the caller never sees the tool.
//
// JSON_OBJECT always takes the tool way with input_schema {"type":"object"}:
// the native format requires additionalProperties false on every object,
// so it cannot say "any object".

// answerTool is the name of the forced tool that carries a structured
// answer. A caller's tool of the same name is refused.
const answerTool = "json_response"

const answerToolDescription = "Give your final answer by calling this tool: its input is the answer, in the required JSON format."

// answerToolFor is the forced tool's name when the request's answer comes
// as that tool's input, "" otherwise.
func answerToolFor(req *provider.Request) string {
	switch req.Options.GetResponseFormat().GetType() {
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
		return answerTool
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
		if !req.NativeStructuredOutput {
			return answerTool
		}
	}
	return ""
}

// applyResponseFormat adds output_config.format, or the forced answer tool
// and the tool_choice that forces it, to a request whose tools and
// thinking are already set.
func applyResponseFormat(w *messagesRequest, req *provider.Request, warnings *[]string) error {
	rf := req.Options.GetResponseFormat()
	var schema json.RawMessage
	switch rf.GetType() {
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_UNSPECIFIED, llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT:
		return nil
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
		schema = json.RawMessage(`{"type":"object"}`)
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
		raw, err := provider.SchemaJSON(rf.GetSchema())
		if err != nil {
			return invalid("options.response_format.schema", "schema: %v", err)
		}
		if raw == nil {
			return invalid("options.response_format.schema", "response_format json_schema needs a schema")
		}
		if req.NativeStructuredOutput {
			if w.OutputConfig == nil {
				w.OutputConfig = &wireOutputConfig{}
			}
			// Structured outputs refuse an object schema without
			// "additionalProperties": false (400 "For 'object' type,
			// 'additionalProperties' must be explicitly set to false":
			// testdata/error_400_output_config_additional_properties.http),
			// which most schemas leave out; Anthropic's SDKs add it, and so
			// does the adapter. The server validates the answer against the
			// caller's schema, which an answer without extra properties
			// still meets.
			strict, warns := strictSchema(raw, "options.response_format.schema", "the server still checks the answer against them")
			*warnings = append(*warnings, warns...)
			w.OutputConfig.Format = &wireOutputFormat{Type: "json_schema", Schema: strict}
			return nil
		}
		var root struct {
			Type any `json:"type"`
		}
		if err := json.Unmarshal(raw, &root); err != nil || root.Type != "object" {
			return invalid("options.response_format.schema", "this model answers a JSON schema through a forced tool, whose input must be an object: "+
				"the schema needs \"type\": \"object\" at the root (or configure the model with structured_output: native if it supports Anthropic's structured outputs)")
		}
		schema = raw
	default:
		return invalid("options.response_format.type", "unknown response format type %d", rf.GetType())
	}
	if parseClaude(req.Model).noForcedTool() {
		return invalid("options.response_format", "%s refuses a forced tool, and this model answers %s through one: "+
			"configure the model with structured_output: native (JSON schemas only), as this model supports Anthropic's structured outputs", req.Model, rf.GetType())
	}
	if w.Thinking.active() && w.Thinking.Type != "adaptive" {
		// A fixed budget refuses a forced tool; adaptive thinking takes
		// one (the live API answered claude-opus-4-6 with the forced
		// call: real_pyd_anthropic_opus_46_adaptive_thinking_accepts_tool_output_*),
		// as checkThinking allows.
		return invalid("options.response_format", "anthropic does not allow a forced tool with extended thinking, and this model answers %s through one: "+
			"drop thinking_budget_tokens and reasoning_effort, or configure the model with structured_output: native (JSON schemas only) if it supports structured outputs", rf.GetType())
	}
	for i, t := range req.Tools {
		if t.GetName() == answerTool {
			return invalid(fmt.Sprintf("tools[%d].name", i), "the name %s is reserved for response_format on anthropic models", answerTool)
		}
	}
	w.Tools = append(w.Tools, wireTool{Name: answerTool, Description: answerToolDescription, InputSchema: schema})
	forced := &wireToolChoice{Type: "tool", Name: answerTool}
	switch c := req.Options.GetToolChoice().GetChoice().(type) {
	case *llmrelayv1.ToolChoice_FunctionName:
		// The caller forces one of its tools: this turn is that call, the
		// structured answer comes at the end of the loop.
		return nil
	case *llmrelayv1.ToolChoice_Mode:
		if c.Mode == llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE {
			w.ToolChoice = forced
			return nil
		}
	}
	if len(req.Tools) == 0 {
		w.ToolChoice = forced
		return nil
	}
	// With the caller's tools: some tool must be called, and the answer
	// tool is how the model answers.
	choice := &wireToolChoice{Type: "any"}
	if w.ToolChoice != nil {
		choice.DisableParallelToolUse = w.ToolChoice.DisableParallelToolUse
	}
	w.ToolChoice = choice
	return nil
}

// answerFromTool turns the forced tool's call in a unary answer into the
// answer's text.
func answerFromTool(res *provider.Result, tool string) {
	if tool == "" || res.Message == nil {
		return
	}
	for _, part := range res.Message.GetParts() {
		if tc := part.GetToolCall(); tc != nil && tc.GetName() == tool {
			part.Kind = &llmrelayv1.Part_Text{Text: tc.GetArguments()}
			res.Meta.ToolCallCount--
		}
	}
	answerFinish(res.Meta, res.Meta.GetToolCallCount())
}

// answerFinish: the forced tool's call ends the turn like a text answer
// (stop_reason tool_use stays in provider_finish_reason).
func answerFinish(meta *llmrelayv1.ResponseMeta, otherCalls int32) {
	if otherCalls == 0 && meta.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS && meta.GetProviderFinishReason() == "tool_use" {
		meta.FinishReason = llmrelayv1.FinishReason_FINISH_REASON_STOP
	}
}

// answerStream relays a stream with the forced tool's call turned into
// text deltas: its argument fragments are the answer's text, as they come.
type answerStream struct {
	provider.Stream
	tool string
	// callID is the forced tool's call once its first delta arrived.
	callID     string
	otherCalls map[string]bool
}

func (s *answerStream) Recv() (*provider.Event, error) {
	for {
		ev, err := s.Stream.Recv()
		if err != nil || ev == nil {
			return ev, err
		}
		switch ev.Kind {
		case provider.EventToolCall:
			if ev.ToolCall.Name == s.tool && s.callID == "" {
				s.callID = ev.ToolCall.CallID
			}
			if ev.ToolCall.CallID != s.callID {
				s.otherCalls[ev.ToolCall.CallID] = true
				return ev, nil
			}
			if ev.ToolCall.Arguments == "" {
				continue
			}
			return &provider.Event{Kind: provider.EventText, Text: ev.ToolCall.Arguments}, nil
		case provider.EventToolCallEnd:
			if s.callID != "" && ev.ToolCall.CallID == s.callID {
				continue
			}
		case provider.EventMeta:
			if ev.Meta != nil {
				answerFinish(ev.Meta, int32(len(s.otherCalls)))
			}
		}
		return ev, nil
	}
}

// strictFormats are the string formats structured outputs support ("String
// formats: date-time, time, date, duration, email, hostname, uri, ipv4,
// ipv6, uuid": the structured outputs guide, JSON Schema limitations).
var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "uri": true, "ipv4": true, "ipv6": true, "uuid": true}

// strictUnsupported reports a keyword structured outputs (and strict tool
// use) refuse with a 400 ("For 'integer' type, property 'minimum' is not
// supported": testdata/error_400_output_config_minimum.http): numerical
// constraints, string length constraints, array constraints beyond
// minItems 0 or 1 ("Not supported" in the guide), object size
// constraints, and string formats outside strictFormats. pattern is
// supported.
func strictUnsupported(key string, value json.RawMessage, typ string) bool {
	switch key {
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
		"minLength", "maxLength", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
		"minProperties", "maxProperties":
		return true
	case "minItems":
		v := string(value)
		return v != "0" && v != "1"
	case "format":
		var f string
		return typ == "string" && json.Unmarshal(value, &f) == nil && !strictFormats[f]
	}
	return false
}

// strictSchema is a schema as structured outputs and strict tool use take
// it, as Anthropic's SDKs send it (transform_schema in anthropic-sdk-python's
// lib/_parse/_transform.py): every object closed with
// "additionalProperties": false (400 "For 'object' type,
// 'additionalProperties' must be explicitly set to false":
// testdata/error_400_output_config_additional_properties.http; most
// schemas leave it out), and the constraints it refuses moved into the
// descriptions ("{minimum: 1, maximum: 10}"), so that the model is still
// told. The caller's key order and bytes are kept elsewhere. The warnings
// name what changed; checked says who still holds the answer to the moved
// constraints.
func strictSchema(raw json.RawMessage, field, checked string) (json.RawMessage, []string) {
	var warnings []string
	closed, replaced := provider.ClosedObjectSchemas(raw)
	if replaced > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %d additionalProperties value(s) other than false sent as false: "+
			"Anthropic's structured outputs take closed objects only (no properties beyond those listed)", field, replaced))
	}
	out, moved := provider.RelocatedConstraints(closed, strictUnsupported)
	if len(moved) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %s not supported by Anthropic's structured outputs: moved into the descriptions "+
			"(the model is told, not held; %s)", field, strings.Join(moved, ", "), checked))
	}
	return out, warnings
}
