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

// Round 24: a model that cannot shorten its vectors refuses "dimensions"
// whatever the size, its own included (vLLM: 'Model "bge-m3" does not
// support matryoshka representation, changing output dimensions will lead
// to poor results.', mem0ai/mem0#3101; OpenAI and Azure for ada-002: "This
// model does not support specifying dimensions."). A catalog that names
// the model's size as its default dimensions made every call fail; the
// OpenAI adapter sends the request again without them
// (provider/openai/embed_dims.go).

// matryoshkaRefuser answers like vLLM serving a model of size dims that
// takes no "dimensions": refused when the request has them, else vectors
// of dims values.
type matryoshkaRefuser struct {
	*httptest.Server
	dims int

	mu     sync.Mutex
	bodies []string
}

func newMatryoshkaRefuser(t *testing.T, dims int) *matryoshkaRefuser {
	t.Helper()
	u := &matryoshkaRefuser{dims: dims}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, _ := json.Marshal(req)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(b))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if _, ok := req["dimensions"]; ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"object":"error","message":"Model \"bge-m3\" does not support matryoshka representation, changing output dimensions will lead to poor results.","type":"BadRequestError","param":null,"code":400}`)
			return
		}
		vals := strings.TrimSuffix(strings.Repeat("0.25,", u.dims), ",")
		fmt.Fprintf(w, `{"id":"embd-24","object":"list","created":1780000000,"model":"bge-m3","data":[{"index":0,"object":"embedding","embedding":[%s]}],"usage":{"prompt_tokens":3,"total_tokens":3,"completion_tokens":0}}`, vals)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *matryoshkaRefuser) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

// TestEmbed24DimensionsRefusedDefault: the catalog's default dimensions
// are the model's own 4: the call is served (the request sent again
// without them, a warning says so); a call asking 2 fails as the server
// refused it, an invalid argument naming dimensions and the model's size.
func TestEmbed24DimensionsRefusedDefault(t *testing.T) {
	t.Parallel()
	up := newMatryoshkaRefuser(t, 4)
	cfg := strings.Replace(embedYAML("openai", "openai-embeddings", ""), "embeddings: {format: openai-embeddings}", "embeddings: {format: openai-embeddings, options: {dimensions: 4}}", 1)
	c, _ := startWith(t, cfg, up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.GetEmbeddings(); len(e) != 1 || len(e[0].GetValues()) != 4 {
		t.Fatalf("embeddings %v", e)
	}
	reqs := up.requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0], `"dimensions":4`) || strings.Contains(reqs[1], "dimensions") {
		t.Errorf("requests %q", reqs)
	}
	m := resp.GetMeta()
	if w := m.GetWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "the server refused dimensions for this model") {
		t.Errorf("warnings %q", w)
	}
	if m.GetUsage().GetInputTokens() != 3 || m.GetAttempts() != 1 {
		t.Errorf("usage %v attempts %d", m.GetUsage(), m.GetAttempts())
	}

	_, err = c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a"}, Dimensions: proto32(2)})
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "the model's vectors have 4 values, not the 2 asked for") {
		t.Errorf("status %v", st)
	}
	if br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != "dimensions" {
		t.Errorf("bad request %v", br)
	}
}

func proto32(v int32) *int32 { return &v }

// TestEmbed24TPMTooLargeSplit: OpenAI's 429 for a request of more tokens
// than the whole per-minute budget ("Request too large for … on tokens per
// min (TPM): Limit 300, Requested 800.", type tokens, code
// rate_limit_exceeded) is no wait's matter: the inputs go again in the
// parts its counts need (3), each within the budget, and the call is
// served; the 429 is a failed attempt, said in a warning.
func TestEmbed24TPMTooLargeSplit(t *testing.T) {
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
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		sizes = append(sizes, len(req.Input))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		tokens := 100 * len(req.Input)
		if tokens > 300 {
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, `{"error":{"message":"Request too large for text-embedding-3-small in organization org-test on tokens per min (TPM): Limit 300, Requested %d. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`, tokens)
			return
		}
		var data []string
		for i := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,0.5]}`, i, i))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"text-embedding-3-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), tokens, tokens)
	}))
	t.Cleanup(up.Close)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a", "b", "c", "d", "e", "f", "g", "h"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetEmbeddings()) != 8 {
		t.Fatalf("%d embeddings", len(resp.GetEmbeddings()))
	}
	mu.Lock()
	got := fmt.Sprint(sizes)
	mu.Unlock()
	if got != "[8 3 3 2]" {
		t.Errorf("requests of %s inputs", got)
	}
	m := resp.GetMeta()
	if m.GetUsage().GetInputTokens() != 800 || m.GetAttempts() != 4 {
		t.Errorf("usage %v attempts %d", m.GetUsage(), m.GetAttempts())
	}
	if w := m.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "Limit 300, Requested 800") {
		t.Errorf("warnings %q", w)
	}
}
