package openai

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26EmbedOutputDtype: Voyage AI and Mistral take output_dtype
// (float, int8, uint8, binary, ubinary; Voyage's embeddings reference:
// int8 "integers ranging from -128 to 127", binary a list of int8s
// "bit-packed", 1/8 of the dimensions long), sent through extra_body; with
// encoding_format base64 the vector is a base64 NumPy array of that type.
// Those bytes were read four at a time as float32s: 8 int8 values became
// 2 meaningless floats, without a word. Now each byte is a value (signed
// for int8 and binary), the JSON integers are read as before, and a
// warning says the values are 8-bit integers (bit-packed for binary, whose
// vector of 8 values answers 64 dimensions asked without a size warning).
// The bodies are hand-built in Voyage's answer shape (real_pyd_embed_voyage_base64).
func TestRound26EmbedOutputDtype(t *testing.T) {
	t.Parallel()
	raw := []byte{0x80, 0xff, 0x00, 0x01, 0x7f, 0x40, 0xc0, 0x05}
	b64 := `"` + base64.StdEncoding.EncodeToString(raw) + `"`
	signed := []float32{-128, -1, 0, 1, 127, 64, -64, 5}
	unsigned := []float32{128, 255, 0, 1, 127, 64, 192, 5}
	for _, tc := range []struct {
		name, extra, vec string
		dims             int32
		want             []float32
		warn             string
	}{
		{"int8 base64", `{"output_dtype":"int8","encoding_format":"base64"}`, b64, 0, signed, "output_dtype int8: each value is an 8-bit integer, not a float"},
		{"uint8 base64", `{"output_dtype":"uint8","encoding_format":"base64"}`, b64, 0, unsigned, "output_dtype uint8: each value is an 8-bit integer, not a float"},
		{"binary base64", `{"output_dtype":"binary","encoding_format":"base64"}`, b64, 64, signed, "output_dtype binary: each value is an 8-bit integer holding 8 dimensions, bit-packed, not a float"},
		{"ubinary base64", `{"output_dtype":"ubinary","encoding_format":"base64"}`, b64, 64, unsigned, "output_dtype ubinary: each value is an 8-bit integer holding 8 dimensions, bit-packed, not a float"},
		{"int8 json", `{"output_dtype":"int8"}`, `[-128,-1,0,1,127,64,-64,5]`, 8, signed, "output_dtype int8: each value is an 8-bit integer, not a float"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := `{"object":"list","data":[{"object":"embedding","embedding":` + tc.vec + `,"index":0}],"model":"voyage-code-3","usage":{"total_tokens":7}}`
			srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
			req := &provider.EmbedRequest{Model: "voyage-code-3", Inputs: []string{"def f(): pass"}, ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}}
			if tc.dims != 0 {
				req.Dimensions = &tc.dims
			}
			res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Embeddings[0].GetValues(); !slices.Equal(got, tc.want) {
				t.Errorf("values %v, want %v", got, tc.want)
			}
			w := res.Meta.GetWarnings()
			if !slices.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
			for _, x := range w {
				if strings.HasPrefix(x, "asked for") {
					t.Errorf("size warning %q", x)
				}
			}
			if sent := srv.Last(t).Body; !strings.Contains(string(sent), `"output_dtype"`) {
				t.Errorf("request %s", sent)
			}
		})
	}
}
