package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24CompactionPause: stop_reason "compaction". With
// pause_after_compaction, Anthropic's compaction page says, "the API
// returns a message with the compaction stop reason after generating the
// compaction block", and the response "contains only the compaction
// block": the client appends it to the messages and sends the request
// again for the answer. The answer is unfinished, as pause_turn's is: not
// STOP (nothing was answered), not LENGTH or CONTENT_FILTER (nothing was
// cut), so OTHER with the provider's reason, and no warning (the reason
// says it, as for pause_turn). The compaction block is the answer's one
// part, a provider item, sent back verbatim (the stream's with its
// content joined from compaction_delta), so the paused turn resumes
// through the gateway; the usage adds the compaction iteration, the
// top-level counts leaving it out (zero here: no message iteration ran).
// Hand-built (compaction_pause.http, compaction_pause_stream.http).
func TestRound24CompactionPause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream bool
		id     string
	}{{"compaction_pause", false, "msg_01sGazYb1fDkE0NC2rEIYzde"}, {"compaction_pause_stream", true, "msg_01fhQMDOnBS7rWAxqeF8twXG"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var msg *llmrelayv1.Message
			var meta *llmrelayv1.ResponseMeta
			if tc.stream {
				evs, err := r14Stream(t, tc.name, plainRequest())
				if err != nil {
					t.Fatal(err)
				}
				providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, nil))
				f := foldEvents(t, evs)
				msg, meta = accumulate(t, evs), f.meta
			} else {
				res := r14Generate(t, tc.name, plainRequest())
				providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
				msg, meta = res.Message, res.Meta
			}
			if meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || meta.GetProviderFinishReason() != "compaction" {
				t.Errorf("finish %v %q, want OTHER compaction", meta.GetFinishReason(), meta.GetProviderFinishReason())
			}
			if len(meta.GetWarnings()) != 0 {
				t.Errorf("warnings %q", meta.GetWarnings())
			}
			if u := meta.GetUsage(); u.GetInputTokens() != 152847 || u.GetOutputTokens() != 612 || u.GetTotalTokens() != 153459 {
				t.Errorf("usage %v, want the compaction iteration's 152847 in, 612 out", u)
			}
			if meta.GetResponseId() != tc.id || meta.GetResolvedModel() != "claude-opus-4-6" {
				t.Errorf("ids %q %q", meta.GetResponseId(), meta.GetResolvedModel())
			}
			rec := r24CompactionBlock(t, tc.name)
			if len(msg.GetParts()) != 1 || msg.GetParts()[0].GetProviderItem().GetType() != "compaction" {
				t.Fatalf("parts %v, want the compaction block alone", msg.GetParts())
			}
			sent := resumeRequest(t, msg)
			if len(sent) != 1 {
				t.Fatalf("resumed turn %v, want the compaction block alone", sent)
			}
			var want map[string]any
			if err := json.Unmarshal(rec, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sent[0], want) {
				t.Errorf("sent back %v, want %s", sent[0], rec)
			}
		})
	}
}

// r24CompactionBlock is the compaction block of the unary recording as
// sent (the stream's has the same content, in its one compaction_delta).
func r24CompactionBlock(t *testing.T, name string) []byte {
	t.Helper()
	var m struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(providertest.Load(t, "testdata/compaction_pause.http").Body, &m); err != nil || len(m.Content) != 1 {
		t.Fatalf("%s: content %v: %v", name, m.Content, err)
	}
	return m.Content[0]
}
