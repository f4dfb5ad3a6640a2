package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestReview19SplitBadPartKeepsUsage: the second of two requests of a
// split embeddings call answers vectors of another size than the first's
// (a server that changed its model in between): the call fails as a bad
// response, and its meta counts the tokens of both requests, which the
// provider billed. The usage was lost on this failure (not on a failed
// request's).
func TestReview19SplitBadPartKeepsUsage(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		vec := "[1,0.5]"
		if n.Add(1) == 2 {
			vec = "[1,0.5,0.25]"
		}
		var data []string
		for i := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%s}`, i, vec))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"bge-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`,
			strings.Join(data, ","), 3*len(req.Input), 3*len(req.Input))
	}))
	t.Cleanup(up.Close)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", "    max_embedding_inputs: 4\n"), up.URL)
	_, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(8)})
	st, _, _ := statusDetails(t, err)
	if st.Code() == codes.OK || !strings.Contains(st.Message(), "embeddings of 3 values") {
		t.Fatalf("got %v: %s", st.Code(), st.Message())
	}
	var failed *llmrelayv1.FailedCallMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f
		}
	}
	if u := failed.GetMeta().GetUsage(); u.GetInputTokens() != 24 || u.GetTotalTokens() != 24 {
		t.Errorf("usage %v, want the 24 tokens of both requests", u)
	}
}
