// Package gemini is the Google Gemini API adapter (Generative Language API,
// generativelanguage.googleapis.com): generateContent,
// streamGenerateContent?alt=sse, embedContent and batchEmbedContents, with
// the key in the x-goog-api-key header (never in the URL).
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

const (
	providerName = "gemini"
	// DefaultBaseURL is the public Gemini API endpoint.
	DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"
	// requestIDHeader is empty: the Gemini API sends no request-id header
	// (its responses carry only date, server, server-timing, vary and the
	// usual security headers), so provider_request_id stays empty.
	requestIDHeader = ""
	// maxResponseBody caps a unary response body (generous: embeddings of
	// large batches).
	maxResponseBody = 64 << 20
)

// Provider talks to the Gemini API.
type Provider struct {
	apiKey  string
	baseURL string
	client  *http.Client
	headers http.Header
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Embedder = (*Provider)(nil)
)

// Option configures a Provider.
type Option func(*Provider)

// WithBaseURL replaces DefaultBaseURL (e.g. a proxy, or a test server).
func WithBaseURL(u string) Option { return func(p *Provider) { p.baseURL = u } }

// WithHTTPClient sets the HTTP client (default http.DefaultClient). It is
// shared by all calls.
func WithHTTPClient(c *http.Client) Option { return func(p *Provider) { p.client = c } }

// WithHeaders adds headers to every request.
func WithHeaders(h http.Header) Option {
	return func(p *Provider) {
		for k, vs := range h {
			for _, v := range vs {
				p.headers.Add(k, v)
			}
		}
	}
}

// New returns a Gemini provider using apiKey.
func New(apiKey string, opts ...Option) (*Provider, error) {
	p := &Provider{apiKey: apiKey, baseURL: DefaultBaseURL, client: http.DefaultClient, headers: http.Header{}}
	for _, o := range opts {
		o(p)
	}
	if p.client == nil {
		return nil, errors.New("gemini: nil http client")
	}
	clean, err := provider.BaseURL(p.baseURL)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	p.baseURL = clean
	return p, nil
}

// modelPath is "models/<model>" for the URL; a "models/" prefix in the
// configured id is accepted.
func modelPath(model string) string {
	return "models/" + url.PathEscape(strings.TrimPrefix(model, "models/"))
}

// post sends body to {base}/models/{model}:{method}[?query] and returns the
// response if its status is 2xx; otherwise the error body is parsed into a
// *provider.Error.
func (p *Provider) post(ctx context.Context, model, method, query string, body []byte) (*http.Response, error) {
	if strings.TrimPrefix(model, "models/") == "" {
		return nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Message: "no model given"}
	}
	u := p.baseURL + "/" + modelPath(model) + ":" + method
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Message: "building request: " + p.redact(err.Error())}
	}
	for k, vs := range p.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	provider.ReserveTraceContext(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", p.apiKey)
	resp, err := provider.Do(p.client, req) // client.Do's answers and errors, without its cost per call
	if err != nil {
		e := provider.TransportError(providerName, err)
		e.Message = p.redact(e.Message)
		return nil, e
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, p.httpError(resp)
	}
	return resp, nil
}

// readBody reads a success body with a size cap, and the warning of a
// complete body whose framing broke (provider.ReadBody).
func (p *Provider) readBody(resp *http.Response) ([]byte, string, error) {
	defer resp.Body.Close()
	body, warning, err := provider.ReadBody(providerName, resp, maxResponseBody)
	if err != nil {
		err.Message = p.redact(err.Message)
		return nil, "", err
	}
	return body, warning, nil
}

// Generate calls models/{model}:generateContent.
func (p *Provider) Generate(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	body, warnings, err := p.encodeRequestWarn(req)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, req.Model, "generateContent", "", body)
	if err != nil {
		return nil, err
	}
	raw, cut, err := p.readBody(resp)
	if err != nil {
		return nil, err
	}
	return p.answer(raw, cut, resp, warnings)
}

// answer converts a generateContent body (cut: ReadBody's warning when
// the body's end was lost after a complete answer).
func (p *Provider) answer(raw []byte, cut string, resp *http.Response, warnings []string) (*provider.Result, error) {
	var wire generateContentResponse
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, provider.BadResponse(providerName, "decoding generateContent response: %v", err)
	}
	if wire.Error != nil {
		// An error object in the 200 body, read as an error answer is
		// (its rate-limit state counted from the answer's Date, the
		// tier the header names).
		pe := p.streamError(wire.Error, provider.ResponseDate(resp.Header))
		if strings.TrimSpace(resp.Header.Get(serviceTierHeader)) != "" {
			if pe.Meta == nil {
				pe.Meta = &llmrelayv1.ResponseMeta{}
			}
			headerServiceTier(pe.Meta, resp.Header)
		}
		return nil, pe
	}
	res, err := p.toResult(&wire)
	if err != nil {
		var pe *provider.Error
		if errors.As(err, &pe) && pe.Meta != nil {
			headerServiceTier(pe.Meta, resp.Header) // a blocked prompt's answer
		}
		return nil, err
	}
	headerServiceTier(res.Meta, resp.Header)
	if len(warnings) > 0 {
		res.Meta.Warnings = append(warnings, res.Meta.Warnings...)
	}
	if cut != "" {
		res.Meta.Warnings = append(res.Meta.Warnings, cut)
	}
	return res, nil
}

// maxBatchEmbed is the most inputs batchEmbedContents takes in one
// request: more is a 400 INVALID_ARGUMENT ("at most 100 requests can be in
// one batch", testdata/real_issue_16101_batch_embed_150_error.http), where
// the gateway accepts up to 2048 inputs a call.
const maxBatchEmbed = 100

// Embed calls models/{model}:embedContent for one input and
// :batchEmbedContents for several. More than maxBatchEmbed inputs go in
// batches of nearly equal size (so none has a single input, which would
// read as embedContent's answer), requested one after the other; the answer
// is their embeddings in input order, their usage summed, each batch's
// warnings once. A failed request fails the call, as do batches whose
// vectors differ in length (one model answers all of them alike).
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Result, error) {
	if len(req.Inputs) == 0 {
		return nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Message: "no inputs to embed"}
	}
	if len(req.Inputs) <= maxBatchEmbed {
		return p.embed(ctx, req, req.Inputs, len(req.Inputs) > 1)
	}
	res := &provider.Result{Embeddings: make([]*llmrelayv1.Embedding, 0, len(req.Inputs))}
	var (
		usage    *llmrelayv1.Usage
		details  provider.UsageDetails
		tier     string
		warnings []string
	)
	batches := (len(req.Inputs) + maxBatchEmbed - 1) / maxBatchEmbed
	size := (len(req.Inputs) + batches - 1) / batches
	for start := 0; start < len(req.Inputs); start += size {
		end := min(start+size, len(req.Inputs))
		part, err := p.embed(ctx, req, req.Inputs[start:end], true)
		if err != nil {
			return nil, err
		}
		if n, first := len(part.Embeddings[0].Values), len(res.Embeddings); first > 0 && n != len(res.Embeddings[0].Values) {
			return nil, provider.BadResponse(providerName, "inputs %d to %d: embeddings of %d values where the first batch's have %d", start, end-1, n, len(res.Embeddings[0].Values))
		}
		for _, e := range part.Embeddings {
			e.Index += int32(start)
			res.Embeddings = append(res.Embeddings, e)
		}
		if u := part.Meta.GetUsage(); u != nil {
			if usage == nil {
				usage = &llmrelayv1.Usage{}
			}
			usage.InputTokens += u.InputTokens
			usage.TotalTokens += u.TotalTokens
		}
		if d, ok := part.Meta.GetExtended().AsMap()[provider.ExtUsageDetails].(map[string]any); ok {
			details = addDetails(details, d)
		}
		if t := part.Meta.GetServiceTier(); t != "" {
			tier = t
		}
		for _, w := range part.Meta.GetWarnings() {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	res.Meta = &llmrelayv1.ResponseMeta{EmbeddingsCount: int32(len(res.Embeddings)), Usage: usage, Warnings: warnings}
	details.Set(res.Meta)
	if tier != "" {
		provider.SetExtended(res.Meta, extServiceTier, tier)
	}
	return res, nil
}

// addDetails adds the usage details of one batch to the sum of the
// batches before it: counts are added, anything else is the last batch's.
func addDetails(sum provider.UsageDetails, d map[string]any) provider.UsageDetails {
	if sum == nil {
		sum = provider.UsageDetails{}
	}
	for k, v := range d {
		n, isCount := v.(float64)
		if prev, ok := sum[k].(float64); ok && isCount {
			sum[k] = prev + n
		} else {
			sum[k] = v
		}
	}
	return sum
}

// embed makes one embedContent (batch false, one input) or
// batchEmbedContents request; the embeddings are indexed from 0.
func (p *Provider) embed(ctx context.Context, req *provider.EmbedRequest, inputs []string, batch bool) (*provider.Result, error) {
	method := "embedContent"
	if batch {
		method = "batchEmbedContents"
	}
	body, warnings, err := embedBody(req, inputs, batch)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, req.Model, method, "", body)
	if err != nil {
		return nil, embedBatchTooLarge(err, len(inputs), len(body))
	}
	raw, cut, err := p.readBody(resp)
	if err != nil {
		return nil, err
	}
	if cut != "" {
		warnings = append(warnings, cut)
	}
	if st := embedErrorBody(raw); st != nil {
		// An error object in the 200 body is the error it names, as
		// generateContent's is (it was "0 embeddings for n inputs").
		pe := p.streamError(st, provider.ResponseDate(resp.Header))
		if strings.TrimSpace(resp.Header.Get(serviceTierHeader)) != "" {
			if pe.Meta == nil {
				pe.Meta = &llmrelayv1.ResponseMeta{}
			}
			headerServiceTier(pe.Meta, resp.Header)
		}
		return nil, pe
	}
	embs, usage, err := parseEmbeddings(raw, len(inputs))
	if err != nil {
		return nil, err
	}
	meta := &llmrelayv1.ResponseMeta{EmbeddingsCount: int32(len(embs)), Usage: embedUsage(usage), Warnings: warnings}
	meta.Warnings = append(meta.Warnings, oddUsageWarnings(usage)...)
	if !batch && embedTruncated(raw) {
		meta.Warnings = append(meta.Warnings, embedTruncatedWarning)
	}
	setUsageDetails(meta, usageDetails(usage))
	headerServiceTier(meta, resp.Header)
	if d := req.Dimensions; d != nil && len(embs[0].Values) != int(*d) {
		// A model that cannot shorten its vectors (embedding-001) may
		// answer with its own length: passed on whole, as the other
		// adapters do (cutting them would not make a shorter embedding).
		meta.Warnings = append(meta.Warnings, fmt.Sprintf("asked for %d dimensions, got %d", *d, len(embs[0].Values)))
	}
	return &provider.Result{Embeddings: embs, Meta: meta}, nil
}

// embedBody encodes an embedContent request (one input) or a
// batchEmbedContents request. extra_body goes into each
// EmbedContentRequest, as it goes into embedContent's body: taskType,
// title and outputDimensionality are fields of EmbedContentRequest, and a
// batch's body has nothing but "requests", where extra_body's fields were
// an unknown name to the API (a 400) and a "requests" of its own replaced
// the inputs. One extra_body ({"taskType": "RETRIEVAL_QUERY"}) now works
// for any number of inputs; each request's warnings are the same, given
// once.
func embedBody(req *provider.EmbedRequest, inputs []string, batch bool) ([]byte, []string, error) {
	model := strings.TrimPrefix(req.Model, "models/")
	one := func(text string) ([]byte, []string, error) {
		r := embedContentRequest{Content: content{Parts: []part{{Text: &text}}}, OutputDimensionality: req.Dimensions}
		if batch {
			r.Model = "models/" + model
		}
		return encodeBody(r, req.ProviderOptions)
	}
	if !batch {
		return one(inputs[0])
	}
	var (
		b        bytes.Buffer
		warnings []string
	)
	b.WriteString(`{"requests":[`)
	for i, in := range inputs {
		body, w, err := one(in)
		if err != nil {
			return nil, nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(body)
		for _, x := range w {
			if !slices.Contains(warnings, x) {
				warnings = append(warnings, x)
			}
		}
	}
	b.WriteString("]}")
	return b.Bytes(), warnings, nil
}

// Stream calls models/{model}:streamGenerateContent?alt=sse.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	body, warnings, err := p.encodeRequestWarn(req)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, req.Model, "streamGenerateContent", "alt=sse", body)
	if err != nil {
		return nil, err
	}
	if whole, err := p.jsonInsteadOfStream(resp, warnings); whole != nil || err != nil {
		return whole, err
	}
	return p.newStream(resp, warnings...), nil
}

// arrayPrefix is the whole elements of a JSON array that the input ends
// inside of (io.ErrUnexpectedEOF: cut, not malformed); nil for any other
// body, which the stream reader then reads as it is.
func arrayPrefix(body []byte) []json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil
	}
	chunks := []json.RawMessage{}
	for {
		var c json.RawMessage
		err := dec.Decode(&c)
		if err == nil {
			chunks = append(chunks, c)
			continue
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return chunks
		}
		return nil
	}
}

// jsonInsteadOfStream reads a body labelled application/json that
// answers the stream request (alt=sse) instead of an event stream: a
// whole GenerateContentResponse (a proxy or compatible server that
// ignored the stream) is the unary answer, relayed as a stream of its
// parts with provider.WholeAnswerWarning (read as the one chunk of a
// stream, an answer without a finishReason, which a unary answer may be,
// failed as a cut stream); a JSON array (streamGenerateContent without
// alt=sse) is its chunks, read as the events they are (the SSE reader
// found no event in it: a cut stream, the content and any error in it
// lost). Anything else is left to the stream reader. Both nil then.
func (p *Provider) jsonInsteadOfStream(resp *http.Response, warnings []string) (provider.Stream, error) {
	first := provider.PeekJSONBody(resp)
	if first != '{' && first != '[' {
		return nil, nil // events, mislabelled: streamed as they come
	}
	raw, cut, err := p.readBody(resp)
	if err != nil {
		return nil, err
	}
	body := bytes.TrimSpace(raw)
	switch {
	case first == '{' && json.Valid(body):
		res, err := p.answer(raw, cut, resp, warnings)
		if err != nil {
			return nil, err
		}
		res.Meta.Warnings = append(res.Meta.Warnings, provider.WholeAnswerWarning)
		return provider.ResultStream(providerName, res), nil
	case first == '[':
		var chunks []json.RawMessage
		if json.Unmarshal(body, &chunks) != nil {
			// Cut inside the array (the connection closed cleanly mid
			// answer): the chunks before the cut are whole, read as
			// events, and the stream reader finds the end before a
			// finish reason, a cut stream. They were lost to "decoding
			// stream chunk: invalid character ','", a bad answer.
			chunks = arrayPrefix(body)
		}
		if chunks != nil {
			var events bytes.Buffer
			for _, c := range chunks {
				events.WriteString("data: ")
				if err := json.Compact(&events, c); err != nil {
					return nil, provider.BadResponse(providerName, "decoding a JSON array of chunks: %v", err)
				}
				events.WriteString("\n\n")
			}
			raw = events.Bytes()
		}
	}
	// Bare JSON objects one after another, or a body cut inside its
	// value: the stream reader says what they are.
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return nil, nil
}
