package anthropic

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23ZaiBracketedCode: Z.ai's newer error form on its
// Anthropic-compatible endpoint puts Anthropic's type beside its business
// code and leads the message with the code in brackets ({"type":
// "rate_limit_error","code":"1113","message":"[1113][…][<request id>]"}:
// zai-org/feedback#789). The code is read as the older forms' is: the
// spent usage cap (1308) is not retried (it was a rate limit retried, the
// type all that was read), and the code is Z.ai's.
func TestRound23ZaiBracketedCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, code, rid string
	}{
		{"zai_429_1113_bracketed", "1113", "20260922232915b37e10c4a6d2f958"},
		{"zai_429_1308_bracketed", "1308", "2026092300044291c5fa3e07b6d24c"},
	} {
		srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
		_, err := newTestProvider(t, srv.URL).Generate(context.Background(), r21Request("glm-4.6", "Say hi.", 256, 0))
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %T %v is not a *provider.Error", tc.file, err, err)
		}
		// The spent balance is not retried; the 5-hour cap, whose reset
		// is named, is retried after it (round 25: zaiResets), a delay
		// longer than the gateway waits.
		retry := tc.code == "1308"
		if pe.Kind != provider.KindRateLimited || pe.Code != tc.code || pe.RequestID != tc.rid || pipeline.Retryable(err) != retry || !pipeline.FallbackWorthy(err) || pe.RetryAfter != zaiResets[tc.file] {
			t.Errorf("%s: kind=%v code=%q rid=%q retryable=%v fallback=%v retryAfter=%v", tc.file, pe.Kind, pe.Code, pe.RequestID, pipeline.Retryable(err), pipeline.FallbackWorthy(err), pe.RetryAfter)
		}
	}
	// A type beside a code the message does not lead with stays the
	// type's: not Z.ai's form.
	e := eventError(&wireErrorDetail{Type: "rate_limit_error", Code: []byte(`"1308"`), Message: "Too many requests"}, "", nil)
	if e.Code != "rate_limit_error" || !pipeline.Retryable(e) {
		t.Errorf("plain rate limit: code %q retryable %v", e.Code, pipeline.Retryable(e))
	}
}
