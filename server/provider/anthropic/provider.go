// Package anthropic is the provider adapter for the Anthropic Messages API
// (POST /v1/messages), unary and streamed. It speaks the wire format with
// net/http and encoding/json only.
//
// Thinking: `thinking` blocks become Reasoning parts {text, signature} and
// `redacted_thinking` blocks Reasoning parts {redacted, signature: data},
// in model order (streamed as EventReasoning from content_block_start,
// thinking_delta and signature_delta). Sent back, they become the same
// blocks in the same position; parts Anthropic would reject (no signature,
// or an id from another provider) are left out with a warning.
//
// Keys this adapter sets in ResponseMeta.extended:
//   - stop_sequence: the stop sequence that ended the answer.
//   - service_tier: usage.service_tier.
//   - ratelimit_unified_*: the unified limit headers of a Claude
//     subscription's answer that are no window's
//     (anthropic-ratelimit-unified-representative-claim,
//     -fallback-percentage, -overage-disabled-reason, ...), one key each:
//     percentages as numbers, the rest as sent.
//
// Every rate-limit budget (requests, tokens, input and output tokens, the
// unified windows with their status, reset and utilization) is a
// RateLimit.windows entry.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

const (
	providerName = "anthropic"
	// DefaultBaseURL is Anthropic's public API.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultVersion is the anthropic-version header sent.
	DefaultVersion = "2023-06-01"
	// DefaultMaxTokens is max_tokens when the request sets none (the API
	// requires it).
	DefaultMaxTokens = 4096

	requestIDHeader = "Request-Id"
	// maxBodySize caps a unary response body; maxErrorBodySize an error
	// body.
	maxBodySize      = 32 << 20
	maxErrorBodySize = 64 << 10
)

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Embedder = (*Provider)(nil)
)

// Provider calls the Anthropic Messages API.
type Provider struct {
	apiKey           string
	baseURL          string
	version          string
	defaultMaxTokens int32
	client           *http.Client
	headers          http.Header
}

// Option configures a Provider.
type Option func(*Provider) error

// WithBaseURL sets the API base URL (default https://api.anthropic.com);
// requests go to {base}/v1/messages.
func WithBaseURL(base string) Option {
	return func(p *Provider) error {
		clean, err := provider.BaseURL(base)
		if err != nil {
			return fmt.Errorf("anthropic: %w", err)
		}
		p.baseURL = clean
		return nil
	}
}

// WithHTTPClient sets the HTTP client (default http.DefaultClient). It is
// shared by all requests.
func WithHTTPClient(c *http.Client) Option {
	return func(p *Provider) error {
		if c == nil {
			return errors.New("anthropic: nil http client")
		}
		p.client = c
		return nil
	}
}

// WithHeaders adds headers to every request. They cannot replace the
// authentication, version or content-type headers; anthropic-beta values
// are combined with the request's betas.
func WithHeaders(h http.Header) Option {
	return func(p *Provider) error {
		for k, vs := range h {
			p.headers[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
		return nil
	}
}

// WithVersion sets the anthropic-version header (default 2023-06-01).
func WithVersion(v string) Option {
	return func(p *Provider) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("anthropic: empty version")
		}
		p.version = v
		return nil
	}
}

// WithDefaultMaxTokens sets max_tokens for requests that set none (default
// 4096).
func WithDefaultMaxTokens(n int32) Option {
	return func(p *Provider) error {
		if n <= 0 {
			return fmt.Errorf("anthropic: default max tokens must be positive, got %d", n)
		}
		p.defaultMaxTokens = n
		return nil
	}
}

// New returns a Provider using apiKey for the x-api-key header.
func New(apiKey string, opts ...Option) (*Provider, error) {
	if apiKey == "" {
		return nil, errors.New("anthropic: empty API key")
	}
	p := &Provider{
		apiKey:           apiKey,
		baseURL:          DefaultBaseURL,
		version:          DefaultVersion,
		defaultMaxTokens: DefaultMaxTokens,
		client:           http.DefaultClient,
		headers:          http.Header{},
	}
	for _, o := range opts {
		if err := o(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Generate calls POST /v1/messages.
func (p *Provider) Generate(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	body, betas, warnings, err := p.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	resp, err := p.do(ctx, body, betas, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, cut, rerr := provider.ReadBody(providerName, resp, maxBodySize)
	if rerr != nil {
		return nil, provider.AnswerFailed(rerr, headerRequestID(resp.Header), headerMeta(resp.Header))
	}
	return answer(raw, cut, resp.Header, warnings, answerToolFor(req))
}

// answer converts the body of a Message (cut: ReadBody's warning when the
// body's end was lost after a complete answer); tool is the forced tool
// whose call is the structured answer's text.
func answer(raw []byte, cut string, h http.Header, warnings []string, tool string) (*provider.Result, error) {
	res, err := parseResponse(raw, h)
	if err != nil {
		return nil, provider.AnswerFailed(err, headerRequestID(h), headerMeta(h))
	}
	res.Meta.Warnings = append(warnings, res.Meta.Warnings...)
	if cut != "" {
		res.Meta.Warnings = append(res.Meta.Warnings, cut)
	}
	answerFromTool(res, tool)
	return res, nil
}

// Stream calls POST /v1/messages with "stream": true.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	body, betas, warnings, err := p.buildRequest(req, true)
	if err != nil {
		return nil, err
	}
	resp, err := p.do(ctx, body, betas, true)
	if err != nil {
		return nil, err
	}
	whole, err := messageInsteadOfStream(resp)
	if err != nil {
		return nil, err
	}
	if whole != nil {
		res, err := answer(whole, "", resp.Header, warnings, answerToolFor(req))
		if err != nil {
			return nil, err
		}
		res.Meta.Warnings = append(res.Meta.Warnings, provider.WholeAnswerWarning)
		return provider.ResultStream(providerName, res), nil
	}
	if tool := answerToolFor(req); tool != "" {
		return &answerStream{Stream: newStream(resp, warnings), tool: tool, otherCalls: map[string]bool{}}, nil
	}
	return newStream(resp, warnings), nil
}

// messageInsteadOfStream reads the body of a stream request's answer
// labelled application/json: a whole Message there (a proxy or
// compatible server that ignored "stream") is returned, to be relayed as
// a stream of its parts (read as an event stream it had no events, "ended
// before message_stop", and was retried as a cut stream: the same answer
// paid for on every attempt; round 24 relays it instead of failing it as
// a bad response). Any other body (an error object, which the stream
// reads as the error it is; events mislabelled) is put back for the
// stream to read. nil when the answer is not such a Message.
func messageInsteadOfStream(resp *http.Response) ([]byte, error) {
	if provider.PeekJSONBody(resp) != '{' {
		return nil, nil // events, mislabelled: streamed as they come
	}
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBodySize))
	var probe struct {
		Type string `json:"type"`
	}
	if rerr == nil && json.Unmarshal(raw, &probe) == nil && probe.Type == "message" {
		_ = resp.Body.Close() // read whole; its close error adds nothing
		return raw, nil
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(raw), readErr{rerr}), resp.Body}
	return nil, nil
}

// readErr is a reader that fails with err (io.EOF for nil): what reading
// on after a failed read gives.
type readErr struct{ err error }

func (r readErr) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}

// Embed always fails: Anthropic has no embeddings API.
func (p *Provider) Embed(context.Context, *provider.EmbedRequest) (*provider.Result, error) {
	return nil, &provider.Error{
		Provider: providerName,
		Kind:     provider.KindUnsupported,
		Message:  "anthropic has no embeddings API; use a model with an embeddings capability from another provider",
	}
}

// do sends the request and returns the response of a 2xx status; any other
// status is read and returned as an *provider.Error.
func (p *Provider) do(ctx context.Context, body []byte, betas []string, stream bool) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.baseURL+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Message: "build request: " + err.Error(), Err: err}
	}
	for k, vs := range p.headers {
		hreq.Header[k] = append([]string(nil), vs...)
	}
	if len(betas) > 0 {
		all := append(splitBetas(hreq.Header.Values("Anthropic-Beta")), betas...)
		hreq.Header.Set("Anthropic-Beta", strings.Join(dedupe(all), ","))
	}
	provider.ReserveTraceContext(hreq.Header)
	hreq.Header.Set("X-Api-Key", p.apiKey)
	hreq.Header.Set("Anthropic-Version", p.version)
	hreq.Header.Set("Content-Type", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	resp, err := provider.Do(p.client, hreq) // client.Do's answers and errors, without its cost per call
	if err != nil {
		return nil, provider.TransportError(providerName, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, httpError(resp)
	}
	return resp, nil
}

func splitBetas(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// newMeta is an empty ResponseMeta for a result.
func newMeta() *llmrelayv1.ResponseMeta { return &llmrelayv1.ResponseMeta{} }
