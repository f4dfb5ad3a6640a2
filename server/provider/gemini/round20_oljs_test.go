package gemini

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 20: traceloop/openllmetry-js's Polly.js HAR recordings
// (testdata/README.md, "Round 20"). The expectations are read off the
// recordings by hand.

// TestRound20OljsGeminiFlash: gemini-1.5-flash (August 2025) through the
// Vercel AI SDK, unary generateContent: the API's indented JSON (two-space
// indent, a final LF), "4\n", STOP, avgLogprobs -2.3841489849019126e-07,
// 12 in, 2 out, 14 total with the per-modality details (TEXT only),
// modelVersion and responseId; no request id header and no rate limits.
// The recorded request is ours: the user's text as the one content, and
// an empty generationConfig (which we leave out; the API reads both the
// same).
func TestRound20OljsGeminiFlash(t *testing.T) {
	t.Parallel()
	const name = "real_oljs_gemini15_flash"
	p, srv := replay(t, name)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-1.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is 2+2? Give a brief answer."))},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("4\n")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "tIuraI-sMvKbkdUPqo700Aw" || m.GetResolvedModel() != "gemini-1.5-flash" || m.GetProviderRequestId() != "" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
		m.GetRateLimit() != nil || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 12, OutputTokens: 2, TotalTokens: 14}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if got, _ := m.GetExtended().AsMap()[extAvgLogprobs].(float64); got != -2.3841489849019126e-07 {
		t.Errorf("avg logprobs %v", m.GetExtended().AsMap()[extAvgLogprobs])
	}
	last := srv.Last(t)
	if !strings.HasSuffix(last.Path, "/v1beta/models/gemini-1.5-flash:generateContent") {
		t.Errorf("path %s", last.Path)
	}
	sent := r17JSON(t, last.Body)
	if want := `[{"role":"user","parts":[{"text":"What is 2+2? Give a brief answer."}]}]`; !jsonEqual(sent["contents"], r19Decode(t, want)) {
		t.Errorf("contents %v, recorded %s", sent["contents"], want)
	}
	if gc, ok := sent["generationConfig"].(map[string]any); ok && len(gc) != 0 {
		t.Errorf("generationConfig %v, recorded {}", gc)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
}
