package gemini

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23EmbedTruncated: Vertex AI's embedContent answer says when it
// cut the input to the model's maximum length before embedding it
// (EmbedContentResponse.truncated, its autoTruncate on): the vector is of
// the input's beginning, which the answer passed on without a word. A
// warning now says so; "truncated": false and no field say nothing. The
// bodies are written here in the shape of the Vertex AI reference
// (projects.locations.publishers.models.embedContent: embedding.values,
// usageMetadata, truncated).
func TestRound23EmbedTruncated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		warn bool
	}{
		{`{"embedding":{"values":[0.25,-0.5,0.125]},"usageMetadata":{"promptTokenCount":2048,"totalTokenCount":2048},"truncated":true}`, true},
		{`{"embedding":{"values":[0.25,-0.5,0.125]},"usageMetadata":{"promptTokenCount":12,"totalTokenCount":12},"truncated":false}`, false},
		{`{"embedding":{"values":[0.25,-0.5,0.125]}}`, false},
	} {
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: []byte(tc.body)})
		p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a long text"}})
		if err != nil {
			t.Fatal(err)
		}
		w := res.Meta.GetWarnings()
		if got := len(w) == 1 && w[0] == embedTruncatedWarning; got != tc.warn || (!tc.warn && len(w) != 0) {
			t.Errorf("%s: warnings %q", tc.body, w)
		}
		if v := res.Embeddings[0].GetValues(); len(v) != 3 || v[1] != -0.5 {
			t.Errorf("%s: values %v", tc.body, v)
		}
	}
}

// TestRound23EmbedPayloadTooLarge: the Gemini API refuses a body over its
// size limit with INVALID_ARGUMENT "Request payload size exceeds the
// limit: 4194304 bytes." (quarkiverse/quarkus-langchain4j#1705 quotes it
// for a batch of embeddings): for a batch, the refusal is marked for the
// gateway to send the inputs in parts (BatchTooLarge, with the parts the
// body's size needs); for one input, not (nothing to split).
func TestRound23EmbedPayloadTooLarge(t *testing.T) {
	t.Parallel()
	const body = `{"error":{"code":400,"message":"Request payload size exceeds the limit: 4194304 bytes.","status":"INVALID_ARGUMENT"}}`
	for _, n := range []int{1, 3} {
		srv := providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: []byte(body)})
		p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		inputs := make([]string, n)
		for i := range inputs {
			inputs[i] = strings.Repeat("x", 2<<20) // 2 MiB each: 6 MiB for three
		}
		_, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputs})
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%d inputs: %v", n, err)
		}
		wantParts := 0
		if n == 3 {
			wantParts = 2
		}
		if pe.Kind != provider.KindInvalidRequest || pe.BatchTooLarge != (n > 1) || pe.BatchParts != wantParts {
			t.Errorf("%d inputs: kind %v batch too large %v parts %d", n, pe.Kind, pe.BatchTooLarge, pe.BatchParts)
		}
	}
}
