package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// embed20Server answers every batchEmbedContents and embedContent request
// with vectors of width(batch number) values, keeping each request body.
type embed20Server struct {
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
	paths  []string
}

func newEmbed20Server(t *testing.T, width func(batch int) int, header http.Header) (*Provider, *embed20Server) {
	t.Helper()
	s := &embed20Server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		s.mu.Lock()
		k := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		vec := "[" + strings.TrimSuffix(strings.Repeat("0.25,", width(k)), ",") + "]"
		for h, vs := range header {
			w.Header()[h] = vs
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if strings.HasSuffix(r.URL.Path, ":embedContent") {
			fmt.Fprintf(w, `{"embedding":{"values":%s}}`, vec)
			return
		}
		var reqs []json.RawMessage
		json.Unmarshal(body["requests"], &reqs)
		out := make([]string, len(reqs))
		for i := range out {
			out[i] = `{"values":` + vec + `}`
		}
		fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(out, ","))
	}))
	t.Cleanup(srv.Close)
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

func inputsN(n int) []string {
	in := make([]string, n)
	for i := range in {
		in[i] = "text " + strconv.Itoa(i)
	}
	return in
}

// TestEmbed20ExtraBodyInEachRequest: extra_body's fields go into each
// EmbedContentRequest of a batch, where the API has taskType, title and
// outputDimensionality, as they go into embedContent's body for one
// input. pydantic-ai's TestGoogle.test_documents cassette
// (pydantic/pydantic-ai tests/cassettes/test_embeddings/TestGoogle.test_documents.yaml
// @ 82fc848a1a14328c20743af789495a3c553c750e) recorded the live API
// accepting a batch whose requests each carry model, content and
// taskType (RETRIEVAL_DOCUMENT), and nothing beside "requests" at the top.
// Before, the fields went to the batch's top level, where the API has no
// such name (a 400), so a task type worked for one input and failed for
// two.
func TestEmbed20ExtraBodyInEachRequest(t *testing.T) {
	t.Parallel()
	opts := &llmrelayv1.ProviderOptions{ExtraBody: `{"taskType":"RETRIEVAL_DOCUMENT","title":"Doc"}`}
	for _, n := range []int{1, 2, 150} {
		p, s := newEmbed20Server(t, func(int) int { return 3 }, nil)
		res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputsN(n), ProviderOptions: opts})
		if err != nil {
			t.Fatalf("%d inputs: %v", n, err)
		}
		if len(res.Embeddings) != n || len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("%d inputs: %d embeddings, warnings %q", n, len(res.Embeddings), res.Meta.GetWarnings())
		}
		if n == 1 {
			b := s.bodies[0]
			if s.paths[0] != "/v1beta/models/gemini-embedding-001:embedContent" || string(b["taskType"]) != `"RETRIEVAL_DOCUMENT"` || string(b["title"]) != `"Doc"` {
				t.Errorf("embedContent %s: %v", s.paths[0], b)
			}
			continue
		}
		seen := 0
		for k, b := range s.bodies {
			if len(b) != 1 || b["requests"] == nil {
				t.Errorf("%d inputs, batch %d: top-level fields %v, want requests alone", n, k, keys(b))
			}
			var reqs []map[string]json.RawMessage
			if err := json.Unmarshal(b["requests"], &reqs); err != nil {
				t.Fatal(err)
			}
			for i, r := range reqs {
				want := []string{"content", "model", "taskType", "title"}
				if got := keys(r); !slices.Equal(got, want) || string(r["taskType"]) != `"RETRIEVAL_DOCUMENT"` ||
					string(r["title"]) != `"Doc"` || string(r["model"]) != `"models/gemini-embedding-001"` {
					t.Errorf("%d inputs, batch %d, request %d: %s", n, k, i, b["requests"])
					return
				}
				var c content
				if json.Unmarshal(r["content"], &c) != nil || len(c.Parts) != 1 || c.Parts[0].Text == nil || *c.Parts[0].Text != "text "+strconv.Itoa(seen) {
					t.Errorf("%d inputs, request %d: content %s", n, seen, r["content"])
				}
				seen++
			}
		}
		if seen != n {
			t.Errorf("%d inputs: %d requests sent", n, seen)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEmbed20SplitKeepsWarnings: the warnings of the batches of a split
// call reach its meta once (they were dropped: extra_body's replacement of
// outputDimensionality, the "asked for N dimensions" of a model that does
// not shorten), and batches whose vectors differ in length fail the call
// (they were joined: the first inputs' vectors from one length, the
// others' from another).
func TestEmbed20SplitKeepsWarnings(t *testing.T) {
	t.Parallel()
	dims := int32(4)
	opts := &llmrelayv1.ProviderOptions{ExtraBody: `{"outputDimensionality":8}`}
	p, s := newEmbed20Server(t, func(int) int { return 8 }, nil)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputsN(150), Dimensions: &dims, ProviderOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"extra_body.outputDimensionality replaced the value the gateway built from the request", "asked for 4 dimensions, got 8"}
	if got := res.Meta.GetWarnings(); !slices.Equal(got, want) || len(s.bodies) != 2 {
		t.Errorf("warnings %q (want %q), %d requests", got, want, len(s.bodies))
	}
	for i, e := range res.Embeddings {
		if e.GetIndex() != int32(i) || len(e.GetValues()) != 8 {
			t.Fatalf("embedding %d: %v", i, e)
		}
	}

	p, _ = newEmbed20Server(t, func(batch int) int { return 2 + batch }, nil)
	_, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputsN(150)})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "inputs 75 to 149: embeddings of 3 values where the first batch's have 2") {
		t.Errorf("batches of 2 and 3 values: err %v", err)
	}
}

// TestEmbed20ServiceTierAndDimensions: the X-Gemini-Service-Tier header of
// an embedding answer is its service tier, as on generateContent's (it
// was read only there), and vectors of another length than the
// dimensions asked are passed on with a warning, as the OpenAI and Ollama
// adapters do (there was none).
func TestEmbed20ServiceTierAndDimensions(t *testing.T) {
	t.Parallel()
	dims := int32(4)
	for _, n := range []int{1, 2, 150} {
		p, _ := newEmbed20Server(t, func(int) int { return 3 }, http.Header{"X-Gemini-Service-Tier": {"standard"}})
		res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputsN(n), Dimensions: &dims})
		if err != nil {
			t.Fatalf("%d inputs: %v", n, err)
		}
		if res.Meta.GetServiceTier() != "standard" || !slices.Equal(res.Meta.GetWarnings(), []string{"asked for 4 dimensions, got 3"}) {
			t.Errorf("%d inputs: tier %q, warnings %q", n, res.Meta.GetServiceTier(), res.Meta.GetWarnings())
		}
	}
}

// TestEmbed20BadAnswers: an answer that is not one finite float32 vector
// of one length per input is a bad response, and an error object in a 200
// body is the error it names.
func TestEmbed20BadAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		inputs int
		body   string
		kind   provider.Kind
		msg    string
	}{
		// Before: both vectors passed on, of two lengths.
		{"mixed lengths", 2, `{"embeddings":[{"values":[0.1,0.2]},{"values":[0.3]}]}`, provider.KindBadResponse, "embedding 1 has 1 values where the first has 2"},
		// Before: 1e39 became +Inf in the float32 conversion.
		{"over float32", 1, `{"embedding":{"values":[0.1,1e39]}}`, provider.KindBadResponse, "embedding 0: value 1 (1e+39) is not a float32"},
		{"under float32", 2, `{"embeddings":[{"values":[0.1,0.2]},{"values":[-3.5e38,0.2]}]}`, provider.KindBadResponse, "embedding 1: value 0 (-3.5e+38) is not a float32"},
		// Before: "got 0 embeddings for 1 inputs", the API's word lost.
		{"error in a 200", 1, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, provider.KindRateLimited, "Resource has been exhausted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: []byte(tc.body)})
			p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputsN(tc.inputs)})
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind || !strings.Contains(pe.Message, tc.msg) {
				t.Fatalf("got %v, %v; want %s %q", res, err, tc.kind, tc.msg)
			}
		})
	}
}

// embed20NotFound is the recording TestEmbed20RealNotFound replays.
const embed20NotFound = "real_pyd_embed_google_not_found"

// TestEmbed20RealNotFound replays the Gemini API's 404 for an unknown
// embedding model (real_pyd_embed_google_not_found: pydantic-ai's
// TestGoogle.test_embed_error, a batchEmbedContents of one input with
// taskType RETRIEVAL_QUERY), to both methods the adapter uses: not found,
// the status as code, the message whole; the API sends no request id.
func TestEmbed20RealNotFound(t *testing.T) {
	t.Parallel()
	const msg = "models/nonexistent-model is not found for API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods."
	opts := &llmrelayv1.ProviderOptions{ExtraBody: `{"taskType":"RETRIEVAL_QUERY"}`}
	for _, n := range []int{1, 2} {
		p, srv := replay(t, embed20NotFound)
		_, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "nonexistent-model", Inputs: inputsN(n), ProviderOptions: opts})
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%d inputs: err %v", n, err)
		}
		if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Code != "NOT_FOUND" || pe.Message != msg ||
			pe.RequestID != "" || pe.Param != "" || pe.RetryAfter != 0 || pe.Provider != "gemini" {
			t.Errorf("%d inputs: %+v", n, pe)
		}
		c := srv.Last(t)
		var body map[string]json.RawMessage
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		switch n {
		case 1:
			if c.Path != "/v1beta/models/nonexistent-model:embedContent" || string(body["taskType"]) != `"RETRIEVAL_QUERY"` {
				t.Errorf("request %s %s", c.Path, c.Body)
			}
		default:
			// The recorded request: requests[0] with model, content and
			// taskType, at this path.
			var reqs []map[string]json.RawMessage
			json.Unmarshal(body["requests"], &reqs)
			if c.Path != "/v1beta/models/nonexistent-model:batchEmbedContents" || len(body) != 1 || len(reqs) != n ||
				string(reqs[0]["taskType"]) != `"RETRIEVAL_QUERY"` || string(reqs[0]["model"]) != `"models/nonexistent-model"` {
				t.Errorf("request %s %s", c.Path, c.Body)
			}
		}
	}
}

// FuzzEmbed20Values: every vector parseEmbeddings returns holds finite
// float32 values, one length for all.
func FuzzEmbed20Values(f *testing.F) {
	f.Add([]byte(`{"embeddings":[{"values":[0.5,1e39]},{"values":[1,2]}]}`), uint8(2))
	f.Add([]byte(`{"embedding":{"values":[3.4028235e38,-3.4028236e38]}}`), uint8(1))
	f.Add(providertest.Load(f, filepath.Join("testdata", "embed_batch.http")).Body, uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		count := int(n%3) + 1
		embs, _, err := parseEmbeddings(body, count)
		if err != nil {
			return
		}
		for i, e := range embs {
			if len(e.GetValues()) != len(embs[0].GetValues()) {
				t.Fatalf("embedding %d: %d values, the first %d", i, len(e.GetValues()), len(embs[0].GetValues()))
			}
			for j, v := range e.GetValues() {
				if v != v || v > 3.4028235e38 || v < -3.4028235e38 {
					t.Fatalf("embedding %d value %d: %v", i, j, v)
				}
			}
		}
	})
}
