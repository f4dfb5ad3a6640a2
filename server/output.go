package server

import (
	"encoding/json"
	"fmt"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/schema"
)

// outputCheck is the server's check of a structured answer
// (response_format JSON_OBJECT or JSON_SCHEMA, validation not OFF).
type outputCheck struct {
	schema *schema.Schema // nil: any JSON object (JSON_OBJECT)
	report bool           // REPORT mode: return the answer with the report
}

// newOutputCheck returns the check the merged options ask for, nil when
// there is none. The schema was compiled by validateOptions already (the
// cache returns it); a failure here is still the caller's schema.
func newOutputCheck(o *llmrelayv1.GenerationOptions) (*outputCheck, error) {
	rf := o.GetResponseFormat()
	mode := rf.GetValidation()
	if mode == llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_OFF {
		return nil, nil
	}
	if _, known := llmrelayv1.OutputValidationMode_name[int32(mode)]; !known {
		return nil, invalidField("options.response_format.validation", "unknown mode %d", mode)
	}
	c := &outputCheck{report: mode == llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_REPORT}
	switch rf.GetType() {
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
		return c, nil
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
		s, err := schema.Compile(rf.GetSchema())
		if err != nil {
			return nil, invalidField("options.response_format.schema", "%v", err)
		}
		c.schema = s
		return c, nil
	default:
		return nil, nil
	}
}

// warnings say what the check could not check: the schema's patterns
// beyond the server's regexp engine (RE2: no lookaround, no
// backreferences), which a valid answer was not held to.
func (c *outputCheck) warnings() []string {
	if c == nil || c.schema == nil || len(c.schema.Unchecked()) == 0 {
		return nil
	}
	quoted := make([]string, len(c.schema.Unchecked()))
	for i, p := range c.schema.Unchecked() {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	return []string{"options.response_format.schema: the answer was not checked against pattern(s) " + strings.Join(quoted, ", ") +
		": lookaround and backreferences are beyond the server's regular expressions (RE2)"}
}

// phaseFinalAnswer is the phase OpenAI's Responses API gives the message
// holding the model's answer (Part.phase).
const phaseFinalAnswer = "final_answer"

// check validates a complete answer. It returns nil when the answer is not
// a structured one: an answer that calls tools is a step of a tool loop,
// and the structured answer comes at its end.
func (c *outputCheck) check(msg *llmrelayv1.Message, finish llmrelayv1.FinishReason, toolCalls int32) *llmrelayv1.OutputValidation {
	if c == nil || toolCalls > 0 {
		return nil
	}
	// When the provider labels its final answer (OpenAI Responses phase),
	// that is the JSON; what the model said while working (commentary)
	// is not part of it.
	final := false
	for _, p := range msg.GetParts() {
		if _, ok := p.GetKind().(*llmrelayv1.Part_Text); ok && p.GetPhase() == phaseFinalAnswer {
			final = true
			break
		}
	}
	var text, refusal strings.Builder
	for _, p := range msg.GetParts() {
		switch k := p.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			if final && p.GetPhase() != phaseFinalAnswer {
				continue
			}
			text.WriteString(k.Text)
		case *llmrelayv1.Part_Refusal:
			refusal.WriteString(k.Refusal)
		}
	}
	var errs []string
	if finish == llmrelayv1.FinishReason_FINISH_REASON_LENGTH {
		// A cut answer is incomplete even when what arrived happens to
		// parse ("12" of "123").
		errs = append(errs, "/: the answer was cut at max_tokens (finish reason LENGTH) before the JSON was complete")
	}
	filtered := finish == llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	if filtered && refusal.Len() == 0 {
		// Withheld or cut by a filter (OpenAI content_filter, Anthropic
		// refusal, Gemini SAFETY): what arrived is not the model's whole
		// answer, whether or not it parses, and an empty one is no
		// "empty answer" but a blocked one.
		errs = append(errs, "/: a content filter withheld or cut the answer (finish reason CONTENT_FILTER)")
	}
	switch t := text.String(); {
	case strings.TrimSpace(t) == "" && refusal.Len() > 0:
		errs = append(errs, "/: no JSON in the answer: the model refused: "+refusal.String())
	case strings.TrimSpace(t) == "" && filtered:
	case strings.TrimSpace(t) == "":
		errs = append(errs, "/: the answer has no text (empty instead of JSON)")
	default:
		v, err := schema.ParseJSON(t)
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("/: not valid JSON: %v%s", err, wrappedJSON(t)))
		case c.schema == nil:
			if _, isObject := v.(map[string]any); !isObject {
				errs = append(errs, fmt.Sprintf("/: got %s, want a JSON object", jsonKind(v)))
			}
		default:
			errs = append(errs, c.schema.ValidateValue(v)...)
		}
	}
	return &llmrelayv1.OutputValidation{Valid: len(errs) == 0, Errors: errs}
}

// wrappedJSON says why an answer that is no JSON text failed when it
// holds one: a model without a native JSON mode (or one asked for JSON in
// the prompt only) wraps its JSON in a Markdown fence or writes a sentence
// before it. The answer stays invalid (the caller's parser reads the whole
// text); the hint names what to strip or what to ask for.
func wrappedJSON(t string) string {
	s := strings.TrimSpace(t)
	if strings.HasPrefix(s, "```") {
		return " (the JSON is inside a Markdown code fence)"
	}
	first := strings.IndexAny(s, "{[")
	if first < 0 {
		return ""
	}
	if first == 0 {
		// One JSON value, then more: a sentence after it, or a second
		// value (a model answering twice).
		dec := json.NewDecoder(strings.NewReader(s))
		var v json.RawMessage
		if dec.Decode(&v) == nil && dec.More() {
			return " (text after the JSON)"
		}
		return ""
	}
	if _, err := schema.ParseJSON(s[first:]); err == nil {
		return " (text before the JSON: the model wrote a preamble)"
	}
	if strings.Contains(s[first:], "```") {
		return " (text before the JSON, which is inside a Markdown code fence)"
	}
	return ""
}

// jsonKind names the JSON type of a parsed value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "number"
	}
}

// outputError is an answer that failed output validation in ERROR mode.
type outputError struct {
	errors  []string
	message *llmrelayv1.Message
}

// shownViolations is how many violations the status message names; all of
// them are in meta.output_validation.
const shownViolations = 3

func (e *outputError) Error() string {
	shown := e.errors
	more := ""
	if len(shown) > shownViolations {
		more = fmt.Sprintf(" (and %d more in meta.output_validation)", len(shown)-shownViolations)
		shown = shown[:shownViolations]
	}
	return "the answer does not match response_format: " + strings.Join(shown, "; ") + more
}
