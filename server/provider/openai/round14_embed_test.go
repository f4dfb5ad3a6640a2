package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// recordedVectors decodes the vectors of an /embeddings body apart from
// the adapter: numbers parsed one by one as float32 (strconv, from the
// JSON text), base64 read as little-endian float32 bits. Keyed by index.
func recordedVectors(t *testing.T, body []byte) map[int][]float32 {
	t.Helper()
	var w struct {
		Data []struct {
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	out := map[int][]float32{}
	for _, d := range w.Data {
		var vals []float32
		if s := string(d.Embedding); strings.HasPrefix(s, `"`) {
			b, err := base64.StdEncoding.DecodeString(strings.Trim(s, `"`))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+4 <= len(b); i += 4 {
				vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
			}
		} else {
			for _, f := range strings.Split(strings.Trim(s, "[] \n"), ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 32)
				if err != nil {
					t.Fatal(err)
				}
				vals = append(vals, float32(v))
			}
		}
		out[d.Index] = vals
	}
	return out
}

// TestRound14EmbedRecordings replays real /embeddings answers: every value
// must be the recorded one, bit for bit, and every fact the contract has a
// place for must land.
func TestRound14EmbedRecordings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		model     string
		inputs    []string
		dims      int
		first     uint32 // bits of values[0], read off the recording by hand
		requestID string
		usage     [2]int32 // input, total
	}{
		// OpenAI, text-embedding-ada-002, encoding_format base64 (the
		// Python SDK's default): 1536 float32 in 8192 base64 characters.
		{"real_oll_embed_ada_base64", "text-embedding-ada-002", []string{"Tell me a joke about opentelemetry"}, 1536, 0x3ccdfbaa, "req_d4be275b923814571b3813ae58e029c5", [2]int32{8, 8}},
		// Voyage's /v1/embeddings: floats, and usage with total_tokens
		// only (the input tokens are those).
		{"real_lcg_embed_voyage_query", "voyage-4", []string{"What is machine learning?"}, 1024, math.Float32bits(0.009378447), "a66fecb1508a81460c45782ed74ec2bc", [2]int32{4, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := providertest.Load(t, td(tc.name+".http"))
			srv := providertest.Replay(t, rec)
			p := newTestProvider(t, kOpenAI, srv.URL)
			res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: tc.model, Inputs: tc.inputs})
			if err != nil {
				t.Fatal(err)
			}
			want := recordedVectors(t, rec.Body)
			if len(res.Embeddings) != len(tc.inputs) || res.Meta.GetEmbeddingsCount() != int32(len(tc.inputs)) {
				t.Fatalf("%d embeddings (count %d) for %d inputs", len(res.Embeddings), res.Meta.GetEmbeddingsCount(), len(tc.inputs))
			}
			for i, e := range res.Embeddings {
				if e.GetIndex() != int32(i) {
					t.Errorf("embedding %d has index %d", i, e.GetIndex())
				}
				if len(e.GetValues()) != tc.dims || len(want[i]) != tc.dims {
					t.Fatalf("embedding %d: %d values, recording %d, want %d", i, len(e.GetValues()), len(want[i]), tc.dims)
				}
				for j, v := range e.GetValues() {
					if math.Float32bits(v) != math.Float32bits(want[i][j]) {
						t.Fatalf("embedding %d value %d: %v, recorded %v", i, j, v, want[i][j])
					}
				}
			}
			if got := math.Float32bits(res.Embeddings[0].GetValues()[0]); got != tc.first {
				t.Errorf("first value bits %#x, want %#x", got, tc.first)
			}
			if res.Meta.GetProviderRequestId() != tc.requestID || res.Meta.GetResolvedModel() != tc.model {
				t.Errorf("request id %q, model %q", res.Meta.GetProviderRequestId(), res.Meta.GetResolvedModel())
			}
			if u := res.Meta.GetUsage(); u.GetInputTokens() != tc.usage[0] || u.GetTotalTokens() != tc.usage[1] || u.GetOutputTokens() != 0 {
				t.Errorf("usage %v, want input %d total %d", u, tc.usage[0], tc.usage[1])
			}
			if len(res.Meta.GetWarnings()) != 0 {
				t.Errorf("warnings %q", res.Meta.GetWarnings())
			}
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			providertest.Golden(t, td(tc.name+".request.golden"), providertest.RequestGolden(srv.Last(t), authHeaders...))
		})
	}
}

// TestRound14EmbedOpenAIRateLimits: the OpenAI recording's rate-limit
// headers land (requests and tokens, limits, remaining and resets).
func TestRound14EmbedOpenAIRateLimits(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_oll_embed_ada_base64.http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-ada-002", Inputs: []string{"Tell me a joke about opentelemetry"}})
	if err != nil {
		t.Fatal(err)
	}
	rl := res.Meta.GetRateLimit()
	if rl.GetRequestsLimit() != 5000 || rl.GetRequestsRemaining() != 4999 || rl.GetTokensLimit() != 5000000 || rl.GetTokensRemaining() != 4999992 {
		t.Errorf("rate limit %v", rl)
	}
	// Date 08:39:35 + 12ms and + 0s.
	if rl.GetRequestsResetTime().AsTime().UnixMilli() != 1708591175012 || rl.GetTokensResetTime().AsTime().Unix() != 1708591175 {
		t.Errorf("resets %v %v", rl.GetRequestsResetTime().AsTime(), rl.GetTokensResetTime().AsTime())
	}
}

// TestRound14EmbedShapes: hand-built answers of compatible servers, each
// on its own point of the list's contract (one vector per input, in input
// order, or an error).
func TestRound14EmbedShapes(t *testing.T) {
	t.Parallel()
	two := []string{"a", "b"}
	cases := []struct {
		name    string
		inputs  []string
		errText string // refused with a bad_response naming this; "" accepted
	}{
		{"embed_out_of_order", []string{"a", "b", "c"}, ""},
		{"embed_no_index", two, ""},
		{"embed_zero_usage", two, ""},
		{"embed_id_created", []string{"a"}, ""},
		{"embed_body_request_id", two, ""},
		{"embed_duplicate_index", two, "index 0 given twice"},
		{"embed_index_gap", two, "index 2 out of range"},
		{"embed_count_short", two, "1 embeddings for 2 inputs"},
		{"embed_mixed_dims", two, "embedding 1 has 3 values where the others have 2"},
		{"embed_partial_index", two, "1 of 2 embeddings have no index"},
		{"embed_llamacpp_nested", []string{"a"}, "a list of 3 vectors (one per token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := providertest.Load(t, td(tc.name+".http"))
			srv := providertest.Replay(t, rec)
			p := newTestProvider(t, kOpenAI, srv.URL)
			res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "m", Inputs: tc.inputs})
			if tc.errText != "" {
				pe := providerError(t, err)
				if pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, tc.errText) {
					t.Fatalf("kind %v, message %q; want bad_response with %q", pe.Kind, pe.Message, tc.errText)
				}
				if want := rec.Header.Get("x-request-id"); pe.RequestID != want {
					t.Errorf("request id %q, want %q", pe.RequestID, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range res.Embeddings {
				if e.GetIndex() != int32(i) {
					t.Errorf("embedding %d has index %d", i, e.GetIndex())
				}
			}
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
		})
	}
}

// TestRound14EmbedOutOfOrderValues: the entries sent as 2, 0, 1 come back
// as 0, 1, 2 with their own vectors.
func TestRound14EmbedOutOfOrderValues(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_out_of_order.http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0.125, -1}, {3.0517578125e-05, 2}, {0.5, 0.25}}
	for i, e := range res.Embeddings {
		if len(e.GetValues()) != 2 || e.GetValues()[0] != want[i][0] || e.GetValues()[1] != want[i][1] {
			t.Errorf("embedding %d: %v, want %v", i, e.GetValues(), want[i])
		}
	}
}

// TestRound14EmbedUsageAndIDs: all-zero usage is no count; a body's id and
// created land.
func TestRound14EmbedUsageAndIDs(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_zero_usage.http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.Usage != nil {
		t.Errorf("zero usage reported as %v", res.Meta.Usage)
	}
	srv = providertest.ReplayFile(t, td("embed_id_created.http"))
	p = newTestProvider(t, kOpenAI, srv.URL)
	res, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "mistral-embed", Inputs: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.GetResponseId() != "embd-5e1a2b3c4d5e6f708192a3b4c5d6e7f8" || res.Meta.GetCreateTime().GetSeconds() != 1755780070 ||
		res.Meta.GetProviderRequestId() != "0198cca5-0000-7e45-ab3c-a0b8888ca69b" {
		t.Errorf("meta %v", res.Meta)
	}
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 3 || u.GetTotalTokens() != 3 {
		t.Errorf("usage %v", u)
	}
	// Together's request_id in the body, no request-id header, no usage.
	srv = providertest.ReplayFile(t, td("embed_body_request_id.http"))
	p = newTestProvider(t, kOpenAI, srv.URL)
	res, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "togethercomputer/m2-bert-80M-8k-retrieval", Inputs: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.GetProviderRequestId() != "9a3f0c2b7d1e4a5f-SJC" || res.Meta.Usage != nil {
		t.Errorf("meta %v", res.Meta)
	}
}

// TestRound14EmbedDimensionsIgnored: a server that answers with vectors of
// another length than the dimensions asked for is reported, not cut.
func TestRound14EmbedDimensionsIgnored(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_lcg_embed_voyage_query.http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "voyage-4", Inputs: []string{"What is machine learning?"}, Dimensions: proto.Int32(256)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Embeddings[0].GetValues()) != 1024 {
		t.Errorf("%d values", len(res.Embeddings[0].GetValues()))
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "asked for 256 dimensions, got 1024" {
		t.Errorf("warnings %q", w)
	}
	var sent map[string]any
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent["encoding_format"]; sent["dimensions"] != float64(256) || ok {
		t.Errorf("sent %v", sent)
	}
}

// TestRound14EmbedErrors: error answers to /embeddings keep the
// provider's words, status, code and kind.
func TestRound14EmbedErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		kind    provider.Kind
		status  int
		code    string
		message string
		reqID   string
		azure   bool
	}{
		// Azure OpenAI's 401 for a bad key on the deployment's
		// /embeddings route (openllmetry's recording): apim-request-id.
		{"real_oll_embed_azure_401", provider.KindUnauthenticated, 401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.", "a12b8d1c-ec44-4f47-836c-af5095ede296", true},
		// OpenAI, an unknown model (pydantic-ai's recording).
		{"real_pyd_embed_openai_model_not_found", provider.KindNotFound, 404, "model_not_found", "The model `nonexistent` does not exist or you do not have access to it.", "", false},
		// Voyage answers FastAPI's {"detail": "..."}: the text was lost
		// (the message was the status text, "Bad Request").
		{"real_pyd_embed_voyage_model_not_supported", provider.KindInvalidRequest, 400, "", "Model nonexistent is not supported. Supported models are ['g2-20250421-0156pm-voyage-2-series-preloading', 'voyage-large-2-instruct', 'voyage-law-2', 'voyage-code-2', 'voyage-02', 'voyage-2', 'voyage-01', 'voyage-lite-01', 'voyage-lite-01-instruct', 'voyage-lite-02-instruct', 'voyage-multilingual-2', 'voyage-large-2'].", "", false},
		// OpenAI's wording for an input over 8192 tokens since 2024 (the
		// older "maximum context length" one was matched; this one was
		// invalid_request).
		{"embed_error_openai_400_input_length", provider.KindContextLength, 400, "invalid_request_error", "Invalid 'input[0]': maximum input length is 8192 tokens.", "req_embed_input_length", false},
		// An input longer than the server takes: TEI's OpenAI route
		// answers 413 (was invalid_request), llama.cpp 500 (was
		// unavailable, retried as a server fault), vLLM 400.
		{"embed_error_tei_413_tokens", provider.KindContextLength, 413, "413", "Input validation error: inputs must have less than 512 tokens. Given: 516", "", false},
		{"embed_error_llamacpp_500_too_large", provider.KindContextLength, 500, "500", "input is too large to process. increase the physical batch size", "", false},
		{"embed_error_vllm_400_context", provider.KindContextLength, 400, "400", "This model's maximum context length is 512 tokens. However, you requested 600 tokens in the input for embedding generation. Please reduce the length of the input.", "", false},
		// Too many inputs for TEI's batch: a bad request, not a long input.
		{"embed_error_tei_413_batch", provider.KindInvalidRequest, 413, "413", "batch size 64 > maximum allowed batch size 32", "", false},
		// FastAPI's validation failure: each location and message.
		{"embed_error_422_detail", provider.KindInvalidRequest, 422, "", "body.input: Field required; body.dimensions: Input should be a valid integer", "req_embed_422", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			k := kOpenAI
			if tc.azure {
				k = kAzure
			}
			p := newTestProvider(t, k, srv.URL)
			_, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "nonexistent", Inputs: []string{"Hello, world!"}})
			pe := providerError(t, err)
			if pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.Code != tc.code || pe.Message != tc.message || pe.RequestID != tc.reqID {
				t.Errorf("got kind %v status %d code %q message %q request id %q", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message, pe.RequestID)
			}
		})
	}
}

// TestRound14EmbedRequestVoyage: no encoding_format (Voyage answers 400 to
// "float": labring/FastGPT#6744, cocoindex-io/cocoindex-code#148), and
// dimensions as Voyage and Mistral name them, output_dimension, on their
// hosts only; elsewhere "dimensions", and extra_body may still ask for
// base64.
func TestRound14EmbedRequestVoyage(t *testing.T) {
	t.Parallel()
	req := &provider.EmbedRequest{Model: "voyage-4", Inputs: []string{"a"}, Dimensions: proto.Int32(512)}
	cases := []struct {
		base string
		want string
	}{
		{"https://api.voyageai.com/v1", `{"model":"voyage-4","input":["a"],"output_dimension":512,"truncation":false}`},
		{"https://api.openai.com/v1", `{"model":"voyage-4","input":["a"],"dimensions":512,"encoding_format":"base64"}`},
		{"https://voyageai.example.com/v1", `{"model":"voyage-4","input":["a"],"dimensions":512}`},
		{"https://api.mistral.ai/v1", `{"model":"voyage-4","input":["a"],"output_dimension":512}`},
	}
	for _, tc := range cases {
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		body, _, err := p.buildEmbedRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != tc.want {
			t.Errorf("%s: %s, want %s", tc.base, body, tc.want)
		}
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := p.buildEmbedRequest(&provider.EmbedRequest{Model: "m", Inputs: []string{"a"},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"encoding_format":"base64"}`}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","input":["a"],"encoding_format":"base64"}`; string(body) != want {
		t.Errorf("extra_body: %s, want %s", body, want)
	}
}

// TestRound14InputTooLongWording: the wordings the input-too-long rule
// knows, and neighbours it must leave alone.
func TestRound14InputTooLongWording(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		"input is too large to process. increase the physical batch size":                                  true,
		"input (992 tokens) is too large to process. increase the physical batch size (current batch size": true, // lemonade-sdk/lemonade#3591
		"Input validation error: `inputs` must have less than 8192 tokens. Given: 9718":                    true, // huggingface/text-embeddings-inference#406
		"batch size 64 > maximum allowed batch size 32":                                                    false,
		"Input validation error: `inputs` must have less than 32000 characters. Given: 67337":              true, // huggingface/text-embeddings-inference#394
	} {
		if got := inputTooLongRE.MatchString(msg); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
}
