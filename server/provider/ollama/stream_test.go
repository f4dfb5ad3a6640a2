package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	relayfold "github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// renderEvents is the golden form of a list of events, one per line.
func renderEvents(t testing.TB, evs []*provider.Event, final error) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventMeta:
			fmt.Fprintf(&b, "meta %s\n", compactProto(t, ev.Meta))
		case provider.EventText:
			fmt.Fprintf(&b, "text %q\n", ev.Text)
		case provider.EventRefusal:
			fmt.Fprintf(&b, "refusal %q\n", ev.Text)
		case provider.EventToolCall:
			d := ev.ToolCall
			fmt.Fprintf(&b, "tool_call id=%s index=%d name=%q args=%q\n", d.CallID, d.Index, d.Name, d.Arguments)
		case provider.EventToolCallEnd:
			fmt.Fprintf(&b, "tool_call_end id=%s index=%d\n", ev.ToolCall.CallID, ev.ToolCall.Index)
		case provider.EventUsage:
			fmt.Fprintf(&b, "usage %s\n", compactProto(t, ev.Usage))
		case provider.EventReasoning:
			r := ev.Reasoning
			fmt.Fprintf(&b, "reasoning index=%d text=%q", r.Index, r.Text)
			if r.Signature != "" || r.Redacted || r.ID != "" {
				fmt.Fprintf(&b, " signature=%q redacted=%v id=%q", r.Signature, r.Redacted, r.ID)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "unknown kind %d\n", ev.Kind)
		}
	}
	if final != nil {
		fmt.Fprintf(&b, "error %s\n", final)
	} else {
		b.WriteString("EOF\n")
	}
	return b.Bytes()
}

func TestStreamGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(testing.TB) *provider.Request
	}{
		{"stream_text", textRequest},
		{"stream_tools", toolsRequest},
		{"stream_thinking", thinkingRequest},
		{"stream_thinking_tools", thinkingToolsRequest},
		{"stream_error", textRequest},
		{"stream_cut", textRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			st, err := newTestProvider(t, srv).Stream(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(st)
			providertest.Golden(t, td(tc.name+".golden"), renderEvents(t, evs, err))
			providertest.Golden(t, td(tc.name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

func TestStreamFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file     string
		kind     provider.Kind
		status   int
		msg      string
		minTexts int
	}{
		{"stream_error", provider.KindUnavailable, 200, "an error was encountered while running the model: unexpected EOF", 5},
		{"stream_cut", provider.KindBadResponse, 0, "stream ended before the final done:true line", 9},
		{"stream_generate_shaped", provider.KindBadResponse, 0, `stream line 1: the answer has a "response" field and no "message"`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.file+".http"))
			st, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(st)
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *provider.Error", err)
			}
			if pe.Kind != tc.kind || pe.HTTPStatus != tc.status || !strings.Contains(pe.Message, tc.msg) || pe.Provider != "ollama" {
				t.Errorf("error = %+v", pe)
			}
			texts := 0
			for _, ev := range evs {
				if ev.Kind == provider.EventText {
					texts++
				}
			}
			if texts != tc.minTexts {
				t.Errorf("got %d text events before the failure, want %d", texts, tc.minTexts)
			}
			// The error sticks.
			if _, err2 := st.Recv(); err2 == nil || err2 == io.EOF {
				t.Errorf("Recv after failure = %v", err2)
			}
		})
	}
}

func TestStreamHTTPError(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("error_404.http"))
	st, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
	var pe *provider.Error
	if st != nil || !errors.As(err, &pe) || pe.Kind != provider.KindNotFound {
		t.Fatalf("Stream = %v, %v", st, err)
	}
	if got := srv.Last(t).Header.Get("Accept"); got != "application/x-ndjson" {
		t.Errorf("Accept = %q", got)
	}
}

// fakeStream is a stream over a body, without HTTP.
func fakeStream(body io.Reader) *stream {
	return newStream(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(body)}, "salt", window{}, nil)
}

func TestStreamLongLine(t *testing.T) {
	t.Parallel()
	long := `{"model":"m","message":{"role":"assistant","content":"` + strings.Repeat("a", maxLineSize) + `"},"done":false}` + "\n"
	_, err := collect(fakeStream(strings.NewReader(long)))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "longer than") {
		t.Fatalf("err = %v", err)
	}
	// A line just under the limit is fine, even without a final newline.
	content := strings.Repeat("b", 1<<20)
	ok := `{"model":"m","message":{"role":"assistant","content":"` + content + `"},"done":false}` + "\n\n" +
		`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length"}`
	evs, err := collect(fakeStream(strings.NewReader(ok)))
	if err != nil {
		t.Fatal(err)
	}
	if evs[1].Kind != provider.EventText || evs[1].Text != content {
		t.Errorf("long text not delivered whole")
	}
}

func TestStreamCloseThenRecv(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("stream_text.http"))
	st, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if ev, err := st.Recv(); err == nil || err == io.EOF || ev != nil {
		t.Errorf("Recv after Close = %v, %v", ev, err)
	}
}

func TestStreamEdgeLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		kind provider.Kind // 0: success
		want string        // substring of the rendered events
	}{
		{"empty body", "", provider.KindBadResponse, "before any line"},
		{"not json", "hello\n", provider.KindBadResponse, "not valid JSON"},
		{"blank lines and CRLF", "\r\n" + `{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}` + "\r\n\r\n" +
			`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":1}` + "\r\n", 0, `usage {"input_tokens":3,"output_tokens":1,"total_tokens":4}`},
		{"context error line", `{"error":"input exceeds maximum context length"}` + "\n", provider.KindContextLength, "context"},
		{"error object", `{"error":{"message":"upstream overloaded","type":"overloaded_error"}}` + "\n", provider.KindUnavailable, "upstream overloaded"},
		{"tool call with id and string args", `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x1","function":{"name":"f","arguments":"{\"a\":1}"}}]},"done":true,"done_reason":"stop"}`, 0,
			`tool_call id=call_x1 index=0 name="f" args="{\"a\":1}"`},
		{"content array", `{"model":"m","message":{"role":"assistant","content":[{"type":"text","text":"x"},"y"]},"done":true}`, 0, `text "xy"`},
		{"data after done ignored", `{"model":"m","done":true,"done_reason":"stop"}` + "\ngarbage\n", 0, "EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, err := collect(fakeStream(strings.NewReader(tc.body)))
			out := string(renderEvents(t, evs, err))
			if tc.kind == 0 && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tc.kind != 0 {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.Kind != tc.kind {
					t.Fatalf("err = %v, want kind %v", err, tc.kind)
				}
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("events:\n%s\nwant substring %s", out, tc.want)
			}
		})
	}
}

// folded is a stream's events folded into the shape of a unary result.
type folded struct {
	msg  *llmrelayv1.Message
	meta *llmrelayv1.ResponseMeta
}

// fold folds events the way the server's accumulator (package fold) does:
// parts in the order they started; consecutive text pieces form one text
// part; reasoning pieces with the same index form one Reasoning part (text
// and signature concatenated, redacted and id from any piece); tool call
// fragments are grouped by CallID (arguments and signature concatenated,
// name on the first delta only). The last usage wins and metas merge.
func foldEvents(t testing.TB, evs []*provider.Event) folded {
	t.Helper()
	type segment struct {
		kind      provider.EventKind
		callID    string
		name      string
		index     int
		text, sig strings.Builder
		redacted  bool
		id        string
	}
	var segs []*segment
	calls := map[string]*segment{}
	reasoning := map[int]*segment{}
	meta := &llmrelayv1.ResponseMeta{}
	var usage *llmrelayv1.Usage
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			if n := len(segs); n == 0 || segs[n-1].kind != provider.EventText {
				segs = append(segs, &segment{kind: provider.EventText})
			}
			segs[len(segs)-1].text.WriteString(ev.Text)
		case provider.EventReasoning:
			r := ev.Reasoning
			s, ok := reasoning[r.Index]
			if !ok {
				s = &segment{kind: provider.EventReasoning}
				reasoning[r.Index] = s
				segs = append(segs, s)
			}
			s.text.WriteString(r.Text)
			s.sig.WriteString(r.Signature)
			s.redacted = s.redacted || r.Redacted
			if r.ID != "" {
				s.id = r.ID
			}
		case provider.EventMeta:
			proto.Merge(meta, ev.Meta)
		case provider.EventUsage:
			usage = ev.Usage
		case provider.EventToolCall:
			d := ev.ToolCall
			if d.CallID == "" {
				t.Fatalf("tool call delta without CallID: %+v", d)
			}
			s, ok := calls[d.CallID]
			if !ok {
				s = &segment{kind: provider.EventToolCall, callID: d.CallID, name: d.Name, index: d.Index}
				calls[d.CallID] = s
				segs = append(segs, s)
			} else if d.Name != "" {
				t.Errorf("name repeated on a later delta of %s", d.CallID)
			}
			s.text.WriteString(d.Arguments)
			s.sig.WriteString(d.Signature)
		}
	}
	m := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	callNo := 0
	for _, s := range segs {
		switch s.kind {
		case provider.EventText:
			m.Parts = append(m.Parts, text(s.text.String()))
		case provider.EventReasoning:
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
				Text: s.text.String(), Signature: s.sig.String(), Redacted: s.redacted, Id: s.id,
			}}})
		case provider.EventToolCall:
			if s.index != callNo {
				t.Errorf("call %s index %d, want %d", s.callID, s.index, callNo)
			}
			callNo++
			args := s.text.String()
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
				CallId: s.callID, Name: s.name, Arguments: args, ArgumentsValid: providertest.IsJSONObject(args), Signature: s.sig.String(),
			}}})
		}
	}
	meta.Usage = usage
	return folded{msg: m, meta: meta}
}

// accumulate feeds the events to the server's accumulator (package fold)
// as the server relays them and returns the message it folds.
func accumulate(t testing.TB, evs []*provider.Event) *llmrelayv1.Message {
	t.Helper()
	var acc relayfold.Accumulator
	for _, ev := range evs {
		var err error
		switch ev.Kind {
		case provider.EventText:
			acc.AddText(ev.Text)
		case provider.EventRefusal:
			acc.AddRefusal(ev.Text)
		case provider.EventReasoning:
			r := ev.Reasoning
			err = acc.AddReasoning(r.Proto())
		case provider.EventToolCall:
			d := ev.ToolCall
			err = acc.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: d.CallID, Index: int32(d.Index), Name: d.Name, ArgumentsDelta: d.Arguments, Signature: d.Signature})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return acc.Message()
}

func TestUnaryStreamEquivalence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		unary, stream string
		req           func(testing.TB) *provider.Request
	}{
		{"chat_text", "stream_text", textRequest},
		{"chat_tools_parallel", "stream_tools", toolsRequest},
		{"chat_thinking", "stream_thinking", thinkingRequest},
		{"chat_thinking_tools", "stream_thinking_tools", thinkingToolsRequest},
	}
	for _, tc := range cases {
		t.Run(tc.unary, func(t *testing.T) {
			t.Parallel()
			usrv := providertest.ReplayFile(t, td(tc.unary+".http"))
			res, err := newTestProvider(t, usrv).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatal(err)
			}
			ssrv := providertest.ReplayFile(t, td(tc.stream+".http"))
			st, err := newTestProvider(t, ssrv).Stream(context.Background(), tc.req(t))
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(st)
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			// Two recordings are two calls: compare the answer, not ids.
			if got, want := providertest.Answer(f.msg), providertest.Answer(res.Message); got != want {
				t.Errorf("message differs:\nstream %s\nunary  %s", got, want)
			}
			if got, want := providertest.Answer(accumulate(t, evs)), providertest.Answer(res.Message); got != want {
				t.Errorf("fold.Accumulator message differs:\nstream %s\nunary  %s", got, want)
			}
			um, sm := res.Meta, f.meta
			if sm.FinishReason != um.FinishReason || sm.ProviderFinishReason != um.ProviderFinishReason ||
				sm.ToolCallCount != um.ToolCallCount || sm.ResolvedModel != um.ResolvedModel {
				t.Errorf("meta differs:\nstream %s\nunary  %s", compactProto(t, sm), compactProto(t, um))
			}
			if !proto.Equal(sm.Usage, um.Usage) {
				t.Errorf("usage differs: stream %v unary %v", sm.Usage, um.Usage)
			}
			if !proto.Equal(sm.Extended, um.Extended) {
				t.Errorf("extended differs:\nstream %s\nunary  %s", compactProto(t, sm.Extended), compactProto(t, um.Extended))
			}
			if !proto.Equal(sm.CreateTime, um.CreateTime) {
				t.Errorf("create_time differs: %v vs %v", sm.CreateTime, um.CreateTime)
			}
		})
	}
}

// FuzzStream feeds arbitrary bytes as a stream body: no panic, the stream
// ends, EOF only after a done line, every tool call delta has an id, the
// events keep the invariants of every adapter (providertest.CheckEvents:
// call ids unique, each call ended once, no negative usage, nothing after
// the end), and a complete stream's text is the content its lines sent
// (refOllamaText), when none could hold think markup.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"stream_text", "stream_tools", "stream_thinking", "stream_thinking_tools", "stream_error", "stream_cut", "stream_inline_think",
		"tools19_stream_same_name_calls", "real_lcg_truncate_stream", "real_tdx_llama3_stream_signed", "surrogate19_split_stream"} {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	// done_reason and metrics of other JSON types (round 19).
	f.Add([]byte(`{"message":{"content":"a"},"done":false}` + "\n" + `{"message":{"content":""},"done":true,"done_reason":{"why":"length"},"prompt_eval_count":"3","eval_count":-2}` + "\n"))
	f.Add([]byte(`{"message":{"content":"a"},"done":true,"done_reason":7,"eval_count":1e99}`))
	f.Add([]byte(`{"done":true,"message":{"tool_calls":[{"function":{"arguments":[1,2]}},{}]}}`))
	f.Add([]byte(`{"message":{"content":null,"thinking":{"x":1}},"eval_count":"7","done":true}`))
	f.Add([]byte(`{"message":{"content":"a","thinking":["b",{"text":"c"}]}}` + "\n" + `{"message":{"thinking":"d","tool_calls":[{"function":{"name":"f"}}]},"done":true}`))
	if raw, err := os.ReadFile(td("chat_tools_malformed.http")); err == nil {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		st := fakeStream(bytes.NewReader(body))
		seen := map[string]bool{}
		for i := 0; ; i++ {
			if i > len(body)*8+16 {
				t.Fatal("stream does not end")
			}
			ev, err := st.Recv()
			if err == io.EOF {
				if !st.done {
					t.Fatal("EOF without a done line")
				}
				break
			}
			if err != nil {
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("error is not *provider.Error: %v", err)
				}
				break
			}
			if ev == nil {
				t.Fatal("nil event")
			}
			switch ev.Kind {
			case provider.EventToolCall:
				if ev.ToolCall.CallID == "" || seen[ev.ToolCall.CallID] {
					t.Fatalf("bad tool call delta %+v", ev.ToolCall)
				}
				seen[ev.ToolCall.CallID] = true
			case provider.EventMeta:
				if ev.Meta == nil {
					t.Fatal("meta event without meta")
				}
			case provider.EventReasoning:
				// Ollama has one unsigned thinking text per answer.
				if r := ev.Reasoning; r.Index != 0 || r.Text == "" || r.Signature != "" || r.Redacted || r.ID != "" {
					t.Fatalf("bad reasoning delta %+v", r)
				}
			case provider.EventUsage:
				u := ev.Usage
				if u == nil || u.TotalTokens != u.InputTokens+u.OutputTokens || u.InputTokens < 0 || u.OutputTokens < 0 {
					t.Fatalf("bad usage %v", u)
				}
			}
		}
		if _, err := st.Recv(); err == nil {
			t.Fatal("an event after the stream's end")
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		// The same body again, whole, for the shared invariants.
		evs, complete, _ := providertest.Drain(t, fakeStream(bytes.NewReader(body)), len(body)*8+16)
		providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: complete, EndEveryCall: true})
		if text, ok := refOllamaText(body); complete && ok && !strings.Contains(text, "<") {
			if got := providertest.Text(evs); !providertest.SameSplitText(got, text) {
				t.Errorf("text %q, sent %q", got, text)
			}
		}
	})
}

// refOllamaText is a reference decoder's reading of an NDJSON stream's
// content: the message.content strings of its lines up to the done line,
// decoded by encoding/json alone. ok is false when a line is not read
// whole so or a content is not a string.
func refOllamaText(body []byte) (string, bool) {
	var b strings.Builder
	for i, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if i == 0 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if len(line) == 0 {
			continue
		}
		var c struct {
			Message *struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Done bool `json:"done"`
		}
		if json.Unmarshal(line, &c) != nil {
			return "", false
		}
		if c.Message != nil && len(c.Message.Content) > 0 && string(c.Message.Content) != "null" {
			var s string
			if json.Unmarshal(c.Message.Content, &s) != nil {
				return "", false
			}
			b.WriteString(s)
		}
		if c.Done {
			return b.String(), true
		}
	}
	return "", false
}

// TestStreamCutKeepsRequestID: a cut stream is a provider.ErrStreamCut (the
// retry policy retries it before the first event) and names the request
// a proxy in front of Ollama identified.
func TestStreamCutKeepsRequestID(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, td("stream_cut.http"))
	rec.Header.Set("X-Request-Id", "4c0e8b1f-2d7a-4e95-b3c6-a1f0d9e8c7b2")
	srv := providertest.Replay(t, rec)
	st, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(st)
	var pe *provider.Error
	if !errors.As(err, &pe) || !errors.Is(err, provider.ErrStreamCut) || pe.RequestID != "4c0e8b1f-2d7a-4e95-b3c6-a1f0d9e8c7b2" {
		t.Fatalf("err = %#v", err)
	}
}

// TestInlineThink: an Ollama before 0.12.5, asked without "think", sends a
// thinking model's reasoning inline, as a <think> block opening the
// content (its JSON escapes the angle brackets). It is the answer's
// reasoning part, unary and streamed, and the text after it the text
// part; reasoning that came apart (message.thinking) leaves the content
// as sent, and a stream cut inside the block keeps what it said as
// reasoning before the cut's error.
func TestInlineThink(t *testing.T) {
	t.Parallel()
	const reasoning, text = "\nThe user asks for 12 + 30. That is 42.\n", "\n\n12 + 30 = 42."
	usrv := providertest.ReplayFile(t, td("chat_inline_think.http"))
	res, err := newTestProvider(t, usrv).Generate(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Message.GetParts(); len(p) != 2 || p[0].GetReasoning().GetText() != reasoning || p[1].GetText() != text {
		t.Fatalf("unary parts %v", p)
	}

	ssrv := providertest.ReplayFile(t, td("stream_inline_think.http"))
	st, err := newTestProvider(t, ssrv).Stream(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []provider.EventKind
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText, provider.EventReasoning:
			if ev.Kind == provider.EventText && strings.Contains(ev.Text, "think") {
				t.Errorf("text event %q carries a think tag", ev.Text)
			}
			kinds = append(kinds, ev.Kind)
		}
	}
	if kinds[0] != provider.EventReasoning || kinds[len(kinds)-1] != provider.EventText {
		t.Errorf("event kinds %v: want reasoning first, text last", kinds)
	}
	if p := accumulate(t, evs).GetParts(); len(p) != 2 || p[0].GetReasoning().GetText() != reasoning || p[1].GetText() != "\n\n12 + 30 = 42." {
		t.Fatalf("streamed parts %v", p)
	}

	rec := func(contentType, body string) providertest.Recording {
		return providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {contentType}}, Body: []byte(body)}
	}
	// Reasoning that came apart: a content opening with a tag is text.
	body := `{"model":"qwen3:8b","message":{"role":"assistant","thinking":"Tags.","content":"<think> is a tag"},"done":true,"done_reason":"stop"}`
	res, err = newTestProvider(t, providertest.Replay(t, rec("application/json", body))).Generate(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Message.GetParts(); len(p) != 2 || p[0].GetReasoning().GetText() != "Tags." || p[1].GetText() != "<think> is a tag" {
		t.Errorf("parts with apart reasoning %v", p)
	}
	lines := `{"model":"qwen3:8b","message":{"role":"assistant","thinking":"Tags."},"done":false}` + "\n" +
		`{"model":"qwen3:8b","message":{"role":"assistant","content":"<think> is a tag"},"done":false}` + "\n" +
		`{"model":"qwen3:8b","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}` + "\n"
	st, err = newTestProvider(t, providertest.Replay(t, rec("application/x-ndjson", lines))).Stream(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if evs, err = collect(st); err != nil {
		t.Fatal(err)
	}
	if p := accumulate(t, evs).GetParts(); len(p) != 2 || p[0].GetReasoning().GetText() != "Tags." || p[1].GetText() != "<think> is a tag" {
		t.Errorf("streamed parts with apart reasoning %v", p)
	}

	// Cut inside the block, the closing tag's start held back: it is
	// released as reasoning before the cut's error.
	cut := `{"model":"qwen3:8b","message":{"role":"assistant","content":"<think>"},"done":false}` + "\n" +
		`{"model":"qwen3:8b","message":{"role":"assistant","content":"Adding. </thi"},"done":false}` + "\n"
	st, err = newTestProvider(t, providertest.Replay(t, rec("application/x-ndjson", cut))).Stream(context.Background(), textRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	evs, err = collect(st)
	if err == nil {
		t.Fatal("a cut stream ended without an error")
	}
	var got strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			t.Errorf("text event %q from a stream cut inside its think block", ev.Text)
		}
		if ev.Kind == provider.EventReasoning {
			got.WriteString(ev.Reasoning.Text)
		}
	}
	if got.String() != "Adding. </thi" {
		t.Errorf("reasoning before the cut = %q, want %q", got.String(), "Adding. </thi")
	}
}
