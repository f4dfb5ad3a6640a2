package gemini

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "real_tidyllm_gemini15_flash")
}

// TestRound25TidyllmGemini: edubruell/tidyllm's httptest2 recording of
// gemini-1.5-flash (November 2024, testdata/README.md, "Round 25:
// tidyllm"): "Hello, world!\n", STOP, an avgLogprobs the request did not
// ask for, no responseId, the model version gemini-1.5-flash-002. The
// text, usage (5 in, 5 out) and model come out as recorded, the
// avgLogprobs kept; no response id is invented; no bug.
func TestRound25TidyllmGemini(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_tidyllm_gemini15_flash")
	res, err := p.Generate(context.Background(), r20Hello("gemini-1.5-flash"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, "testdata/real_tidyllm_gemini15_flash.golden", providertest.ProtoJSON(t, res.Meta))
	m := res.Meta
	if len(res.Message.GetParts()) != 1 || res.Message.GetParts()[0].GetText() != "Hello, world!\n" ||
		m.GetResponseId() != "" || m.GetResolvedModel() != "gemini-1.5-flash-002" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 {
		t.Errorf("message %v, meta %v", res.Message, m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 5, OutputTokens: 5, TotalTokens: 10}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if _, ok := m.GetExtended().GetFields()["gemini.avg_logprobs"]; !ok {
		t.Errorf("avgLogprobs not kept: %v", m.GetExtended())
	}
}
