package openai

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 23 (chat2): follow-ups of the Chat Completions stream reader
// (testdata/README.md, "Round 23 (chat2)").

// TestRound23WholeMessageStream: a server that does not stream answers a
// stream request with its chat.completion object as one event, then
// [DONE] (hand-built from real_mscope_together_deepseek_tools_1's body,
// with a reasoning string: text, reasoning, two calls with ids and index
// -1). **Bug:** the choice's "message" was not read: the answer was empty
// and STOP. Now read as one delta: its fold is the unary answer of the
// same body, with one warning.
func TestRound23WholeMessageStream(t *testing.T) {
	t.Parallel()
	const model = "deepseek-ai/DeepSeek-V3.1"
	evs, f, _ := mgbStream(t, "dialect_whole_message_stream", mgbTogether, "", r22Ask(model, "secrets"))
	parts := f.Message.GetParts()
	if len(parts) != 4 || parts[0].GetReasoning().GetText() != "Two passwords, so two calls to the tool, one for each." ||
		parts[1].GetText() != "I'll help you retrieve the secrets using the provided passwords. Let me call the tool for each password:" {
		t.Fatalf("parts %v", parts)
	}
	for i, want := range [][2]string{{"call_7c1f0be2d94a4e3b9a51d0c4", `{"password": "mellon"}`}, {"call_e2a86d3b7f5c4d19a0b6e8f2", `{"password": "radiance"}`}} {
		if c := parts[2+i].GetToolCall(); c.GetCallId() != want[0] || c.GetName() != "secret_retrieval_tool" || c.GetArguments() != want[1] {
			t.Errorf("call %d %v", i, c)
		}
	}
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != warnWholeMessage {
		t.Errorf("warnings %q", w)
	}
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	r22Meta(t, f.Meta, "oWm1sG7-6z2FuN-9b01c7e2aa1480d7", "oWm1sG7-6z2FuN-9b01c7e2aa1480d7", model, 1765543594,
		&llmrelayv1.Usage{InputTokens: 191, OutputTokens: 59, TotalTokens: 250}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")

	// The unary answer of the same body has the same parts.
	raw, err := os.ReadFile(td("dialect_whole_message_stream.http"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(raw, []byte("\n\ndata: "))
	body, _, _ = bytes.Cut(body, []byte("\n\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	res, err := mgbProvider(t, mgbTogether, srv.URL, "").Generate(context.Background(), r22Ask(model, "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Message.GetParts(); len(u) != len(parts) {
		t.Errorf("unary parts %v", u)
	} else {
		for i := range u {
			if !proto.Equal(u[i], parts[i]) {
				t.Errorf("part %d: unary %v, stream %v", i, u[i], parts[i])
			}
		}
	}
}

// TestRound23WholeMessageRefusal: a refusal in a whole message (OpenAI's
// unary refusal shape, sent as the stream's one event) is the stream's
// refusal; a choice with both a delta and a message (Perplexity sends the
// message so far beside each delta) is read by its delta only.
func TestRound23WholeMessageRefusal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, want, refusal string
		warned                    bool
	}{
		{"refusal", `{"id":"chatcmpl-r23wm1","object":"chat.completion","created":1765543600,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't help with that."},"finish_reason":"stop"}]}`,
			"", "I'm sorry, I can't help with that.", true},
		{"both", `{"id":"chatcmpl-r23wm2","object":"chat.completion","created":1765543601,"model":"sonar","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"delta":{"role":"assistant","content":" there"},"finish_reason":"stop"}]}`,
			" there", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := accFold(t, review20Events(t, "data: "+c.body+"\n\ndata: [DONE]\n\n"))
			var text, refusal strings.Builder
			for _, p := range f.Message.GetParts() {
				text.WriteString(p.GetText())
				refusal.WriteString(p.GetRefusal())
			}
			if text.String() != c.want || refusal.String() != c.refusal {
				t.Errorf("text %q refusal %q", text.String(), refusal.String())
			}
			if w := f.Meta.GetWarnings(); (len(w) == 1 && w[0] == warnWholeMessage) != c.warned || len(w) > 1 {
				t.Errorf("warnings %q", w)
			}
		})
	}
}

// TestRound23PrefillBoundWarned: a Thinking model's content held as a
// possible prefilled think block past maxPrefilledHold is relayed as text
// (as before), now with one warning: a "</think>" after it would make it
// reasoning in the unary answer, so the stream's answer differs silently.
func TestRound23PrefillBoundWarned(t *testing.T) {
	t.Parallel()
	piece := strings.Repeat("thinking out loud ", 227) // 4086 bytes
	var b strings.Builder
	chunk := func(content string) {
		b.WriteString(`data: {"id":"chatcmpl-r23pb","object":"chat.completion.chunk","created":1765543700,"model":"Qwen/Qwen3-235B-A22B-Thinking-2507","choices":[{"index":0,"delta":{"content":` + strconv.Quote(content) + `},"finish_reason":null}]}` + "\n\n")
	}
	n := maxPrefilledHold/len(piece) + 2
	for range n {
		chunk(piece)
	}
	chunk("done.\n</think>\n\nThe answer.")
	b.WriteString(`data: {"id":"chatcmpl-r23pb","object":"chat.completion.chunk","created":1765543700,"model":"Qwen/Qwen3-235B-A22B-Thinking-2507","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	f := accFold(t, review20Events(t, b.String()))
	want := strings.Repeat(piece, n) + "done.\n</think>\n\nThe answer."
	if p := f.Message.GetParts(); len(p) != 1 || p[0].GetText() != want {
		t.Errorf("parts: %d, want the whole content as text", len(p))
	}
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != warnPrefillBound {
		t.Errorf("warnings %q", w)
	}
}

// TestRound23ByteCutReasoning: a byte-level server cuts a character's
// UTF-8 bytes between two deltas of a reasoning text ("a\xe6\x80", then
// "\x9db": 思), in each of the reasoning dialects, a refusal and a content
// array's text. **Bug:** only a content string was joined (commit
// 6c380111); the reasoning fields, the refusal's invalid bytes and content
// arrays gave U+FFFD per byte. Now joined as the content string is.
func TestRound23ByteCutReasoning(t *testing.T) {
	t.Parallel()
	const a, b = "a\xe6\x80", "\x9db"
	chunk := func(delta string) string {
		return `data: {"id":"chatcmpl-r23bc","object":"chat.completion.chunk","created":1765543800,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	q := func(s string) string { return `"` + s + `"` }
	cases := []struct {
		name      string
		delta     func(s string) string
		reasoning bool
		refusal   bool
	}{
		{"reasoning_content", func(s string) string { return `{"reasoning_content":` + q(s) + `}` }, true, false},
		{"reasoning", func(s string) string { return `{"reasoning":` + q(s) + `}` }, true, false},
		{"reasoning_details", func(s string) string {
			return `{"reasoning":` + q(s) + `,"reasoning_details":[{"type":"reasoning.text","text":` + q(s) + `,"index":0,"format":"unknown"}]}`
		}, true, false},
		{"mistral thinking", func(s string) string {
			return `{"content":[{"type":"thinking","thinking":[{"type":"text","text":` + q(s) + `}]}]}`
		}, true, false},
		{"content array text", func(s string) string { return `{"content":[{"type":"text","text":` + q(s) + `}]}` }, false, false},
		{"refusal", func(s string) string { return `{"refusal":` + q(s) + `}` }, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body := chunk(c.delta(a)) + chunk(c.delta(b)) +
				`data: {"id":"chatcmpl-r23bc","object":"chat.completion.chunk","created":1765543800,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
			f := accFold(t, review20Events(t, body))
			var r, txt, ref strings.Builder
			for _, p := range f.Message.GetParts() {
				r.WriteString(p.GetReasoning().GetText())
				txt.WriteString(p.GetText())
				ref.WriteString(p.GetRefusal())
			}
			got := txt.String()
			switch {
			case c.reasoning:
				got = r.String()
			case c.refusal:
				got = ref.String()
			}
			if got != "a思b" {
				t.Errorf("got %q (reasoning %q, text %q, refusal %q)", got, r.String(), txt.String(), ref.String())
			}
		})
	}
}

// TestRound23CallsHeldInPrefilledBlock: a Thinking model's call in the
// middle of content held as a possible prefilled think block is held with
// it: after a "</think>" the fold is the unary answer's (reasoning, text,
// call); a block never closed is text, then the call (as before); held
// arguments past maxPrefilledHold release the content as text and the
// call at once; a stream cut while calls are held relays them before the
// error.
func TestRound23CallsHeldInPrefilledBlock(t *testing.T) {
	t.Parallel()
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"chatcmpl-r23hc","object":"chat.completion.chunk","created":1765543900,"model":"Qwen/Qwen3-235B-A22B-Thinking-2507","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
	}
	call := func(args string) string {
		return `{"tool_calls":[{"index":0,"id":"call_r23hc","type":"function","function":{"name":"f","arguments":` + strconv.Quote(args) + `}}]}`
	}
	big := `{"x":"` + strings.Repeat("y", maxPrefilledHold) + `"}`
	cases := []struct {
		name, body string
		want       []string // the fold's parts: r:reasoning, t:text, c:call
	}{
		{"closed", chunk(`{"content":"plan"}`, "") + chunk(call(`{}`), "tool_calls") + chunk(`{"content":" more</think>"}`, "") +
			chunk(`{"content":"\n\nok"}`, "") + chunk(`{}`, "stop") + "data: [DONE]\n\n", []string{"r:plan more", "t:\n\nok", "c:{}"}},
		{"never closed", chunk(`{"content":"plan"}`, "") + chunk(call(`{}`), "") + chunk(`{"content":" more"}`, "") + chunk(`{}`, "tool_calls") + "data: [DONE]\n\n",
			[]string{"t:plan more", "c:{}"}},
		{"bound", chunk(`{"content":"plan"}`, "") + chunk(call(big), "") + chunk(`{"content":" more</think>x"}`, "") + chunk(`{}`, "tool_calls") + "data: [DONE]\n\n",
			[]string{"t:plan", "c:" + big, "t: more</think>x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := accFold(t, review20Events(t, c.body))
			var got []string
			for _, p := range f.Message.GetParts() {
				switch {
				case p.GetReasoning() != nil:
					got = append(got, "r:"+p.GetReasoning().GetText())
				case p.GetToolCall() != nil:
					got = append(got, "c:"+p.GetToolCall().GetArguments())
				default:
					got = append(got, "t:"+p.GetText())
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("parts %.80q, want %.80q", got, c.want)
			}
		})
	}
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		p, err := New(testKey)
		if err != nil {
			t.Fatal(err)
		}
		evs, _, err := collect(t, streamFrom(p, chunk(`{"content":"plan"}`, "")+chunk(call(`{}`), "")))
		if err == nil {
			t.Fatal("no error for a cut stream")
		}
		var kinds []provider.EventKind
		for _, ev := range evs {
			if ev.Kind != provider.EventMeta {
				kinds = append(kinds, ev.Kind)
			}
		}
		if !slices.Equal(kinds, []provider.EventKind{provider.EventText, provider.EventToolCall}) {
			t.Errorf("events %v", evs)
		}
	})
}
