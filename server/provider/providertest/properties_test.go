package providertest

import (
	"net/http"
	"testing"
)

func sseRecording(body string) Recording {
	return Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)}
}

// TestSaidChatStream: the reader joins a chat stream's text and argument
// deltas by index (calls without an index by their place), keeps the
// last usage, and sees the terminal marker.
func TestSaidChatStream(t *testing.T) {
	t.Parallel()
	rec := sseRecording("data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\",\"tool_calls\":[{\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\r\n\r\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\",\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]}}]}\r\n\r\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8}}\r\n\r\n")
	s, ok := Said(WireChat, rec)
	if !ok || !s.Stream || s.ResponseID != "c1" || s.Model != "m" || s.Text != "Hello" || !s.Terminal || s.Finish != "tool_calls" {
		t.Fatalf("said %+v", s)
	}
	if len(s.Calls) != 1 || s.Calls[0].ID != "call_a" || s.Calls[0].Name != "f" || s.Calls[0].Args != `{"x":1}` || !s.Calls[0].Deltas {
		t.Errorf("calls %+v", s.Calls)
	}
	if u := s.Usage; u == nil || *u.Input != 5 || *u.Output != 3 || u.Cached != nil {
		t.Errorf("usage %+v", u)
	}
}

// TestSaidAnthropicUsage: Anthropic's input excludes cache reads and
// writes, the contract's includes them; a later count replaces an
// earlier one.
func TestSaidAnthropicUsage(t *testing.T) {
	t.Parallel()
	rec := sseRecording("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":20,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"2}\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n")
	s, ok := Said(WireAnthropic, rec)
	if !ok || s.Terminal || s.Finish != "tool_use" || len(s.Calls) != 1 || s.Calls[0].Args != `{"a":2}` {
		t.Fatalf("said %+v", s)
	}
	if u := s.Usage; *u.Input != 130 || *u.Output != 7 || *u.Cached != 100 || *u.CacheCreation != 20 {
		t.Errorf("usage in %d out %d cached %d creation %d", *u.Input, *u.Output, *u.Cached, *u.CacheCreation)
	}
}

// TestCutBeforeTerminal: the cut copy ends before the event holding the
// first terminal marker (CRLF or LF framing), and inside it just after
// the marker.
func TestCutBeforeTerminal(t *testing.T) {
	t.Parallel()
	for _, sep := range []string{"\n\n", "\r\n\r\n"} {
		first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}" + sep
		rec := sseRecording(first + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}" + sep + "data: [DONE]" + sep)
		before, inside, ok := cutBeforeTerminal(WireChat, rec)
		if !ok || string(before.Body) != first {
			t.Errorf("%q: before %q", sep, before.Body)
		}
		if want := first + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"`; string(inside.Body) != want {
			t.Errorf("%q: inside %q", sep, inside.Body)
		}
	}
	if _, _, ok := cutBeforeTerminal(WireChat, sseRecording("data: [DONE]\n\n")); ok {
		t.Error("a stream that is only its terminal marker has nothing before it")
	}
}

// TestSplitThink: a leading <think> block, or a closing tag alone, is
// reasoning; a tag further in is text.
func TestSplitThink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, text, reasoning string }{
		{"\n<think>r</think>\n\nt", "\n\nt", "r"},
		{"r</think>t", "t", "r"},
		{"<think>open", "", "open"},
	} {
		text, reasoning, ok := splitThink(tc.in)
		if !ok || text != tc.text || reasoning != tc.reasoning {
			t.Errorf("%q: %q %q %v", tc.in, text, reasoning, ok)
		}
	}
	if _, _, ok := splitThink("a <think>b</think>"); ok {
		t.Error("a tag after text split")
	}
}
