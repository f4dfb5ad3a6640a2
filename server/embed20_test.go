package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestEmbed20SplitNamesTheInput: a split call's part fails for one of its
// inputs, and the provider names it by its place in that request (OpenAI's
// 400 "Invalid 'input[1]': maximum input length is 8192 tokens.", as
// testdata/embed_error_openai_400_input_length.http in the OpenAI package
// has it). With max_embedding_inputs 2, five inputs go as [0 1] [2 3] [4];
// the second request's input[1] is the call's input[3]: the BadRequest
// field says inputs[3], the request's field (it said input[1], another input
// of the call, then OpenAI's input[3], no field of the request) and a
// warning maps one to the other.
func TestEmbed20SplitNamesTheInput(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		sizes []int
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		mu.Lock()
		sizes = append(sizes, len(req.Input))
		n := len(sizes)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", fmt.Sprintf("req-%d", n))
		if n == 2 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"Invalid 'input[1]': maximum input length is 8192 tokens.","type":"invalid_request_error","param":null,"code":null}}`)
			return
		}
		var data []string
		for i := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,0.5]}`, i, i))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"bge-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), 3*len(req.Input), 3*len(req.Input))
	}))
	t.Cleanup(up.Close)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", "    max_embedding_inputs: 2\n"), up.URL)
	_, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(5)})
	st, info, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || info.GetReason() != "CONTEXT_LENGTH_EXCEEDED" {
		t.Fatalf("got %v %s: %s", st.Code(), info.GetReason(), st.Message())
	}
	if v := br.GetFieldViolations(); len(v) != 1 || v[0].GetField() != "inputs[3]" {
		t.Errorf("field violations %v, want inputs[3] (the request's field)", v)
	}
	var failed *llmrelayv1.FailedCallMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f
		}
	}
	want := "request 2 of 3 (inputs 2 to 3) failed; the 1 before it were embedded; the provider's input[1] is the call's input[3]"
	if w := failed.GetMeta().GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want %q", w, want)
	}
	if u := failed.GetMeta().GetUsage(); u.GetInputTokens() != 6 {
		t.Errorf("usage %v, want the first part's 6 tokens", u)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(sizes) != "[2 2]" {
		t.Errorf("requests of %v inputs", sizes)
	}
}
