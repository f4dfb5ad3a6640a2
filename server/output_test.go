package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// The README's structured-output schema: reasoning before answer, the
// order a strict model generates the fields in.
const readmeSchema = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}}}`

func jsonSchemaFormat(schema string, mode llmrelayv1.OutputValidationMode) *llmrelayv1.GenerationOptions {
	return &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
		Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema, Validation: mode}}
}

func textOf(m *llmrelayv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}

// failedCall decodes a status as a client would: code, ErrorInfo and the
// FailedCallMeta detail.
func failedCall(t *testing.T, err error) (*status.Status, string, *llmrelayv1.FailedCallMeta) {
	t.Helper()
	st, info, _ := statusDetails(t, err)
	var fcm *llmrelayv1.FailedCallMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			fcm = f
		}
	}
	if fcm == nil {
		t.Fatalf("status %v has no FailedCallMeta", st)
	}
	return st, info.GetReason(), fcm
}

func TestStructuredOutputBuiltin(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	two := int32(2)
	cutOpts := func(mode llmrelayv1.OutputValidationMode) *llmrelayv1.GenerationOptions {
		o := jsonSchemaFormat(readmeSchema, mode)
		o.MaxTokens = &two
		return o
	}
	pattern := `{"type": "object", "properties": {"answer": {"type": "string", "pattern": "^[0-9]+$"}}, "required": ["answer", "confidence"]}`

	t.Run("valid, schema order kept", func(t *testing.T) {
		t.Parallel()
		resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
			Options: jsonSchemaFormat(readmeSchema, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(resp.GetMessage()); got != `{"reasoning": "hi", "answer": "hi"}` {
			t.Errorf("answer = %s", got)
		}
		if v := resp.GetMeta().GetOutputValidation(); !v.GetValid() || len(v.GetErrors()) != 0 {
			t.Errorf("output_validation = %v", v)
		}
	})
	t.Run("json object", func(t *testing.T) {
		t.Parallel()
		resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(resp.GetMessage()); got != `{"answer": "You said: hi"}` || !resp.GetMeta().GetOutputValidation().GetValid() {
			t.Errorf("answer = %s, validation %v", got, resp.GetMeta().GetOutputValidation())
		}
	})
	t.Run("cut by max_tokens fails", func(t *testing.T) {
		t.Parallel()
		_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: cutOpts(0)})
		st, reason, fcm := failedCall(t, err)
		if st.Code() != codes.FailedPrecondition || reason != "OUTPUT_VALIDATION_FAILED" || !strings.Contains(st.Message(), "cut at max_tokens") {
			t.Fatalf("status %v %s", st, reason)
		}
		if got := textOf(fcm.GetMessage()); got != `{"reasoning": "hi",` {
			t.Errorf("failed answer = %q", got)
		}
		v := fcm.GetMeta().GetOutputValidation()
		if v.GetValid() || len(v.GetErrors()) != 2 || !strings.Contains(v.GetErrors()[1], "not valid JSON") ||
			fcm.GetMeta().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || fcm.GetMeta().GetUsage() == nil {
			t.Errorf("meta = %v", fcm.GetMeta())
		}
	})
	t.Run("report mode returns the answer", func(t *testing.T) {
		t.Parallel()
		resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
			Options: cutOpts(llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_REPORT)})
		if err != nil {
			t.Fatal(err)
		}
		if v := resp.GetMeta().GetOutputValidation(); v.GetValid() || len(v.GetErrors()) == 0 || textOf(resp.GetMessage()) != `{"reasoning": "hi",` {
			t.Errorf("answer %q, validation %v", textOf(resp.GetMessage()), v)
		}
	})
	t.Run("off mode does not check", func(t *testing.T) {
		t.Parallel()
		resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
			Options: cutOpts(llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_OFF)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetMeta().GetOutputValidation() != nil {
			t.Errorf("validation with mode OFF: %v", resp.GetMeta().GetOutputValidation())
		}
	})
	t.Run("schema violations named", func(t *testing.T) {
		t.Parallel()
		_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
			Options: jsonSchemaFormat(pattern, llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_ERROR)})
		st, reason, fcm := failedCall(t, err)
		if st.Code() != codes.FailedPrecondition || reason != "OUTPUT_VALIDATION_FAILED" ||
			!strings.Contains(st.Message(), "/answer") || !strings.Contains(st.Message(), "confidence") {
			t.Fatalf("status %v %s", st, reason)
		}
		if textOf(fcm.GetMessage()) != `{"answer": "hi"}` || len(fcm.GetMeta().GetOutputValidation().GetErrors()) != 2 {
			t.Errorf("failed call meta = %v", fcm)
		}
	})
	t.Run("tool calls are not validated", func(t *testing.T) {
		t.Parallel()
		o := jsonSchemaFormat(readmeSchema, 0)
		resp, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("Paris")},
			Tools: weatherTools(t), Options: o})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetMeta().GetToolCallCount() != 2 || resp.GetMeta().GetOutputValidation() != nil {
			t.Errorf("meta = %v", resp.GetMeta())
		}
	})
}

func TestStructuredOutputStreamBuiltin(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	two := int32(2)
	run := func(o *llmrelayv1.GenerationOptions) (string, *llmrelayv1.StreamEnd, error) {
		sawUsage := false
		s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: o})
		if err != nil {
			return "", nil, err
		}
		var text strings.Builder
		var end *llmrelayv1.StreamEnd
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return text.String(), end, nil
			}
			if err != nil {
				if !sawUsage {
					t.Errorf("the stream failed without its usage event")
				}
				return text.String(), end, err
			}
			if ev.GetUsage() != nil {
				sawUsage = true
			}
			text.WriteString(ev.GetTextDelta().GetText())
			if e := ev.GetEnd(); e != nil {
				end = e
			}
		}
	}
	t.Run("valid", func(t *testing.T) {
		t.Parallel()
		text, end, err := run(jsonSchemaFormat(readmeSchema, 0))
		if err != nil {
			t.Fatal(err)
		}
		if text != `{"reasoning": "hi", "answer": "hi"}` || !end.GetMeta().GetOutputValidation().GetValid() {
			t.Errorf("text %q, end %v", text, end)
		}
	})
	t.Run("error mode ends with the status instead of end", func(t *testing.T) {
		t.Parallel()
		o := jsonSchemaFormat(readmeSchema, 0)
		o.MaxTokens = &two
		text, end, err := run(o)
		if end != nil {
			t.Fatalf("end event sent for an invalid answer: %v", end)
		}
		if text != `{"reasoning": "hi",` {
			t.Errorf("deltas = %q", text)
		}
		st, reason, fcm := failedCall(t, err)
		if st.Code() != codes.FailedPrecondition || reason != "OUTPUT_VALIDATION_FAILED" || textOf(fcm.GetMessage()) != text ||
			fcm.GetMeta().GetOutputValidation().GetValid() || fcm.GetMeta().GetTimeToFirstToken() == nil {
			t.Errorf("status %v %s, failed call %v", st, reason, fcm)
		}
	})
	t.Run("report mode reports in end", func(t *testing.T) {
		t.Parallel()
		o := jsonSchemaFormat(readmeSchema, llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_REPORT)
		o.MaxTokens = &two
		_, end, err := run(o)
		if err != nil {
			t.Fatal(err)
		}
		if v := end.GetMeta().GetOutputValidation(); v.GetValid() || !strings.Contains(strings.Join(v.GetErrors(), "\n"), "cut at max_tokens") {
			t.Errorf("validation = %v", v)
		}
	})
}

// TestStructuredOutputSettingOnlyForAnthropic: structured_output chooses
// between Anthropic's two mechanisms; on another provider type it is a
// configuration error, not silently ignored.
func TestStructuredOutputSettingOnlyForAnthropic(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`
providers:
  - {name: oai, type: openai, api_key: sk-x}
models:
  - {name: m, provider: oai, structured_output: native, capabilities: {chat: {format: openai-chat}}}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "models[0] (m).structured_output: only for anthropic models") {
		t.Errorf("err = %v", err)
	}
}

func TestUnknownValidationModeRejected(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
		Options: jsonSchemaFormat(readmeSchema, 9)})
	st, info, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" || br.GetFieldViolations()[0].GetField() != "options.response_format.validation" {
		t.Errorf("status %v, %v", st, br)
	}
}

func TestSchemaNameChecked(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	o := jsonSchemaFormat(readmeSchema, 0)
	o.ResponseFormat.SchemaName = "city answer"
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: o})
	st, info, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" || br.GetFieldViolations()[0].GetField() != "options.response_format.schema_name" {
		t.Errorf("status %v, %v", st, br)
	}
	o.ResponseFormat.SchemaName = "city_answer-2"
	o.ResponseFormat.Type = 42
	_, err = c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: o})
	if st, _, br := statusDetails(t, err); st.Code() != codes.InvalidArgument || br.GetFieldViolations()[0].GetField() != "options.response_format.type" {
		t.Errorf("unknown type: status %v, %v", st, br)
	}
	o.ResponseFormat.Type = llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA
	if _, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: o}); err != nil {
		t.Errorf("a valid name was refused: %v", err)
	}
}

// A response schema whose pattern uses lookahead (valid ECMA-262, beyond
// RE2) was refused as "not valid regex"; the call goes through, the
// answer is checked against the rest, and a warning names the pattern not
// checked. A tool schema with one is accepted as it is.
func TestStructuredOutputPatternBeyondRE2(t *testing.T) {
	t.Parallel()
	c, _ := defaultClient(t)
	ctx := context.Background()
	schema := `{"type": "object", "properties": {"slug": {"type": "string", "pattern": "^(?!.*--)[a-z-]+$"}, "n": {"type": "integer"}}, "required": ["slug", "n"]}`
	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")},
		Options: jsonSchemaFormat(schema, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.GetMeta().GetOutputValidation(); !v.GetValid() {
		t.Errorf("output_validation = %v", v)
	}
	want := `options.response_format.schema: the answer was not checked against pattern(s) "^(?!.*--)[a-z-]+$": lookaround and backreferences are beyond the server's regular expressions (RE2)`
	if w := resp.GetMeta().GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %q", w)
	}
	tools := []*llmrelayv1.Tool{{Name: "lookup", Parameters: `{"type":"object","properties":{"path":{"type":"string","pattern":"^(?!/etc)"}}}`}}
	if _, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}, Tools: tools}); err != nil {
		t.Errorf("tool schema with a lookahead: %v", err)
	}
}
