package server

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func TestOutputCheck(t *testing.T) {
	t.Parallel()
	object := &outputCheck{}
	withSchema, err := newOutputCheck(&llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
		Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: `{"type":"object","required":["a"]}`}})
	if err != nil || withSchema == nil || withSchema.schema == nil || withSchema.report {
		t.Fatalf("check %+v, err %v", withSchema, err)
	}
	textMsg := func(parts ...string) *llmrelayv1.Message {
		m := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
		for _, p := range parts {
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: p}})
		}
		return m
	}
	phased := func(phaseText ...string) *llmrelayv1.Message {
		m := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
		for i := 0; i+1 < len(phaseText); i += 2 {
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: phaseText[i+1]}, Phase: phaseText[i]})
		}
		return m
	}
	refusal := &llmrelayv1.Message{Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Refusal{Refusal: "I can't help with that."}}}}
	stop, length := llmrelayv1.FinishReason_FINISH_REASON_STOP, llmrelayv1.FinishReason_FINISH_REASON_LENGTH
	filtered := llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	for _, tc := range []struct {
		name   string
		check  *outputCheck
		msg    *llmrelayv1.Message
		finish llmrelayv1.FinishReason
		calls  int32
		want   []string // nil: valid
	}{
		{"object", object, textMsg(`{"a":`, ` 1}`), stop, 0, nil},
		{"array for an object", object, textMsg(`[1]`), stop, 0, []string{"/: got array, want a JSON object"}},
		{"not JSON", object, textMsg(`{"a": 1`), stop, 0, []string{"/: not valid JSON: unexpected EOF"}},
		{"cut but parses", object, textMsg(`{"a": 1}`), length, 0, []string{"/: the answer was cut at max_tokens (finish reason LENGTH) before the JSON was complete"}},
		// A filter's stop: what arrived is not the whole answer even when
		// it parses, and nothing at all is a blocked answer, not an empty
		// one.
		{"filtered but parses", object, textMsg(`{"a": 1}`), filtered, 0, []string{"/: a content filter withheld or cut the answer (finish reason CONTENT_FILTER)"}},
		{"filtered, cut", object, textMsg(`{"a": "ste`), filtered, 0, []string{"/: a content filter withheld or cut the answer (finish reason CONTENT_FILTER)", "/: not valid JSON: unexpected EOF"}},
		{"filtered, nothing", withSchema, textMsg(), filtered, 0, []string{"/: a content filter withheld or cut the answer (finish reason CONTENT_FILTER)"}},
		{"filtered refusal", object, refusal, filtered, 0, []string{"/: no JSON in the answer: the model refused: I can't help with that."}},
		// JSON wrapped by a model without a JSON mode stays invalid; the
		// violation says what wraps it.
		{"fenced", object, textMsg("```json\n{\"a\": 1}\n```"), stop, 0, []string{"/: not valid JSON: invalid character '`' looking for beginning of value (the JSON is inside a Markdown code fence)"}},
		{"preamble", withSchema, textMsg(`Here is the JSON: {"a": 1}`), stop, 0, []string{"/: not valid JSON: invalid character 'H' looking for beginning of value (text before the JSON: the model wrote a preamble)"}},
		{"preamble and fence", object, textMsg("Sure!\n```json\n[1]\n```"), stop, 0, []string{"/: not valid JSON: invalid character 'S' looking for beginning of value (text before the JSON, which is inside a Markdown code fence)"}},
		{"text after", object, textMsg(`{"a": 1}` + "\nHope this helps!"), stop, 0, []string{"/: not valid JSON: invalid character after top-level value (text after the JSON)"}},
		{"two values", object, textMsg(`{"a": 1}{"a": 2}`), stop, 0, []string{"/: not valid JSON: invalid character after top-level value (text after the JSON)"}},
		{"prose", object, textMsg(`I cannot answer that.`), stop, 0, []string{"/: not valid JSON: invalid character 'I' looking for beginning of value"}},
		{"refusal", object, refusal, stop, 0, []string{"/: no JSON in the answer: the model refused: I can't help with that."}},
		{"empty", object, textMsg(), stop, 0, []string{"/: the answer has no text (empty instead of JSON)"}},
		{"schema", withSchema, textMsg(`{"b": 1}`), stop, 0, []string{"/: missing property 'a'"}},
		{"schema met", withSchema, textMsg(`{"a": null}`), stop, 0, nil},
		// A model narrating before its answer (Responses phase): only the
		// final answer is the JSON; without a final_answer label every
		// text counts, as before.
		{"commentary before the final answer", withSchema, phased("commentary", "Looking at the fields first.", "final_answer", `{"a":`, "final_answer", ` 2}`), stop, 0, nil},
		{"commentary only", withSchema, phased("commentary", "Thinking about it.", "commentary", `{"a": 2}`), stop, 0, []string{"/: not valid JSON: invalid character 'T' looking for beginning of value (text before the JSON: the model wrote a preamble)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := tc.check.check(tc.msg, tc.finish, tc.calls)
			if v.GetValid() != (tc.want == nil) || strings.Join(v.GetErrors(), "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got %v, want errors %q", v, tc.want)
			}
		})
	}
	if v := object.check(textMsg("not json"), stop, 1); v != nil {
		t.Errorf("an answer with tool calls was checked: %v", v)
	}
	off, err := newOutputCheck(&llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
		Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT, Validation: llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_OFF}})
	if off != nil || err != nil {
		t.Errorf("OFF gave a check: %v %v", off, err)
	}
	if text, err := newOutputCheck(&llmrelayv1.GenerationOptions{}); text != nil || err != nil {
		t.Errorf("no response_format gave a check: %v %v", text, err)
	}
}

func TestOutputErrorNamesFirstViolations(t *testing.T) {
	t.Parallel()
	e := &outputError{errors: []string{"/a: x", "/b: y", "/c: z", "/d: w", "/e: v"}}
	want := "the answer does not match response_format: /a: x; /b: y; /c: z (and 2 more in meta.output_validation)"
	if e.Error() != want {
		t.Errorf("got %q", e.Error())
	}
}
