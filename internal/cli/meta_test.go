package cli

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func TestMetaSummary(t *testing.T) {
	t.Parallel()
	m := &llmrelayv1.ResponseMeta{
		RequestedModel: "gpt", Provider: "openai", RequestId: "r1", ProviderRequestId: "req_9", Attempts: 2,
		Usage:         &llmrelayv1.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
		TotalDuration: durationpb.New(1234567 * time.Microsecond), TimeToFirstToken: durationpb.New(2345 * time.Microsecond),
		Cost:         &llmrelayv1.Cost{Currency: "USD", AmountNanos: 1_234_500},
		FinishReason: llmrelayv1.FinishReason_FINISH_REASON_LENGTH,
	}
	want := "meta: gpt via openai | tokens 10 in, 5 out, 15 total | time 1.235s, first token 2.35ms | attempts 2 | provider request id req_9 | cost 0.0012345 USD | finish LENGTH | request id r1"
	if got := metaSummary(m); got != want {
		t.Errorf("metaSummary:\n%s\nwant\n%s", got, want)
	}
	for n, want := range map[int64]string{0: "0", 1: "0.000000001", 2_500_000_000: "2.5", -1_000_000_000: "-1", 12_000_000_000: "12"} {
		if got := formatNanos(n); got != want {
			t.Errorf("formatNanos(%d) = %s, want %s", n, got, want)
		}
	}
}
