package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Round 23: OpenAI caps the tokens of one /embeddings request at 300,000
// summed over its inputs (each input may have 8,192: 2048 inputs of a few
// hundred tokens are over it) and answers 400 {"error": {"message":
// "Requested 453357 tokens, max 300000 tokens per request", "type":
// "max_tokens_per_request", "code": "max_tokens_per_request"}} (the body
// OpenDataBox/CrackSQL#27 and assafelovic/gpt-researcher#1524 quote). No
// input count avoids it for every text, so the gateway sends a refused
// request again as its two halves (server/embed.go, embedParts).

// tokenCapUpstream is an OpenAI-shaped embeddings server that counts input
// "t<i>:<n>" as n tokens and refuses a request over capTokens in OpenAI's
// words; it answers each input with [i, 0.5].
type tokenCapUpstream struct {
	*httptest.Server
	capTokens int
	mistral   bool // refuse in Mistral's words instead
	maxInputs int  // refuse more inputs than this in Azure OpenAI's words (0: no limit)

	mu    sync.Mutex
	sizes []int
}

func newTokenCapUpstream(t *testing.T, capTokens int, mistral bool) *tokenCapUpstream {
	t.Helper()
	u := &tokenCapUpstream{capTokens: capTokens, mistral: mistral}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *tokenCapUpstream) serve(w http.ResponseWriter, r *http.Request) {
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
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", fmt.Sprintf("req-%d", n))
	tokens := 0
	var data []string
	for i, s := range req.Input {
		idx, count, _ := strings.Cut(strings.TrimPrefix(s, "t"), ":")
		c, _ := strconv.Atoi(count)
		tokens += c
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%s,0.5]}`, i, idx))
	}
	if u.maxInputs > 0 && len(req.Input) > u.maxInputs {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"Too many inputs. The max number of inputs is %d.  We hope to increase the number of inputs per request soon. Please contact us through an Azure support request at: https://go.microsoft.com/fwlink/?linkid=2213926 for further questions.","type":"invalid_request_error","param":null,"code":null}}`, u.maxInputs)
		return
	}
	if tokens > u.capTokens {
		w.WriteHeader(http.StatusBadRequest)
		if u.mistral {
			fmt.Fprintf(w, `{"object":"error","message":"Too many tokens in batch. Max is %d got %d","type":"invalid_request_error","param":null,"code":null}`, u.capTokens, tokens)
			return
		}
		fmt.Fprintf(w, `{"error":{"message":"Requested %d tokens, max %d tokens per request","type":"max_tokens_per_request","param":null,"code":"max_tokens_per_request"}}`, tokens, u.capTokens)
		return
	}
	fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"text-embedding-3-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), tokens, tokens)
}

func (u *tokenCapUpstream) requestSizes() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]int(nil), u.sizes...)
}

// tokenInputs are n inputs "t<i>:<tokens[i]>".
func tokenInputs(tokens ...int) []string {
	out := make([]string, len(tokens))
	for i, c := range tokens {
		out[i] = fmt.Sprintf("t%d:%d", i, c)
	}
	return out
}

// TestEmbed23BatchTokensSplit: eight inputs of 100 tokens against a cap of
// 300: refused whole ("Requested 800 tokens, max 300"), then sent as the
// three parts those counts need (3 + 3 + 2): the answer in input order, the
// usage of the requests that embedded (800), every request an attempt, the
// refusal a retry reason and said in a warning.
func TestEmbed23BatchTokensSplit(t *testing.T) {
	t.Parallel()
	up := newTokenCapUpstream(t, 300, false)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: tokenInputs(100, 100, 100, 100, 100, 100, 100, 100)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 8)
	if got := up.requestSizes(); fmt.Sprint(got) != "[8 3 3 2]" {
		t.Errorf("requests of %v inputs", got)
	}
	m := resp.GetMeta()
	if u := m.GetUsage(); u.GetInputTokens() != 800 || u.GetTotalTokens() != 800 {
		t.Errorf("usage %v", u)
	}
	if m.GetAttempts() != 4 || m.GetEmbeddingsCount() != 8 {
		t.Errorf("attempts %d count %d", m.GetAttempts(), m.GetEmbeddingsCount())
	}
	// The refused request is a failed attempt the call went on from, as a
	// retried one is: its status and the provider's words.
	if r := m.GetRetryReasons(); len(r) != 1 || r[0].GetAttempt() != 1 || r[0].GetReason() != "http_400" || r[0].GetMessage() != "Requested 800 tokens, max 300 tokens per request" {
		t.Errorf("retry reasons %v", r)
	}
	if ids := m.GetExtended().AsMap()["provider_request_ids"]; m.GetProviderRequestId() != "req-2" || fmt.Sprint(ids) != "[req-2 req-3 req-4]" {
		t.Errorf("request id %q, ids %v", m.GetProviderRequestId(), ids)
	}
	want := "sent again in smaller parts, the requests the provider refused for their inputs together: " +
		"inputs 0 to 7 (Requested 800 tokens, max 300 tokens per request); 3 requests embedded the call"
	if w := m.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed23BatchTokensHalves: tokens unevenly spread (250, 100, 100 and
// five of 10, cap 300): the two parts the first refusal's counts need (4 +
// 4) leave the first over the cap (460), whose counts need two again: its
// halves (2 + 2), the first of them over too (350): one and one. Each
// refusal is said; the answer is whole and in order.
func TestEmbed23BatchTokensHalves(t *testing.T) {
	t.Parallel()
	up := newTokenCapUpstream(t, 300, false)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: tokenInputs(250, 100, 100, 10, 10, 10, 10, 10)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 8)
	if got := up.requestSizes(); fmt.Sprint(got) != "[8 4 2 1 1 2 4]" {
		t.Errorf("requests of %v inputs", got)
	}
	m := resp.GetMeta()
	if u := m.GetUsage(); u.GetInputTokens() != 500 || m.GetAttempts() != 7 || len(m.GetRetryReasons()) != 3 {
		t.Errorf("usage %v attempts %d retry reasons %v", u, m.GetAttempts(), m.GetRetryReasons())
	}
	want := "sent again in smaller parts, the requests the provider refused for their inputs together: " +
		"inputs 0 to 7 (Requested 500 tokens, max 300 tokens per request); inputs 0 to 3 (Requested 460 tokens, max 300 tokens per request); " +
		"inputs 0 to 1 (Requested 350 tokens, max 300 tokens per request); 4 requests embedded the call"
	if w := m.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed23BatchTokensUneven: Mistral's words; a part that passes is not
// split further, and halves go in input order (5 inputs: 3 + 2, the first
// half refused again: 2 + 1).
func TestEmbed23BatchTokensUneven(t *testing.T) {
	t.Parallel()
	up := newTokenCapUpstream(t, 250, true)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: tokenInputs(100, 100, 100, 100, 100)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 5)
	if got := up.requestSizes(); fmt.Sprint(got) != "[5 3 2 1 2]" {
		t.Errorf("requests of %v inputs", got)
	}
	if w := resp.GetMeta().GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "inputs 0 to 2 (Too many tokens in batch. Max is 250 got 300)") {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed23BatchTokensOneInput: one input over the cap cannot be split:
// the refusal is the call's error, an invalid argument, after one request.
func TestEmbed23BatchTokensOneInput(t *testing.T) {
	t.Parallel()
	up := newTokenCapUpstream(t, 300, false)
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	_, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: tokenInputs(100, 400)})
	st, _, _ := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "Requested 400 tokens, max 300 tokens per request") {
		t.Fatalf("got %v: %s", st.Code(), st.Message())
	}
	if got := up.requestSizes(); fmt.Sprint(got) != "[2 1 1]" {
		t.Errorf("requests of %v inputs", got)
	}
	var failed *llmrelayv1.FailedCallMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f
		}
	}
	m := failed.GetMeta()
	if m.GetUsage().GetInputTokens() != 100 {
		t.Errorf("failed meta usage %v", m.GetUsage())
	}
	if w := m.GetWarnings(); len(w) != 1 || w[0] != "request 2 of 2 (inputs 1 to 1) failed; the 1 before it were embedded" {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed23AzureInputLimit: Azure OpenAI's deployments of
// text-embedding-ada-002 took 16 inputs a request (later 1 or 2048 by
// API version) and refuse more with "Too many inputs. The max number of
// inputs is 16.  We hope to increase …" (the body Mintplex-Labs/
// anything-llm#184 quotes): 40 inputs go again as 14, 14 and 12 (not
// halved down), with the setting that avoids the refusal in the warning;
// a part over the token cap after that is halved as before.
func TestEmbed23AzureInputLimit(t *testing.T) {
	t.Parallel()
	up := newTokenCapUpstream(t, 1300, false)
	up.maxInputs = 16
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), up.URL)
	tokens := make([]int, 40)
	for i := range tokens {
		tokens[i] = 10
	}
	tokens[0] = 1200 // the first part (14 inputs) has 1330 tokens: halved
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: tokenInputs(tokens...)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 40)
	if got := up.requestSizes(); fmt.Sprint(got) != "[40 14 7 7 14 12]" {
		t.Errorf("requests of %v inputs", got)
	}
	w := resp.GetMeta().GetWarnings()
	if len(w) != 1 || !strings.Contains(w[0], "inputs 0 to 39 (Too many inputs. The max number of inputs is 16.") ||
		!strings.Contains(w[0], "inputs 0 to 13 (Requested 1330 tokens, max 1300 tokens per request)") ||
		!strings.HasSuffix(w[0], "; 4 requests embedded the call (providers[].max_embedding_inputs: 16 sends such calls in parts from the start)") {
		t.Errorf("warnings %q", w)
	}
}

// TestEmbed23GeminiPayloadSplit: the Gemini API refuses a
// batchEmbedContents body over its size limit ("Request payload size
// exceeds the limit: N bytes.", INVALID_ARGUMENT); the adapter marks it and
// the gateway sends the inputs in the parts the size needs: four inputs of
// 600 bytes against a 1500-byte limit go as 2 + 2 (the first refusal's
// body is some 2.6 kB: two parts), each answered, in input order.
func TestEmbed23GeminiPayloadSplit(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		sizes []int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Requests []struct {
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		sizes = append(sizes, len(req.Requests))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if len(raw) > 1500 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"Request payload size exceeds the limit: 1500 bytes.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		var vs []string
		for _, q := range req.Requests {
			i, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimRight(q.Content.Parts[0].Text, "x"), "t"))
			vs = append(vs, fmt.Sprintf(`{"values":[%d,0.5]}`, i))
		}
		fmt.Fprintf(w, `{"embeddings":[%s],"usageMetadata":{"promptTokenCount":%d}}`, strings.Join(vs, ","), 10*len(req.Requests))
	}))
	t.Cleanup(srv.Close)
	c, _ := startWith(t, embedYAML("gemini", "gemini-embeddings", ""), srv.URL)
	in := make([]string, 4)
	for i := range in {
		in[i] = fmt.Sprintf("t%d", i) + strings.Repeat("x", 600)
	}
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: in})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 4)
	mu.Lock()
	got := fmt.Sprint(sizes)
	mu.Unlock()
	if got != "[4 2 2]" {
		t.Errorf("requests of %s inputs", got)
	}
	if u := resp.GetMeta().GetUsage(); u.GetInputTokens() != 40 {
		t.Errorf("usage %v", u)
	}
	if w := resp.GetMeta().GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "inputs 0 to 3 (Request payload size exceeds the limit: 1500 bytes.)") {
		t.Errorf("warnings %q", w)
	}
}
