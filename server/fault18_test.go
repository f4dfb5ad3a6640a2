package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Fault sequences of session 18: the streaming paths (see fault13_test.go
// for the harness).

// f18Finish is the format's finish event(s) without what follows them
// (usage, terminator): where a stream says it is done generating.
func (f f13Format) f18Finish() string {
	switch f.name {
	case "openai-chat", "azure":
		return openaiChunk(`{}`, `"stop"`)
	case "openai-responses":
		return f.tail[:strings.Index(f.tail, "event: response.completed")]
	case "anthropic":
		return f.tail[:strings.Index(f.tail, "event: message_stop")]
	}
	return f.tail // Gemini and Ollama: the finish chunk is the last one
}

// TestFault18SSEFraming: a whole stream written with each framing a
// provider or a proxy may use (CRLF or CR line endings, comments between
// events, a leading byte order mark, "data:" without its space, event types nobody knows, a delta
// line far over the read buffer, multi-byte characters split across
// writes) is one clean answer in every format.
func TestFault18SSEFraming(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Paris é ", 40000) // 360 KB: one line over every buffer
	for _, f := range f13Formats() {
		sse := f.streamType == "text/event-stream"
		for _, tc := range []struct {
			name string
			sse  bool
			body func() string
			text string
		}{
			{"CRLF", false, func() string { return strings.ReplaceAll(strings.ReplaceAll(f.complete(), "\r\n", "\n"), "\n", "\r\n") }, okText},
			{"CR", true, func() string { return strings.ReplaceAll(strings.ReplaceAll(f.complete(), "\r\n", "\n"), "\n", "\r") }, okText},
			{"comments", true, func() string {
				return ": keep-alive\n\n" + strings.ReplaceAll(f.complete(), "\n\n", "\n\n: keep-alive\n\n") + ": OPENROUTER PROCESSING\n\n"
			}, okText},
			// The SSE spec ignores one leading byte order mark; read as part
			// of the first field name, it lost Gemini's first chunk.
			{"leading BOM", false, func() string { return "\ufeff" + f.complete() }, okText},
			{"data without space", true, func() string { return strings.ReplaceAll(f.complete(), "data: ", "data:") }, okText},
			{"unknown events", true, func() string {
				ev := "event: vendor.heartbeat\ndata: {\"type\":\"vendor.heartbeat\",\"n\":1}\n\n"
				return f.head + ev + f.text("The capital of France") + ev + f.text(" is Paris.") + ev + f.tail
			}, okText},
			{"long line", false, func() string { return f.head + f.text(long) + f.tail }, long},
			{"split UTF-8", false, func() string {
				// respond writes 64 bytes at a time: the two-byte
				// characters fall across writes at every offset.
				return f.head + f.text(strings.Repeat("é", 100)) + f.text(strings.Repeat("€", 50)) + f.tail
			}, strings.Repeat("é", 100) + strings.Repeat("€", 50)},
		} {
			if tc.sse && !sse {
				continue
			}
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, respond(200, f.streamHead(1), tc.body()))
				c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.err != nil || got.end == nil {
					t.Fatalf("err %v, end %v", got.err, got.end)
				}
				if got.text != tc.text {
					t.Errorf("text %d bytes %q..., want %d bytes", len(got.text), got.text[:min(len(got.text), 40)], len(tc.text))
				}
				if got.end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || got.end.GetMeta().GetUsage().GetOutputTokens() == 0 {
					t.Errorf("end = %v", got.end)
				}
			})
		}
	}
}

// TestFault18ErrorAfterFinish: the provider sends its finish and then an
// error event (before its usage or terminator): the answer is not
// complete, the client gets the text, then the error status, never an
// end event, and nothing is retried (content was relayed). Ollama's
// done line is its terminator (like [DONE]): what follows it is not read.
func TestFault18ErrorAfterFinish(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats()[:5] {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text(okText)+f.f18Finish()+f.errEvent), f.okStep(2))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.err == nil {
				t.Fatalf("end %v, err %v: an error after the finish must fail the call", got.end, got.err)
			}
			if got.text != okText {
				t.Errorf("text %q", got.text)
			}
			f13Check(t, f, got.err, f.errCode, f.errReason, 1, 0)
			if up.requests() != 1 {
				t.Errorf("upstream saw %d requests", up.requests())
			}
		})
	}
}

// TestFault18CutAfterFinish: the stream is cut (EOF, reset, silence)
// after its finish event but before the usage or terminator that makes
// it complete (OpenAI chat with stream_options.include_usage, Responses,
// Anthropic): an error status with the text relayed, no end.
func TestFault18CutAfterFinish(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{openaiChat, azureFormat(), openaiResponses, anthropicFormat} {
		for _, how := range []string{"EOF", "reset", "idle"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				body := f.head + f.text(okText) + f.f18Finish()
				step := map[string]f13Step{"EOF": respond(200, f.streamHead(1), body), "reset": thenReset(f.streamHead(1), body), "idle": thenHang(f.streamHead(1), body)}[how]
				up := f13Serve(t, step, f.okStep(2))
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.end != nil || got.err == nil {
					t.Fatalf("end %v, err %v", got.end, got.err)
				}
				if got.text != okText || up.requests() != 1 {
					t.Errorf("text %q, upstream %d", got.text, up.requests())
				}
				want := map[string]codes.Code{"EOF": codes.Unavailable, "reset": codes.Unavailable, "idle": codes.DeadlineExceeded}[how]
				if st := status.Convert(got.err); st.Code() != want {
					t.Errorf("status %v, want %v", st, want)
				}
				m := failedMeta(t, got.err)
				if m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 || m.GetResponseId() == "" {
					t.Errorf("meta %v", m)
				}
			})
		}
	}
}

// TestFault18UsageTwice: a provider repeating its final usage (a proxy
// that echoes the usage chunk; Anthropic's cumulative message_delta
// usage sent twice) is counted once.
func TestFault18UsageTwice(t *testing.T) {
	t.Parallel()
	usage := `data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32}}` + "\n\n"
	md := anthropicEvent("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":10}`)
	for _, tc := range []struct {
		f       f13Format
		body    string
		in, out int32
	}{
		{openaiChat, openaiChat.head + openaiChat.text(okText) + openaiChunk(`{}`, `"stop"`) + usage + usage + "data: [DONE]\n\n", 24, 8},
		{anthropicFormat, anthropicFormat.head + anthropicFormat.text(okText) + anthropicEvent("content_block_stop", `"index":0`) + md + md + anthropicEvent("message_stop", `"x":0`), 21, 10},
		{geminiFormat, geminiFormat.text(okText) + geminiFormat.tail + geminiChunk("", `,"finishReason":"STOP"`, `{"promptTokenCount":14,"candidatesTokenCount":7,"totalTokenCount":21}`), 14, 7},
	} {
		t.Run(tc.f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.body))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.end == nil {
				t.Fatalf("err %v", got.err)
			}
			if u := got.end.GetMeta().GetUsage(); u.GetInputTokens() != tc.in || u.GetOutputTokens() != tc.out {
				t.Errorf("usage %v, want %d in %d out", u, tc.in, tc.out)
			}
			if got.text != okText {
				t.Errorf("text %q", got.text)
			}
		})
	}
}

// f18Reasoning is a stream that starts a reasoning block and sends one
// delta of it, without ending it.
func f18Reasoning(f f13Format) string {
	switch f.name {
	case "openai-chat", "azure":
		return f.head + openaiChunk(`{"reasoning_content":"Let me think about"}`, "null")
	case "openai-responses":
		return responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
			responsesEvent("response.output_item.added", `"sequence_number":1,"output_index":0,"item":{"id":"rs_f18","type":"reasoning","summary":[]}`) +
			responsesEvent("response.reasoning_summary_part.added", `"sequence_number":2,"item_id":"rs_f18","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`) +
			responsesEvent("response.reasoning_summary_text.delta", `"sequence_number":3,"item_id":"rs_f18","output_index":0,"summary_index":0,"delta":"Let me think about"`)
	case "anthropic":
		return anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_f13","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
			anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}`) +
			anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"Let me think about"}`)
	case "gemini":
		return `data: {"candidates":[{"content":{"parts":[{"text":"Let me think about","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":14,"totalTokenCount":14},"modelVersion":"gemini-2.5-flash","responseId":"gem_f13"}` + "\r\n\r\n"
	}
	return `{"model":"llama3.2","created_at":"2025-10-14T09:12:02.1Z","message":{"role":"assistant","content":"","thinking":"Let me think about"},"done":false}` + "\n"
}

// TestFault18ReasoningCut: a stream cut (EOF, reset, silence) in the
// middle of a reasoning block: the client got the reasoning delta, then
// an error status, no end, no retry; the partial meta keeps the response
// id and the usage known so far.
func TestFault18ReasoningCut(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, how := range []string{"EOF", "reset", "idle"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				body := f18Reasoning(f)
				step := map[string]f13Step{"EOF": respond(200, f.streamHead(1), body), "reset": thenReset(f.streamHead(1), body), "idle": thenHang(f.streamHead(1), body)}[how]
				up := f13Serve(t, step, respond(200, f.streamHead(2), f.complete()))
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")}})
				if err != nil {
					t.Fatal(err)
				}
				var reasoning string
				for {
					ev, err := s.Recv()
					if errors.Is(err, io.EOF) {
						t.Fatal("the stream ended without an error")
					}
					if err != nil {
						want := map[string]codes.Code{"EOF": codes.Unavailable, "reset": codes.Unavailable, "idle": codes.DeadlineExceeded}[how]
						if status.Code(err) != want {
							t.Errorf("status %v, want %v", err, want)
						}
						m := failedMeta(t, err)
						if m.GetAttempts() != 1 || m.GetTimeToFirstToken() == nil {
							t.Errorf("meta %v", m)
						}
						if f.name != "ollama" && m.GetResponseId() == "" {
							t.Errorf("meta lost the response id: %v", m)
						}
						if (f.name == "anthropic" || f.name == "gemini") && m.GetUsage().GetInputTokens() == 0 {
							t.Errorf("meta lost the usage: %v", m)
						}
						break
					}
					if ev.GetEnd() != nil {
						t.Fatalf("end %v", ev.GetEnd())
					}
					reasoning += ev.GetReasoningDelta().GetText()
				}
				if reasoning != "Let me think about" || up.requests() != 1 {
					t.Errorf("reasoning %q, upstream %d", reasoning, up.requests())
				}
			})
		}
	}
}

// f18ToolStart is a stream that starts a tool call and sends part of its
// arguments.
func f18ToolStart(f f13Format) string {
	switch f.name {
	case "openai-chat", "azure":
		return f.head + openaiChunk(`{"tool_calls":[{"index":0,"id":"call_f18","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "null") +
			openaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Par"}}]}`, "null")
	case "openai-responses":
		return responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
			responsesEvent("response.output_item.added", `"sequence_number":1,"output_index":0,"item":{"id":"fc_f18","type":"function_call","status":"in_progress","arguments":"","call_id":"call_f18","name":"get_weather"}`) +
			responsesEvent("response.function_call_arguments.delta", `"sequence_number":2,"item_id":"fc_f18","output_index":0,"delta":"{\"city\": \"Par"`)
	case "anthropic":
		return anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_f13","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
			anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"call_f18","name":"get_weather","input":{}}`) +
			anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}`)
	}
	return ""
}

// TestFault18ToolCallCut: a StreamTools stream cut (EOF, reset, silence,
// an error event) inside a tool call's arguments, for the formats that
// stream arguments: the deltas, never a tool_call_done, the error status,
// no retry, and the partial meta.
func TestFault18ToolCallCut(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{openaiChat, azureFormat(), openaiResponses, anthropicFormat} {
		for _, how := range []string{"EOF", "reset", "idle", "error event"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				body := f18ToolStart(f)
				step := map[string]f13Step{"EOF": respond(200, f.streamHead(1), body), "reset": thenReset(f.streamHead(1), body),
					"idle": thenHang(f.streamHead(1), body), "error event": respond(200, f.streamHead(1), body+f.errEvent)}[how]
				up := f13Serve(t, step, respond(200, f.streamHead(2), f.complete()))
				yaml := strings.Replace(f.yaml, "capabilities: {chat:", "capabilities: {tools:", 1)
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+yaml, up.URL, &f13Clock{})
				s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("Paris?")}, Tools: weatherTools(t)})
				if err != nil {
					t.Fatal(err)
				}
				var args string
				for {
					ev, err := s.Recv()
					if errors.Is(err, io.EOF) {
						t.Fatal("the stream ended without an error")
					}
					if err != nil {
						want := map[string]codes.Code{"EOF": codes.Unavailable, "reset": codes.Unavailable, "idle": codes.DeadlineExceeded, "error event": codes.Unavailable}[how]
						if status.Code(err) != want {
							t.Errorf("status %v, want %v", err, want)
						}
						m := failedMeta(t, err)
						if m.GetAttempts() != 1 || m.GetResponseId() == "" || m.GetProviderRequestId() != f.wantReqID(1) {
							t.Errorf("meta %v", m)
						}
						if f.name == "anthropic" && m.GetUsage().GetInputTokens() != 21 {
							t.Errorf("meta lost the usage: %v", m)
						}
						break
					}
					if ev.GetToolCallDone() != nil || ev.GetEnd() != nil {
						t.Fatalf("a cut call reported done: %v", ev)
					}
					if d := ev.GetToolCallDelta(); d != nil {
						if d.GetCallId() != "call_f18" {
							t.Errorf("delta %v", d)
						}
						args += d.GetArgumentsDelta()
					}
				}
				if args != `{"city": "Par` || up.requests() != 1 {
					t.Errorf("arguments %q, upstream %d", args, up.requests())
				}
			})
		}
	}
}

// TestFault18DeadlineMidStream: the client's deadline, call.timeout or
// the gateway's max_call_duration ends while a stream is relaying: the
// client keeps the text it got, then DeadlineExceeded, never an end; the
// gateway's own bounds say which one with the partial meta.
func TestFault18DeadlineMidStream(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, how := range []string{"client deadline", "call.timeout", "max_call_duration"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, thenHang(f.streamHead(1), f.head+f.text("The capital")))
				defaults := "defaults: {idle_timeout: 5s, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}"
				if how == "max_call_duration" {
					defaults += ", max_call_duration: 300ms"
				}
				c := f13Start(t, defaults+"}\n"+f.yaml, up.URL, &f13Clock{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req := &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")}}
				switch how {
				case "client deadline":
					ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
					defer cancel()
				case "call.timeout":
					req.Call = &llmrelayv1.CallOptions{Timeout: durationpb.New(300 * time.Millisecond)}
				}
				start := time.Now()
				s, err := c.StreamChat(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				text, err := streamErr(t, s.Recv)
				if text != "The capital" {
					t.Errorf("text %q", text)
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("ended after %v", d)
				}
				if status.Code(err) != codes.DeadlineExceeded {
					t.Fatalf("err %v", err)
				}
				if how == "client deadline" {
					return
				}
				st, m := f13Check(t, f, err, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 1, 0)
				if how == "max_call_duration" && !strings.Contains(st.Message(), "max_call_duration") {
					t.Errorf("message %q does not name the bound", st.Message())
				}
				if m.GetTimeToFirstToken() == nil || (f.name != "ollama" && m.GetResponseId() == "") {
					t.Errorf("partial meta %v", m)
				}
				if up.requests() != 1 {
					t.Errorf("upstream %d", up.requests())
				}
			})
		}
	}
}

// TestFault18MaxResponseBytesMidStream: a stream that outgrows
// limits.max_response_bytes after content was relayed: the text so far,
// then ResourceExhausted naming the limit, never a silent end, no retry.
func TestFault18MaxResponseBytesMidStream(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			b.WriteString(f.head)
			for i := 0; b.Len() < 100000; i++ {
				b.WriteString(f.text("chunk " + strconv.Itoa(i) + " "))
			}
			b.WriteString(f.tail)
			up := f13Serve(t, respond(200, f.streamHead(1), b.String()))
			c := f13Start(t, "limits: {max_response_bytes: 65536}\n"+f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.err == nil {
				t.Fatalf("a stream over the limit ended with %v, err %v", got.end, got.err)
			}
			if !strings.HasPrefix(got.text, "chunk 0 chunk 1 ") {
				t.Errorf("text %q", got.text[:min(40, len(got.text))])
			}
			st := status.Convert(got.err)
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "limits.max_response_bytes") {
				t.Errorf("status %v", st)
			}
			if up.requests() != 1 {
				t.Errorf("upstream %d", up.requests())
			}
			m := failedMeta(t, got.err)
			if m.GetAttempts() != 1 || m.GetTimeToFirstToken() == nil || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "resource_exhausted" {
				t.Errorf("meta %v", m)
			}
		})
	}
}

// f18Rec is a recording as a step.
func f18Rec(r providertest.Recording) f13Step {
	return respond(r.Status, r.Header, string(r.Body))
}

// TestFault18AgentRoundTwoFails: round 1 asks for a tool and succeeds;
// round 2's model call fails (every attempt 503; a stream cut, reset or
// silent after its first text). The run ends with a failure event for
// round 2 holding the conversation of round 1 and the meta of both model
// calls (round 1's cost and usage; the failed call last, its requests in
// api_calls), then the round-2 call's status with its FailedCallMeta; what
// round 2 relayed stays relayed and is never followed by a model end.
// The failed call was left out of the run's meta, which undercounted its
// api_calls and the usage the caller was charged for.
func TestFault18AgentRoundTwoFails(t *testing.T) {
	t.Parallel()
	r1 := chatStream("chatcmpl-F18r1", "", []chatCall{{"call_w", "get_weather", `{"city":"Lyon"}`}}, 30, 5)
	head := openaiChat.head + openaiChat.text("Sun")
	for _, tc := range []struct {
		name     string
		round2   []f13Step
		code     codes.Code
		reason   string
		attempts int
		relayed  string
	}{
		{"503 every attempt", []f13Step{openaiChat.errStep(2, 503, nil), openaiChat.errStep(3, 503, nil), openaiChat.errStep(4, 503, nil)}, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3, ""},
		{"cut after content", []f13Step{respond(200, openaiChat.streamHead(2), head)}, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, "Sun"},
		{"reset after content", []f13Step{thenReset(openaiChat.streamHead(2), head)}, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, "Sun"},
		{"idle after content", []f13Step{thenHang(openaiChat.streamHead(2), head)}, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 1, "Sun"},
		{"error event after content", []f13Step{respond(200, openaiChat.streamHead(2), head+openaiChat.errEvent)}, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, "Sun"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, append([]f13Step{f18Rec(r1)}, tc.round2...)...)
			yaml := "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n" + pricedChatYAML("http://127.0.0.1:1")
			c := f13Start(t, yaml, up.URL, &f13Clock{})
			evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t)}, answerAll)
			st, info, _ := statusDetails(t, err)
			if st.Code() != tc.code || info.GetReason() != tc.reason {
				t.Fatalf("status %v %s", st, info.GetReason())
			}
			m := failedMeta(t, err)
			if m.GetAttempts() != int32(tc.attempts) || len(m.GetRetryReasons()) != tc.attempts || m.GetProviderRequestId() != openaiChat.wantReqID(1+tc.attempts) {
				t.Errorf("round 2 FailedCallMeta: attempts %d, reasons %v, request id %q", m.GetAttempts(), m.GetRetryReasons(), m.GetProviderRequestId())
			}
			f := runFailure(t, evs)
			if f.GetRound() != 2 || len(f.GetMessages()) != 3 {
				t.Fatalf("failure round %d, %d messages", f.GetRound(), len(f.GetMessages()))
			}
			// Both model calls are the run's: round 1's, and round 2's
			// failed one (its meta the FailedCallMeta), its requests
			// counted in api_calls.
			am := f.GetMeta()
			if am.GetModelCalls() != 2 || am.GetToolRounds() != 1 || len(am.GetRounds()) != 2 || am.GetUsage().GetTotalTokens() != 35 ||
				am.GetApiCalls() != int32(1+tc.attempts) {
				t.Errorf("failure meta %v", am)
			}
			if r2 := am.GetRounds()[len(am.GetRounds())-1]; r2.GetRound() != 2 || r2.GetMeta().GetAttempts() != int32(tc.attempts) ||
				r2.GetMeta().GetProviderRequestId() != m.GetProviderRequestId() || r2.GetToolCalls() != 0 {
				t.Errorf("round 2 record %v", r2)
			}
			if am.GetCost().GetAmountNanos() != 7500 {
				t.Errorf("failure meta lost round 1's cost: %v", am)
			}
			// Round 2's relayed events: its text, never its end.
			var text string
			rounds := 0
			for _, ev := range evs {
				if me := ev.GetModel(); me != nil {
					if me.GetStart() != nil {
						rounds++
					}
					if rounds == 2 {
						text += me.GetTextDelta().GetText()
						if me.GetEnd() != nil {
							t.Errorf("round 2 ended: %v", me.GetEnd())
						}
					}
				}
			}
			if text != tc.relayed {
				t.Errorf("round 2 relayed %q, want %q", text, tc.relayed)
			}
			if want := 1 + tc.attempts; up.requests() != want {
				t.Errorf("upstream %d requests, want %d", up.requests(), want)
			}
		})
	}
}

// TestFault18AgentResultAfterFailure: the client sends a tool result after
// the run already failed (its tool_timeout passed): the run's failure
// and status stand, the late send does not crash or hang the server, and
// the server stays usable.
func TestFault18AgentResultAfterFailure(t *testing.T) {
	t.Parallel()
	b := startBuiltinAgent(t, "http://127.0.0.1:1")
	es := echoSetup(t)
	es.ToolTimeout = durationpb.New(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(es)); err != nil {
		t.Fatal(err)
	}
	var late []*llmrelayv1.AgentToolCallRequest
	var failure *llmrelayv1.AgentFailure
	for {
		ev, err := s.Recv()
		if err != nil {
			wantCode(t, err, codes.DeadlineExceeded, "tool_result")
			break
		}
		if r := ev.GetToolCallRequest(); r != nil {
			late = append(late, r)
		}
		if f := ev.GetFailure(); f != nil {
			failure = f
			for _, r := range late {
				if err := s.Send(resultReq(answerAll(r))); err != nil && !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
			}
		}
	}
	if failure == nil || failure.GetRound() != 1 || len(late) == 0 {
		t.Fatalf("failure %v after %d calls", failure, len(late))
	}
	if _, err := s.Recv(); err == nil {
		t.Error("an event after the status")
	}
	evs, err := agentRun(ctx, t, b, echoSetup(t), answerAll)
	if err != nil || evs[len(evs)-1].GetEnd() == nil {
		t.Fatalf("the next run: %v", err)
	}
}

// TestFault18AgentHalfCloseDuringModelCall: the client answers round 1's
// calls and half-closes while round 2's model call streams: nothing more
// is needed from it (round 2 asks for no tool), so the run ends normally.
func TestFault18AgentHalfCloseDuringModelCall(t *testing.T) {
	t.Parallel()
	r1 := chatStream("chatcmpl-F18h1", "", []chatCall{{"call_w", "get_weather", `{"city":"Lyon"}`}}, 30, 5)
	r2 := chatStream("chatcmpl-F18h2", "Sunny.", nil, 50, 2)
	release := make(chan struct{})
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		f18Rec(r2)(w, r)
	}
	up := f13Serve(t, f18Rec(r1), slow)
	c := f13Start(t, f13Defaults+pricedChatYAML("http://127.0.0.1:1"), up.URL, &f13Clock{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(&llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t)})); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("%v", err)
		}
		if r := ev.GetToolCallRequest(); r != nil {
			if err := s.Send(resultReq(answerAll(r))); err != nil {
				t.Fatal(err)
			}
		}
		if ev.GetRoundEnd() != nil {
			// Round 2's model call is under way (or about to be).
			for up.requests() < 2 {
				time.Sleep(time.Millisecond)
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			close(release)
		}
		if end := ev.GetEnd(); end != nil {
			if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(end.GetMessages()) != 4 || end.GetMeta().GetModelCalls() != 2 {
				t.Fatalf("end %v", end)
			}
			break
		}
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v", err)
	}
}

// f18ToolRound is a complete stream of the format asking for
// get_weather(city: Lyon) as call_w (Ollama's calls have no id: the
// gateway makes one).
func f18ToolRound(f f13Format) string {
	switch f.name {
	case "openai-chat", "azure":
		return f.head + openaiChunk(`{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}}]}`, "null") +
			openaiChunk(`{}`, `"tool_calls"`) +
			`data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32}}` + "\n\n" +
			"data: [DONE]\n\n"
	case "openai-responses":
		item := `{"id":"fc_w","type":"function_call","status":"completed","arguments":"{\"city\":\"Lyon\"}","call_id":"call_w","name":"get_weather"}`
		return responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
			responsesEvent("response.output_item.added", `"sequence_number":1,"output_index":0,"item":{"id":"fc_w","type":"function_call","status":"in_progress","arguments":"","call_id":"call_w","name":"get_weather"}`) +
			responsesEvent("response.function_call_arguments.delta", `"sequence_number":2,"item_id":"fc_w","output_index":0,"delta":"{\"city\":\"Lyon\"}"`) +
			responsesEvent("response.function_call_arguments.done", `"sequence_number":3,"item_id":"fc_w","output_index":0,"arguments":"{\"city\":\"Lyon\"}"`) +
			responsesEvent("response.output_item.done", `"sequence_number":4,"output_index":0,"item":`+item) +
			responsesEvent("response.completed", `"sequence_number":5,"response":{"id":"resp_f13","object":"response","created_at":1760433275,"model":"gpt-4.1-2025-04-14","status":"completed","output":[`+item+`],"usage":{"input_tokens":24,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":32}}`)
	case "anthropic":
		return anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_f18w","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
			anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"call_w","name":"get_weather","input":{}}`) +
			anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Lyon\"}"}`) +
			anthropicEvent("content_block_stop", `"index":0`) +
			anthropicEvent("message_delta", `"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":10}`) +
			anthropicEvent("message_stop", `"x":0`)
	case "gemini":
		return `data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"call_w","name":"get_weather","args":{"city":"Lyon"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":14,"candidatesTokenCount":7,"totalTokenCount":21},"modelVersion":"gemini-2.5-flash","responseId":"gem_f18w"}` + "\r\n\r\n"
	}
	return `{"model":"llama3.2","created_at":"2025-10-14T09:12:02.1Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Lyon"}}}]},"done":false}` + "\n" +
		ollamaLine("", true)
}

// TestFault18AgentCutEveryFormat: in every format, round 1 asks for a
// tool, the client answers, and round 2's stream fails after its first
// text (cut, reset, silence, an error event): the failure event names
// round 2 with round 1's conversation and both calls' meta (round 2's
// usage so far in the run's total), the status carries round
// 2's FailedCallMeta (one attempt, its request id, the usage known so
// far), round 2's text was relayed and never ended, nothing was retried.
func TestFault18AgentCutEveryFormat(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, how := range []string{"EOF", "reset", "idle", "error event"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				body := f.head + f.text("Sun")
				round2 := map[string]f13Step{"EOF": respond(200, f.streamHead(2), body), "reset": thenReset(f.streamHead(2), body),
					"idle": thenHang(f.streamHead(2), body), "error event": respond(200, f.streamHead(2), body+f.errEvent)}[how]
				up := f13Serve(t, respond(200, f.streamHead(1), f18ToolRound(f)), round2, f.okStep(3))
				yaml := strings.Replace(f.yaml, "capabilities: {chat:", "capabilities: {tools:", 1)
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+yaml, up.URL, &f13Clock{})
				var calls int
				evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: agentTools(t)},
					func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
						calls++
						if r.GetName() != "get_weather" || r.GetArguments() != `{"city":"Lyon"}` {
							t.Errorf("call %v", r)
						}
						return answerAll(r)
					})
				want := map[string]codes.Code{"EOF": codes.Unavailable, "reset": codes.Unavailable, "idle": codes.DeadlineExceeded, "error event": f.errCode}[how]
				if status.Code(err) != want {
					t.Fatalf("status %v, want %v", err, want)
				}
				m := failedMeta(t, err)
				if m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 || m.GetProviderRequestId() != f.wantReqID(2) || m.GetTimeToFirstToken() == nil {
					t.Errorf("round 2 FailedCallMeta %v", m)
				}
				if (f.name == "anthropic" || f.name == "gemini") && m.GetUsage().GetInputTokens() == 0 {
					t.Errorf("round 2 FailedCallMeta lost the usage known: %v", m)
				}
				fl := runFailure(t, evs)
				if fl.GetRound() != 2 || len(fl.GetMessages()) != 3 || calls != 1 {
					t.Fatalf("failure round %d, %d messages, %d calls", fl.GetRound(), len(fl.GetMessages()), calls)
				}
				am := fl.GetMeta()
				if am.GetModelCalls() != 2 || am.GetToolRounds() != 1 || am.GetApiCalls() != 2 || len(am.GetRounds()) != 2 || am.GetUsage().GetTotalTokens() == 0 {
					t.Errorf("failure meta %v", am)
				}
				// Round 2's usage so far is the run's too (charged to the
				// caller): the run's total is round 1's plus it.
				r1, r2 := am.GetRounds()[0].GetMeta().GetUsage(), am.GetRounds()[1].GetMeta().GetUsage()
				if r2.GetInputTokens() != m.GetUsage().GetInputTokens() || am.GetUsage().GetInputTokens() != r1.GetInputTokens()+r2.GetInputTokens() {
					t.Errorf("run usage %v, rounds %v and %v", am.GetUsage(), r1, r2)
				}
				var text string
				starts := 0
				for _, ev := range evs {
					me := ev.GetModel()
					if me.GetStart() != nil {
						starts++
					}
					if starts == 2 {
						text += me.GetTextDelta().GetText()
						if me.GetEnd() != nil || me.GetToolCallDone() != nil {
							t.Errorf("round 2 sent %v", me)
						}
					}
				}
				if text != "Sun" || up.requests() != 2 {
					t.Errorf("round 2 relayed %q; upstream %d requests", text, up.requests())
				}
			})
		}
	}
}

// TestFault18CutCallNotValidInClientFold: a stream cut after a tool
// call's arguments parse but before the call is done (`{"city": "Paris"}`
// whose `, "days": 3}` never came): the client's fold (client.ToolsStream
// Acc), read after the error, holds the call as open and not valid, in
// every format that streams arguments.
func TestFault18CutCallNotValidInClientFold(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{openaiChat, azureFormat(), openaiResponses, anthropicFormat} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			body := f18ToolStart(f)
			body = strings.ReplaceAll(body, `{\"city\": \"Par"`, `{\"city\": \"Paris\"}"`)
			if !strings.Contains(body, `Paris\"}`) {
				t.Fatal("fixture not rewritten")
			}
			up := f13Serve(t, respond(200, f.streamHead(1), body))
			yaml := strings.Replace(f.yaml, "capabilities: {chat:", "capabilities: {tools:", 1)
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+yaml, up.URL, &f13Clock{})
			s, err := (&client.Client{Gateway: c}).StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("Paris?")}, Tools: weatherTools(t)})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Wait(); status.Code(err) != codes.Unavailable {
				t.Fatalf("err %v", err)
			}
			calls := s.Acc.ToolCalls()
			if len(calls) != 1 || calls[0].GetArguments() != `{"city": "Paris"}` || calls[0].GetArgumentsValid() {
				t.Errorf("folded calls %v: want the one call, not valid", calls)
			}
			if open := s.Acc.Open(); len(open) != 1 || open[0] != "call_f18" {
				t.Errorf("open calls %v", open)
			}
		})
	}
}

// TestFault18SendLimitMidStream: a provider event that would make a
// stream message over limits.max_send_message_bytes, after content went
// out: the client keeps what it got, then ResourceExhausted naming the
// limit with the failed call's meta (its attempt recorded as failed, the
// provider's request id), as limits.max_response_bytes ends one. The
// status lacked the FailedCallMeta: the relay took the refused send for a
// client gone away.
func TestFault18SendLimitMidStream(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+f.text(strings.Repeat("x", 200000))+f.tail))
			c := f13Start(t, "limits: {max_send_message_bytes: 100000}\n"+f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.text != "The capital" {
				t.Fatalf("end %v, text %d bytes", got.end, len(got.text))
			}
			st, info, _ := statusDetails(t, got.err)
			if st.Code() != codes.ResourceExhausted || info.GetMetadata()["limit"] != "limits.max_send_message_bytes" || info.GetMetadata()["provider"] != "up" {
				t.Fatalf("status %v %v", st, info)
			}
			m := failedMeta(t, got.err)
			if m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "resource_exhausted" ||
				m.GetProviderRequestId() != f.wantReqID(1) || m.GetTimeToFirstToken() == nil {
				t.Errorf("meta %v", m)
			}
			if up.requests() != 1 {
				t.Errorf("upstream %d", up.requests())
			}
		})
	}
}

// TestFault18CompleteThenSilence: a whole answer (its finish and usage)
// whose connection the provider leaves open without a terminator: Gemini,
// which has none, or an OpenAI-compatible server that sends no [DONE].
// It is complete: the client gets the answer and its end, with a warning
// that the idle timeout ended it, not a DeadlineExceeded after the whole
// text was relayed. Formats whose terminator came end at it, as before.
func TestFault18CompleteThenSilence(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			body := strings.Replace(f.complete(), "data: [DONE]\n\n", "", 1)
			up := f13Serve(t, thenHang(f.streamHead(1), body))
			c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.end == nil {
				t.Fatalf("err %v, end %v: a complete answer left open is complete", got.err, got.end)
			}
			if got.text != okText || got.end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || got.end.GetMeta().GetUsage().GetOutputTokens() == 0 {
				t.Errorf("text %q, end %v", got.text, got.end)
			}
			idle := slices.Contains(got.end.GetMeta().GetWarnings(), provider.IdleAfterEndWarning)
			if wantIdle := f.name == "gemini" || strings.Contains(f.complete(), "[DONE]"); idle != wantIdle {
				t.Errorf("idle warning %v, want %v: %q", idle, wantIdle, got.end.GetMeta().GetWarnings())
			}
		})
	}
}
