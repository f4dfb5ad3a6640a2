package openai

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23OpenRouterStreamRateLimitInBand: OpenRouter's free-model
// limit met after the 200 (its Errors page: an error while the model
// produces the output is "emitted in the response body or as an SSE data
// event"; its streaming page: mid-generation errors "arrive as regular
// data: events with an error field"): "Hello there", then a chunk whose
// error object is the 429's of an error answer (code 429, "Rate limit
// exceeded: free-models-per-min. ", error.metadata.headers with limit
// 20, remaining 0, the reset as Unix milliseconds) and finish "error"
// (hand-built: dialect_openrouter_stream_rate_limited_per_min). **Bug:**
// the headers in the error were read in an error answer only: the
// stream's failure had no rate-limit state, so the retry policy could not
// see the minute's budget spent until its reset. Now the failure's meta
// has it; the text before it was relayed.
func TestRound23OpenRouterStreamRateLimitInBand(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_openrouter_stream_rate_limited_per_min.http"))
	s, err := newHostProvider(t, r22OpenRouter, srv.URL).Stream(context.Background(), r22Ask("meta-llama/llama-3.3-70b-instruct:free", "Say hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if f := accFold(t, evs); f.Message.GetParts()[0].GetText() != "Hello there" {
		t.Errorf("parts %v", f.Message.GetParts())
	}
	e := providerError(t, err)
	if e.Kind != provider.KindRateLimited || e.Code != "429" || e.Message != "Rate limit exceeded: free-models-per-min." {
		t.Errorf("error %+v", e)
	}
	rl := e.Meta.GetRateLimit()
	if rl.GetRequestsLimit() != 20 || rl.RequestsRemaining == nil || rl.GetRequestsRemaining() != 0 ||
		!rl.GetRequestsResetTime().AsTime().Equal(time.Date(2026, 5, 11, 0, 41, 0, 0, time.UTC)) {
		t.Errorf("rate limit %v", rl)
	}

	// The same error object in a unary 200 body (an error met while the
	// answer was made): the same state.
	body := []byte(`{"id":"gen-1778460013-r23unary","error":{"code":429,"message":"Rate limit exceeded: free-models-per-min. ","metadata":{"headers":{"X-RateLimit-Limit":"20","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1778460060000"},"provider_name":null}}}`)
	srv = providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: body})
	_, err = newHostProvider(t, r22OpenRouter, srv.URL).Generate(context.Background(), r22Ask("meta-llama/llama-3.3-70b-instruct:free", "Say hello"))
	if e := providerError(t, err); e.Kind != provider.KindRateLimited || e.Meta.GetRateLimit().GetRequestsLimit() != 20 ||
		!e.Meta.GetRateLimit().GetRequestsResetTime().AsTime().Equal(time.Date(2026, 5, 11, 0, 41, 0, 0, time.UTC)) {
		t.Errorf("unary error %+v, rate limit %v", e, e.Meta.GetRateLimit())
	}
}
