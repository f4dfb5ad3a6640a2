package gemini

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26EmbedValuesRoundedOnce: each value of an embedding is the
// float32 nearest the decimal sent. The values went through float64
// first: a decimal a hair above the midpoint of two float32s (here with
// 17 to 19 digits, as a server that prints its values as float64 sends
// them) rounded to the midpoint, then by ties to even to the float32
// below, one bit off. The bodies are hand-built (values chosen as such
// midpoints plus a last digit); the check is against strconv at 32 bits,
// for one input (embedContent) and a batch.
func TestRound26EmbedValuesRoundedOnce(t *testing.T) {
	t.Parallel()
	sent := []string{"7.8272507525980473e-03", "0.00781250046566128731", "-0.0078567513264715672", "7.871501613408327103e-03"}
	for _, tc := range []struct {
		inputs []string
		body   string
	}{
		{[]string{"one"}, `{"embedding":{"values":[` + strings.Join(sent, ",") + `]}}`},
		{[]string{"one", "two"}, `{"embeddings":[{"values":[0.5,0.25,0.125,1]},{"values":[` + strings.Join(sent, ",") + `]}]}`},
	} {
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: []byte(tc.body)})
		p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: tc.inputs})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Embeddings[len(tc.inputs)-1].GetValues()
		if len(got) != len(sent) {
			t.Fatalf("%d values", len(got))
		}
		for j, s := range sent {
			want, err := strconv.ParseFloat(s, 32)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(got[j]) != math.Float32bits(float32(want)) {
				t.Errorf("%d inputs, value %d (%s): %x, want %x", len(tc.inputs), j, s, math.Float32bits(got[j]), math.Float32bits(float32(want)))
			}
		}
	}
}

// TestRound26EmbedRecordingBitForBit: every value of the real batch
// recording is the float32 its decimal names, checked against the body
// read apart; and a value that is not a number (a string, a list, null in
// the list) is a bad response naming the embedding and the value, never a
// zero or a decoding error without either.
func TestRound26EmbedRecordingBitForBit(t *testing.T) {
	t.Parallel()
	body := providertest.Load(t, filepath.Join("testdata", "real_llm_embedding_batch.http")).Body
	var apart struct {
		Embeddings []struct {
			Values []json.Number `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal(body, &apart); err != nil || len(apart.Embeddings) != 2 {
		t.Fatalf("recording: %v", err)
	}
	embs, _, err := parseEmbeddings(body, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range apart.Embeddings {
		if len(embs[i].GetValues()) != len(e.Values) || len(e.Values) != 768 {
			t.Fatalf("embedding %d: %d values, recorded %d", i, len(embs[i].GetValues()), len(e.Values))
		}
		for j, n := range e.Values {
			want, err := strconv.ParseFloat(string(n), 32)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(embs[i].Values[j]) != math.Float32bits(float32(want)) {
				t.Fatalf("embedding %d value %d: %v, recorded %s", i, j, embs[i].Values[j], n)
			}
		}
	}
	for _, tc := range []struct{ body, msg string }{
		{`{"embedding":{"values":[0.1,"0.2"]}}`, "embedding 0: value 1 is not a number"},
		{`{"embedding":{"values":[0.1,null]}}`, "embedding 0: value 1 is not a number"},
		{`{"embedding":{"values":[[0.1,0.2]]}}`, "embedding 0: value 0 is not a number"},
		{`{"embedding":{"values":{"0":0.1}}}`, "embedding 0: values are not a list of numbers"},
		{`{"embedding":{"values":null}}`, "embedding 0 has no values"},
	} {
		_, _, err := parseEmbeddings([]byte(tc.body), 1)
		if pe, ok := err.(*provider.Error); !ok || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, tc.msg) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.msg)
		}
	}
}
