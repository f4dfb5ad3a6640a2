package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	relayfold "github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// collect reads a stream to its end and closes it.
func collect(s provider.Stream) ([]*provider.Event, error) {
	defer s.Close()
	var evs []*provider.Event
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func compactJSON(t *testing.T, in []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// renderEvents is the golden form of a stream: one line per event, then how
// it ended.
func renderEvents(t *testing.T, evs []*provider.Event, err error) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventMeta:
			fmt.Fprintf(&b, "meta %s\n", compactJSON(t, providertest.ProtoJSON(t, ev.Meta)))
		case provider.EventText:
			fmt.Fprintf(&b, "text %s\n", strconv.Quote(ev.Text))
		case provider.EventRefusal:
			fmt.Fprintf(&b, "refusal %s\n", strconv.Quote(ev.Text))
		case provider.EventToolCall:
			fmt.Fprintf(&b, "tool_call id=%s index=%d name=%q args=%s\n", ev.ToolCall.CallID, ev.ToolCall.Index, ev.ToolCall.Name, strconv.Quote(ev.ToolCall.Arguments))
		case provider.EventToolCallEnd:
			fmt.Fprintf(&b, "tool_call_end id=%s index=%d\n", ev.ToolCall.CallID, ev.ToolCall.Index)
		case provider.EventToolCallCut:
			fmt.Fprintf(&b, "tool_call_cut id=%s index=%d\n", ev.ToolCall.CallID, ev.ToolCall.Index)
		case provider.EventUsage:
			fmt.Fprintf(&b, "usage %s\n", compactJSON(t, providertest.ProtoJSON(t, ev.Usage)))
		case provider.EventReasoning:
			r := ev.Reasoning
			fmt.Fprintf(&b, "reasoning index=%d redacted=%v id=%q text=%s signature=%s\n", r.Index, r.Redacted, r.ID, strconv.Quote(r.Text), strconv.Quote(r.Signature))
		case provider.EventProviderItem:
			fmt.Fprintf(&b, "provider_item type=%s json=%s\n", ev.Item.Type, ev.Item.JSON)
		default:
			fmt.Fprintf(&b, "unknown kind %d\n", ev.Kind)
		}
	}
	if err == nil {
		b.WriteString("end: EOF\n")
	} else {
		var pe *provider.Error
		if errors.As(err, &pe) {
			fmt.Fprintf(&b, "end: error kind=%s status=%d code=%q request_id=%q message=%q\n", pe.Kind, pe.HTTPStatus, pe.Code, pe.RequestID, pe.Message)
		} else {
			fmt.Fprintf(&b, "end: non-provider error %v\n", err)
		}
	}
	return b.Bytes()
}

// folded is a stream reduced to what Generate returns.
type folded struct {
	message *llmrelayv1.Message
	meta    *llmrelayv1.ResponseMeta
}

// fold rebuilds the message the way the gateway's accumulator does: parts
// in the order they started (consecutive text pieces form one text part),
// tool-call fragments concatenated per CallID, reasoning text and signature
// pieces concatenated per Index; it keeps the last usage and merges the
// meta events. It checks the stream invariants on the way: CallID on every
// fragment, Name only on a call's first fragment, indexes consistent with
// call order, reasoning indexes consecutive, Redacted and ID only on a
// block's first piece.
func foldEvents(t *testing.T, evs []*provider.Event) folded {
	t.Helper()
	meta := &llmrelayv1.ResponseMeta{}
	type call struct {
		name, args, sig string
		index           int
		cut             bool
	}
	type reasoning struct {
		text, sig strings.Builder
		redacted  bool
		id        string
	}
	// seg is one part in order: text, a call id, or a reasoning index.
	type seg struct {
		text      *strings.Builder
		callID    string
		reasoning *reasoning
		item      *llmrelayv1.ProviderItem
	}
	var segs []*seg
	calls := map[string]*call{}
	reasonings := map[int]*reasoning{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventMeta:
			proto.Merge(meta, ev.Meta)
		case provider.EventText:
			// A text block's first text begins a part (BeginsPart), as
			// the unary answer keeps each block.
			if n := len(segs); n > 0 && segs[n-1].text != nil && !ev.BeginsPart {
				segs[n-1].text.WriteString(ev.Text)
				continue
			}
			sg := &seg{text: &strings.Builder{}}
			sg.text.WriteString(ev.Text)
			segs = append(segs, sg)
		case provider.EventReasoning:
			d := ev.Reasoning
			r, ok := reasonings[d.Index]
			if !ok {
				if d.Index != len(reasonings) {
					t.Errorf("reasoning index %d, want %d", d.Index, len(reasonings))
				}
				r = &reasoning{redacted: d.Redacted, id: d.ID}
				reasonings[d.Index] = r
				segs = append(segs, &seg{reasoning: r})
			} else if d.Redacted || d.ID != "" {
				t.Errorf("redacted/id on a later piece of reasoning %d", d.Index)
			}
			r.text.WriteString(d.Text)
			r.sig.WriteString(d.Signature)
		case provider.EventToolCall:
			d := ev.ToolCall
			if d.CallID == "" {
				t.Fatalf("tool call fragment without CallID: %+v", d)
			}
			c, ok := calls[d.CallID]
			if !ok {
				if d.Name == "" {
					t.Errorf("first fragment of %s has no name", d.CallID)
				}
				if d.Index != len(calls) {
					t.Errorf("call %s index %d, want %d", d.CallID, d.Index, len(calls))
				}
				c = &call{name: d.Name, index: d.Index}
				calls[d.CallID] = c
				segs = append(segs, &seg{callID: d.CallID})
			} else if d.Name != "" {
				t.Errorf("name repeated on a later fragment of %s", d.CallID)
			}
			if d.Index != c.index {
				t.Errorf("call %s changed index %d -> %d", d.CallID, c.index, d.Index)
			}
			c.args += d.Arguments
			c.sig += d.Signature
		case provider.EventToolCallEnd, provider.EventToolCallCut:
			c, ok := calls[ev.ToolCall.CallID]
			if !ok {
				t.Errorf("end of unknown call %q", ev.ToolCall.CallID)
				continue
			}
			// The gateway reports a cut call with arguments_valid false.
			c.cut = ev.Kind == provider.EventToolCallCut
		case provider.EventUsage:
			meta.Usage = ev.Usage
		case provider.EventProviderItem:
			segs = append(segs, &seg{item: &llmrelayv1.ProviderItem{Type: ev.Item.Type, Json: ev.Item.JSON}})
		}
	}
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	for _, sg := range segs {
		switch {
		case sg.item != nil:
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: sg.item}})
		case sg.text != nil:
			msg.Parts = append(msg.Parts, text(sg.text.String()))
		case sg.reasoning != nil:
			r := sg.reasoning
			msg.Parts = append(msg.Parts, reasoningPart(&llmrelayv1.Reasoning{Text: r.text.String(), Signature: r.sig.String(), Redacted: r.redacted, Id: r.id}))
		default:
			c := calls[sg.callID]
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
				CallId: sg.callID, Name: c.name, Arguments: c.args, ArgumentsValid: !c.cut && providertest.IsJSONObject(c.args), Signature: c.sig,
			}}})
		}
	}
	return folded{message: msg, meta: meta}
}

// accumulate feeds the events to the gateway's accumulator (package fold),
// converted the way the server relays them, and returns its message.
func accumulate(t *testing.T, evs []*provider.Event) *llmrelayv1.Message {
	t.Helper()
	var acc relayfold.Accumulator
	for _, ev := range evs {
		var err error
		switch ev.Kind {
		case provider.EventText:
			if ev.Text != "" {
				acc.AddItemText(ev.Text, "", "", ev.BeginsPart)
			}
		case provider.EventRefusal:
			if ev.Text != "" {
				acc.AddRefusal(ev.Text)
			}
		case provider.EventReasoning:
			r := ev.Reasoning
			err = acc.AddReasoning(r.Proto())
		case provider.EventProviderItem:
			err = acc.AddProviderItem(&llmrelayv1.ProviderItem{Type: ev.Item.Type, Json: ev.Item.JSON})
		case provider.EventToolCall:
			d := ev.ToolCall
			err = acc.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: d.CallID, Index: int32(d.Index), Name: d.Name, ArgumentsDelta: d.Arguments, Signature: d.Signature})
		case provider.EventToolCallEnd, provider.EventToolCallCut:
			// The done event the client receives: a cut call's arguments
			// are not valid, whatever their syntax.
			if tc, idx := acc.ToolCall(ev.ToolCall.CallID); tc != nil {
				if ev.Kind == provider.EventToolCallCut {
					tc.ArgumentsValid = false
				}
				err = acc.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: idx, ToolCall: tc})
			}
		}
		if err != nil {
			t.Fatalf("accumulator: %v", err)
		}
	}
	return acc.Message()
}

func TestStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
	}{
		{"plain_stream", func(*testing.T) *provider.Request { return plainRequest() }},
		{"tools_stream", toolsRequest},
		{"noargs_stream", toolsRequest},
		{"malformed_args_stream", toolsRequest},
		{"thinking_stream", thinkingRequest},
		{"stream_overloaded", func(*testing.T) *provider.Request { return plainRequest() }},
		{"stream_cut", func(*testing.T) *provider.Request { return plainRequest() }},
		// Real recordings (see testdata/README.md).
		{"real_tool_no_args_stream", toolsRequest},
		{"real_server_tool_stream", toolsRequest},
		{"real_message_delta_input_tokens_stream", func(*testing.T) *provider.Request { return plainRequest() }},
		{"real_refusal_stream", func(*testing.T) *provider.Request { return plainRequest() }},
		{"real_quoted_tool_input_stream", toolsRequest},
		{"real_message_start_prepopulated_stream", toolsRequest},
		{"real_json_tool_stream", toolsRequest},
		{"real_clear_thinking_stream", thinkingRequest},
		{"real_reasoning_summarized_stream", thinkingRequest},
		// pydantic/pydantic-ai cassettes (see testdata/README.md).
		{"real_pyd_anthropic_model_thinking_part_redacted_stream", thinkingRequest},
		{"real_pyd_anthropic_compaction_usage_with_cache_streaming", func(*testing.T) *provider.Request { return plainRequest() }},
		{"real_pyd_anthropic_model_thinking_part_stream", thinkingRequest},
		{"real_pyd_anthropic_advisor_tool_stream", func(*testing.T) *provider.Request { return plainRequest() }},
		{"real_pyd_anthropic_text_editor_toolset_stream_1", toolsRequest},
		{"real_pyd_anthropic_fable_5_1_drops_a_stale_thinking_block_streamed_2", thinkingRequest},
		{"real_pyd_anthropic_local_shell_toolset_stream_1", toolsRequest},
		{"real_pyd_anthropic_cache_earlier_breakpoint_raised_to_later_longer_ttl", func(*testing.T) *provider.Request { return plainRequest() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			s, err := newTestProvider(t, srv.URL).Stream(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(s)
			foldEvents(t, evs) // checks the fragment invariants
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, err))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

func TestStreamSemantics(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T, name string) ([]*provider.Event, error) {
		t.Helper()
		srv := providertest.ReplayFile(t, "testdata/"+name+".http")
		s, err := newTestProvider(t, srv.URL).Stream(context.Background(), toolsRequest(t))
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if !bytes.Contains(srv.Last(t).Body, []byte(`"stream":true`)) {
			t.Errorf("request does not ask for a stream: %s", srv.Last(t).Body)
		}
		return collect(s)
	}
	t.Run("overloaded", func(t *testing.T) {
		t.Parallel()
		evs, err := open(t, "stream_overloaded")
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindUnavailable || pe.Code != "overloaded_error" || pe.Message != "Overloaded" ||
			pe.RequestID != "req_016XCewOv3Jf5Pm1Rn2OmWiI" {
			t.Fatalf("err = %#v", err)
		}
		if f := foldEvents(t, evs); f.message.GetParts()[0].GetText() != "Once upon" {
			t.Errorf("text before the error = %v", f.message)
		}
	})
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		_, err := open(t, "stream_cut")
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "stream ended before") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("noargs", func(t *testing.T) {
		t.Parallel()
		evs, err := open(t, "noargs_stream")
		if err != nil {
			t.Fatal(err)
		}
		f := foldEvents(t, evs)
		tc := f.message.GetParts()[0].GetToolCall()
		if tc.GetArguments() != "{}" || !tc.GetArgumentsValid() || tc.GetCallId() != "toolu_01Lu9sKcC3rOt5uTd2tFyT5H" {
			t.Errorf("tool call = %v", tc)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		evs, err := open(t, "malformed_args_stream")
		if err != nil {
			t.Fatal(err)
		}
		f := foldEvents(t, evs)
		tc := f.message.GetParts()[0].GetToolCall()
		if tc.GetArguments() != `{"path": "notes.txt", "content": "Line one\nLine t` || tc.GetArgumentsValid() {
			t.Errorf("tool call = %v", tc)
		}
		// The call was cut by max_tokens: LENGTH, never TOOL_CALLS.
		if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || f.meta.GetProviderFinishReason() != "max_tokens" {
			t.Errorf("finish = %v / %q", f.meta.GetFinishReason(), f.meta.GetProviderFinishReason())
		}
	})
}

// TestUnaryStreamEquivalence folds each streamed recording and compares it
// with Generate's result for the unary recording of the same answer.
func TestUnaryStreamEquivalence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		unary, stream string
		req           func(t *testing.T) *provider.Request
	}{
		{"plain", "plain_stream", func(*testing.T) *provider.Request { return plainRequest() }},
		{"tools", "tools_stream", toolsRequest},
		{"thinking", "thinking_stream", thinkingRequest},
	}
	for _, tc := range cases {
		t.Run(tc.unary, func(t *testing.T) {
			t.Parallel()
			usrv := providertest.ReplayFile(t, "testdata/"+tc.unary+".http")
			res, err := newTestProvider(t, usrv.URL).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatal(err)
			}
			ssrv := providertest.ReplayFile(t, "testdata/"+tc.stream+".http")
			s, err := newTestProvider(t, ssrv.URL).Stream(context.Background(), tc.req(t))
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			// Two recordings are two calls: the answer is the same, the
			// ids and signatures are not.
			if got, want := providertest.Answer(f.message), providertest.Answer(res.Message); got != want {
				t.Errorf("message:\nstream %s\nunary  %s", got, want)
			}
			if got, want := providertest.Answer(accumulate(t, evs)), providertest.Answer(res.Message); got != want {
				t.Errorf("fold.Accumulator message:\nstream %s\nunary  %s", got, want)
			}
			if !proto.Equal(f.meta.GetUsage(), res.Meta.GetUsage()) {
				t.Errorf("usage: stream %v, unary %v", f.meta.GetUsage(), res.Meta.GetUsage())
			}
			if f.meta.GetFinishReason() != res.Meta.GetFinishReason() || f.meta.GetProviderFinishReason() != res.Meta.GetProviderFinishReason() {
				t.Errorf("finish: stream %v/%q, unary %v/%q", f.meta.GetFinishReason(), f.meta.GetProviderFinishReason(),
					res.Meta.GetFinishReason(), res.Meta.GetProviderFinishReason())
			}
			if f.meta.GetResponseId() == "" || res.Meta.GetResponseId() == "" || f.meta.GetResolvedModel() != res.Meta.GetResolvedModel() {
				t.Errorf("ids: stream %q/%q, unary %q/%q", f.meta.GetResponseId(), f.meta.GetResolvedModel(), res.Meta.GetResponseId(), res.Meta.GetResolvedModel())
			}
			if f.meta.GetRateLimit() == nil || f.meta.GetProviderRequestId() == "" {
				t.Errorf("stream meta lacks header values: %v", f.meta)
			}
		})
	}
}

func TestStreamCloseThenRecv(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/plain_stream.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
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
	if _, err := s.Recv(); err == nil || err == io.EOF {
		t.Errorf("Recv after Close = %v, want an error", err)
	}
}

func TestStreamEOFIsSticky(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/plain_stream.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := collect(s); err != nil {
		t.Fatal(err)
	}
	// collect closed it; a fresh stream read to the end keeps returning EOF.
	s2, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for {
		if _, err := s2.Recv(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := s2.Recv(); err != io.EOF {
		t.Errorf("second Recv after end = %v, want EOF", err)
	}
}

// streamFromBody runs the stream parser over raw SSE bytes.
func streamFromBody(body []byte) *stream {
	return newStream(&http.Response{
		StatusCode: 200,
		Header:     http.Header{"Request-Id": {"req_test"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}, nil)
}

func TestStreamMalformedEvents(t *testing.T) {
	t.Parallel()
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n"
	cases := map[string]string{
		"bad json":                  start + "event: content_block_delta\ndata: {oops\n\n",
		"json delta for text block": start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n",
		"json delta unknown block":  start + "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n",
		"tool_use without id":       start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"name\":\"f\"}}\n\n",
		"message_start no message":  "data: {\"type\":\"message_start\"}\n\n",
		"thinking delta text block": start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"x\"}}\n\n",
		"signature unknown block":   start + "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"Eq\"}}\n\n",
		"signature after stop":      start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"Eq\"}}\n\n",
		"text delta thinking block": start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"block started twice":       start + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\"}}\n\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\"}}\n\n",
	}
	for name, body := range cases {
		_, err := collect(streamFromBody([]byte(body)))
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || pe.RequestID != "req_test" {
			t.Errorf("%s: err = %v, want bad response with request id", name, err)
		}
	}
}

func TestStreamUnknownEventsSkipped(t *testing.T) {
	t.Parallel()
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\"}}\n\n" +
		": keep-alive comment\n\n" +
		"event: brand_new_event\ndata: {\"type\":\"brand_new_event\",\"x\":1}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n"
	evs, err := collect(streamFromBody([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	// The server block is kept as sent, in its place (ended when the next
	// block began); one warning for the text of a block that was never
	// started.
	parts := f.message.GetParts()
	if w := f.meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "content block 1, which was never started") || len(parts) != 2 ||
		parts[0].GetProviderItem().GetJson() != `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}` || parts[1].GetText() != "hi" {
		t.Errorf("folded = %v / %v", f.message, f.meta)
	}
}

// TestServerToolStream: a real stream where the model runs a server tool
// (tool search) before calling a client tool
// (testdata/real_server_tool_stream.http). The server_tool_use block's
// input_json_delta events are the input of a tool Anthropic runs itself:
// no client call, and no broken stream.
func TestServerToolStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_server_tool_stream.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), toolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	parts := f.message.GetParts()
	// The tool search's call and result are provider items, in their
	// place before the text.
	if len(parts) != 4 || parts[0].GetProviderItem().GetType() != "server_tool_use" || parts[1].GetProviderItem().GetType() != "tool_search_tool_result" ||
		parts[2].GetText() != "Great! I found a weather tool. Let me get the current weather data for San Francisco." {
		t.Fatalf("parts %v", parts)
	}
	if tc := parts[3].GetToolCall(); tc.GetCallId() != "toolu_01UmPwkecewaEpMupy2ywk8b" || tc.GetName() != "get_temp_data" ||
		tc.GetArguments() != `{"location": "San Francisco, CA"}` || !tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	m := f.meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetToolCallCount() > 1 {
		t.Errorf("finish %v, %d calls", m.GetFinishReason(), m.GetToolCallCount())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 1681 || u.GetOutputTokens() != 163 {
		t.Errorf("usage %v", u)
	}
}
