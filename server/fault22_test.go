package server_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Fault sequences of session 22 (see fault13_test.go for the harness).
// Every body here is hand-built from the shared f13 answers, with the one
// field each case is about changed.

// noFinish is the words of the warning an answer without a finish reason
// carries.
const noFinish = "no finish reason"

func hasNoFinishWarning(m *llmrelayv1.ResponseMeta) bool {
	for _, w := range m.GetWarnings() {
		if strings.Contains(w, noFinish) {
			return true
		}
	}
	return false
}

// TestFault22UnaryNoFinishReason: a whole unary answer that names no
// finish reason (OpenAI's finish_reason null or left out, a Responses
// answer without status, Anthropic's stop_reason null, a Gemini candidate
// without finishReason) is relayed with its text, FINISH_REASON_UNSPECIFIED
// and a warning that it may be incomplete: it was a silent complete
// answer, which a cut generation a compatible server or a proxy framed as
// whole is indistinguishable from. A complete answer has no such warning.
func TestFault22UnaryNoFinishReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    f13Format
		body string
	}{
		{"chat finish_reason null", openaiChat, strings.Replace(openaiChat.okBody, `"finish_reason":"stop"`, `"finish_reason":null`, 1)},
		{"chat finish_reason absent", openaiChat, strings.Replace(openaiChat.okBody, `,"finish_reason":"stop"`, ``, 1)},
		{"azure finish_reason null", azureFormat(), strings.Replace(openaiChat.okBody, `"finish_reason":"stop"`, `"finish_reason":null`, 1)},
		{"responses without status", openaiResponses, strings.Replace(openaiResponses.okBody, `"status":"completed","model"`, `"model"`, 1)},
		{"anthropic stop_reason null", anthropicFormat, strings.Replace(anthropicFormat.okBody, `"stop_reason":"end_turn"`, `"stop_reason":null`, 1)},
		{"gemini without finishReason", geminiFormat, strings.Replace(geminiFormat.okBody, `"finishReason":"STOP",`, ``, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.body == tc.f.okBody {
				t.Fatal("the finish reason was not taken out")
			}
			h := merged(hdr("Content-Type", "application/json"), tc.f.reqIDHeader(1), tc.f.rl(1))
			up := f13Serve(t, respond(200, h, tc.body), respond(200, h, tc.f.okBody))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if got := resp.GetMessage().GetParts()[0].GetText(); got != okText {
				t.Errorf("text %q", got)
			}
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED || !hasNoFinishWarning(m) {
				t.Errorf("finish %v, warnings %q: want UNSPECIFIED with the warning", m.GetFinishReason(), m.GetWarnings())
			}
			if m.GetProviderRequestId() != tc.f.wantReqID(1) || m.GetAttempts() != 1 {
				t.Errorf("meta = %v", m)
			}
			// The same format's complete answer: no warning.
			resp, err = c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || hasNoFinishWarning(m) {
				t.Errorf("complete answer: finish %v, warnings %q", m.GetFinishReason(), m.GetWarnings())
			}
		})
	}
}

// TestFault22StreamNoFinishReason: a stream the provider ended by its own
// terminator without ever naming a finish reason (a chat stream's [DONE]
// with or without the usage chunk, no finish chunk; Anthropic's
// message_stop after a message_delta whose stop_reason is null, or with
// no message_delta at all; a Responses stream whose response.completed
// has no status) ends with its text and usage, FINISH_REASON_UNSPECIFIED
// and the warning, never as a silent complete answer. Gemini's stream,
// whose end is the end of the body, is a cut stream without one
// (UPSTREAM_BAD_RESPONSE after the text, not retried).
func TestFault22StreamNoFinishReason(t *testing.T) {
	t.Parallel()
	chatUsage := `data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32}}` + "\n\n"
	anthropicText := anthropicFormat.head + anthropicFormat.text("The capital of France") + anthropicFormat.text(" is Paris.") + anthropicEvent("content_block_stop", `"index":0`)
	for _, tc := range []struct {
		name  string
		f     f13Format
		body  string
		usage int32 // the total tokens the end reports (0: none)
	}{
		{"chat [DONE] after usage", openaiChat, openaiChat.head + openaiChat.text("The capital of France") + openaiChat.text(" is Paris.") + chatUsage + "data: [DONE]\n\n", 32},
		{"chat [DONE] alone", openaiChat, openaiChat.head + openaiChat.text("The capital of France") + openaiChat.text(" is Paris.") + "data: [DONE]\n\n", 0},
		{"anthropic stop_reason null", anthropicFormat, anthropicText +
			anthropicEvent("message_delta", `"delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":10}`) + anthropicEvent("message_stop", `"x":0`), 31},
		{"anthropic without message_delta", anthropicFormat, anthropicText + anthropicEvent("message_stop", `"x":0`), 22},
		{"responses completed without status", openaiResponses, strings.Replace(openaiResponses.complete(), `"status":"completed","output"`, `"output"`, 1), 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.body == tc.f.complete() {
				t.Fatal("the finish reason was not taken out")
			}
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.body), respond(200, tc.f.streamHead(2), tc.f.complete()))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.end == nil {
				t.Fatalf("err %v, end %v", got.err, got.end)
			}
			m := got.end.GetMeta()
			if got.text != okText || got.end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED || !hasNoFinishWarning(m) {
				t.Errorf("text %q, finish %v, warnings %q: want the text, UNSPECIFIED and the warning", got.text, got.end.GetFinishReason(), m.GetWarnings())
			}
			if m.GetUsage().GetTotalTokens() != tc.usage || m.GetProviderRequestId() != tc.f.wantReqID(1) || m.GetAttempts() != 1 {
				t.Errorf("usage %v, meta %v", m.GetUsage(), m)
			}
			// The complete stream: no warning.
			got = readStream13(t, c)
			if got.err != nil || got.end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || hasNoFinishWarning(got.end.GetMeta()) {
				t.Errorf("complete stream: err %v, end %v", got.err, got.end)
			}
		})
	}
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		f := geminiFormat
		up := f13Serve(t, respond(200, f.streamHead(1), f.text("The capital of France")+f.text(" is Paris.")))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.end != nil || got.text != okText {
			t.Fatalf("end %v, text %q", got.end, got.text)
		}
		f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, 0)
		if up.requests() != 1 {
			t.Errorf("upstream saw %d: content was relayed, nothing may be retried", up.requests())
		}
	})
}

// TestFault22GzipNotGzip: an answer labelled Content-Encoding gzip whose
// body is not gzip (a proxy adding the header to plain bytes) is a bad
// answer that says so, not retried (the same bytes would come again): it
// was a "connection error" and retried, unary and streamed. A gzip body
// cut short is still a cut answer, retried.
func TestFault22GzipNotGzip(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		gz := func(n int, stream bool) f13Step {
			h := merged(hdr("Content-Type", "application/json", "Content-Encoding", "gzip"), f.reqIDHeader(n), f.rl(n))
			body := f.okBody
			if stream {
				h = merged(f.streamHead(n), hdr("Content-Encoding", "gzip"))
				body = f.complete()
			}
			return respond(200, h, body)
		}
		t.Run(f.name+"/unary", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, gz(1, false), f.okStep(2))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, 0)
			if !strings.Contains(st.Message(), "Content-Encoding") || up.requests() != 1 {
				t.Errorf("message %q, upstream saw %d", st.Message(), up.requests())
			}
		})
		t.Run(f.name+"/stream", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, gz(1, true), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.text != "" {
				t.Fatalf("end %v, text %q", got.end, got.text)
			}
			st, _ := f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, 0)
			if !strings.Contains(st.Message(), "Content-Encoding") || up.requests() != 1 {
				t.Errorf("message %q, upstream saw %d", st.Message(), up.requests())
			}
		})
		t.Run(f.name+"/cut gzip", func(t *testing.T) {
			t.Parallel()
			z := gzipped(f.okBody)
			h := merged(hdr("Content-Type", "application/json", "Content-Encoding", "gzip"), f.reqIDHeader(1), f.rl(1))
			up := f13Serve(t, respond(200, h, z[:len(z)/2]), f.okStep(2))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetProviderRequestId() != f.wantReqID(2) {
				t.Errorf("meta = %v", m)
			}
		})
	}
}

// validDetails fails the test unless every detail of err's status decoded
// (a detail whose proto holds invalid UTF-8 does not) and its message is
// valid UTF-8.
func validDetails(t *testing.T, err error) *status.Status {
	t.Helper()
	st := status.Convert(err)
	if !utf8.ValidString(st.Message()) {
		t.Errorf("message %q is not valid UTF-8", st.Message())
	}
	if len(st.Details()) == 0 {
		t.Errorf("status %v has no details", st)
	}
	for _, d := range st.Details() {
		if e, ok := d.(error); ok {
			t.Errorf("a detail did not decode: %v", e)
		}
	}
	return st
}

// onlyReplaced reports whether s is pre, then one or more U+FFFD, then
// post: the invalid bytes between them replaced, nothing else lost.
func onlyReplaced(s, pre, post string) bool {
	mid, ok := strings.CutPrefix(s, pre)
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, post)
	return ok && mid != "" && strings.Trim(mid, "\uFFFD") == ""
}

// TestFault22InvalidUTF8: invalid UTF-8 from a provider (latin-1 bytes,
// a character's bytes cut, raw bytes split across two stream events as a
// byte-level tokenizer's server emits them) never makes a gRPC message
// fail to marshal: in the answer's text, ids, model and finish reason, in
// the request id and rate-limit headers, in a stream's deltas and in an
// error's message, type, code and param (status message, ErrorInfo,
// QuotaFailure, FailedCallMeta), each invalid byte is U+FFFD and the
// text around it is kept; the client decodes every message and detail.
// A character whose bytes two stream deltas split is the character
// again (session 23).
func TestFault22InvalidUTF8(t *testing.T) {
	t.Parallel()
	head := hdr("Content-Type", "application/json", "x-request-id", "req-\xff", "request-id", "req-\xff", "x-odd", "caf\xe9")
	unary := map[string]string{
		openaiChat.name:      "{\"id\":\"chatcmpl-\xff\",\"object\":\"chat.completion\",\"created\":1760433164,\"model\":\"gpt-\xe4\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"x\xe4\xbdy\"},\"finish_reason\":\"st\xffop\"}],\"usage\":{\"prompt_tokens\":24,\"completion_tokens\":8,\"total_tokens\":32}}",
		openaiResponses.name: "{\"id\":\"resp_\xff\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt\xff\",\"output\":[{\"id\":\"msg_\xff\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"x\xe4\xbdy\"}],\"role\":\"assistant\"}]}",
		anthropicFormat.name: "{\"model\":\"claude\xff\",\"id\":\"msg_\xff\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\xe4\xbdy\"}],\"stop_reason\":\"end_\xffturn\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":21,\"output_tokens\":10}}",
		geminiFormat.name:    "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\xe4\xbdy\"}],\"role\":\"model\"},\"finishReason\":\"ST\xffOP\",\"index\":0}],\"modelVersion\":\"gemini\xff\",\"responseId\":\"gem_\xff\"}",
		ollamaFormat.name:    "{\"model\":\"llama\xff\",\"message\":{\"role\":\"assistant\",\"content\":\"x\xe4\xbdy\"},\"done_reason\":\"st\xffop\",\"done\":true}",
	}
	// split is a delta ending in the first two bytes of 你 (e4 bd a0) and
	// one starting with its last.
	split := map[string]string{
		openaiChat.name: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\xe4\xbd\"},\"finish_reason\":null}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xa0y\"},\"finish_reason\":null}]}\n\n",
		openaiResponses.name: "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,\"item_id\":\"msg_f13\",\"output_index\":0,\"content_index\":0,\"delta\":\"x\xe4\xbd\"}\n\n" +
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_f13\",\"output_index\":0,\"content_index\":0,\"delta\":\"\xa0y\"}\n\n",
		anthropicFormat.name: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\xe4\xbd\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xa0y\"}}\n\n",
		geminiFormat.name: "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\xe4\xbd\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n" +
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\xa0y\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n",
		ollamaFormat.name: "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"x\xe4\xbd\"},\"done\":false}\n" +
			"{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\xa0y\"},\"done\":false}\n",
	}
	errBody := map[string]string{
		openaiChat.name:      "{\"error\":{\"message\":\"limit \xe4\xbd reached\",\"type\":\"requ\xffests\",\"param\":\"p\xe9\",\"code\":\"rate_\xfflimit\"}}",
		openaiResponses.name: "{\"error\":{\"message\":\"limit \xe4\xbd reached\",\"type\":\"requ\xffests\",\"param\":\"p\xe9\",\"code\":\"rate_\xfflimit\"}}",
		anthropicFormat.name: "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"limit \xe4\xbd reached\"}}",
		geminiFormat.name:    "{\"error\":{\"code\":429,\"message\":\"limit \xe4\xbd reached\",\"status\":\"RESOURCE_\xffEXHAUSTED\"}}",
		ollamaFormat.name:    "{\"error\":\"limit \xe4\xbd reached\"}",
	}
	for _, f := range []f13Format{openaiChat, openaiResponses, anthropicFormat, geminiFormat, ollamaFormat} {
		t.Run(f.name+"/unary", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, merged(head, hdr("x-ratelimit-limit-requests", "10\xff")), unary[f.name]))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err) // a message that does not marshal ends as Internal
			}
			if got := resp.GetMessage().GetParts()[0].GetText(); !onlyReplaced(got, "x", "y") {
				t.Errorf("text %q, want x, U+FFFD for the cut bytes, y", got)
			}
			m := resp.GetMeta()
			if m.GetResponseId() != "" && !strings.Contains(m.GetResponseId(), "\uFFFD") {
				t.Errorf("response id %q", m.GetResponseId())
			}
			if !strings.Contains(m.GetResolvedModel(), "\uFFFD") || (f.name != openaiResponses.name && !strings.Contains(m.GetProviderFinishReason(), "\uFFFD")) {
				t.Errorf("model %q, provider finish reason %q", m.GetResolvedModel(), m.GetProviderFinishReason())
			}
			if f.reqID != "" && m.GetProviderRequestId() != "req-\uFFFD" {
				t.Errorf("provider request id %q", m.GetProviderRequestId())
			}
		})
		t.Run(f.name+"/stream split", func(t *testing.T) {
			t.Parallel()
			tail := f.tail
			if f.name == openaiResponses.name {
				// Its done item and completed response hold the whole
				// text, the character whole.
				tail = strings.ReplaceAll(tail, okText, "x\u4f60y")
			}
			body := f.head + split[f.name] + tail
			up := f13Serve(t, respond(200, merged(f.streamHead(1), hdr("x-odd", "caf\xe9")), body))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.end == nil {
				t.Fatalf("err %v, end %v", got.err, got.end)
			}
			// The stream readers hand the raw text tokens of a chunk
			// that is not valid UTF-8 to the shared join
			// (provider.SurrogateJoin), which puts the character
			// together again (session 23; it was U+FFFD for each cut
			// byte).
			if got.text != "x\u4f60y" {
				t.Errorf("text %q, want x你y", got.text)
			}
		})
		t.Run(f.name+"/error", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(429, merged(head, hdr("Retry-After", "1")), errBody[f.name]))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("err %v", err)
			}
			st := validDetails(t, err)
			if !onlyReplaced(st.Message(), "up: limit ", " reached") {
				t.Errorf("message %q", st.Message())
			}
			m := failedMeta(t, err)
			if f.reqID != "" && m.GetProviderRequestId() != "req-\uFFFD" {
				t.Errorf("provider request id %q", m.GetProviderRequestId())
			}
			if rr := m.GetRetryReasons(); len(rr) != 1 || !onlyReplaced(rr[0].GetMessage(), "limit ", " reached") {
				t.Errorf("retry reasons %v", rr)
			}
		})
		t.Run(f.name+"/error event after content", func(t *testing.T) {
			t.Parallel()
			ev := strings.Replace(f.errEvent, "The", "Th\xe9", 1)
			if f.name == anthropicFormat.name {
				ev = strings.Replace(f.errEvent, "Overloaded", "Overl\xe9aded", 1)
			} else if f.name == ollamaFormat.name {
				ev = strings.Replace(f.errEvent, "an error", "an \xe9rror", 1)
			}
			if ev == f.errEvent {
				t.Fatal("no invalid byte put in the event")
			}
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+ev))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.text != "The capital" || got.err == nil {
				t.Fatalf("end %v, text %q, err %v", got.end, got.text, got.err)
			}
			st := validDetails(t, got.err)
			if st.Code() != f.errCode || !strings.Contains(st.Message(), "\uFFFD") {
				t.Errorf("status %v %q", st.Code(), st.Message())
			}
		})
	}
}

// TestFault22FallbackByStatus: which provider statuses give way to a
// route's next deployment, for every format, once the first deployment's
// attempts are spent: its own faults (401 and 403 its key, 402 its
// credits, 404 its model, 429 its rate limit) at once, without a retry on
// it; a request too large for it (413) at once, without a retry (its
// limit, which another deployment's may exceed); what a retry could fix
// (408, 409, 5xx but 501) after the retries;
// never what is the request's (400, 422) nor 501 (the same request
// is not implemented there either): the status is the first
// deployment's and the second is never asked. The meta names the
// deployment of each failed attempt, with its status, in order.
func TestFault22FallbackByStatus(t *testing.T) {
	t.Parallel()
	type outcome struct {
		fallback bool
		attempts int        // on the first deployment
		code     codes.Code // when it does not fall back
	}
	table := map[int]outcome{
		400: {false, 1, codes.InvalidArgument},
		401: {true, 1, 0},
		402: {true, 1, 0},
		403: {true, 1, 0},
		404: {true, 1, 0},
		408: {true, 2, 0},
		409: {true, 2, 0},
		413: {true, 1, 0}, // the deployment's size limit (round 25): at once
		422: {false, 1, codes.InvalidArgument},
		429: {true, 1, 0},
		500: {true, 2, 0},
		501: {false, 1, codes.Unavailable},
		502: {true, 2, 0},
		503: {true, 2, 0},
		504: {true, 2, 0},
		529: {true, 2, 0},
	}
	for _, f := range f13Formats() {
		for st, want := range table {
			t.Run(f.name+"/"+strconv.Itoa(st), func(t *testing.T) {
				t.Parallel()
				first := f13Serve(t, f.errStep(1, st, nil), f.errStep(2, st, nil))
				second := f13Serve(t, f.okStep(11))
				clock := &f13Clock{}
				c := f13StartRouted(t, f, 2, first, second, clock)
				resp, err := c.Chat(context.Background(), chatReq13())
				var m *llmrelayv1.ResponseMeta
				if want.fallback {
					if err != nil {
						t.Fatalf("did not fall back: %v", err)
					}
					m = resp.GetMeta()
					if m.GetProvider() != "second" || m.GetAttempts() != int32(want.attempts+1) || m.GetProviderRequestId() != f.wantReqID(11) ||
						!slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
						t.Errorf("meta = %v", m)
					}
				} else {
					if status.Code(err) != want.code {
						t.Fatalf("err %v, want %v", err, want.code)
					}
					m = failedMeta(t, err)
					if m.GetProvider() != "first" || m.GetAttempts() != int32(want.attempts) || len(m.GetRouting().GetTried()) != 0 {
						t.Errorf("meta = %v", m)
					}
				}
				if len(m.GetRetryReasons()) != want.attempts {
					t.Fatalf("retry reasons %v, want %d", m.GetRetryReasons(), want.attempts)
				}
				for i, rr := range m.GetRetryReasons() {
					if rr.GetAttempt() != int32(i+1) || rr.GetDeployment() != "first" || rr.GetUpstreamStatus() != int32(st) || rr.GetReason() != "http_"+strconv.Itoa(st) {
						t.Errorf("retry reason %d = %v", i, rr)
					}
				}
				if first.requests() != want.attempts || second.requests() != map[bool]int{true: 1}[want.fallback] || len(clock.slept()) != want.attempts-1 {
					t.Errorf("first saw %d, second %d, sleeps %v", first.requests(), second.requests(), clock.slept())
				}
			})
		}
	}
}

// withTools is the format's configuration with the tools capability in
// the chat one's format.
func withTools(t *testing.T, f f13Format) string {
	t.Helper()
	const chat = "capabilities: {chat: {format: "
	i := strings.Index(f.yaml, chat)
	j := strings.Index(f.yaml[i:], "}}")
	if i < 0 || j < 0 {
		t.Fatalf("no chat capability in %s", f.yaml)
	}
	name := f.yaml[i+len(chat) : i+j]
	return f.yaml[:i] + chat + name + "}, tools: {format: " + name + "}}" + f.yaml[i+j+2:]
}

// TestFault22InvalidUTF8ToolArguments: a tool call's arguments with
// invalid UTF-8 inside (a latin-1 é), whether the provider sends them as a
// JSON string (OpenAI, Anthropic's partial_json) or as an object the
// adapter keeps as JSON text (Anthropic's input, Gemini's args, Ollama's
// arguments), reach the client as valid UTF-8 and valid JSON, the byte
// replaced, unary and streamed: the arguments are a proto string.
func TestFault22InvalidUTF8ToolArguments(t *testing.T) {
	t.Parallel()
	const want = "{\"city\":\"caf\uFFFD\"}"
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Weather for a city", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	msgs := []*llmrelayv1.Message{user("What is the weather in Lyon?")}
	for _, tc := range []struct {
		name   string
		f      f13Format
		stream bool
		body   string
	}{
		{"openai-chat/unary", openaiChat, false, "{\"id\":\"chatcmpl-f22\",\"object\":\"chat.completion\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"caf\xe9\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}"},
		{"anthropic/unary", anthropicFormat, false, "{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_f22\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"caf\xe9\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":21,\"output_tokens\":10}}"},
		{"anthropic/stream", anthropicFormat, true, anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5","id":"msg_f22","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
			anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}`) +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\\\"caf\xe9\\\"}\"}}\n\n" +
			anthropicEvent("content_block_stop", `"index":0`) + anthropicEvent("message_delta", `"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":10}`) + anthropicEvent("message_stop", `"x":0`)},
		{"gemini/unary", geminiFormat, false, "{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"caf\xe9\"}}}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"gem_f22\"}"},
		{"gemini/stream", geminiFormat, true, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"caf\xe9\"}}}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"gem_f22\"}\r\n\r\n"},
		{"ollama/unary", ollamaFormat, false, "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_weather\",\"arguments\":{\"city\":\"caf\xe9\"}}}]},\"done_reason\":\"stop\",\"done\":true}"},
		{"ollama/stream", ollamaFormat, true, "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_weather\",\"arguments\":{\"city\":\"caf\xe9\"}}}]},\"done\":false}\n" + ollamaFormat.tail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ct := "application/json"
			if tc.stream {
				ct = tc.f.streamType
			}
			up := f13Serve(t, respond(200, hdr("Content-Type", ct), tc.body))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+withTools(t, tc.f), up.URL, &f13Clock{})
			var calls []*llmrelayv1.ToolCall
			if !tc.stream {
				resp, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: tools})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range resp.GetMessage().GetParts() {
					if p.GetToolCall() != nil {
						calls = append(calls, p.GetToolCall())
					}
				}
			} else {
				s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: tools})
				if err != nil {
					t.Fatal(err)
				}
				ended := false
				for {
					ev, err := s.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if d := ev.GetToolCallDone(); d != nil {
						calls = append(calls, d.GetToolCall())
					}
					ended = ended || ev.GetEnd() != nil
				}
				if !ended {
					t.Error("no end")
				}
			}
			if len(calls) != 1 || calls[0].GetName() != "get_weather" || calls[0].GetArguments() != want || !calls[0].GetArgumentsValid() {
				t.Errorf("calls %v, want one get_weather with %s", calls, want)
			}
		})
	}
}

// TestFault22SurrogateSplitAcrossEvents: a character beyond the BMP cut
// between the halves of its UTF-16 surrogate pair, each half escaped in
// its own event (a JavaScript proxy re-chunking the text:
// docs/decisions.md "Surrogate pairs split across text deltas are
// joined"), reaches the client whole in every format, with no U+FFFD; a
// high half nothing completes is one U+FFFD and the text after it is
// kept.
func TestFault22SurrogateSplitAcrossEvents(t *testing.T) {
	t.Parallel()
	// text is a content event of the format saying the JSON string
	// literal lit (escapes kept as written).
	text := func(f f13Format, lit string) string {
		return strings.Replace(f.text("@@"), `"@@"`, `"`+lit+`"`, 1)
	}
	for _, f := range f13Formats() {
		for _, tc := range []struct {
			name string
			lits []string
			want string
		}{
			{"joined", []string{`Paris \ud83d`, `\uddfc is the capital.`}, "Paris \U0001F5FC is the capital."},
			{"lone high half", []string{`Paris \ud83d`, `is the capital.`}, "Paris \uFFFDis the capital."},
		} {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				body := f.head
				for _, l := range tc.lits {
					body += text(f, l)
				}
				body += f.tail
				if f.name == openaiResponses.name {
					// Its done item and completed response hold the
					// whole text.
					body = strings.ReplaceAll(body, okText, tc.want)
				}
				up := f13Serve(t, respond(200, f.streamHead(1), body))
				c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.err != nil || got.end == nil {
					t.Fatalf("err %v, end %v", got.err, got.end)
				}
				if got.text != tc.want {
					t.Errorf("text %q, want %q", got.text, tc.want)
				}
			})
		}
	}
}
