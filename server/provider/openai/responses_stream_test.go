package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	foldpkg "github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// respStreamCases are the recorded streamed Responses API scenarios.
var respStreamCases = []string{
	"responses_plain_stream", "responses_tools_parallel_stream", "responses_no_call_id_stream",
	"responses_stream_failed", "responses_stream_error_event", "responses_stream_cut",
	"responses_reasoning_tools_stream",
	// Real recordings (see testdata/README.md).
	"real_responses_error_stream", "real_responses_tool_call_stream", "real_responses_web_search_stream",
	"real_responses_encrypted_reasoning_stream",
	// pydantic/pydantic-ai cassettes (see testdata/README.md).
	"real_pyd_openai_responses_raw_cot_stream_openrouter", "real_pyd_gpt5_freeform_text_streaming_1",
}

func TestStreamResponses(t *testing.T) {
	t.Parallel()
	reqs := responsesRequests(t)
	checks := map[string]func(t *testing.T, evs []*provider.Event, err error){
		"responses_plain_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if !strings.HasPrefix(f.Meta.ResponseId, "resp_68") || !strings.HasPrefix(f.Meta.ProviderRequestId, "req_") || f.Meta.CreateTime == nil {
				t.Errorf("meta %v", f.Meta)
			}
		},
		"responses_tools_parallel_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			ends := map[string]bool{}
			for _, ev := range evs {
				switch ev.Kind {
				case provider.EventToolCall:
					if !strings.HasPrefix(ev.ToolCall.CallID, "call_") {
						t.Errorf("delta keyed by %q, want the call_id (deltas only name the fc_ item)", ev.ToolCall.CallID)
					}
				case provider.EventToolCallEnd:
					ends[ev.ToolCall.CallID] = true
				}
			}
			f := foldEvents(t, evs)
			if len(ends) != 2 || f.Meta.ToolCallCount != 2 {
				t.Errorf("%d ends, %d calls", len(ends), f.Meta.ToolCallCount)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
		},
		"responses_no_call_id_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			tc := f.Message.GetParts()[0].GetToolCall()
			if !strings.HasPrefix(tc.GetCallId(), "fc_68") || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			if len(f.Meta.Warnings) != 1 || !strings.Contains(f.Meta.Warnings[0], "has no call_id") {
				t.Errorf("warnings %q", f.Meta.Warnings)
			}
		},
		"responses_stream_failed": func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindRateLimited || pe.Code != "rate_limit_exceeded" || pe.HTTPStatus != http.StatusOK ||
				!strings.HasPrefix(pe.RequestID, "req_") || pe.RetryAfter.Milliseconds() != 218 {
				t.Errorf("got %s", renderErr(err))
			}
		},
		"responses_stream_error_event": func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindUnavailable || pe.Code != "server_error" || pe.HTTPStatus != http.StatusOK || pe.RequestID == "" {
				t.Errorf("got %s", renderErr(err))
			}
			if f := foldEvents(t, evs); len(f.Message.Parts) != 1 || f.Message.Parts[0].GetText() != "The capital" {
				t.Errorf("partial text %v", f.Message.Parts)
			}
		},
		"responses_reasoning_tools_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			// Reasoning pieces come first: the id, the summary deltas
			// (a blank line between the two summary parts), then the
			// encrypted content once, from output_item.done.
			var text strings.Builder
			signatures, pieces := 0, 0
			for i, ev := range evs {
				if ev.Kind != provider.EventReasoning {
					continue
				}
				r := ev.Reasoning
				if r.Index != 0 || (r.ID != "") != (pieces == 0) {
					t.Errorf("event %d: %+v", i, r)
				}
				pieces++
				text.WriteString(r.Text)
				if r.Signature != "" {
					signatures++
					if !strings.HasPrefix(r.Signature, "gAAAAABo7h") || r.Text != "" {
						t.Errorf("signature piece %+v", r)
					}
				}
			}
			if signatures != 1 || !strings.Contains(text.String(), "rather than guess.\n\n**Choosing the arguments**") {
				t.Errorf("%d signatures, text %q", signatures, text.String())
			}
			f := accFold(t, evs)
			if parts := f.Message.GetParts(); len(parts) != 2 || parts[0].GetReasoning() == nil || parts[1].GetToolCall() == nil {
				t.Errorf("folded message %v", f.Message)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
		},
		// A real stream: an error event (insufficient_quota), then
		// response.failed with the same error; no output.
		"real_responses_error_stream": func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindRateLimited || pe.Code != "insufficient_quota" || pe.HTTPStatus != http.StatusOK ||
				!strings.HasPrefix(pe.Message, "You exceeded your current quota") || !strings.HasPrefix(pe.RequestID, "req_") {
				t.Errorf("got %s", renderErr(err))
			}
			if f := foldEvents(t, evs); len(f.Message.GetParts()) != 0 {
				t.Errorf("parts %v", f.Message.GetParts())
			}
		},
		// A real gpt-5.1 stream: one function call, the item fields
		// after "type" in an order the hand-built ones never used
		// (sequence_number last), usage with cache_write_tokens.
		"real_responses_tool_call_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			tc := parts[0].GetToolCall()
			if tc.GetCallId() != "call_2FQdm3Br7Qb35YUBSkDR7kue" || tc.GetName() != "get_weather" || tc.GetArguments() != `{"city":"Beijing"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			u := f.Meta.GetUsage()
			if u.GetInputTokens() != 45 || u.GetOutputTokens() != 25 || u.GetTotalTokens() != 70 || f.Meta.GetResolvedModel() != "gpt-5.1-2025-11-13" ||
				f.Meta.GetResponseId() != "resp_0775572d10a16b66006a8d85285ef487d2ae865d3657af7276" {
				t.Errorf("meta %v", f.Meta)
			}
		},
		// A real gpt-5-nano stream with the hosted web_search tool: four
		// web_search_call items (not client calls), five reasoning items
		// with no summary, url_citation annotations, cached and reasoning
		// tokens in the usage.
		"real_responses_web_search_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			var text strings.Builder
			for _, p := range f.Message.GetParts() {
				if p.GetToolCall() != nil {
					t.Errorf("hosted tool item taken for a client call: %v", p)
				}
				text.WriteString(p.GetText())
			}
			if s := text.String(); !strings.HasPrefix(s, "Here’s what’s notable in Berlin today") || !strings.HasSuffix(s, "(arts, politics, sports) from today?") || len(s) != 2163 {
				t.Errorf("text (%d bytes) %q", len(s), s)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			want := &llmrelayv1.Usage{InputTokens: 60093, OutputTokens: 4080, TotalTokens: 64173, CachedInputTokens: 34560, ReasoningTokens: 3648}
			if !proto.Equal(f.Meta.GetUsage(), want) || f.Meta.GetToolCallCount() != 0 {
				t.Errorf("usage %v, %d calls", f.Meta.GetUsage(), f.Meta.GetToolCallCount())
			}
			// The six url_citation annotations (six
			// output_text.annotation.added events; output_item.done and
			// response.completed repeat them) are kept once each, in
			// order, as sent; they were dropped.
			anns := f.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
			wantStarts := []float64{327, 620, 898, 1215, 1525, 1900}
			if len(anns) != len(wantStarts) {
				t.Fatalf("annotations %v", f.Meta.GetExtended().GetFields()["annotations"])
			}
			for i, a := range anns {
				if m := a.GetStructValue().AsMap(); m["type"] != "url_citation" || m["start_index"] != wantStarts[i] {
					t.Errorf("annotation %d: %v", i, m)
				}
			}
			if m := anns[0].GetStructValue().AsMap(); m["url"] != "https://www.wallpaper.com/art/exhibitions-shows/berlin-art-week-2025" ||
				m["end_index"] != 414.0 || m["title"] != "What to see at Berlin Art Week 2025 | Wallpaper*" {
				t.Errorf("annotation 0: %v", m)
			}
		},
		// A real gpt-5.1-codex-max stream (store false): the reasoning
		// item's encrypted_content differs between output_item.added,
		// output_item.done and response.completed; the summary streams,
		// then one function call.
		"real_responses_encrypted_reasoning_stream": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			parts := f.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			r, tc := parts[0].GetReasoning(), parts[1].GetToolCall()
			if r.GetId() != "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9" ||
				r.GetText() != "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product." ||
				!strings.HasPrefix(r.GetSignature(), "gAAAAABpPDIVOKrs") || !strings.HasSuffix(r.GetSignature(), "Nxat0wz4uQ==") {
				t.Errorf("reasoning %v", r)
			}
			if tc.GetCallId() != "call_AB6AaRZ1FYZB2RwS6A5vbdqn" || tc.GetName() != "calculator" || tc.GetArguments() != `{"a":12,"b":7,"op":"add"}` {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if u := f.Meta.GetUsage(); u.GetInputTokens() != 134 || u.GetOutputTokens() != 28 || u.GetTotalTokens() != 162 {
				t.Errorf("usage %v", u)
			}
		},
		// OpenRouter's Responses API relaying gpt-oss-20b (pydantic-ai
		// cassette): a ": OPENROUTER PROCESSING" comment, data-only
		// events, the raw chain of thought as reasoning_text deltas (no
		// summary), the reasoning item done after the message, and a
		// response.completed whose reasoning item has another id.
		"real_pyd_openai_responses_raw_cot_stream_openrouter": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			parts := f.Message.GetParts()
			if len(parts) != 2 || parts[1].GetText() != "4" {
				t.Fatalf("parts %v", parts)
			}
			if r := parts[0].GetReasoning(); r.GetText() != `The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.` {
				t.Errorf("reasoning %v", r)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			want := &llmrelayv1.Usage{InputTokens: 78, OutputTokens: 37, TotalTokens: 115, ReasoningTokens: 22}
			if !proto.Equal(f.Meta.GetUsage(), want) || f.Meta.GetResponseId() != "gen-1764265411-Fu1iEX7h5MRWiL79lb94" || f.Meta.GetResolvedModel() != "openai/gpt-oss-20b" {
				t.Errorf("meta %v", f.Meta)
			}
		},
		// gpt-5 with a custom (free-form) tool (pydantic-ai cassette): an
		// encrypted reasoning item whose encrypted_content differs between
		// output_item.added, output_item.done and response.completed (the
		// done one is what pydantic-ai sends back), then a custom_tool_call
		// streamed as custom_tool_call_input deltas.
		"real_pyd_gpt5_freeform_text_streaming_1": func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			parts := f.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			if r := parts[0].GetReasoning(); r.GetId() != "rs_0e3f1d7b90a3b1d70069580db33f4c8191982313527a3b2953" || r.GetText() != "" ||
				!strings.HasPrefix(r.GetSignature(), "gAAAAABpWA21nrqjNk0W") || !strings.HasSuffix(r.GetSignature(), "_1AH6X-NrZ") {
				t.Errorf("reasoning %v", r)
			}
			if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_2GHkSm2Jm0n7vgXsQEryfGmL" || tc.GetName() != "execute_sql" ||
				tc.GetArguments() != "SELECT * FROM users LIMIT 5;" || tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			want := &llmrelayv1.Usage{InputTokens: 63, OutputTokens: 151, TotalTokens: 214, ReasoningTokens: 128}
			if !proto.Equal(f.Meta.GetUsage(), want) || f.Meta.GetResponseId() != "resp_0e3f1d7b90a3b1d70069580db2941081918f6a49eb05de683f" || f.Meta.GetResolvedModel() != "gpt-5-2025-08-07" {
				t.Errorf("meta %v", f.Meta)
			}
		},
		"responses_stream_cut": func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindBadResponse || !strings.HasPrefix(pe.Message, "stream ended before") || pe.RequestID == "" {
				t.Errorf("got %s", renderErr(err))
			}
		},
	}
	for _, name := range respStreamCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(name+".http"))
			p := newTestProvider(t, kOpenAI, srv.URL)
			s, err := p.Stream(context.Background(), reqs[name])
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			checkRespStreamInvariants(t, evs)
			providertest.Golden(t, td(name+".golden"), rendered)
			c := srv.Last(t)
			providertest.Golden(t, td(name+".request.golden"), providertest.RequestGolden(c, authHeaders...))
			if c.Path != "/v1/responses" || c.Header.Get("Accept") != "text/event-stream" {
				t.Errorf("request %s accept=%s", c.Path, c.Header.Get("Accept"))
			}
			checks[name](t, evs, err)
			// The terminal result repeats.
			if _, err2 := s.Recv(); (err == nil) != errors.Is(err2, io.EOF) {
				t.Errorf("second terminal Recv: %v after %v", err2, err)
			}
		})
	}
}

// TestResponsesUnaryStreamEquivalence: folding the stream gives the same
// message, tool calls, finish reason and usage as Generate for the same
// recorded answer.
func TestResponsesUnaryStreamEquivalence(t *testing.T) {
	t.Parallel()
	reqs := responsesRequests(t)
	for _, tc := range []struct{ unary, stream string }{
		{"responses_plain", "responses_plain_stream"},
		{"responses_tools_parallel", "responses_tools_parallel_stream"},
		{"responses_no_call_id", "responses_no_call_id_stream"},
		{"responses_reasoning_tools", "responses_reasoning_tools_stream"},
	} {
		t.Run(tc.unary, func(t *testing.T) {
			t.Parallel()
			u := providertest.ReplayFile(t, td(tc.unary+".http"))
			res, err := newTestProvider(t, kOpenAI, u.URL).Generate(context.Background(), reqs[tc.unary])
			if err != nil {
				t.Fatal(err)
			}
			srv := providertest.ReplayFile(t, td(tc.stream+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), reqs[tc.stream])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, _, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			// The message as the server's accumulator folds it.
			f := accFold(t, evs)
			// The recordings are two calls: ids (and encrypted reasoning)
			// differ, the answer does not.
			f.Message = withItemIDs(t, withReasoningIDs(t, withCallIDs(f.Message, res.Message), res.Message), res.Message)
			if !proto.Equal(f.Message, res.Message) {
				t.Errorf("message:\nstream %v\nunary  %v", f.Message, res.Message)
			}
			if f.Meta.FinishReason != res.Meta.FinishReason || f.Meta.ProviderFinishReason != res.Meta.ProviderFinishReason {
				t.Errorf("finish: stream %v/%q, unary %v/%q", f.Meta.FinishReason, f.Meta.ProviderFinishReason, res.Meta.FinishReason, res.Meta.ProviderFinishReason)
			}
			if !proto.Equal(f.Meta.Usage, res.Meta.Usage) {
				t.Errorf("usage: stream %v, unary %v", f.Meta.Usage, res.Meta.Usage)
			}
			if f.Meta.ToolCallCount != res.Meta.ToolCallCount || f.Meta.ResolvedModel != res.Meta.ResolvedModel || len(f.Meta.Warnings) != len(res.Meta.Warnings) {
				t.Errorf("tool calls %d/%d, model %q/%q, warnings %q/%q", f.Meta.ToolCallCount, res.Meta.ToolCallCount,
					f.Meta.ResolvedModel, res.Meta.ResolvedModel, f.Meta.Warnings, res.Meta.Warnings)
			}
			for _, k := range []string{extServiceTier, extProcessingMS} {
				if (f.Meta.GetExtended().GetFields()[k] == nil) != (res.Meta.GetExtended().GetFields()[k] == nil) {
					t.Errorf("extended %s: stream %v, unary %v", k, f.Meta.GetExtended(), res.Meta.GetExtended())
				}
			}
		})
	}
}

// withCallIDs returns a copy of got whose tool calls carry want's call ids
// position by position, after checking that each id has the same shape
// (call_... or fc_...): the unary and streamed recordings are separate
// calls to the provider, so the ids differ.
func withCallIDs(got, want *llmrelayv1.Message) *llmrelayv1.Message {
	out := proto.Clone(got).(*llmrelayv1.Message)
	var wantIDs []string
	for _, p := range want.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			wantIDs = append(wantIDs, tc.CallId)
		}
	}
	i := 0
	for _, p := range out.GetParts() {
		if tc := p.GetToolCall(); tc != nil && i < len(wantIDs) {
			if prefix(tc.CallId) == prefix(wantIDs[i]) {
				tc.CallId = wantIDs[i]
			}
			i++
		}
	}
	return out
}

// withReasoningIDs returns got with want's reasoning ids and signatures,
// position by position, after checking that each has the same shape (an
// rs_ id or none, a signature or none).
func withReasoningIDs(t testing.TB, got, want *llmrelayv1.Message) *llmrelayv1.Message {
	t.Helper()
	var wantR []*llmrelayv1.Reasoning
	for _, p := range want.GetParts() {
		if r := p.GetReasoning(); r != nil {
			wantR = append(wantR, r)
		}
	}
	i := 0
	for _, p := range got.GetParts() {
		r := p.GetReasoning()
		if r == nil || i >= len(wantR) {
			continue
		}
		w := wantR[i]
		i++
		if prefix(r.Id) != prefix(w.Id) || (r.Signature == "") != (w.Signature == "") {
			t.Errorf("reasoning %d: stream %v, unary %v", i-1, r, w)
			continue
		}
		r.Id, r.Signature = w.Id, w.Signature
	}
	return got
}

// withItemIDs gives got's text and refusal parts the message item ids of
// want's, in order, after checking that each part has one exactly when the
// other does, of the same kind (prefix): the recordings are two calls.
func withItemIDs(t testing.TB, got, want *llmrelayv1.Message) *llmrelayv1.Message {
	t.Helper()
	var wantIDs []string
	for _, p := range want.GetParts() {
		if p.GetText() != "" || p.GetRefusal() != "" {
			wantIDs = append(wantIDs, p.GetItemId())
		}
	}
	i := 0
	for _, p := range got.GetParts() {
		if (p.GetText() == "" && p.GetRefusal() == "") || i >= len(wantIDs) {
			continue
		}
		w := wantIDs[i]
		i++
		if (p.ItemId == "") != (w == "") || prefix(p.ItemId) != prefix(w) {
			t.Errorf("part %d: stream item id %q, unary %q", i-1, p.ItemId, w)
			continue
		}
		p.ItemId = w
	}
	return got
}

// accFold folds stream events the way the server does: the message by the
// accumulator of package fold (which the server relays to clients), the
// meta, usage and tool-call count by fold.
func accFold(t testing.TB, evs []*provider.Event) folded {
	t.Helper()
	var acc foldpkg.Accumulator
	for _, ev := range evs {
		var err error
		switch ev.Kind {
		case provider.EventText:
			acc.AddItemText(ev.Text, ev.Phase, ev.ItemID, ev.BeginsPart)
		case provider.EventRefusal:
			acc.AddItemRefusal(ev.Text, ev.ItemID)
		case provider.EventToolCall:
			d := ev.ToolCall
			err = acc.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: d.CallID, Index: int32(d.Index), Name: d.Name,
				ArgumentsDelta: d.Arguments, Signature: d.Signature})
		case provider.EventReasoning:
			r := ev.Reasoning
			err = acc.AddReasoning(r.Proto())
		case provider.EventProviderItem:
			err = acc.AddProviderItem(&llmrelayv1.ProviderItem{Type: ev.Item.Type, Json: ev.Item.JSON})
		case provider.EventToolCallCut:
			// As the gateway relays it: a done event saying the call is
			// not valid, whatever its arguments' syntax.
			if tc, idx := acc.ToolCall(ev.ToolCall.CallID); tc != nil {
				err = acc.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: idx, ToolCall: &llmrelayv1.ToolCall{
					CallId: tc.CallId, Name: tc.Name, Arguments: tc.Arguments, Signature: tc.Signature}})
			}
		}
		if err != nil {
			t.Fatalf("fold: %v", err)
		}
	}
	f := foldEvents(t, evs)
	f.Message = acc.Message()
	return f
}

// checkRespStreamInvariants: checkStreamInvariants, plus for reasoning
// pieces: indexes are 0, 1, ... in order of first appearance; the id at
// most once per block, on its first piece or (an item whose events gave
// the id after its text began: stream.proto's ReasoningDelta.id) a later
// one; later pieces carry text or the signature; at most one signature
// piece per block.
func checkRespStreamInvariants(t testing.TB, evs []*provider.Event) {
	t.Helper()
	var other []*provider.Event
	seen := map[int]bool{}
	signed := map[int]bool{}
	hasID := map[int]bool{}
	for _, ev := range evs {
		if ev.Kind != provider.EventReasoning {
			other = append(other, ev)
			continue
		}
		r := ev.Reasoning
		if r.ID != "" {
			if hasID[r.Index] {
				t.Errorf("reasoning %d: a second id %+v", r.Index, r)
			}
			hasID[r.Index] = true
		}
		if !seen[r.Index] {
			if r.Index != len(seen) {
				t.Errorf("reasoning index %d first seen after %d blocks", r.Index, len(seen))
			}
			seen[r.Index] = true
		} else if r.Redacted || (r.Text == "" && r.Signature == "") {
			t.Errorf("reasoning %d: later piece %+v", r.Index, r)
		}
		if r.Signature != "" {
			if signed[r.Index] {
				t.Errorf("reasoning %d: second signature piece", r.Index)
			}
			signed[r.Index] = true
		}
	}
	checkStreamInvariants(t, other)
}

func prefix(id string) string {
	if i := strings.IndexByte(id, '_'); i >= 0 {
		return id[:i]
	}
	return id
}

// respStreamFrom builds a Responses stream over a raw SSE body.
func respStreamFrom(p *Provider, body string) *responsesStream {
	resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Request-Id": {"req_test"}}, Body: io.NopCloser(strings.NewReader(body))}
	return p.newResponsesStream(resp, "m", nil, secrets{testKey})
}

func sseEvent(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

const respCompleted = `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[]}}`

func TestResponsesStreamEdgeCases(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body string
		want       []string // rendered lines after the header meta
	}{
		{"interleaved calls keyed by item id; no event: lines; keep-alive comments",
			": keep-alive\n\n" +
				`data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_a","call_id":"call_a","name":"f","arguments":""}}` + "\n\n" +
				`data: {"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_b","call_id":"call_b","name":"g","arguments":""}}` + "\n\n" +
				`data: {"type":"response.function_call_arguments.delta","item_id":"fc_b","output_index":1,"delta":"{\"y\""}` + "\n\n" +
				`data: {"type":"response.function_call_arguments.delta","item_id":"fc_a","output_index":0,"delta":"{}"}` + "\n\n" +
				": keep-alive\n\n" +
				`data: {"type":"response.function_call_arguments.delta","item_id":"fc_b","output_index":1,"delta":":1}"}` + "\n\n" +
				`data: {"type":"response.function_call_arguments.done","item_id":"fc_b","output_index":1,"arguments":"{\"y\":1}"}` + "\n\n" +
				`data: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_a","call_id":"call_a","name":"f","arguments":"{}"}}` + "\n\n" +
				`data: ` + respCompleted + "\n\n",
			[]string{`tool_call id=call_a index=0 name="f" args=""`, `tool_call id=call_b index=1 name="g" args=""`,
				`tool_call id=call_b index=1 name="" args="{\"y\""`, `tool_call id=call_a index=0 name="" args="{}"`,
				`tool_call id=call_b index=1 name="" args=":1}"`, `tool_call_end id=call_b index=1`, `tool_call_end id=call_a index=0`,
				`meta {"response_id":"resp_1","finish_reason":"FINISH_REASON_TOOL_CALLS","provider_finish_reason":"completed"}`, "eof"}},
		{"item without call_id falls back to the item id, with a warning",
			sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_x","name":"f"}}`) +
				sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_x","delta":"{}"}`) +
				sseEvent("response.completed", respCompleted),
			[]string{`meta {"warnings":["function_call item fc_x has no call_id; keyed by its item id"]}`, `tool_call id=fc_x index=0 name="f" args=""`,
				`tool_call id=fc_x index=0 name="" args="{}"`, `tool_call_end id=fc_x index=0`,
				`meta {"response_id":"resp_1","finish_reason":"FINISH_REASON_TOOL_CALLS","provider_finish_reason":"completed"}`, "eof"}},
		{"no deltas: items and the final response catch up",
			sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hi"},{"type":"refusal","refusal":"no"}]}}`) +
				sseEvent("response.completed", `{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hi"}]},{"type":"function_call","id":"fc_9","call_id":"call_9","name":"f","arguments":"{\"a\":1}"},{"type":"reasoning","id":"rs_1"}],"usage":{"input_tokens":3,"output_tokens":4}}}`),
			[]string{`text "Hi"`, `refusal "no"`, `tool_call id=call_9 index=0 name="f" args="{\"a\":1}"`, `tool_call_end id=call_9 index=0`,
				`reasoning index=0 id=rs_1`,
				`meta {"finish_reason":"FINISH_REASON_TOOL_CALLS","provider_finish_reason":"completed"}`,
				`usage {"input_tokens":3,"output_tokens":4,"total_tokens":7}`, "eof"}},
		{"reasoning: summary parts joined by a blank line; encrypted content announced at added",
			sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_a","type":"reasoning","summary":[],"encrypted_content":"E1"}}`) +
				sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_a","output_index":0,"summary_index":0,"delta":"A"}`) +
				sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_a","output_index":0,"summary_index":1,"delta":"B"}`) +
				sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_a","output_index":0,"delta":"C"}`) +
				sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_a","output_index":0,"summary_index":2,"delta":""}`) +
				sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_a","type":"reasoning","summary":[{"type":"summary_text","text":"A"},{"type":"summary_text","text":"BC"}]}}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"delta":"ok"}`) +
				sseEvent("response.completed", respCompleted),
			[]string{`reasoning index=0 id=rs_a`, `reasoning index=0 text="A"`, `reasoning index=0 text="\n\nB"`, `reasoning index=0 text="C"`,
				`reasoning index=0 signature="E1"`, `text "ok"`,
				`meta {"response_id":"resp_1","finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
		{"reasoning without its done event is completed from the final response; summary after the end is ignored",
			sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"x"}`) +
				sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"rs_b","type":"reasoning","summary":[]}}`) +
				sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"id":"rs_b","type":"reasoning","summary":[{"type":"summary_text","text":"full"}],"encrypted_content":"E2"}}`) +
				sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_b","output_index":1,"summary_index":0,"delta":"late"}`) +
				sseEvent("response.completed", `{"type":"response.completed","response":{"status":"completed","output":[`+
					`{"type":"reasoning","summary":[{"type":"summary_text","text":"xy"}],"encrypted_content":"E1"},`+
					`{"id":"rs_b","type":"reasoning","summary":[{"type":"summary_text","text":"full"}],"encrypted_content":"E2"},`+
					`{"id":"rs_c","type":"reasoning","summary":"never streamed"}]}}`),
			[]string{`reasoning index=0 text="x"`, `reasoning index=1 id=rs_b`, `reasoning index=1 text="full"`,
				`reasoning index=1 signature="E2"`, `meta {"warnings":["reasoning item 1: summary text after the item's end was ignored"]}`,
				`reasoning index=0 text="y"`, `reasoning index=0 signature="E1"`, `reasoning index=2 id=rs_c`, `reasoning index=2 text="never streamed"`,
				`meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
		{"refusal deltas and incomplete",
			sseEvent("response.refusal.delta", `{"type":"response.refusal.delta","item_id":"msg_1","delta":"I can't"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","delta":""}`) +
				sseEvent("response.incomplete", `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`),
			[]string{`refusal "I can't"`, `meta {"finish_reason":"FINISH_REASON_CONTENT_FILTER","provider_finish_reason":"incomplete/content_filter"}`, "eof"}},
		{"error event with top-level fields",
			sseEvent("error", `{"type":"error","code":"context_length_exceeded","message":"too long","param":"input","sequence_number":1}`),
			[]string{`error provider=openai kind=context_length_exceeded http=200 code="context_length_exceeded" request_id=req_test retry_after=0s message="too long"`}},
		{"error event echoing the key is redacted",
			sseEvent("error", `{"type":"error","error":{"type":"invalid_request_error","code":"invalid_api_key","message":"bad key test-key"}}`),
			[]string{`error provider=openai kind=unauthenticated http=200 code="invalid_api_key" request_id=req_test retry_after=0s message="bad key [REDACTED]"`}},
		{"failed without a response", sseEvent("response.failed", `{"type":"response.failed"}`),
			[]string{`error provider=openai kind=unavailable http=200 code="" request_id=req_test retry_after=0s message="response failed without an error object"`}},
		{"completed without a response", sseEvent("response.completed", `{"type":"response.completed"}`),
			[]string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="response.completed event without a response"`}},
		{"sequence gap reported once",
			sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","delta":"a"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":6,"item_id":"m","delta":"b"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":9,"item_id":"m","delta":"c"}`) +
				sseEvent("response.completed", `{"type":"response.completed","sequence_number":10,"response":{"status":"completed"}}`),
			[]string{`text "a"`, `text "b"`, `text "c"`, `meta {"warnings":["stream event sequence_number 6 after 4: events may have been lost"]}`,
				`meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
		// OpenRouter's native search (grok-4.3) sends 9 before 7 and 8
		// (opencode_openrouter_grok_search_stream.http): late, not lost.
		{"sequence numbers out of order, none lost",
			sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","delta":"a"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":7,"item_id":"m","delta":"b"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":5,"item_id":"m","delta":"c"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":6,"item_id":"m","delta":"d"}`) +
				sseEvent("response.completed", `{"type":"response.completed","sequence_number":8,"response":{"status":"completed"}}`),
			[]string{`text "a"`, `text "b"`, `text "c"`, `text "d"`,
				`meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
		{"sequence numbers out of order, one lost",
			sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","delta":"a"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":7,"item_id":"m","delta":"b"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":6,"item_id":"m","delta":"c"}`) +
				sseEvent("response.completed", `{"type":"response.completed","sequence_number":8,"response":{"status":"completed"}}`),
			[]string{`text "a"`, `text "b"`, `text "c"`, `meta {"warnings":["stream event sequence_number 7 after 4: events may have been lost"]}`,
				`meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
		{"sequence jump past the bound reported at once",
			sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","delta":"a"}`) +
				sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":400,"item_id":"m","delta":"b"}`) +
				sseEvent("response.completed", `{"type":"response.completed","sequence_number":401,"response":{"status":"completed"}}`),
			[]string{`text "a"`, `meta {"warnings":["stream event sequence_number 400 after 4: events may have been lost"]}`, `text "b"`,
				`meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
		{"[DONE] before the final event", "data: [DONE]\n\n",
			[]string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="stream ended before response.completed ([DONE] without a final event)"`}},
		{"invalid event", "data: {\"type\":\n\n" + sseEvent("response.completed", respCompleted),
			[]string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="invalid stream event: unexpected end of JSON input"`}},
		{"last event cut short", "data: {\"type\":\n",
			[]string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="stream ended before response.completed (last event cut short)"`}},
		{"last event whole but invalid", "data: {\"type\":\n\n",
			[]string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="invalid stream event: unexpected end of JSON input"`}},
		{"empty body", "", []string{`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="stream ended before response.completed"`}},
		{"type from the event: line; unknown events ignored; events after the end unread",
			sseEvent("response.output_text.delta", `{"item_id":"m","delta":"a"}`) +
				sseEvent("response.output_text.annotation.added", `{"type":"response.output_text.annotation.added","annotation":{}}`) +
				sseEvent("response.completed", respCompleted) + "data: [DONE]\n\n",
			[]string{`text "a"`, `meta {"response_id":"resp_1","finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"completed"}`, "eof"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := respStreamFrom(p, tc.body)
			first, err := s.Recv() // header meta (request id)
			if err != nil || first.Kind != provider.EventMeta || first.Meta.ProviderRequestId != "req_test" {
				t.Fatalf("first event %v, %v", first, err)
			}
			evs, rendered, _ := collect(t, s)
			checkRespStreamInvariants(t, evs)
			got := strings.TrimSuffix(string(rendered), "\n")
			if want := strings.Join(tc.want, "\n"); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestResponsesStreamCloseAndLimits(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := respStreamFrom(p, sseEvent("response.completed", respCompleted))
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
		b.WriteString(`data: {"type":"response.output_item.added","output_index":` + itoa(i) + `,"item":{"type":"function_call","id":"fc_` + itoa(i) + `","call_id":"c` + itoa(i) + `","name":"f"}}` + "\n\n")
	}
	_, _, err = collect(t, respStreamFrom(p, b.String()))
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "tool calls") {
		t.Errorf("got %v", err)
	}

	// Too many message items.
	b.Reset()
	for i := 0; i <= maxStreamItems; i++ {
		b.WriteString(`data: {"type":"response.output_text.delta","item_id":"msg_` + itoa(i) + `","delta":"x"}` + "\n\n")
	}
	_, _, err = collect(t, respStreamFrom(p, b.String()))
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "output items") {
		t.Errorf("got %v", err)
	}

	// Too many reasoning items.
	b.Reset()
	for i := 0; i <= maxStreamItems; i++ {
		b.WriteString(`data: {"type":"response.output_item.added","output_index":` + itoa(i) + `,"item":{"type":"reasoning","id":"rs_` + itoa(i) + `"}}` + "\n\n")
	}
	_, _, err = collect(t, respStreamFrom(p, b.String()))
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "reasoning items") {
		t.Errorf("got %v", err)
	}

	// An event over the size limit.
	_, _, err = collect(t, respStreamFrom(p, "data: "+strings.Repeat("x", maxRespStreamEventBytes+1)+"\n\n"))
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse {
		t.Errorf("got %v", err)
	}
}

// FuzzResponsesStream: whatever the event stream, the events keep the
// invariants of every adapter (providertest.CheckEvents) and the stream
// ends with EOF or a *provider.Error; a complete stream's calls carry
// the complete arguments their items state, or a warning says why not
// (checkRespFinalArguments).
func FuzzResponsesStream(f *testing.F) {
	for _, name := range respStreamCases {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	f.Add(providertest.Load(f, td("surrogate19_responses_split_stream.http")).Body)
	// Round 19: arguments before their item, incomplete items, differing
	// complete arguments, surrogate pairs split across deltas.
	for _, name := range []string{"tools19_responses_args_before_item_stream", "tools19_responses_done_differs_stream",
		"tools19_responses_done_rest_stream", "tools19_responses_incomplete_item_stream", "tools19_responses_incomplete_open_stream",
		"tools19_responses_surrogate_split_stream", "real_langsmith_responses_gpt5nano_stream"} {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	f.Add([]byte(sseEvent("response.function_call_arguments.delta", `{"output_index":2,"delta":{"x":1}}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","item":{"type":"function_call","arguments":"{\"é"}}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"status":"completed","output":[{"type":"custom_tool_call","input":"x"},{"type":"message","content":"y"}]}}`)))
	f.Add([]byte(sseEvent("error", `{"type":"error","error":"boom"}`)))
	// Stream 21: deltas naming their item by neither item_id nor
	// output_index, with and without item events.
	for _, mod := range []func(*s21Item){
		func(it *s21Item) { it.noDeltaItemID, it.noDeltaOutput = true, true },
		func(it *s21Item) {
			it.noDeltaItemID, it.noDeltaOutput, it.noAddedEvents, it.noDoneEvents = true, true, true, true
		},
	} {
		items := []s21Item{{kind: "reasoning", id: "rs_1", text: "a😀"}, {kind: "message", id: "msg_1", text: "hi"},
			{kind: "function_call", id: "fc_1", callID: "call_1", name: "f", text: `{"a":1}`}, {kind: "function_call", id: "fc_2", callID: "call_2", name: "g", text: `{}`}}
		for i := range items {
			items[i].deltaTokensPer = 2
			mod(&items[i])
		}
		body, _ := s21ResponsesBody(items, false, "", "")
		f.Add([]byte(body))
	}
	f.Add([]byte(sseEvent("response.reasoning_summary_text.delta", `{"output_index":0,"summary_index":"3","delta":"a"}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","summary":[{"text":"a\u00e9"}],"encrypted_content":7}}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"status":"completed","output":[{"type":"reasoning","id":"rs_x"},{"type":"reasoning","summary":"s"}]}}`)))
	// Round 23: arguments in output_item.added, restated by the first
	// delta (vLLM), continued by it, or followed by nothing.
	f.Add(providertest.Load(f, td("vllm_responses_whole_calls_stream.http")).Body)
	f.Add(providertest.Load(f, td("llamacpp_responses_calls_stream.http")).Body)
	// Round 24: a bare error object ending the stream (LiteLLM's proxy).
	f.Add(providertest.Load(f, td("litellm_responses_stream_error_object.http")).Body)
	// Every item at output index 0, a sequence_number going back (LiteLLM).
	f.Add(providertest.Load(f, td("litellm_responses_reasoning_text_stream.http")).Body)
	// Round 24: a call to the undeclared "parallel" wrapper; Mantle's
	// event lines after their data lines.
	f.Add(providertest.Load(f, td("real_responses_parallel_wrapper_stream.http")).Body)
	f.Add(providertest.Load(f, td("real_opencode_mantle_gpt55_continuation_stream.http")).Body)
	// Sequence numbers out of order (9 before 7 and 8), a "tco_"
	// reasoning item (OpenRouter's native search).
	f.Add(providertest.Load(f, td("opencode_openrouter_grok_search_stream.http")).Body)
	// The Vercel AI Gateway's provider_metadata on response.completed.
	f.Add(providertest.Load(f, td("real_opencode_vercelgw_grok47_tool_loop_stream.http")).Body)
	f.Add([]byte(sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":"}}`) +
		sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"1}"}`) +
		sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_2","call_id":"call_2","name":"g","arguments":"{}"}}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}]}}`)))
	// Round 25: answers reported completed that used their whole output
	// token limit (Ollama's, echoing it; llama.cpp's, not).
	f.Add(providertest.Load(f, td("ollama_responses_length_text_stream.http")).Body)
	f.Add(providertest.Load(f, td("llamacpp_responses_length_calls_stream.http")).Body)
	f.Add([]byte(sseEvent("response.completed", `{"type":"response.completed","response":{"status":"incomplete","incomplete_details":null,"max_output_tokens":null,"output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{","status":"completed"}],"usage":{"input_tokens":1,"output_tokens":80,"total_tokens":81}}}`)))
	// Round 26: summary parts streamed whole, cut, or not at all.
	f.Add([]byte(r26SummaryStream("f1", [][2]any{{"0", "a\n\nb"}, {"2", "c"}, {"1", "d"}}, r26SummaryJSON("a\n\nb", "d", "c"))))
	f.Add([]byte(r26SummaryStream("f2", [][2]any{{"0", "x"}}, r26SummaryJSON("x", "", "y😀"))))
	p, err := New(testKey)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := respStreamFrom(p, string(body))
		if len(body)%2 == 0 {
			// A request with an output token limit: call ends held
			// (responsesStream.holdEnd).
			s.asked = 80
		}
		defer s.Close()
		evs, complete, err := providertest.Drain(t, s, 3*len(body)+10)
		if err != nil {
			providerError(t, err)
		}
		calls := providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: complete, EndEveryCall: true})
		if complete {
			checkRespFinalArguments(t, body, evs, calls)
		}
		checkRespStreamInvariants(t, evs)
		ended := map[string]bool{}
		// A block's summary_index starts at 0 and grows by one, on a
		// text beginning with the blank line.
		part, texted := map[int]int{}, map[int]bool{}
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventReasoning:
				d := ev.Reasoning
				if d.Text == "" {
					break
				}
				last := part[d.Index]
				if d.SummaryIndex != last && (d.SummaryIndex != last+1 || !texted[d.Index] || !strings.HasPrefix(d.Text, "\n\n")) {
					t.Errorf("reasoning %d: delta %q at summary_index %d after %d", d.Index, d.Text, d.SummaryIndex, last)
				}
				part[d.Index], texted[d.Index] = d.SummaryIndex, true
			case provider.EventToolCall:
				if ended[ev.ToolCall.CallID] {
					t.Errorf("fragment after the end of call %s", ev.ToolCall.CallID)
				}
			case provider.EventToolCallEnd:
				ended[ev.ToolCall.CallID] = true
			case provider.EventMeta:
				if _, err := proto.Marshal(ev.Meta); err != nil {
					t.Errorf("meta does not marshal: %v", err)
				}
			}
		}
	})
}

// TestResponsesStreamCanceled: cancelling the context while reading gives
// a canceled error, not EOF.
func TestResponsesStreamCanceled(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","delta":"a"}`)))
		w.(http.Flusher).Flush()
		waitDone(r)
	}))
	defer srv.Close()
	p := newTestProvider(t, kOpenAI, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, responsesSimpleRequest("m"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == provider.EventText {
			break
		}
	}
	cancel()
	_, err = s.Recv()
	if pe := providerError(t, err); pe.Kind != provider.KindCanceled {
		t.Errorf("kind %s, want canceled", pe.Kind)
	}
}

// TestResponsesAPIKeyNeverInErrors: every error recording and every stream
// failure, through the Responses format, with a server that echoes a
// distinctive key: no error text contains it.
func TestResponsesAPIKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-test-SECRET-0123456789"
	paths, err := filepath.Glob(td("*err_*.http"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no error recordings: %v", err)
	}
	for _, name := range []string{"responses_stream_failed", "responses_stream_error_event", "responses_stream_cut"} {
		paths = append(paths, td(name+".http"))
	}
	var errs []error
	for _, path := range paths {
		rec := providertest.Load(t, path)
		// Make every error message mention the key.
		rec.Body = bytes.ReplaceAll(rec.Body, []byte(`"message":"`), []byte(`"message":"key `+key+` `))
		rec.Body = bytes.ReplaceAll(rec.Body, []byte(`"message": "`), []byte(`"message": "key `+key+` `))
		srv := providertest.Replay(t, rec)
		for _, mk := range []func() (*Provider, error){
			func() (*Provider, error) { return New(key, WithBaseURL(srv.URL)) },
			func() (*Provider, error) { return NewAzure(key, WithBaseURL(srv.URL), WithAzureV1Routes(true)) },
		} {
			p, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Generate(context.Background(), responsesSimpleRequest("m"))
			errs = append(errs, err)
			s, err := p.Stream(context.Background(), responsesSimpleRequest("m"))
			if err == nil {
				_, _, err = collect(t, s)
				s.Close()
			}
			errs = append(errs, err)
		}
	}
	redacted := 0
	for i, err := range errs {
		if err == nil {
			continue // a 200 recording answered Generate
		}
		pe := providerError(t, err)
		if strings.Contains(err.Error(), key) || strings.Contains(pe.Message+pe.Param+pe.Code, key) {
			t.Errorf("error %d leaks the key: %v", i, err)
		}
		if strings.Contains(pe.Message, "[REDACTED]") {
			redacted++
		}
	}
	// The stream error events and most error bodies echoed the key.
	if redacted < len(paths) {
		t.Errorf("only %d errors carried the (redacted) echoed key; the test does not exercise redaction", redacted)
	}
}
