package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// b64Floats is vals as encoding_format base64 writes them: little-endian
// float32 bits.
func b64Floats(vals ...float32) string {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// TestEmbed20Base64NonFinite: a base64 vector holding NaN or an infinity
// is a bad response naming the value (float JSON cannot carry them, so
// they came only this way; they were passed on, a vector no index can
// use), and a finite one is read exactly, bit for bit.
func TestEmbed20Base64NonFinite(t *testing.T) {
	t.Parallel()
	nan := math.Float32frombits(0x7fc00000)
	cases := []struct {
		name string
		vec  string
		msg  string // "" accepted
	}{
		{"finite", b64Floats(0.5, -1.25e-30, math.MaxFloat32, math.SmallestNonzeroFloat32), ""},
		{"nan", b64Floats(0.5, nan), "embedding 1: value 1 of the base64 embedding is NaN"},
		{"+inf", b64Floats(float32(math.Inf(1)), 0.5, 0.5, 0.5), "embedding 1: value 0 of the base64 embedding is +Inf"},
		{"-inf", b64Floats(0.5, 0.25, float32(math.Inf(-1)), 1), "embedding 1: value 2 of the base64 embedding is -Inf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := b64Floats(1, 2, 3, 4)
			if tc.name == "nan" {
				first = b64Floats(1, 2)
			}
			body := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"` + first + `"},{"object":"embedding","index":1,"embedding":"` + tc.vec + `"}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}`
			srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_nan"}}, Body: []byte(body)})
			res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"a", "b"}})
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := []float32{0.5, -1.25e-30, math.MaxFloat32, math.SmallestNonzeroFloat32}
				for i, v := range res.Embeddings[1].GetValues() {
					if math.Float32bits(v) != math.Float32bits(want[i]) {
						t.Errorf("value %d: %v, want %v", i, v, want[i])
					}
				}
				return
			}
			pe := providerError(t, err)
			if pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, tc.msg) || pe.RequestID != "req_nan" {
				t.Errorf("got %v (request id %q), want bad_response %q", pe, pe.RequestID, tc.msg)
			}
		})
	}
}

// TestEmbed20VoyageTruncationOff: Voyage AI truncates an input longer
// than the model's context silently unless "truncation" is false (its
// default is true, docs.voyageai.com's embeddings reference); the adapter
// sends false to Voyage's host, as the Ollama adapter sends truncate
// false, and extra_body may turn it back on without a warning (an adapter
// default, like encoding_format). Other hosts get no such field.
func TestEmbed20VoyageTruncationOff(t *testing.T) {
	t.Parallel()
	cases := []struct {
		base, extra, want string
		warnings          int
	}{
		{"https://api.voyageai.com/v1", "", `{"model":"voyage-4","input":["a","b"],"truncation":false}`, 0},
		{"https://api.voyageai.com/v1", `{"truncation":true,"input_type":"document"}`, `{"model":"voyage-4","input":["a","b"],"truncation":true,"input_type":"document"}`, 0},
		{"https://api.openai.com/v1", "", `{"model":"voyage-4","input":["a","b"],"encoding_format":"base64"}`, 0},
		{"https://api.mistral.ai/v1", "", `{"model":"voyage-4","input":["a","b"]}`, 0},
	}
	for _, tc := range cases {
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		body, warnings, err := p.buildEmbedRequest(&provider.EmbedRequest{Model: "voyage-4", Inputs: []string{"a", "b"},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}})
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != tc.want || len(warnings) != tc.warnings {
			t.Errorf("%s %s: %s %q, want %s", tc.base, tc.extra, body, warnings, tc.want)
		}
	}
}

// TestEmbed20VoyageInputTooLong: Voyage's 400 for an input over the
// model's context with truncation off names the input by its place in the
// batch; it becomes the error's param (input[1]), as OpenAI's "Invalid
// 'input[0]'" does, and stays a context-length error (not retried). The
// body is FastAPI's {"detail": …} with the words latitude-dev/latitude-llm#3554
// quotes (its "…" where the quote elides, written by hand).
func TestEmbed20VoyageInputTooLong(t *testing.T) {
	t.Parallel()
	const detail = "Request to model 'voyage-4-large' failed. The example at index 1 in your batch has too many tokens and does not fit into the model's context window of 32000 tokens. Please lower the number of tokens ... or use truncation."
	srv := providertest.Replay(t, providertest.Recording{Status: 400,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"voy-req-1"}},
		Body:   []byte(`{"detail":"` + detail + `"}`)})
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "voyage-4-large", Inputs: []string{"short", strings.Repeat("long ", 40)}})
	pe := providerError(t, err)
	if pe.Kind != provider.KindContextLength || pe.Param != "input[1]" || pe.Message != detail || pe.HTTPStatus != 400 || pe.RequestID != "voy-req-1" {
		t.Errorf("got kind %v param %q status %d request id %q message %q", pe.Kind, pe.Param, pe.HTTPStatus, pe.RequestID, pe.Message)
	}
}

// embed20Voyage is pydantic-ai's TestVoyageAI.test_query_with_truncate
// answer: voyage-3.5 asked for base64 with truncation on.
const embed20Voyage = "real_pyd_embed_voyage_base64"

// TestEmbed20RealVoyageBase64 replays Voyage's base64 answer (1024
// float32 in 5464 base64 characters; the compact body is 5586 bytes, the
// recorded content-length, and the vector has unit length): every value
// is the recorded one bit for bit, usage is total_tokens as input, the
// model lands, nothing else is invented. The request pydantic-ai sent
// (encoding_format base64, input_type query, truncation true, the API
// answered 200) is what the adapter builds for Voyage's host from the
// same extra_body: the caller's truncation replaces the adapter's false
// without a warning.
func TestEmbed20RealVoyageBase64(t *testing.T) {
	t.Parallel()
	extra := &llmrelayv1.ProviderOptions{ExtraBody: `{"encoding_format":"base64","input_type":"query","truncation":true}`}
	req := &provider.EmbedRequest{Model: "voyage-3.5", Inputs: []string{"Hello, world!"}, ProviderOptions: extra}

	voyage, err := New(testKey, WithBaseURL("https://api.voyageai.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := voyage.buildEmbedRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"voyage-3.5","input":["Hello, world!"],"truncation":true,"encoding_format":"base64","input_type":"query"}`; string(body) != want || len(warnings) != 0 {
		t.Errorf("Voyage request %s %q, want %s", body, warnings, want)
	}

	rec := providertest.Load(t, td(embed20Voyage+".http"))
	srv := providertest.Replay(t, rec)
	res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := recordedVectors(t, rec.Body)[0]
	got := res.Embeddings[0].GetValues()
	if len(res.Embeddings) != 1 || len(got) != 1024 || len(want) != 1024 || math.Float32bits(got[0]) != 0xbb8f8f01 {
		t.Fatalf("%d embeddings, %d values, first %#x", len(res.Embeddings), len(got), math.Float32bits(got[0]))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: %v, recorded %v", i, got[i], want[i])
		}
	}
	m := res.Meta
	if u := m.GetUsage(); u.GetInputTokens() != 3 || u.GetTotalTokens() != 3 || u.GetOutputTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	if m.GetResolvedModel() != "voyage-3.5" || m.GetResponseId() != "" || m.GetProviderRequestId() != "" || m.GetEmbeddingsCount() != 1 || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil {
		t.Errorf("meta %v", m)
	}
	providertest.Golden(t, td(embed20Voyage+".golden"), renderResult(t, res))
}
