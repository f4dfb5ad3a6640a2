package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// TestRound26AzureAsyncFilterBlockAfterStop: svir's recording of an Azure
// deployment with the asynchronous content filter and a custom blocklist
// ("svir"): the answer "svirblocked" ten times streams unvetted and
// finishes "stop"; then come four annotation chunks (created 0, id, model
// and object "", content_filter_offsets 140..259), the third of which is
// the block: custom_blocklists [{"filtered":true,"id":"svir"}], with no
// finish reason; then the usage and [DONE]. The answer was reported
// complete (STOP); now the block makes the finish CONTENT_FILTER, the
// model's "stop" kept as the provider's finish, with a warning naming the
// list. The annotations' empty id, model and created 0 change nothing.
func TestRound26AzureAsyncFilterBlockAfterStop(t *testing.T) {
	t.Parallel()
	const name = "real_svir_azure_async_flagged_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-6-luna",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Say svirblocked ten times."))}}
	s, err := newTestProvider(t, kAzure, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("svirblocked"+strings.Repeat(" svirblocked", 9))); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "stop")
	const wantWarning = `Azure's content filter blocked the answer (filtered: custom_blocklists (svir)) after it was streamed; the model finished "stop"`
	if w := m.GetWarnings(); len(w) != 1 || w[0] != wantWarning {
		t.Errorf("warnings %q", w)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 30, OutputTokens: 101, TotalTokens: 131, ReasoningTokens: 62}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-EUYhwFaMT4ey501eBSaKoh99JHBKK" || m.GetResolvedModel() != "gpt-6-luna-2026-09-22" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1790951964, 0)) {
		t.Errorf("meta %v", m)
	}
	cf := m.GetExtended().AsMap()["content_filter_results"]
	want := r19Decode(t, `{"custom_blocklists":[{"filtered":true,"id":"svir"}],"hate":{"filtered":false,"severity":"safe"},"protected_material_code":{"detected":false,"filtered":false},"protected_material_text":{"detected":false,"filtered":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`)
	if !jsonEqualAny(cf, want) {
		t.Errorf("content_filter_results %v", cf)
	}
	finishes := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && ev.Meta.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER {
			finishes++
		}
	}
	if finishes != 1 {
		t.Errorf("%d content_filter finishes, want one", finishes)
	}
}

// TestRound26FilterVerdictBlocklists: a custom blocklist's verdict is a
// list of the lists that matched (the recording above), or in the older
// shape an object whose details are that list; the categories an error's
// message names missed both (only objects with filtered true were read).
// Annotate-only verdicts (detected, not filtered) block nothing.
func TestRound26FilterVerdictBlocklists(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"custom_blocklists":[{"filtered":true,"id":"svir"}]}`, "custom_blocklists (svir)"},
		{`{"custom_blocklists":[{"filtered":false,"id":"a"},{"filtered":true,"id":"b"},{"filtered":true,"id":"c"}],"hate":{"filtered":true,"severity":"high"}}`, "custom_blocklists (b, c), hate (high)"},
		{`{"custom_blocklists":{"filtered":true,"details":[{"filtered":true,"id":"names"}]}}`, "custom_blocklists (names)"},
		{`{"custom_blocklists":{"filtered":true,"details":[]}}`, "custom_blocklists"},
		{`{"custom_blocklists":[]}`, ""},
		{`{"custom_blocklists":[{"filtered":false,"id":"svir"}]}`, ""},
		{`{"protected_material_text":{"detected":true,"filtered":false}}`, ""},
		{`{"protected_material_code":{"detected":true,"filtered":true,"citation":{"URL":"https://example.com","license":"MIT"}}}`, "protected_material_code (detected)"},
		{`{"error":{"code":"","message":""}}`, ""},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.in), &v); err != nil {
			t.Fatal(err)
		}
		if got := filterVerdict(v); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRound26AzureFilterErrorPlural: Azure says its content filter did not
// run with an error where the verdicts would be. Microsoft's page shows it
// in content_filter_results (plural; it once said content_filter_result),
// and Azure's JS SDK reads it there, for the prompt and the choice alike;
// only the singular field was warned about: an answer nobody screened
// looked screened. Now each is a warning (once in a stream that repeats
// it on every chunk), the verdicts kept as sent; an error of empty code
// and message (what Copilot's Azure front sends) warns nothing.
func TestRound26AzureFilterErrorPlural(t *testing.T) {
	t.Parallel()
	const (
		prompt = "Azure content filter error on the prompt (content_filter_error): The contents are not filtered"
		answer = "Azure content filter error on the answer (content_filter_error): The contents are not filtered"
	)
	req := func() *provider.Request {
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-mini-jp",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Which city was Japan's capital longest?"))}}
	}
	srv := providertest.ReplayFile(t, td("azure_filter_error_chat.http"))
	res, err := newTestProvider(t, kAzure, srv.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("azure_filter_error_chat.golden"), renderResult(t, res))
	if w := res.Meta.GetWarnings(); len(w) != 2 || w[0] != prompt || w[1] != answer {
		t.Errorf("warnings %q", w)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	errVerdict := r19Decode(t, `{"error":{"code":"content_filter_error","message":"The contents are not filtered"}}`)
	if ext := res.Meta.GetExtended().AsMap(); !jsonEqualAny(ext["content_filter_results"], errVerdict) {
		t.Errorf("extended %v", ext)
	}

	srv = providertest.ReplayFile(t, td("azure_filter_error_chat_stream.http"))
	s, err := newTestProvider(t, kAzure, srv.URL).Stream(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td("azure_filter_error_chat_stream.golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Nara came before Kyoto.")); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != answer {
		t.Errorf("stream warnings %q", w)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")

	for _, tc := range []struct{ raw, want string }{
		{`{"error":{"code":"","message":""},"hate":{"filtered":false,"severity":"safe"}}`, ""},
		{`{"hate":{"filtered":false,"severity":"safe"}}`, ""},
		{`{"error":{"code":"content_filter_error"}}`, "Azure content filter error on the answer (content_filter_error): "},
		{`{"error":null}`, ""},
		{`[]`, ""},
	} {
		if got := filterError(json.RawMessage(tc.raw), "answer"); got != tc.want {
			t.Errorf("filterError(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
	if got := promptFilterErrors(json.RawMessage(`[{"prompt_index":0,"content_filter_results":{"error":{"code":"","message":""}}},{"prompt_index":1,"content_filter_results":{"error":{"code":"x","message":"y"}}}]`)); len(got) != 1 || got[0] != "Azure content filter error on the prompt (x): y" {
		t.Errorf("promptFilterErrors %q", got)
	}
}

// TestRound26AzureAsyncFilterBlockOrders: the recording above rearranged.
// A block annotated before the model's finish (the filter caught up while
// the answer streamed) makes the finish that follows content_filter, with
// the warning; a block that carries finish_reason content_filter itself
// (what svir saw of a block caught while the answer streams, [DONE] at
// once) is that finish, with no warning, and stays it if a stop followed;
// an annotate-only verdict (detected, not filtered) changes nothing.
func TestRound26AzureAsyncFilterBlockOrders(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, td("real_svir_azure_async_flagged_stream.http"))
	events := strings.SplitAfter(string(rec.Body), "\n\n")
	var stop, block int
	for i, e := range events {
		if strings.Contains(e, `"finish_reason":"stop"`) {
			stop = i
		}
		if strings.Contains(e, `"custom_blocklists"`) {
			block = i
		}
	}
	if stop == 0 || block <= stop {
		t.Fatalf("recording: stop at %d, block at %d", stop, block)
	}
	moved := func(blockEvent string) []string {
		out := append([]string(nil), events[:stop]...)
		out = append(out, blockEvent)
		out = append(out, events[stop:block]...)
		return append(out, events[block+1:]...)
	}
	withFinish := strings.Replace(events[block], `"finish_reason":null`, `"finish_reason":"content_filter"`, 1)
	for _, tc := range []struct {
		what        string
		events      []string
		finish      llmrelayv1.FinishReason
		warnings    int
		rawFinishes string
	}{
		{"block before stop", moved(events[block]), llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, 1, "stop"},
		{"block with its finish, then [DONE]", append(append([]string(nil), events[:stop]...), withFinish, "data: [DONE]\n\n"), llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, 0, "content_filter"},
		{"block with its finish, then a stop", moved(withFinish), llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, 1, "stop"},
		{"annotate only", moved(strings.Replace(events[block], `[{"filtered":true,"id":"svir"}]`, `[{"filtered":false,"id":"svir"}]`, 1)), llmrelayv1.FinishReason_FINISH_REASON_STOP, 0, "stop"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			r := rec
			r.Body = []byte(strings.Join(tc.events, ""))
			srv := providertest.Replay(t, r)
			s, err := newTestProvider(t, kAzure, srv.URL).Stream(context.Background(), &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-6-luna",
				Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Say svirblocked ten times."))}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, _, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			if f.Meta.GetFinishReason() != tc.finish {
				t.Errorf("finish %v, want %v", f.Meta.GetFinishReason(), tc.finish)
			}
			if len(f.Meta.GetWarnings()) != tc.warnings {
				t.Errorf("warnings %q", f.Meta.GetWarnings())
			}
			if got := f.Meta.GetProviderFinishReason(); tc.rawFinishes == "stop" && got != "stop" {
				t.Errorf("provider finish %q", got)
			}
		})
	}
}
