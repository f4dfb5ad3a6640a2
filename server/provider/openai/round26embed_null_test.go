package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26EmbedNullValues: a server that computed NaN (a float16 model
// overflowing) writes it as null: michaelfeil/infinity's /embeddings
// answered a list of nulls for stella_en_1.5B_v5 (michaelfeil/infinity#328;
// orjson writes NaN so), as Hugging Face TEI does (serde_json;
// huggingface/text-embeddings-inference#644, Qwen3-Embedding). Float
// decoding left each null a zero: a vector of zeros, or with zeros in it,
// was passed on as the embedding. It is a bad response naming the
// embedding, the nulls and the first of them, with the request's usage
// lost as any bad response's; a vector without null is read as before.
func TestRound26EmbedNullValues(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_infinity_null_values.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "embedding", Inputs: []string{"5.2"}})
	pe := providerError(t, err)
	if pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "embedding 0: 16 of its 16 values are null, from value 0") {
		t.Errorf("got %v, want bad_response naming 16 null values", pe)
	}

	for _, tc := range []struct {
		vec, msg string
	}{
		{`[0.5,null,0.25,null]`, "embedding 1: 2 of its 4 values are null, from value 1"},
		{`[0.5, -0.25 ,0.125, 1e-3]`, ""},
		{`[0.5,-0.25,0.125,null]`, "embedding 1: 1 of its 4 values are null, from value 3"},
	} {
		body := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,2,3,4]},{"object":"embedding","index":1,"embedding":` + tc.vec + `}],"model":"embedding","usage":{"prompt_tokens":2,"total_tokens":2}}`
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "embedding", Inputs: []string{"a", "b"}})
		if tc.msg == "" {
			if err != nil {
				t.Fatalf("%s: %v", tc.vec, err)
			}
			want := []float32{0.5, -0.25, 0.125, 1e-3}
			for i, v := range res.Embeddings[1].GetValues() {
				if math.Float32bits(v) != math.Float32bits(want[i]) {
					t.Errorf("%s: value %d %v", tc.vec, i, v)
				}
			}
			continue
		}
		if pe := providerError(t, err); pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, tc.msg) {
			t.Errorf("%s: got %v, want %q", tc.vec, pe, tc.msg)
		}
	}
}

// FuzzParseEmbedResponse: any body, read for any output_dtype, gives want
// vectors in input order, of one non-zero length, every value finite (and
// an 8-bit integer for an 8-bit dtype's base64) and none a null read as
// zero, or an error; never a panic.
func FuzzParseEmbedResponse(f *testing.F) {
	for _, name := range []string{"embed_infinity_null_values.http", "embed_out_of_order.http", "embed_no_index.http", "real_pyd_embed_openai_3small_base64.http", "embed_llamacpp_nested.http"} {
		f.Add(providertest.Load(f, td(name)).Body, uint8(0)) // one input
	}
	f.Add([]byte(`{"data":[{"index":1,"embedding":[0.5,null]},{"index":0,"embedding":[1,2]}]}`), uint8(1))
	f.Add([]byte(`{"data":[{"embedding":[0.5, null ,1]}],"usage":{"prompt_tokens":1}}`), uint8(0))
	p := newTestProvider(f, kOpenAI, "http://127.0.0.1:1")
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		want := int(n%3) + 1 // n 0: one input
		dtype := []string{"", "int8", "uint8", "binary", "ubinary", "float"}[int(n/3)%6]
		res, err := p.parseEmbedAnswer(body, want, dtype)
		if err != nil {
			return
		}
		if len(res.Embeddings) != want {
			t.Fatalf("%d embeddings for %d inputs", len(res.Embeddings), want)
		}
		dims := len(res.Embeddings[0].GetValues())
		for i, e := range res.Embeddings {
			if e.GetIndex() != int32(i) || len(e.GetValues()) == 0 || len(e.GetValues()) != dims {
				t.Fatalf("embedding %d: index %d, %d values (first %d)", i, e.GetIndex(), len(e.GetValues()), dims)
			}
			for j, v := range e.GetValues() {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("embedding %d value %d: %v", i, j, v)
				}
			}
		}
		var w embedResponse
		if json.Unmarshal(body, &w) != nil {
			return // read leniently; the strict reading is not comparable
		}
		for _, d := range w.Data {
			var ptrs []*float32
			if json.Unmarshal(d.Embedding, &ptrs) == nil && slices.Contains(ptrs, nil) {
				t.Fatalf("a vector with null values accepted: %s", d.Embedding)
			}
		}
		allBase64 := true
		for _, d := range w.Data {
			allBase64 = allBase64 && bytes.HasPrefix(bytes.TrimSpace(d.Embedding), []byte(`"`))
		}
		if signed, ok := byteDtype(dtype); ok && allBase64 {
			lo, hi := float32(0), float32(255)
			if signed {
				lo, hi = -128, 127
			}
			for _, e := range res.Embeddings {
				for _, v := range e.GetValues() {
					if v != float32(int(v)) || v < lo || v > hi {
						t.Fatalf("%s value %v", dtype, v)
					}
				}
			}
		}
	})
}
