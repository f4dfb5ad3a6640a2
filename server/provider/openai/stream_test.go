package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestStream(t *testing.T) {
	t.Parallel()
	reqs := chatRequests(t)
	cases := []struct {
		name, request string
		kind          kind
		check         func(t *testing.T, evs []*provider.Event, err error)
	}{
		{name: "chat_plain_stream", request: "chat_plain", kind: kOpenAI, check: func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if f.Meta.GetUsage().GetTotalTokens() != 32 {
				t.Errorf("usage %v", f.Meta.GetUsage())
			}
		}},
		{name: "tools_parallel_stream", request: "tools_parallel", kind: kOpenAI, check: func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			ends := 0
			for _, ev := range evs {
				if ev.Kind == provider.EventToolCallEnd {
					ends++
				}
			}
			if ends != 2 {
				t.Errorf("%d tool call ends, want 2", ends)
			}
		}},
		{name: "tools_length_stream", request: "tools_parallel", kind: kOpenAI, check: func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			// The call was cut by max_tokens: LENGTH, never TOOL_CALLS.
			f := foldEvents(t, evs)
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
			if tc := f.Message.GetParts()[0].GetToolCall(); tc.GetArgumentsValid() || tc.GetArguments() != `{"city":"Par` {
				t.Errorf("cut call %v", tc)
			}
		}},
		{name: "azure_chat_stream", request: "azure_chat", kind: kAzure, check: func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			ext := f.Meta.GetExtended().GetFields()
			if ext[extPromptFilterResults] == nil || ext[extContentFilterResults] == nil || ext[extAzureDeployment].GetStringValue() != "gpt-4o-prod" {
				t.Errorf("extended %v", ext)
			}
			if f.Meta.ResponseId == "" || f.Meta.ResolvedModel != "gpt-4o-2024-11-20" {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// A real Azure stream (see testdata/README.md): the prompt-filter
		// chunk with no choices and empty id/model, a content-filter chunk
		// with no delta after finish_reason, the usage chunk.
		{name: "real_azure_chat_stream", request: "azure_chat", kind: kAzure, check: func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			if len(f.Message.GetParts()) != 1 || f.Message.GetParts()[0].GetText() != "Hello World" {
				t.Errorf("message %v", f.Message)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			want := &llmrelayv1.Usage{InputTokens: 15, OutputTokens: 5, TotalTokens: 20}
			if !proto.Equal(f.Meta.GetUsage(), want) || f.Meta.GetResponseId() != "chatcmpl-test" || f.Meta.GetResolvedModel() != "gpt-4" {
				t.Errorf("meta %v", f.Meta)
			}
			if f.Meta.GetExtended().GetFields()[extPromptFilterResults] == nil {
				t.Errorf("extended %v", f.Meta.GetExtended())
			}
		}},
		{name: "stream_error_event", request: "chat_plain", kind: kOpenAI, check: func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindUnavailable || pe.Code != "server_error" || pe.HTTPStatus != http.StatusOK || pe.RequestID == "" {
				t.Errorf("got %s", renderErr(err))
			}
			if f := foldEvents(t, evs); len(f.Message.Parts) != 1 || f.Message.Parts[0].GetText() != "Once upon" {
				t.Errorf("partial text %v", f.Message.Parts)
			}
		}},
		{name: "stream_cut", request: "chat_plain", kind: kOpenAI, check: func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindBadResponse || !strings.HasPrefix(pe.Message, "stream ended before") {
				t.Errorf("got %s", renderErr(err))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			p := newTestProvider(t, tc.kind, srv.URL)
			s, err := p.Stream(context.Background(), reqs[tc.request])
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			checkStreamInvariants(t, evs)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			providertest.Golden(t, td(tc.name+".request.golden"), providertest.RequestGolden(srv.Last(t), authHeaders...))
			tc.check(t, evs, err)
			// The terminal result repeats.
			if _, err2 := s.Recv(); (err == nil) != errors.Is(err2, io.EOF) {
				t.Errorf("second terminal Recv: %v after %v", err2, err)
			}
		})
	}
}

func checkStreamInvariants(t testing.TB, evs []*provider.Event) {
	t.Helper()
	ids := map[int]string{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventToolCall, provider.EventToolCallEnd, provider.EventToolCallCut:
			if ev.ToolCall.CallID == "" || ev.ToolCall.Index < 0 {
				t.Errorf("tool call event without CallID or with bad index: %+v", ev.ToolCall)
			}
			if id, ok := ids[ev.ToolCall.Index]; ok && id != ev.ToolCall.CallID {
				t.Errorf("index %d has ids %s and %s", ev.ToolCall.Index, id, ev.ToolCall.CallID)
			}
			ids[ev.ToolCall.Index] = ev.ToolCall.CallID
		case provider.EventMeta:
			if ev.Meta == nil {
				t.Error("meta event without meta")
			} else if _, err := proto.Marshal(ev.Meta); err != nil {
				t.Errorf("meta does not marshal: %v", err)
			}
		case provider.EventUsage:
			if ev.Usage == nil {
				t.Error("usage event without usage")
			}
		case provider.EventText, provider.EventRefusal:
			if ev.Text == "" {
				t.Error("empty text event")
			}
		case provider.EventReasoning:
			if r := ev.Reasoning; r.Text == "" && r.Signature == "" && r.ID == "" && !r.Redacted {
				t.Error("empty reasoning event")
			}
		case provider.EventProviderItem:
			if ev.Item.Type == "" || !strings.HasPrefix(ev.Item.JSON, "{") || !json.Valid([]byte(ev.Item.JSON)) {
				t.Errorf("provider item %+v", ev.Item)
			}
		default:
			t.Errorf("unknown event kind %d", ev.Kind)
		}
	}
}

// TestUnaryStreamEquivalence: the folded stream gives the same message,
// finish reason and usage as Generate for the same recorded answer.
func TestUnaryStreamEquivalence(t *testing.T) {
	t.Parallel()
	reqs := chatRequests(t)
	cases := []struct {
		unary, stream, request string
		kind                   kind
	}{
		{"chat_plain", "chat_plain_stream", "chat_plain", kOpenAI},
		{"tools_parallel", "tools_parallel_stream", "tools_parallel", kOpenAI},
		{"azure_chat", "azure_chat_stream", "azure_chat", kAzure},
	}
	for _, tc := range cases {
		t.Run(tc.unary, func(t *testing.T) {
			t.Parallel()
			u := providertest.ReplayFile(t, td(tc.unary+".http"))
			res, err := newTestProvider(t, tc.kind, u.URL).Generate(context.Background(), reqs[tc.request])
			if err != nil {
				t.Fatal(err)
			}
			srv := providertest.ReplayFile(t, td(tc.stream+".http"))
			s, err := newTestProvider(t, tc.kind, srv.URL).Stream(context.Background(), reqs[tc.request])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, _, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			// Two recordings are two calls: the answer is the same, the
			// call ids are not.
			if got, want := providertest.Answer(f.Message), providertest.Answer(res.Message); got != want {
				t.Errorf("message:\nstream %s\nunary  %s", got, want)
			}
			if f.Meta.FinishReason != res.Meta.FinishReason || f.Meta.ProviderFinishReason != res.Meta.ProviderFinishReason {
				t.Errorf("finish: stream %v/%q, unary %v/%q", f.Meta.FinishReason, f.Meta.ProviderFinishReason, res.Meta.FinishReason, res.Meta.ProviderFinishReason)
			}
			if !proto.Equal(f.Meta.Usage, res.Meta.Usage) {
				t.Errorf("usage: stream %v, unary %v", f.Meta.Usage, res.Meta.Usage)
			}
			if tc.kind == kAzure {
				for _, k := range []string{extContentFilterResults, extPromptFilterResults, extAzureDeployment} {
					if !proto.Equal(f.Meta.GetExtended().GetFields()[k], res.Meta.GetExtended().GetFields()[k]) {
						t.Errorf("extended %s: stream %v, unary %v", k, f.Meta.GetExtended().GetFields()[k], res.Meta.GetExtended().GetFields()[k])
					}
				}
			}
			if f.Meta.ToolCallCount != res.Meta.ToolCallCount || f.Meta.ResolvedModel != res.Meta.ResolvedModel {
				t.Errorf("tool calls %d/%d, model %q/%q", f.Meta.ToolCallCount, res.Meta.ToolCallCount, f.Meta.ResolvedModel, res.Meta.ResolvedModel)
			}
		})
	}
}

// streamFrom builds a stream over a raw SSE body.
func streamFrom(p *Provider, body string) *chatStream {
	resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Request-Id": {"req_test"}}, Body: io.NopCloser(strings.NewReader(body))}
	return p.newStream(resp, "m", nil, secrets{testKey})
}

func TestStreamEdgeCases(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body string
		want       []string // rendered lines after the header meta
	}{
		{"missing id gets fallback and warning",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
			[]string{`meta {"warnings":["tool call 0 has no id; keyed as call_idx0"]}`, `tool_call id=call_idx0 index=0 name="f" args="{}"`, `tool_call_end id=call_idx0 index=0`, "eof"}},
		{"comments, CRLF and an empty data line",
			": keep-alive\r\n\r\ndata:\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\r\n\r\n: OPENROUTER PROCESSING\r\n\r\ndata: [DONE]\r\n\r\n",
			[]string{`text "hi"`, `meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"stop"}`, "eof"}},
		{"refusal deltas",
			"data: {\"choices\":[{\"delta\":{\"content\":null,\"refusal\":\"I can't\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"refusal\":\" help.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			[]string{`refusal "I can't"`, `refusal " help."`, `meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"stop"}`, "eof"}},
		{"same index reused with a new id is a new call",
			"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_b\",\"function\":{\"name\":\"g\",\"arguments\":{\"x\":1}}}]}}]}\n\ndata: [DONE]\n\n",
			[]string{`tool_call id=call_a index=0 name="f" args="{}"`, `tool_call_end id=call_a index=0`, `tool_call id=call_b index=1 name="g" args="{\"x\":1}"`, `tool_call_end id=call_b index=1`, "eof"}},
		{"a call's id at another index continues it (found by FuzzStream)",
			"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"call_x\",\"function\":{\"name\":\"f\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"call_y\",\"function\":{\"name\":\"g\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_y\",\"function\":{\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
			[]string{`tool_call id=call_x index=0 name="f" args=""`, `tool_call id=call_y index=1 name="g" args=""`, `tool_call id=call_y index=1 name="" args="{}"`,
				`tool_call_end id=call_x index=0`, `tool_call_end id=call_y index=1`, "eof"}},
		{"finish stop with tool calls becomes TOOL_CALLS",
			"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			[]string{`tool_call id=call_a index=0 name="f" args=""`, `meta {"finish_reason":"FINISH_REASON_TOOL_CALLS","provider_finish_reason":"stop"}`, `tool_call_end id=call_a index=0`, "eof"}},
		{"interleaved calls of a compatible server",
			"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_il_a\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_il_b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"y\\\"\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\":2}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
			[]string{`tool_call id=call_il_a index=0 name="f" args=""`, `tool_call id=call_il_b index=1 name="g" args="{\"y\""`,
				`tool_call id=call_il_a index=0 name="" args="{}"`, `tool_call id=call_il_b index=1 name="" args=":2}"`,
				`meta {"finish_reason":"FINISH_REASON_TOOL_CALLS","provider_finish_reason":"tool_calls"}`,
				`tool_call_end id=call_il_a index=0`, `tool_call_end id=call_il_b index=1`, "eof"}},
		{"finish length before the first call stays LENGTH",
			"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_len_c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\"}}]}}]}\n\ndata: [DONE]\n\n",
			[]string{`meta {"finish_reason":"FINISH_REASON_LENGTH","provider_finish_reason":"length"}`, `tool_call id=call_len_c index=0 name="f" args="{\"a"`,
				`meta {"warnings":["tool call call_len_c was cut by the token limit; its arguments are partial"]}`,
				`tool_call_cut id=call_len_c index=0`, "eof"}},
		{"reasoning_details: encrypted, summary and unknown blocks",
			"data: {\"choices\":[{\"delta\":{\"reasoning\":\"dup\",\"reasoning_details\":[{\"type\":\"reasoning.encrypted\",\"data\":\"gAAAAenc\",\"id\":\"rs_det_01\",\"format\":\"openai-responses-v1\",\"index\":0},{\"type\":\"reasoning.summary\",\"summary\":\"Plan.\",\"index\":1},{\"type\":\"reasoning.future\",\"index\":2}]}}]}\n\n" +
				"data: {\"choices\":[{\"delta\":{\"reasoning_details\":{\"type\":\"reasoning.text\"},\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			[]string{`meta {"warnings":["reasoning_details[2]: type \"reasoning.future\" not supported; ignored"]}`,
				`reasoning index=0 id=rs_det_01 redacted signature="gAAAAenc"`, `reasoning index=1 text="Plan."`,
				`meta {"warnings":["reasoning_details is not an array of reasoning blocks; ignored"]}`, `text "ok"`,
				`meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"stop"}`, "eof"}},
		{"invalid chunk",
			"data: {\"choices\":[\n\n",
			[]string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="invalid stream chunk: unexpected end of JSON input"`}},
		{"error event: context length",
			"data: {\"error\":{\"message\":\"too long\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}\n\n",
			[]string{`error provider=openai kind=context_length_exceeded http=200 code="context_length_exceeded" request_id=req_test retry_after=0s message="too long"`}},
		{"empty body", "", []string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="stream ended before [DONE]"`}},
		{"usage totals replace",
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":4},\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\ndata: [DONE]\n\n",
			[]string{`usage {"input_tokens":10,"output_tokens":5,"total_tokens":15,"cached_input_tokens":4,"reasoning_tokens":2}`, "eof"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := streamFrom(p, tc.body)
			first, err := s.Recv() // header meta (request id)
			if err != nil || first.Kind != provider.EventMeta || first.Meta.ProviderRequestId != "req_test" {
				t.Fatalf("first event %v, %v", first, err)
			}
			evs, rendered, _ := collect(t, s)
			checkStreamInvariants(t, evs)
			got := strings.Split(strings.TrimSuffix(string(rendered), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestStreamCloseAndLimits(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := streamFrom(p, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Recv(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("Recv after Close: %v, want an error", err)
	}

	// Too many tool calls: an error, not unbounded growth.
	var b bytes.Buffer
	for i := 0; i <= maxStreamToolCalls; i++ {
		b.WriteString(`data: {"choices":[{"delta":{"tool_calls":[{"index":` + itoa(i) + `,"id":"c` + itoa(i) + `","function":{"name":"f"}}]}}]}` + "\n\n")
	}
	s = streamFrom(p, b.String())
	_, _, err = collect(t, s)
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "tool calls") {
		t.Errorf("got %v", err)
	}

	// An event over the size limit.
	s = streamFrom(p, "data: "+strings.Repeat("x", maxStreamEventBytes+1)+"\n\n")
	_, _, err = collect(t, s)
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse {
		t.Errorf("got %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestStreamJSONErrorBody: a JSON error body with a 200 status on a stream
// request is an error, not an empty stream.
func TestStreamJSONErrorBody(t *testing.T) {
	t.Parallel()
	rec := providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_x"}},
		Body: []byte(`{"error":{"message":"The server is overloaded","type":"server_error"}}`)}
	srv := providertest.Replay(t, rec)
	p := newTestProvider(t, kOpenAI, srv.URL)
	_, err := p.Stream(context.Background(), simpleRequest("gpt-4o-mini"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindUnavailable || pe.RequestID != "req_x" || pe.HTTPStatus != 200 {
		t.Errorf("got %s", renderErr(err))
	}
}

// FuzzStream: whatever the stream body, the events keep the invariants
// of every adapter (providertest.CheckEvents: call ids unique, each call
// ended once and nothing after its end, no negative usage, nothing after
// the stream's end) and, when the stream completes, carry the argument
// text, content and refusal that a reference decoder reads in the same
// body, nothing lost, added or repeated (checkAgainstReference).
func FuzzStream(f *testing.F) {
	for _, name := range chatStreamSeeds {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"{\"}},{\"index\":3,\"id\":\"x\"}]}}]}\n\ndata: [DONE]\n\n"))
	// A think block opening the content, its closing tag split across deltas (think.go).
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\" <think>a</th\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ink>b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	// A character's bytes cut between two reasoning deltas, and between
	// two content arrays' thinking texts.
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"a\xe6\x80\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"reasoning_content\":\"\x9db\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":\"c\xe6\"}]}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":\"\x80\x9d\"}]}]}}]}\n\ndata: [DONE]\n\n"))
	// A Thinking model's call in the middle of a prefilled think block,
	// the block going on after a finish (beforeCalls, finishThink).
	f.Add([]byte("data: {\"model\":\"x-Thinking\",\"choices\":[{\"delta\":{\"content\":\"plan\"}}]}\n\n" +
		"data: {\"model\":\"x-Thinking\",\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: {\"model\":\"x-Thinking\",\"choices\":[{\"delta\":{\"content\":\" more</think>\\n\\nok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	// Gemini's thought block on Google's endpoint (ThinkThought), its
	// closing tag split across deltas.
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"<thought>a</tho\",\"extra_content\":{\"google\":{\"thought\":true}}}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ught>b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	p, err := NewAzure(testKey, WithBaseURL("https://example.openai.azure.com"))
	if err != nil {
		f.Fatal(err)
	}
	// The same bodies read as Google's endpoint reads them (its markup
	// dialect, provider.ThinkThought).
	g, err := New(testKey, WithBaseURL("https://generativelanguage.googleapis.com/v1beta/openai"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, p := range []*Provider{p, g} {
			s := streamFrom(p, string(body))
			evs, complete, err := providertest.Drain(t, s, len(body)+10)
			s.Close()
			if err != nil {
				providerError(t, err)
			}
			checkStreamInvariants(t, evs)
			calls := providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: complete, EndEveryCall: true, LateFragments: true})
			if complete {
				checkAgainstReference(t, body, evs, calls)
			}
		}
	})
}

// TestStreamHoldsLittle: what an open stream keeps while it waits for its
// next chunk (issue 17, memory per idle stream). The stream's struct stays
// in the 640-byte size class (its previous chunk is only the strings the
// next one reuses), the tool-call and content-filter maps are made only
// when a stream has them, and the last chunk's decoded delta is not kept.
func TestStreamHoldsLittle(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(chatStream{}); n > 640 {
		t.Errorf("chatStream is %d bytes, want at most 640 (the size class below 768)", n)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := streamFrom(p, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n")
	if s.byIndex != nil || s.rare != nil {
		t.Error("a new stream has its tool-call map or its rare state (content filter, annotations) already made")
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("no text event: %v", err)
		}
		if ev.Kind == provider.EventText {
			break
		}
	}
	if s.byIndex != nil || s.rare != nil {
		t.Error("a text chunk made the tool-call map or the rare state")
	}
	if s.prev.ID != "c1" || s.prev.Model != "m" {
		t.Errorf("previous chunk's strings %+v, want id c1 and model m", s.prev)
	}
	if len(s.cur.Choices) != 0 || cap(s.cur.Choices) == 0 {
		t.Fatalf("choices len %d cap %d, want the array kept empty", len(s.cur.Choices), cap(s.cur.Choices))
	}
	for i, ch := range s.cur.Choices[:cap(s.cur.Choices)] {
		if ch.Delta != nil {
			t.Errorf("choice %d still holds its delta after the chunk was handled", i)
		}
	}
}

// TestUsageDetailsReplaced: each usage object replaces the previous one's
// details whole, folded as the server folds metas (proto.Merge): a key of
// an earlier object does not survive, and an object without details
// leaves none.
func TestUsageDetailsReplaced(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(content, usage string) string {
		return `data: {"id":"chatcmpl-usage-replaced","model":"m","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}],"usage":` + usage + "}\n\n"
	}
	cases := []struct {
		name   string
		usages []string
		want   map[string]any // nil: no usage_details
	}{
		{"replaced", []string{`{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"a":"x","b":2}`, `{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4,"b":3,"c":true}`},
			map[string]any{"b": 3.0, "c": true}},
		{"cleared", []string{`{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"a":"x"}`, `{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}`},
			map[string]any{}},
		{"same twice", []string{`{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"a":"x"}`, `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"a":"x"}`},
			map[string]any{"a": "x"}},
		{"none", []string{`{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`, `{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := chunk("A", tc.usages[0]) + chunk("B", tc.usages[1]) + "data: [DONE]\n\n"
			evs, _, err := collect(t, streamFrom(p, body))
			if err != nil {
				t.Fatal(err)
			}
			metas := 0
			for _, ev := range evs {
				if ev.Kind == provider.EventMeta && ev.Meta.GetExtended().GetFields()["usage_details"] != nil {
					metas++
				}
			}
			f := foldEvents(t, evs)
			v, ok := f.Meta.GetExtended().GetFields()["usage_details"]
			switch {
			case tc.want == nil:
				if ok || metas != 0 {
					t.Errorf("usage_details %v (%d metas), want none", v, metas)
				}
			case !ok || !reflect.DeepEqual(v.GetStructValue().AsMap(), tc.want):
				t.Errorf("usage_details %v, want %v", v, tc.want)
			case tc.name == "same twice" && metas != 1:
				t.Errorf("%d usage_details metas, want 1", metas)
			}
		})
	}
}

// TestUsageServiceTier: a service tier inside the usage object (Mistral's)
// is the response's tier when no chunk names one at the top level, in a
// stream as in a unary answer; a top-level service_tier wins.
func TestUsageServiceTier(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ top, usage, want string }{
		{"", "standard", "standard"},
		{`"service_tier":"default",`, "flex", "default"},
		{"", "", ""},
	} {
		usage := `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`
		if tc.usage != "" {
			usage = `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"service_tier":"` + tc.usage + `"}`
		}
		body := `data: {"id":"chatcmpl-usage-tier",` + tc.top + `"model":"m","choices":[{"index":0,"delta":{"content":"A"},"finish_reason":"stop"}],"usage":` + usage + "}\n\ndata: [DONE]\n\n"
		evs, _, err := collect(t, streamFrom(p, body))
		if err != nil {
			t.Fatal(err)
		}
		if got := foldEvents(t, evs).Meta.GetServiceTier(); got != tc.want {
			t.Errorf("stream %q/%q: tier %q, want %q", tc.top, tc.usage, got, tc.want)
		}
		res, err := p.parseChatResponse([]byte(`{"id":"chatcmpl-usage-tier",` + tc.top + `"choices":[{"index":0,"message":{"role":"assistant","content":"A"},"finish_reason":"stop"}],"usage":` + usage + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Meta.GetServiceTier(); got != tc.want {
			t.Errorf("unary %q/%q: tier %q, want %q", tc.top, tc.usage, got, tc.want)
		}
	}
}
