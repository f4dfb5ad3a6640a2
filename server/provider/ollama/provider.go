// Package ollama is the adapter for Ollama's native API (/api/chat and
// /api/embed): unary and NDJSON-streamed chat with tools, thinking and
// images, and embeddings.
package ollama

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

	"github.com/llmrelay/llmrelay/server/provider"
)

// providerName is the provider type in errors.
const providerName = "ollama"

// DefaultBaseURL is a local Ollama server.
const DefaultBaseURL = "http://127.0.0.1:11434"

// requestIDHeader is read when a proxy in front of Ollama sets one; Ollama
// itself sends no request id.
const requestIDHeader = "X-Request-Id"

const (
	// maxErrorBody caps how much of an error body is read.
	maxErrorBody = 1 << 20
	// maxBody caps a unary success body (embeddings of many inputs are
	// large).
	maxBody = 128 << 20
)

// Provider calls one Ollama server.
type Provider struct {
	apiKey  string
	baseURL string // no trailing slash
	// display is the base URL without user info, for error messages.
	display string
	client  *http.Client
	headers http.Header
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Embedder = (*Provider)(nil)
)

// Option configures a Provider.
type Option func(*config)

type config struct {
	baseURL string
	client  *http.Client
	headers http.Header
}

// WithBaseURL sets the server URL (default http://127.0.0.1:11434). A path
// prefix is kept (e.g. a proxy at https://host/ollama).
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithHTTPClient sets the HTTP client (default http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.client = hc } }

// WithHeaders adds headers to every request.
func WithHeaders(h http.Header) Option { return func(c *config) { c.headers = h.Clone() } }

// New returns an Ollama provider. apiKey may be empty (a local Ollama needs
// none); when set it is sent as "Authorization: Bearer <key>".
func New(apiKey string, opts ...Option) (*Provider, error) {
	c := config{baseURL: DefaultBaseURL}
	for _, o := range opts {
		o(&c)
	}
	clean, err := provider.BaseURL(c.baseURL)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	u, err := url.Parse(clean)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	display := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	hc := c.client
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Provider{apiKey: apiKey, baseURL: u.String(), display: display, client: hc, headers: c.headers}, nil
}

// Generate calls POST /api/chat with "stream": false.
func (p *Provider) Generate(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	built, err := buildChatRequest(req, false)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, "/api/chat", built.body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, cut, err := readBody(resp, maxBody)
	if err != nil {
		return nil, answerFailed(err, resp)
	}
	return answer(body, cut, resp, built)
}

// answer converts a /api/chat body (cut: ReadBody's warning when the
// body's end was lost after a complete answer).
func answer(body []byte, cut string, resp *http.Response, built *builtRequest) (*provider.Result, error) {
	res, err := parseChatResponse(body, built.salt, built.window)
	if err != nil {
		return nil, answerFailed(err, resp)
	}
	res.Meta.ProviderRequestId = provider.HeaderValue(resp.Header, requestIDHeader)
	res.Meta.Warnings = append(slices.Clip(built.warnings), res.Meta.Warnings...)
	if cut != "" {
		res.Meta.Warnings = append(res.Meta.Warnings, cut)
	}
	return res, nil
}

// Stream calls POST /api/chat with "stream": true and returns once Ollama
// answered with a success status.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	built, err := buildChatRequest(req, true)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, "/api/chat", built.body, "application/x-ndjson")
	if err != nil {
		return nil, err
	}
	if whole, err := jsonInsteadOfStream(resp, built); whole != nil || err != nil {
		return whole, err
	}
	return newStream(resp, built.salt, built.window, built.warnings), nil
}

// jsonInsteadOfStream reads a body labelled application/json that
// answers the stream request (Ollama streams application/x-ndjson): one
// JSON object there (a proxy or compatible server that ignored "stream")
// is the unary answer, relayed as a stream of its parts with
// provider.WholeAnswerWarning (read as a stream, an object over several
// lines was not valid JSON line by line). Anything else (NDJSON
// mislabelled, read whole) is left to the stream reader; both nil then.
func jsonInsteadOfStream(resp *http.Response, built *builtRequest) (provider.Stream, error) {
	if provider.PeekJSONBody(resp) != '{' {
		return nil, nil
	}
	defer resp.Body.Close()
	body, cut, err := readBody(resp, maxBody)
	if err != nil {
		return nil, answerFailed(err, resp)
	}
	if !json.Valid(body) {
		resp.Body = io.NopCloser(bytes.NewReader(body)) // several lines of NDJSON: the stream reader reads them
		return nil, nil
	}
	res, err := answer(body, cut, resp, built)
	if err != nil {
		return nil, err
	}
	res.Meta.Warnings = append(res.Meta.Warnings, provider.WholeAnswerWarning)
	return provider.ResultStream(providerName, res), nil
}

// Embed calls POST /api/embed.
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Result, error) {
	body, warnings, err := buildEmbedRequest(req)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, "/api/embed", body, "application/json")
	if err != nil {
		return nil, nanInBatch(noEmbedRoute(err), len(req.Inputs))
	}
	defer resp.Body.Close()
	raw, cut, err := readBody(resp, maxBody)
	if err != nil {
		return nil, answerFailed(err, resp)
	}
	res, err := parseEmbedResponse(raw, len(req.Inputs))
	if err != nil {
		return nil, answerFailed(err, resp)
	}
	res.Meta.ProviderRequestId = provider.HeaderValue(resp.Header, requestIDHeader)
	res.Meta.Warnings = append(warnings, res.Meta.Warnings...)
	if cut != "" {
		res.Meta.Warnings = append(res.Meta.Warnings, cut)
	}
	if d := req.Dimensions; d != nil && len(res.Embeddings[0].Values) != int(*d) {
		// An Ollama that does not know "dimensions", or a model that
		// cannot shorten, answers with the model's own length.
		res.Meta.Warnings = append(res.Meta.Warnings, fmt.Sprintf("asked for %d dimensions, got %d", *d, len(res.Embeddings[0].Values)))
	}
	return res, nil
}

// noEmbedRoute says why /api/embed answered the router's plain "404 page
// not found": the server predates the endpoint (Ollama added it in 2024,
// superseding /api/embeddings, which the adapter does not speak). An
// unknown model is a 404 too, with Ollama's JSON error ("model \"x\" not
// found, try pulling it first"), and keeps its message.
func noEmbedRoute(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.HTTPStatus == http.StatusNotFound && strings.TrimSpace(pe.Message) == "404 page not found" {
		pe.Message += " (POST /api/embed: the server has no such route; an Ollama older than the endpoint (2024) has only /api/embeddings, which the gateway does not call: upgrade Ollama)"
	}
	return err
}

// nanInBatch says, of a NaN refusal (modelNaN) to a batch, that one input
// fails the whole batch: Ollama names none.
func nanInBatch(err error, inputs int) error {
	var pe *provider.Error
	if inputs > 1 && errors.As(err, &pe) && modelNaN(pe.Message) {
		pe.Message += fmt.Sprintf(" (one of the %d inputs fails the whole batch; Ollama does not say which: embed them apart to find it)", inputs)
	}
	return err
}

// answerFailed adds the request id a proxy in front of Ollama gave a 2xx
// answer to the error about that answer.
// A header's id is preferred to the reference an in-band error's message
// names (cloudRef), as for an error answer.
func answerFailed(err error, resp *http.Response) error {
	id := provider.HeaderValue(resp.Header, requestIDHeader)
	var pe *provider.Error
	if id != "" && errors.As(err, &pe) && pe.RequestID != "" && pe.RequestID == provider.OllamaCloudRef(pe.Message) {
		pe.RequestID = id
	}
	return provider.AnswerFailed(err, id, nil)
}

// post sends a JSON body and returns the response when its status is 2xx;
// any other status is parsed into a *provider.Error.
func (p *Provider) post(ctx context.Context, path string, body []byte, accept string) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Message: "build request: " + err.Error()}
	}
	for k, vs := range p.headers {
		hreq.Header[k] = append([]string(nil), vs...)
	}
	provider.ReserveTraceContext(hreq.Header)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", accept)
	if p.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	resp, err := provider.Do(p.client, hreq) // client.Do's answers and errors, without its cost per call
	if err != nil {
		return nil, p.transportError(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, parseHTTPError(resp)
	}
	return resp, nil
}

// transportError classifies a failed request; a connection failure says
// where Ollama was expected, since "not running" is the usual cause.
func (p *Provider) transportError(err error) *provider.Error {
	e := provider.TransportError(providerName, err)
	if e.Kind == provider.KindConnection {
		e.Message = "Ollama is not reachable at " + p.display + " (is it running?): " + e.Message
	}
	if p.apiKey != "" {
		e.Message = strings.ReplaceAll(e.Message, p.apiKey, "[redacted]")
	}
	return e
}

// readBody reads a success body up to limit bytes, and the warning of a
// complete body whose framing broke (provider.ReadBody).
func readBody(resp *http.Response, limit int64) ([]byte, string, error) {
	b, warning, err := provider.ReadBody(providerName, resp, limit)
	if err != nil {
		return nil, "", err
	}
	return b, warning, nil
}

// marshal encodes v without HTML escaping (tool schemas and prompts may
// hold <, > and &, which Ollama would receive as \u003c otherwise).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
