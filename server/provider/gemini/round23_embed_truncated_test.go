package gemini

import (
	"context"
	"net/http"
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
