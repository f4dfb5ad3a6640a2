package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// embedUpstream is an embeddings server that enforces a per-request input
// limit the way TEI does (413, its wording) and answers each input "t<i>"
// with the vector [i, 0.5], so that the order of the joined answer can be
// checked. fail maps a request number (1-based) to a status to answer it
// with instead.
type embedUpstream struct {
	*httptest.Server
	limit  int
	ollama bool // /api/embed instead of OpenAI's /embeddings

	mu    sync.Mutex
	sizes []int
	fail  map[int]int
}

func newEmbedUpstream(t *testing.T, limit int, ollama bool, fail map[int]int) *embedUpstream {
	t.Helper()
	u := &embedUpstream{limit: limit, ollama: ollama, fail: fail}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *embedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.sizes = append(u.sizes, len(req.Input))
	n := len(u.sizes)
	status := u.fail[n]
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", fmt.Sprintf("req-%d", n))
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"failure %d","type":"server_error"}}`, status)
		return
	}
	if len(req.Input) > u.limit {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprintf(w, `{"message":"batch size %d > maximum allowed batch size %d","code":413,"type":"Validation"}`, len(req.Input), u.limit)
		return
	}
	vec := func(s string) string {
		i, err := strconv.Atoi(strings.TrimPrefix(s, "t"))
		if err != nil {
			i = -1
		}
		return fmt.Sprintf("[%d,0.5]", i)
	}
	if u.ollama {
		var vs []string
		for _, s := range req.Input {
			vs = append(vs, vec(s))
		}
		fmt.Fprintf(w, `{"model":"nomic-embed-text","embeddings":[%s],"total_duration":1000,"load_duration":10,"prompt_eval_count":%d}`, strings.Join(vs, ","), 2*len(req.Input))
		return
	}
	var data []string
	for i, s := range req.Input {
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%s}`, i, vec(s)))
	}
	fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"bge-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), 3*len(req.Input), 3*len(req.Input))
}

func (u *embedUpstream) requestSizes() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]int(nil), u.sizes...)
}

func embedYAML(typ, format, extra string) string {
	return `
defaults:
  retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}
providers:
  - name: up
    type: ` + typ + `
    base_url: {{URL}}
    api_key: sk-embed-test-0000
` + extra + `models:
  - name: m
    provider: up
    capabilities:
      embeddings: {format: ` + format + `}
`
}

func inputs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "t" + strconv.Itoa(i)
	}
	return out
}

// checkOrder: every embedding is its input's, at its index.
func checkOrder(t *testing.T, embs []*llmrelayv1.Embedding, n int) {
	t.Helper()
	if len(embs) != n {
		t.Fatalf("%d embeddings, want %d", len(embs), n)
	}
	for i, e := range embs {
		if e.GetIndex() != int32(i) || len(e.GetValues()) != 2 || e.GetValues()[0] != float32(i) {
			t.Fatalf("embedding %d: index %d values %v", i, e.GetIndex(), e.GetValues())
		}
	}
}

// TestEmbed17SplitTEI: a TEI server takes 32 inputs a request (its
// --max-client-batch-size default); with max_embedding_inputs 32 a call of
// 100 inputs goes as four requests of 25, answered as one: the embeddings
// in input order, usage summed, four attempts, the first request's id as
// provider_request_id and every id in extended.provider_request_ids.
func TestEmbed17SplitTEI(t *testing.T) {
	t.Parallel()
	up := newEmbedUpstream(t, 32, false, nil)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", "    max_embedding_inputs: 32\n"), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(100)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 100)
	if got := up.requestSizes(); fmt.Sprint(got) != "[25 25 25 25]" {
		t.Errorf("requests of %v inputs", got)
	}
	m := resp.GetMeta()
	if u := m.GetUsage(); u.GetInputTokens() != 300 || u.GetTotalTokens() != 300 || u.GetOutputTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	if m.GetAttempts() != 4 || len(m.GetRetryReasons()) != 0 || m.GetEmbeddingsCount() != 100 || m.GetResolvedModel() != "bge-small" {
		t.Errorf("meta %v", m)
	}
	ids := m.GetExtended().AsMap()["provider_request_ids"]
	if m.GetProviderRequestId() != "req-1" || fmt.Sprint(ids) != "[req-1 req-2 req-3 req-4]" {
		t.Errorf("request id %q, ids %v", m.GetProviderRequestId(), ids)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}

// TestEmbed17NoLimitConfigured: the same server without
// max_embedding_inputs: one request of 40, refused with TEI's 413, whose
// message names the limit (32); since round 23 the inputs go again in
// requests of at most that many (20 and 20) and the call is answered, with
// a warning naming the refusal and the setting that avoids it (it was the
// call's invalid argument).
func TestEmbed17NoLimitConfigured(t *testing.T) {
	t.Parallel()
	up := newEmbedUpstream(t, 32, false, nil)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(40)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 40)
	if got := up.requestSizes(); fmt.Sprint(got) != "[40 20 20]" {
		t.Errorf("requests of %v inputs", got)
	}
	want := "sent again in smaller parts, the requests the provider refused for their inputs together: inputs 0 to 39 (batch size 40 > maximum allowed batch size 32); " +
		"2 requests embedded the call (providers[].max_embedding_inputs: 32 sends such calls in parts from the start)"
	if w := resp.GetMeta().GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed17SplitRetryInPart: the second of three requests meets a 503
// once: that part alone is retried; attempts count every request sent.
func TestEmbed17SplitRetryInPart(t *testing.T) {
	t.Parallel()
	up := newEmbedUpstream(t, 10, false, map[int]int{2: 503})
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", "    max_embedding_inputs: 10\n"), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(25)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 25)
	if got := up.requestSizes(); fmt.Sprint(got) != "[9 9 9 7]" {
		t.Errorf("requests of %v inputs", got)
	}
	m := resp.GetMeta()
	if m.GetAttempts() != 4 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "http_503" || m.GetRetryReasons()[0].GetAttempt() != 2 {
		t.Errorf("attempts %d reasons %v", m.GetAttempts(), m.GetRetryReasons())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 75 {
		t.Errorf("usage %v", u)
	}
	if ids := m.GetExtended().AsMap()["provider_request_ids"]; fmt.Sprint(ids) != "[req-1 req-3 req-4]" {
		t.Errorf("ids %v", ids)
	}
}

// TestEmbed17SplitPartFails: the third of three requests fails for good:
// the call fails with that request's error; the failure's meta counts the
// usage of the two parts embedded before it and says which part failed.
func TestEmbed17SplitPartFails(t *testing.T) {
	t.Parallel()
	up := newEmbedUpstream(t, 4, false, map[int]int{3: 400})
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", "    max_embedding_inputs: 4\n"), up.URL)
	_, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(12)})
	st, _, _ := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "failure 400") {
		t.Fatalf("got %v: %s", st.Code(), st.Message())
	}
	var failed *llmrelayv1.FailedCallMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f
		}
	}
	m := failed.GetMeta()
	if m.GetUsage().GetInputTokens() != 24 || m.GetAttempts() != 3 {
		t.Errorf("failed meta %v", m)
	}
	if w := m.GetWarnings(); len(w) != 1 || w[0] != "request 3 of 3 (inputs 8 to 11) failed; the 2 before it were embedded" {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed17SplitOllama: an Ollama deployment with max_embedding_inputs
// 2: five inputs as requests of 2, 2 and 1; Ollama's counters in extended
// are summed (durations of requests made one after the other), and usage
// is the sum of the prompt_eval_counts.
func TestEmbed17SplitOllama(t *testing.T) {
	t.Parallel()
	up := newEmbedUpstream(t, 1000, true, nil)
	c, _ := startWith(t, embedYAML("ollama", "ollama-embeddings", "    max_embedding_inputs: 2\n"), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(5)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 5)
	if got := up.requestSizes(); fmt.Sprint(got) != "[2 2 1]" {
		t.Errorf("requests of %v inputs", got)
	}
	m := resp.GetMeta()
	ext := m.GetExtended().AsMap()
	if ext["total_duration"] != float64(3000) || ext["load_duration"] != float64(30) || ext["prompt_eval_count"] != float64(10) {
		t.Errorf("extended %v", ext)
	}
	if m.GetUsage().GetInputTokens() != 10 || m.GetAttempts() != 3 {
		t.Errorf("meta %v", m)
	}
}

// TestEmbed17UnderLimitOneRequest: a call within the limit is one request,
// with no provider_request_ids list.
func TestEmbed17UnderLimitOneRequest(t *testing.T) {
	t.Parallel()
	up := newEmbedUpstream(t, 32, false, nil)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", "    max_embedding_inputs: 32\n"), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(32)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 32)
	if _, ok := resp.GetMeta().GetExtended().AsMap()["provider_request_ids"]; ok || resp.GetMeta().GetAttempts() != 1 {
		t.Errorf("meta %v", resp.GetMeta())
	}
}
