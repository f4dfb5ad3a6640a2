package openai

import (
	"context"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24EmbedDashScopeBatchLimit: DashScope's compatible-mode
// /v1/embeddings takes at most 10 inputs per request for
// text-embedding-v3 and v4 and refuses more with a 400 whose message
// states the limit ("batch size is invalid, it should not be larger than
// 10.", the body jjyaoao/HelloAgents#27 quotes whole; memodb-io/memobase#142
// and zilliztech/claude-context#177 the same words, n4ze3m/page-assist#371
// the same with 20). It failed the call; it is a refusal of the inputs
// together that names the limit (BatchLimit 10): the gateway sends the
// inputs again in parts of at most 10 (server/embed.go). A request of 10
// inputs or fewer refused so has nothing to split.
func TestRound24EmbedDashScopeBatchLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		inputs int
		want   bool
		limit  int
	}{{20, true, 10}, {11, true, 10}, {10, false, 0}, {1, false, 0}} {
		srv := providertest.ReplayFile(t, td("embed_error_dashscope_400_batch.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-v4", Inputs: make([]string, tc.inputs)})
		pe := providerError(t, err)
		if pe.BatchTooLarge != tc.want || pe.BatchLimit != tc.limit || pe.BatchParts != 0 {
			t.Errorf("%d inputs: batch too large %v, limit %d, parts %d; want %v, %d", tc.inputs, pe.BatchTooLarge, pe.BatchLimit, pe.BatchParts, tc.want, tc.limit)
		}
		if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "InvalidParameter" || pe.RequestID != "318cff27-38bd-4289-8f70-18d8d37bded9" {
			t.Errorf("%d inputs: %+v", tc.inputs, pe)
		}
	}
	for msg, want := range map[string]int{
		"<400> InternalError.Algo.InvalidParameter: Value error, batch size is invalid, it should not be larger than 20.: input.contents": 20,
		"batch size is invalid, it should not be larger than 25.: payload.input.contents":                                                 25,
		"Too many inputs. The max number of inputs is 16.":                                                                                16,
		"Value error, batch size is invalid":                                                                                              0,
	} {
		if got := batchLimit(msg); got != want {
			t.Errorf("batchLimit(%q) = %d, want %d", msg, got, want)
		}
	}
}
