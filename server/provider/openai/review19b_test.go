package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestResponsesIncompleteAfterCompletedCallReview19b: a Responses answer
// cut by max_output_tokens whose last output item is a function_call the
// server marks "completed": the limit hit after the call was written
// (while the next item was being started), so the call is whole, as the
// stream reports it (its output_item.done ends it whole before
// response.incomplete). Only an item not marked completed is cut.
func TestResponsesIncompleteAfterCompletedCallReview19b(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id":"resp_r19b","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[` +
		`{"type":"function_call","id":"fc_1","call_id":"call_r19b_a","name":"f","arguments":"{\"a\":1}","status":"completed"}]}`
	res, err := p.parseResponsesResponse([]byte(body), "m")
	if err != nil {
		t.Fatal(err)
	}
	tc := res.Message.GetParts()[0].GetToolCall()
	if tc == nil || !tc.GetArgumentsValid() {
		t.Errorf("call %v: want arguments_valid true", tc)
	}
	for _, w := range res.Meta.GetWarnings() {
		if strings.Contains(w, "was cut by") {
			t.Errorf("warning %q for a completed call", w)
		}
	}
}

// TestResponsesStreamIncompleteAfterCompletedCallReview19b: the stream of
// the same answer from a server that sends no done events for the call:
// response.incomplete's item says the call was completed, so it ends
// whole, as the unary answer has it.
func TestResponsesStreamIncompleteAfterCompletedCallReview19b(t *testing.T) {
	t.Parallel()
	const item = `{"id":"fc_r19b","type":"function_call","status":"%s","arguments":"%s","call_id":"call_r19b_b","name":"get_weather"}`
	events := []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_r19b","status":"in_progress","model":"gpt-4.1-mini","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":` + fmt.Sprintf(item, "in_progress", "") + `}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_r19b","output_index":0,"delta":"{\"city\":\"Oslo\"}"}`,
		`{"type":"response.incomplete","sequence_number":3,"response":{"id":"resp_r19b","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-4.1-mini","output":[` +
			fmt.Sprintf(item, "completed", `{\"city\":\"Oslo\"}`) + `],"usage":{"input_tokens":60,"output_tokens":16,"total_tokens":76}}}`,
	}
	var body strings.Builder
	for _, e := range events {
		body.WriteString("data: " + e + "\n\n")
	}
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body.String())})
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	msg, _, ended := gatewayFold(t, evs)
	checkCalls(t, msg, ended, []wantCall{{"call_r19b_b", "get_weather", `{"city":"Oslo"}`, true, "end"}})
}

// TestIdlessCallNamedEveryFragmentLinearReview19b: a call without id
// whose every fragment repeats the name (the shape startsAnother checks
// for a second call) stays one call. Its cost is measured by
// BenchmarkIdlessCallNamedEveryFragment, not by a timed assertion:
// parsing the whole arguments so far at each fragment took 17 s for
// 160 KB sent in 4-byte fragments (quadratic); the benchmark's ns/fragment
// stays flat from 1,000 to 30,000 fragments.
func TestIdlessCallNamedEveryFragmentLinearReview19b(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	frag := func(args string) {
		b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"write","arguments":` + args + `}}]}}]}` + "\n\n")
	}
	const n = 30000
	frag(`"{\"content\":\""`)
	for range n {
		frag(`"abcd"`)
	}
	frag(`"\"}"`)
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	s := streamFrom(p, b.String())
	var evs []*provider.Event
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	msg, _, ended := gatewayFold(t, evs)
	checkCalls(t, msg, ended, []wantCall{{"call_idx0", "write", `{"content":"` + strings.Repeat("abcd", n) + `"}`, true, "end"}})
}

// BenchmarkIdlessCallNamedEveryFragment: ns per fragment of an id-less call
// naming its function in every fragment, at two sizes: flat when reading
// is linear (startsAnother parses only arguments that could be whole).
func BenchmarkIdlessCallNamedEveryFragment(b *testing.B) {
	p, err := New(testKey)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 30000} {
		var sb strings.Builder
		frag := func(args string) {
			sb.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"write","arguments":` + args + `}}]}}]}` + "\n\n")
		}
		frag(`"{\"content\":\""`)
		for range n {
			frag(`"abcd"`)
		}
		frag(`"\"}"`)
		sb.WriteString("data: [DONE]\n\n")
		body := sb.String()
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				s := streamFrom(p, body)
				for {
					if _, err := s.Recv(); err != nil {
						if !errors.Is(err, io.EOF) {
							b.Fatal(err)
						}
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+2)), "ns/fragment")
		})
	}
}
