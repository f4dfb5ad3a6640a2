package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Fault sequences of session 23 (see fault13_test.go for the harness).
// Every body is hand-built from the shared f13 answers and streams.

func warned(m *llmrelayv1.ResponseMeta, w string) bool { return slices.Contains(m.GetWarnings(), w) }

// TestFault23UnaryAnsweredWithStream: a non-streaming request answered
// with the events of the streaming endpoint (a server that ignores
// "stream": false: kaito-project/kaito#1880, unslothai/unsloth#6570,
// sgl-project/mini-sglang#51; Ollama's native API, which streams unless
// told not to, behind a proxy that drops the field) is read with the
// adapter's own stream reader and folded into the answer, with a warning,
// from the one request: text, finish, usage, request id and rate limits
// as the stream says them. It failed as UPSTREAM_BAD_RESPONSE ("not a
// JSON object"), not retried. A cut event stream is a cut stream
// (retried, nothing was relayed); an error event is the provider's error
// (retried as a stream's first event would be).
func TestFault23UnaryAnsweredWithStream(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/whole stream", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital of France")+f.text(" is Paris.")+f.tail))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if got := resp.GetMessage().GetParts(); len(got) != 1 || got[0].GetText() != okText {
				t.Errorf("parts %v", got)
			}
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetUsage().GetTotalTokens() == 0 || !warned(m, provider.StreamAnswerWarning) {
				t.Errorf("finish %v, usage %v, warnings %q", m.GetFinishReason(), m.GetUsage(), m.GetWarnings())
			}
			if m.GetAttempts() != 1 || up.requests() != 1 || m.GetProviderRequestId() != f.wantReqID(1) {
				t.Errorf("attempts %d, upstream %d, request id %q", m.GetAttempts(), up.requests(), m.GetProviderRequestId())
			}
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(1) {
				t.Errorf("rate limit %v", m.GetRateLimit())
			}
		})
		t.Run(f.name+"/tool call", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f18ToolRound(f)))
			yaml := strings.Replace(f.yaml, "capabilities: {chat:", "capabilities: {tools:", 1)
			c := f13Start(t, f13Defaults+yaml, up.URL, &f13Clock{})
			resp, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon?")}, Tools: weatherTools(t)})
			if err != nil {
				t.Fatal(err)
			}
			var calls []*llmrelayv1.ToolCall
			for _, p := range resp.GetMessage().GetParts() {
				if tc := p.GetToolCall(); tc != nil {
					calls = append(calls, tc)
				}
			}
			if len(calls) != 1 || calls[0].GetName() != "get_weather" || calls[0].GetArguments() != `{"city":"Lyon"}` || !calls[0].GetArgumentsValid() || calls[0].GetCallId() == "" {
				t.Errorf("calls %v", calls)
			}
			if m := resp.GetMeta(); m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || !warned(m, provider.StreamAnswerWarning) || up.requests() != 1 {
				t.Errorf("finish %v, warnings %q, upstream %d", m.GetFinishReason(), m.GetWarnings(), up.requests())
			}
		})
		for _, how := range []string{"cut", "error event"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				body := f.head + f.text("The capital")
				want := "stream_cut"
				if how == "error event" {
					body, want = body+f.errEvent, "unavailable"
				}
				up := f13Serve(t, respond(200, f.streamHead(1), body), f.okStep(2))
				c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m := resp.GetMeta()
				if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != want || up.requests() != 2 {
					t.Fatalf("retry reasons %v, upstream %d", rr, up.requests())
				}
				if resp.GetMessage().GetParts()[0].GetText() != okText || warned(m, provider.StreamAnswerWarning) || m.GetProviderRequestId() != f.wantReqID(2) {
					t.Errorf("answer %v, meta %v", resp.GetMessage(), m)
				}
			})
		}
		t.Run(f.name+"/every attempt cut", func(t *testing.T) {
			t.Parallel()
			cut := f.head + f.text("The capital")
			up := f13Serve(t, respond(200, f.streamHead(1), cut), respond(200, f.streamHead(2), cut), respond(200, f.streamHead(3), cut))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			_, m := f13Check(t, f, err, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 3, 0)
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(3) {
				t.Errorf("rate limit %v, want the last attempt's", m.GetRateLimit())
			}
			if f.name != "ollama" && m.GetResponseId() == "" {
				t.Errorf("response id lost: %v", m)
			}
			for _, rr := range m.GetRetryReasons() {
				if rr.GetReason() != "stream_cut" {
					t.Errorf("retry reason %v", rr)
				}
			}
		})
	}
	// The JSON answer itself under an event stream's label, the stream's
	// terminator glued after it (decolua/9router#3492): the JSON is the
	// answer.
	for _, f := range []f13Format{openaiChat, azureFormat(), openaiResponses} {
		t.Run(f.name+"/JSON then [DONE]", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f.okBody+"\n\ndata: [DONE]\n\n"))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if resp.GetMessage().GetParts()[0].GetText() != okText || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
				!warned(m, provider.JSONThenDoneWarning) || up.requests() != 1 || m.GetProviderRequestId() != f.wantReqID(1) {
				t.Errorf("answer %v, meta %v", resp.GetMessage(), m)
			}
		})
	}
}

// TestFault23OllamaBytesSplit: a character whose UTF-8 bytes a byte-level
// server wrote raw across two NDJSON lines (x and the first two bytes of
// 你, then its last byte and y) is the character again, streamed and in
// the answer folded from the lines a non-streaming request got: the
// Ollama stream reader hands every content token to the shared join
// (provider.SurrogateJoin), which holds a character's first bytes for the
// next delta as it holds a surrogate's high half. Each line was decoded
// apart, and the character was two or three U+FFFD.
func TestFault23OllamaBytesSplit(t *testing.T) {
	t.Parallel()
	f := ollamaFormat
	split := "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"x\xe4\xbd\"},\"done\":false}\n" +
		"{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\xa0y\"},\"done\":false}\n" + f.tail
	up := f13Serve(t, respond(200, f.streamHead(1), split))
	c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
	if got := readStream13(t, c); got.err != nil || got.text != "x你y" {
		t.Errorf("stream: err %v, text %q, want x你y", got.err, got.text)
	}
	resp, err := c.Chat(context.Background(), chatReq13())
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetMessage().GetParts()[0].GetText(); got != "x你y" || !warned(resp.GetMeta(), provider.StreamAnswerWarning) {
		t.Errorf("unary: text %q, warnings %q", got, resp.GetMeta().GetWarnings())
	}
}

// TestFault23UnaryStreamAnswerEnds: the event stream a non-streaming
// request got, complete and then kept open (the idle timeout ends it) or
// broken (a reset after the last event), is the answer, with the stream
// reader's own warning where its format has no terminator (a chat
// stream's [DONE], Anthropic's message_stop and the Responses API's
// response.completed end the answer themselves); cut before its end and
// then broken or kept open, it is a cut stream, retried. Both failed as
// a transport error, retried, and paid for again.
func TestFault23UnaryStreamAnswerEnds(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		whole := f.head + f.text("The capital of France") + f.text(" is Paris.") + f.tail
		for _, tc := range []struct {
			name string
			step f13Step
		}{
			{"complete then reset", thenReset(f.streamHead(1), whole)},
			{"complete then silent", thenHang(f.streamHead(1), whole)},
		} {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, tc.step, f.okStep(2))
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m := resp.GetMeta()
				if resp.GetMessage().GetParts()[0].GetText() != okText || m.GetAttempts() != 1 || up.requests() != 1 || !warned(m, provider.StreamAnswerWarning) ||
					m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderRequestId() != f.wantReqID(1) {
					t.Errorf("answer %v, meta %v, upstream %d", resp.GetMessage(), m, up.requests())
				}
			})
		}
		for _, tc := range []struct {
			name   string
			step   f13Step
			reason string
		}{
			{"cut then reset", thenReset(f.streamHead(1), f.head+f.text("The capital")), "unavailable"},
			{"cut then silent", thenHang(f.streamHead(1), f.head+f.text("The capital")), "timeout"},
		} {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, tc.step, f.okStep(2))
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m := resp.GetMeta()
				if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != tc.reason || up.requests() != 2 || resp.GetMessage().GetParts()[0].GetText() != okText {
					t.Errorf("retry reasons %v, upstream %d, answer %v", rr, up.requests(), resp.GetMessage())
				}
			})
		}
	}
}
