package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// compactProto renders a message as one stable JSON line.
func compactProto(t testing.TB, m proto.Message) string {
	t.Helper()
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// renderEvent is the golden line of one event.
func renderEvent(t testing.TB, ev *provider.Event) string {
	switch ev.Kind {
	case provider.EventMeta:
		return "meta " + compactProto(t, ev.Meta)
	case provider.EventText:
		return fmt.Sprintf("text %q", ev.Text)
	case provider.EventRefusal:
		return fmt.Sprintf("refusal %q", ev.Text)
	case provider.EventToolCall:
		d := ev.ToolCall
		line := fmt.Sprintf("tool_call id=%s index=%d name=%q args=%q", d.CallID, d.Index, d.Name, d.Arguments)
		if d.Signature != "" {
			line += fmt.Sprintf(" signature=%q", d.Signature)
		}
		return line
	case provider.EventReasoning:
		r := ev.Reasoning
		return fmt.Sprintf("reasoning index=%d text=%q signature=%q", r.Index, r.Text, r.Signature)
	case provider.EventToolCallEnd:
		return fmt.Sprintf("tool_call_end id=%s index=%d", ev.ToolCall.CallID, ev.ToolCall.Index)
	case provider.EventToolCallCut:
		return fmt.Sprintf("tool_call_cut id=%s index=%d", ev.ToolCall.CallID, ev.ToolCall.Index)
	case provider.EventUsage:
		return "usage " + compactProto(t, ev.Usage)
	case provider.EventProviderItem:
		return fmt.Sprintf("provider_item type=%s json=%s", ev.Item.Type, ev.Item.JSON)
	}
	return fmt.Sprintf("unknown kind %d", ev.Kind)
}

// drain reads a stream to its end; it returns the events and the final
// error (io.EOF for a proper end).
func drain(t testing.TB, s provider.Stream) ([]*provider.Event, error) {
	t.Helper()
	var evs []*provider.Event
	for i := 0; i < 10000; i++ {
		ev, err := s.Recv()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("stream does not end")
	return nil, nil
}

func renderStream(t testing.TB, evs []*provider.Event, end error) []byte {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(renderEvent(t, ev) + "\n")
	}
	if errors.Is(end, io.EOF) {
		b.WriteString("EOF\n")
	} else {
		var pe *provider.Error
		if errors.As(end, &pe) {
			fmt.Fprintf(&b, "error kind=%s status=%d code=%q message=%q\n", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
		} else {
			fmt.Fprintf(&b, "error %v\n", end)
		}
	}
	return []byte(b.String())
}

// folded is a stream folded into the unary shape.
type folded struct {
	text  string
	calls []*llmrelayv1.ToolCall
	usage *llmrelayv1.Usage
	meta  *llmrelayv1.ResponseMeta
}

// foldMessage folds the events with the gateway's accumulator (package
// fold), the way the server does, and returns the folded message; a call
// ended by EventToolCallCut is not valid (as the gateway reports it).
func foldMessage(t testing.TB, evs []*provider.Event) *llmrelayv1.Message {
	t.Helper()
	var acc fold.Accumulator
	cut := map[string]bool{}
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
		case provider.EventToolCallCut:
			cut[ev.ToolCall.CallID] = true
		case provider.EventProviderItem:
			err = acc.AddProviderItem(&llmrelayv1.ProviderItem{Type: ev.Item.Type, Json: ev.Item.JSON})
		}
		if err != nil {
			t.Fatalf("fold: %v", err)
		}
	}
	msg := acc.Message()
	for _, pt := range msg.GetParts() {
		if tc := pt.GetToolCall(); tc != nil && cut[tc.CallId] {
			tc.ArgumentsValid = false
		}
	}
	return msg
}

// foldEvents concatenates text, joins tool call fragments per CallID (in first
// appearance order), keeps the last usage and merges meta.
func foldEvents(evs []*provider.Event) folded {
	f := folded{meta: &llmrelayv1.ResponseMeta{}}
	byID := map[string]*llmrelayv1.ToolCall{}
	cut := map[string]bool{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			f.text += ev.Text
		case provider.EventToolCall:
			tc, ok := byID[ev.ToolCall.CallID]
			if !ok {
				tc = &llmrelayv1.ToolCall{CallId: ev.ToolCall.CallID}
				byID[tc.CallId] = tc
				f.calls = append(f.calls, tc)
			}
			if ev.ToolCall.Name != "" {
				tc.Name = ev.ToolCall.Name
			}
			tc.Arguments += ev.ToolCall.Arguments
			tc.Signature += ev.ToolCall.Signature
		case provider.EventToolCallCut:
			cut[ev.ToolCall.CallID] = true
		case provider.EventUsage:
			f.usage = ev.Usage
		case provider.EventMeta:
			proto.Merge(f.meta, ev.Meta)
		}
	}
	for _, tc := range f.calls {
		tc.ArgumentsValid = fold.ValidArguments(tc.Arguments) && !cut[tc.CallId]
	}
	return f
}

func TestStream(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, req string }{
		{"stream_text", "plain"},
		{"stream_tools", "tools_parallel"},
		{"stream_blocked", "plain"},
		{"stream_cut", "plain"},
		{"stream_error", "plain"},
		{"stream_thinking_text", "thinking_text"},
		{"stream_thinking_tools", "thinking_tools"},
		{"stream_max_tokens_call", "max_tokens_call"},
		// Real recordings (see testdata/README.md).
		{"real_stream_prompt_blocked", "plain"},
		{"real_stream_empty_text_signature", "plain"},
		{"real_stream_search_usage", "plain"},
		{"real_stream_tool_call_signature", "tools_parallel"},
		{"real_stream_tool_call_partial_args", "tools_parallel"},
		{"real_stream_tool_call_array_args_no_terminal", "tools_parallel"},
		{"real_stream_tool_call_no_args_partial", "tools_parallel"},
		{"real_stream_gemma_thinking_usage", "plain"},
		{"real_stream_usage_only_chunk", "plain"},
		// pydantic/pydantic-ai cassettes (see testdata/README.md).
		{"real_pyd_google_streaming_tool_call_thought_signature_1", "tools_parallel"},
		{"real_pyd_google_streaming_tool_call_thought_signature_2", "plain"},
		{"real_pyd_google_model_iter_stream_3", "plain"},
		{"real_pyd_google_model_builtin_code_execution_stream", "plain"},
		{"real_pyd_google_stream_usage_is_live_mid_stream", "plain"},
		{"real_pyd_google_model_thinking_part_iter", "thinking_text"},
		{"real_pyd_google_model_web_search_tool_stream_1", "plain"},
		{"real_pyd_google_model_web_fetch_tool_stream", "plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, tc.name)
			req := generateCases(t)[tc.req]
			s, err := p.Stream(context.Background(), req)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderStream(t, evs, end))
			c := srv.Last(t)
			if c.Path != "/v1beta/models/"+req.Model+":streamGenerateContent" || c.Query != "alt=sse" {
				t.Errorf("request to %s?%s", c.Path, c.Query)
			}
			providertest.Golden(t, filepath.Join("testdata", tc.name+".request.golden"), providertest.RequestGolden(c, requestHeaders...))
		})
	}
}

func TestStreamEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		kind provider.Kind
		msg  string
	}{
		{"stream_text", 0, ""},
		{"stream_tools", 0, ""},
		{"stream_cut", provider.KindBadResponse, "stream ended before a finish reason"},
		{"stream_error", provider.KindUnavailable, "overloaded"},
		{"stream_blocked", provider.KindContentFilter, "PROHIBITED_CONTENT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, tc.name)
			s, err := p.Stream(context.Background(), generateCases(t)["plain"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, end := drain(t, s)
			if tc.kind == 0 {
				if end != io.EOF {
					t.Fatalf("end = %v, want io.EOF", end)
				}
				return
			}
			var pe *provider.Error
			if !errors.As(end, &pe) || pe.Kind != tc.kind || !strings.Contains(pe.Message, tc.msg) {
				t.Fatalf("end = %v, want %s containing %q", end, tc.kind, tc.msg)
			}
			// The error is sticky.
			if _, again := s.Recv(); !errors.Is(again, end) {
				t.Errorf("second Recv = %v", again)
			}
		})
	}
}

func TestStreamEquivalence(t *testing.T) {
	t.Parallel()
	for unary, streamed := range map[string]string{"plain": "stream_text", "tools_parallel": "stream_tools",
		"thinking_text": "stream_thinking_text", "thinking_tools": "stream_thinking_tools",
		"max_tokens_call": "stream_max_tokens_call"} {
		t.Run(unary, func(t *testing.T) {
			t.Parallel()
			req := generateCases(t)[unary]
			p1, _ := replay(t, unary)
			res, err := p1.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			p2, _ := replay(t, streamed)
			s, err := p2.Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			if end != io.EOF {
				t.Fatalf("stream end = %v", end)
			}
			// The gateway's accumulator rebuilds the unary answer: parts in
			// order, reasoning and calls signed where the unary ones are
			// (two recordings are two calls: ids and signatures differ).
			if got, want := providertest.Answer(foldMessage(t, evs)), providertest.Answer(res.Message); got != want {
				t.Errorf("folded message\n%s\nunary\n%s", got, want)
			}
			f := foldEvents(evs)
			var wantText string
			var wantCalls []*llmrelayv1.ToolCall
			for _, pt := range res.Message.GetParts() {
				wantText += pt.GetText()
				if tc := pt.GetToolCall(); tc != nil {
					wantCalls = append(wantCalls, tc)
				}
			}
			if f.text != wantText {
				t.Errorf("text %q, unary %q", f.text, wantText)
			}
			if len(f.calls) != len(wantCalls) {
				t.Fatalf("%d calls, unary %d", len(f.calls), len(wantCalls))
			}
			streamIDs := make([]string, len(f.calls))
			for i, c := range f.calls {
				streamIDs[i] = c.CallId
			}
			providertest.AlignCallIDs(t, f.calls, wantCalls)
			for i, w := range f.meta.Warnings { // a warning naming a call names it by its id
				for j, id := range streamIDs {
					w = strings.ReplaceAll(w, id, f.calls[j].CallId)
				}
				f.meta.Warnings[i] = w
			}
			for i := range wantCalls {
				if !proto.Equal(f.calls[i], wantCalls[i]) {
					t.Errorf("call %d: stream %v, unary %v", i, f.calls[i], wantCalls[i])
				}
			}
			if !proto.Equal(f.usage, res.Meta.GetUsage()) {
				t.Errorf("usage: stream %v, unary %v", f.usage, res.Meta.GetUsage())
			}
			// The merged stream meta equals the unary meta (usage is
			// carried by usage events, compared above).
			um := proto.Clone(res.Meta).(*llmrelayv1.ResponseMeta)
			um.Usage = nil
			providertest.AlignResponseIDs(t, f.meta, um)
			if !proto.Equal(f.meta, um) {
				t.Errorf("meta: stream %v, unary %v", f.meta, res.Meta)
			}
		})
	}
}

func TestStreamClose(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "stream_text")
	s, err := p.Stream(context.Background(), generateCases(t)["plain"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if ev, err := s.Recv(); err == nil || ev != nil {
		t.Errorf("Recv after Close = %v, %v", ev, err)
	}
}

func TestStreamCancel(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "stream_text")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, generateCases(t)["plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel()
	_, end := drain(t, s)
	if end == io.EOF {
		// The whole body may already have been buffered; that is a
		// complete stream, not a failure.
		return
	}
	var pe *provider.Error
	if !errors.As(end, &pe) {
		t.Fatalf("end = %v", end)
	}
}

// streamBody replays raw SSE bytes.
func streamBody(t testing.TB, body string) provider.Stream {
	t.Helper()
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)})
	p, err := New(testKey, WithBaseURL(srv.URL), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), &provider.Request{Model: "gemini-2.5-flash", Options: &llmrelayv1.GenerationOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStreamEdgeCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       string // substring of the rendered stream
	}{
		{"LF framing and comments", ": keepalive\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"responseId\":\"r1\"}\n\n",
			"text \"hi\"\n"},
		{"thoughts as reasoning", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"plan\",\"thought\":true},{\"text\":\"answer\"}]},\"finishReason\":\"STOP\"}],\"responseId\":\"r1\"}\r\n\r\n",
			"reasoning index=0 text=\"plan\" signature=\"\"\ntext \"answer\"\n"},
		{"thought continues across chunks", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thought\":true}]}}],\"responseId\":\"r1\"}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\",\"thought\":true}]}}],\"responseId\":\"r1\"}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\",\"thoughtSignature\":\"S\"}]},\"finishReason\":\"STOP\"}],\"responseId\":\"r1\"}\n\n",
			"reasoning index=0 text=\"a\" signature=\"\"\nreasoning index=0 text=\"b\" signature=\"\"\nreasoning index=1 text=\"\" signature=\"S\"\n"},
		{"bad json", "data: {\"candidates\": [\r\n\r\n", "error kind=bad_response"},
		{"empty body", "", "stream ended before a finish reason"},
		{"usage only after finish", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},\"finishReason\":\"MAX_TOKENS\"}],\"responseId\":\"r1\"}\n\ndata: {\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":1,\"totalTokenCount\":4},\"responseId\":\"r1\"}\n\n",
			"usage {\"input_tokens\":3,\"output_tokens\":1,\"total_tokens\":4}\nEOF"},
		{"no response id", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\"}}]},\"finishReason\":\"STOP\"}]}\n\n",
			"gemini sent no responseId"},
		{"call with gemini id", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"id\":\"abc123\",\"name\":\"f\",\"args\":{\"b\":1,\"a\":2}}}]},\"finishReason\":\"STOP\"}],\"responseId\":\"r1\"}\n\n",
			`tool_call id=abc123 index=0 name="f" args="{\"b\":1,\"a\":2}"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := streamBody(t, tc.body)
			evs, end := drain(t, s)
			got := string(renderStream(t, evs, end))
			if !strings.Contains(got, tc.want) {
				t.Errorf("stream:\n%s\nlacks %q", got, tc.want)
			}
		})
	}
}

// FuzzStreamChunk feeds arbitrary chunks to the stream parser: no panic,
// tool call deltas always carry a CallID, usage is never negative, and the
// stream always ends with io.EOF or a *provider.Error.
func FuzzStreamChunk(f *testing.F) {
	for _, name := range []string{"stream_text", "stream_tools", "stream_blocked", "stream_cut", "stream_error",
		"stream_thinking_text", "stream_thinking_tools", "stream_max_tokens_call",
		"real_stream_tool_call_partial_args", "real_stream_tool_call_array_args_no_terminal",
		// Round 19: a partialArgs call cut by MAX_TOKENS, text signatures,
		// a prompt count that drops in the last chunk.
		"tools19_stream_partial_args_max_tokens", "real_reasoning19_gemini3_text_signature_stream",
		"real_adkgo_flash2_stream_prompt_count_drops",
		"surrogate19_split_stream", "surrogate19_split_call_stream", "surr19b_partial_args_stream",
		// Round 22: logprobs in every chunk, joined.
		"stream_logprobs_chunks"} {
		rec := providertest.Load(f, filepath.Join("testdata", name+".http"))
		f.Add(rec.Body)
	}
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":\"x\"}}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Add([]byte("data: [{\"error\":{}}]\n\n"))
	// Odd-typed finishReason and usage counts (provider.OddEnumText, ReadCount), and a repeated call id.
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}}},{\"functionCall\":{\"id\":\"a\",\"name\":\"g\",\"args\":{\"x\":1}}}]},\"finishReason\":7}],\"usageMetadata\":{\"promptTokenCount\":\"12\",\"candidatesTokenCount\":-3,\"totalTokenCount\":1e400}}\n\n"))
	// Round 22: usages without promptTokenCount (its input derived from
	// the total), one at the int64 bound.
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"candidatesTokenCount\":1,\"totalTokenCount\":297}}\n\n"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"candidatesTokenCount\":-5,\"thoughtsTokenCount\":3,\"totalTokenCount\":9223372036854775807}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := &Provider{apiKey: testKey}
		s := p.newStream(&http.Response{Body: io.NopCloser(bytes.NewReader(body))})
		var evs []*provider.Event
		lastReasoning := -1
		for i := 0; ; i++ {
			if i > len(body)+10 {
				t.Fatal("stream does not end")
			}
			ev, err := s.Recv()
			if err != nil {
				var pe *provider.Error
				if err != io.EOF && !errors.As(err, &pe) {
					t.Fatalf("end = %T %v", err, err)
				}
				if pe != nil && strings.Contains(pe.Error(), testKey) {
					t.Fatal("key in error")
				}
				break
			}
			evs = append(evs, ev)
			switch ev.Kind {
			case provider.EventMeta:
				// The chunks' logprobs joined are JSON (rawValue keeps
				// text that is not as a string).
				if v, ok := ev.Meta.GetExtended().GetFields()[extLogprobsResult]; ok {
					if _, isText := v.GetKind().(*structpb.Value_StringValue); isText {
						t.Fatalf("logprobs relayed as text %q", v.GetStringValue())
					}
				}
			case provider.EventReasoning:
				// Blocks are numbered in order; a piece continues the
				// current block or starts the next, and carries something.
				r := ev.Reasoning
				if r.Index != lastReasoning && r.Index != lastReasoning+1 {
					t.Fatalf("reasoning index %d after %d", r.Index, lastReasoning)
				}
				if r.Text == "" && r.Signature == "" {
					t.Fatal("empty reasoning piece")
				}
				lastReasoning = r.Index
			case provider.EventToolCall, provider.EventToolCallEnd:
				if ev.ToolCall.CallID == "" {
					t.Fatal("tool call delta without CallID")
				}
			case provider.EventUsage:
				u := ev.Usage
				if u.InputTokens < 0 || u.OutputTokens < 0 || int64(u.TotalTokens) < min(int64(u.InputTokens)+int64(u.OutputTokens), 1<<31-1) {
					t.Fatalf("negative usage or total below its parts %v", u)
				}
			}
		}
		// The invariants of every adapter (call ids unique, one end per
		// call, nothing after it, no negative usage), and the events
		// always fold into a message with the accumulator.
		providertest.CheckEvents(t, evs, providertest.EventCheck{})
		if _, err := s.Recv(); err == nil {
			t.Error("an event after the stream's end")
		}
		foldMessage(t, evs)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// Keep the testdata directory listing honest: every recording is used.
func TestAllRecordingsUsed(t *testing.T) {
	t.Parallel()
	used := map[string]bool{"embed_single": true, "embed_batch": true, "blocked": true,
		"structured": true, "structured_stream": true, "structured_invalid": true}
	for name := range generateCases(t) {
		used[name] = true
	}
	for name := range simonwStreams {
		used[name] = true
	}
	used["real_llm_embedding_batch"] = true
	for _, n := range round6Recordings {
		used[n] = true
	}
	for _, n := range round9Recordings {
		used[n] = true
	}
	for _, n := range langchaingoRecordings {
		used[n] = true
	}
	for _, n := range vxlangchaingoRecordings {
		used[n] = true
	}
	for _, n := range crewRecordings {
		used[n] = true
	}
	for _, n := range round13Recordings {
		used[n] = true
	}
	for _, n := range round14Recordings {
		used[n] = true
	}
	for _, n := range round14GemRecordings {
		used[n] = true
	}
	for _, n := range round17Recordings {
		used[n] = true
	}
	for _, n := range surrogate19Recordings {
		used[n] = true
	}
	for _, n := range surr19bRecordings {
		used[n] = true
	}
	for _, n := range tools19Recordings {
		used[n] = true
	}
	for name := range fantasyStreams {
		used[name] = true
	}
	used[fantasyUnary] = true
	used[embed20NotFound] = true
	used[fileRecording] = true
	used[fantasyUnaryParallel] = true
	used[fantasyVertexUnaryParallel] = true
	for _, n := range []string{"stream_text", "stream_tools", "stream_blocked", "stream_cut", "stream_error",
		"stream_thinking_text", "stream_thinking_tools", "stream_max_tokens_call",
		"real_stream_prompt_blocked", "real_stream_empty_text_signature", "real_stream_search_usage",
		"real_stream_tool_call_signature", "real_stream_tool_call_partial_args", "real_stream_gemma_thinking_usage",
		"real_stream_tool_call_array_args_no_terminal", "real_stream_tool_call_no_args_partial", "real_stream_usage_only_chunk",
		"real_pyd_google_streaming_tool_call_thought_signature_1",
		"real_pyd_google_streaming_tool_call_thought_signature_2", "real_pyd_google_model_builtin_code_execution_stream",
		"real_pyd_google_stream_usage_is_live_mid_stream", "real_pyd_google_model_iter_stream_3",
		"real_pyd_google_model_thinking_part_iter", "real_pyd_google_model_web_search_tool_stream_1",
		"real_pyd_google_model_web_fetch_tool_stream", "error_400", "error_context_length", "error_401", "error_403", "error_404", "error_429", "error_500", "error_503"} {
		used[n] = true
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".http"); ok && !used[name] {
			t.Errorf("recording %s is not used by any test", e.Name())
		}
	}
}
