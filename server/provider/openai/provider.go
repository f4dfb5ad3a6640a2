// Package openai is the adapter for the OpenAI Chat Completions and
// Embeddings APIs, for OpenAI itself, any OpenAI-compatible server (vLLM,
// Ollama's /v1, OpenRouter) by base URL, and Azure OpenAI (NewAzure), which
// speaks the same wire format with a different URL scheme, auth header,
// request-id header and content-filter annotations.
package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

const (
	// DefaultBaseURL is OpenAI's public API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultAzureAPIVersion is the api-version sent on Azure's classic
	// deployment routes (the GA version).
	DefaultAzureAPIVersion = "2024-10-21"

	providerOpenAI = "openai"
	providerAzure  = "azure"

	// maxBodyBytes caps a success body (a chat completion or a batch of
	// embeddings); maxErrorBodyBytes caps an error body.
	maxBodyBytes      = 64 << 20
	maxErrorBodyBytes = 64 << 10
)

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Embedder = (*Provider)(nil)
)

// Provider is an OpenAI or Azure OpenAI adapter. It is safe for concurrent
// use.
type Provider struct {
	name    string // "openai" or "azure"
	azure   bool
	apiKey  string
	baseURL string // without trailing slash
	client  *http.Client
	headers http.Header
	org     string
	project string
	// replay: how earlier assistant turns' reasoning goes back
	// (WithReasoningReplay); replaySet when configured, else by host.
	replay    replayMode
	replaySet bool
	// googleCompat: the base URL is Google's (Gemini's OpenAI-compatible
	// endpoint), which takes thought signatures back on tool calls.
	googleCompat bool
	// venice: the base URL is Venice's (api.venice.ai), which writes a
	// Gemini thought signature as a thought_signature key of the tool
	// call and takes it back there.
	venice bool
	// copilot: the base URL is GitHub Copilot's (api.githubcopilot.com and
	// its plans' hosts), which gives a model's reasoning state as
	// reasoning_opaque (and its text as reasoning_text) and takes both
	// back on the assistant message.
	copilot bool
	// mistral: the base URL is Mistral's API (api.mistral.ai), whose
	// validator refuses fields it does not know (request.go, mistralRequest).
	mistral bool
	// xai: the base URL is xAI's API (api.x.ai), which takes a name on
	// user messages only (request.go, xaiRequest).
	xai bool
	// digitalOcean: the base URL is DigitalOcean's serverless inference
	// (inference.do-ai.run), whose Responses API takes reasoning without
	// encrypted content back as its summary text
	// (Provider.summaryReasoningBack).
	digitalOcean bool
	// openAI: the base URL is OpenAI's own API (api.openai.com), whose
	// documented limits the adapter enforces (request_limits.go).
	openAI bool
	// dashscope: the base URL is Alibaba Cloud's DashScope, whose Qwen
	// models take enable_thinking (dashscope.go).
	dashscope bool
	// deepseek: the base URL is api.deepseek.com, whose thinking is
	// switched by thinking.type and whose top effort is max (deepseek.go).
	deepseek bool
	// perplexity: the base URL is api.perplexity.ai, whose top-level
	// reasoning_tokens are counted apart from completion_tokens
	// (topReasoningOutside).
	perplexity bool
	// thinkSwitch: the base URL is Z.ai's or Moonshot's (Kimi's), whose
	// thinking is switched by thinking.type (thinkswitch.go); zai: Z.ai's,
	// whose top effort is max; openRouter: OpenRouter's, whose
	// reasoning_effort names max.
	thinkSwitch bool
	zai         bool
	openRouter  bool
	// moonshot: Moonshot's (Kimi's) API, whose reasoning_effort names
	// low, high and max; ollama: an Ollama server's OpenAI-compatible
	// routes (its port, or ollama.com), whose levels are low, medium,
	// high, none and on newer versions max (effortcap.go).
	moonshot bool
	ollama   bool
	// baseten: the base URL is Baseten's Model APIs (inference.baseten.co),
	// whose opt-in thinking models read chat_template_args.enable_thinking
	// (thinkswitch.go).
	baseten bool
	// together: the base URL is Together's (api.together.xyz,
	// api.together.ai), whose hybrid models read reasoning.enabled
	// (thinkswitch.go).
	together bool
	// templateKwargs: WithThinkingSwitch("chat_template_kwargs"), the
	// thinking switch of self-hosted vLLM, SGLang and llama.cpp servers.
	templateKwargs bool
	// think is the inline reasoning markup of the content: gpt-oss's
	// <reasoning> blocks on AWS Bedrock's hosts (bedrockHost), Gemini's
	// leading <thought> block on Google's (googleCompat), a leading
	// <think> block elsewhere.
	think provider.ThinkDialect
	entra func(context.Context) (string, error)
	// sec and auth are made once (by prepare): the credentials redacted
	// from error texts, and the auth header's value.
	sec       secrets
	auth      []string
	apiVer    string
	apiVerSet bool
	azureV1   bool
}

// Option configures a Provider.
type Option func(*Provider) error

// WithBaseURL sets the API base: for OpenAI and compatible servers the URL
// that /chat/completions is appended to (default https://api.openai.com/v1);
// for Azure the resource endpoint, e.g. https://my-resource.openai.azure.com
// (required).
func WithBaseURL(u string) Option {
	return func(p *Provider) error {
		clean, err := provider.BaseURL(u)
		if err != nil {
			return err
		}
		p.baseURL = clean
		return nil
	}
}

// WithHTTPClient sets the HTTP client (default http.DefaultClient). The
// client is shared by all requests.
func WithHTTPClient(c *http.Client) Option {
	return func(p *Provider) error {
		if c == nil {
			return errors.New("nil http client")
		}
		p.client = c
		return nil
	}
}

// WithHeaders adds headers to every request (after the adapter's own, so
// they can override e.g. User-Agent; they cannot replace the auth header).
func WithHeaders(h http.Header) Option {
	return func(p *Provider) error {
		for k, vs := range h {
			for _, v := range vs {
				p.headers.Add(k, v)
			}
		}
		return nil
	}
}

// WithOrganization sends the OpenAI-Organization header.
func WithOrganization(org string) Option {
	return func(p *Provider) error { p.org = org; return nil }
}

// WithProject sends the OpenAI-Project header.
func WithProject(project string) Option {
	return func(p *Provider) error { p.project = project; return nil }
}

// replayMode is how earlier assistant turns' reasoning goes back.
type replayMode uint8

const (
	replayNone             replayMode = iota // not sent (Chat Completions has no field)
	replayReasoningContent                   // reasoning_content on tool-call turns (DeepSeek, Moonshot)
	replayReasoningDetails                   // reasoning_details, as received (OpenRouter)
	replayThinkTags                          // <think> blocks back in content, where they came from (MiniMax)
	replayThinkingChunks                     // thinking chunks in a content array, as received (Mistral)
	replayReasoningField                     // reasoning on tool-call turns (gpt-oss on Bedrock's OpenAI-compatible endpoint)
)

// WithReasoningReplay says how earlier assistant turns' reasoning goes
// back to the server: "reasoning_content" sends it on the turns that carry
// tool calls, as DeepSeek's thinking mode and Moonshot's thinking models
// require (they answer 400 without it); "reasoning" sends it the same way
// in a field of that name (gpt-oss servers; auto for Bedrock's
// bedrock-mantle.* hosts); "reasoning_details" sends the
// blocks an aggregator gave (OpenRouter: Claude's signed thinking and
// Gemini 3's thought signatures, which their APIs require back on
// tool-call turns) with their format; "none" never sends it (OpenAI
// rejects fields it does not know; DeepSeek's older deepseek-reasoner
// rejected reasoning_content); "auto" (the default) is reasoning_content
// for api.deepseek.com, api.moonshot.ai/.cn, Kimi's coding plan
// (api.kimi.com), api.z.ai, open.bigmodel.cn
// Xiaomi's api.xiaomimimo.com and Venice's api.venice.ai, reasoning_details
// for openrouter.ai and the Vercel AI Gateway (ai-gateway.vercel.sh),
// <think> blocks back in the content for MiniMax (api.minimax.io,
// api.minimaxi.com),
// thinking chunks in a content array for Mistral (*.mistral.ai), none
// elsewhere. On the Responses API, where reasoning goes back as reasoning
// items, "reasoning_content" (and its auto hosts) also sends reasoning
// that has no encrypted content as the item's reasoning_text content, as
// vLLM, llama.cpp and DeepSeek read it (Provider.rawReasoningBack), and
// "reasoning" (and its auto hosts) sends it as the item's summary text, as
// Bedrock's Mantle endpoint takes gpt-oss's (Provider.summaryReasoningBack),
// as "auto" also does, without the item's id, for DigitalOcean's
// inference.do-ai.run on the Responses API only; otherwise such reasoning
// is left out of an unstored request.
func WithReasoningReplay(mode string) Option {
	return func(p *Provider) error {
		switch mode {
		case "", "auto":
			p.replaySet = false
		case "none":
			p.replay, p.replaySet = replayNone, true
		case "reasoning_content":
			p.replay, p.replaySet = replayReasoningContent, true
		case "reasoning_details":
			p.replay, p.replaySet = replayReasoningDetails, true
		case "reasoning":
			p.replay, p.replaySet = replayReasoningField, true
		default:
			return fmt.Errorf("reasoning replay %q is not auto, none, reasoning_content, reasoning or reasoning_details", mode)
		}
		return nil
	}
}

// replayByHost is reasoning_replay auto: the servers known to require
// their reasoning back on tool-call turns.
func replayByHost(baseURL string) replayMode {
	u, err := url.Parse(baseURL)
	if err != nil {
		return replayNone
	}
	switch h := strings.ToLower(u.Hostname()); {
	case h == "api.deepseek.com", h == "api.moonshot.ai", h == "api.moonshot.cn":
		return replayReasoningContent
	case h == "api.kimi.com":
		// Kimi's coding plan (api.kimi.com/coding/v1, kimi-for-coding)
		// thinks and refuses a tool-call turn without its reasoning, as
		// Moonshot's API does: 400 invalid_request_error "thinking is
		// enabled but reasoning_content is missing in assistant tool call
		// message at index 134" (1jehuang/jcode#322; "Kimi for Coding
		// (k2p5)": anomalyco/opencode#10996).
		return replayReasoningContent
	case h == "api.z.ai", h == "open.bigmodel.cn":
		// Z.ai's (Zhipu's) GLM thinks between tool calls and asks for
		// that reasoning back with the tool results ("必须显式保留
		// Reasoning content，并在返回工具结果时一并返回": docs.bigmodel.cn,
		// guide/capabilities/thinking-mode; docs.z.ai says "should").
		return replayReasoningContent
	case h == "xiaomimimo.com", strings.HasSuffix(h, ".xiaomimimo.com"):
		// Xiaomi's MiMo thinks between tool calls and refuses a tool
		// turn without that reasoning (400 "reasoning_content must be
		// passed back", as the mimo2codex proxy's troubleshooting notes
		// quote it); maruel/genai's recorded second turn sends it so and
		// was answered (testdata/real_maruel_xiaomi_mimo_sqrt_2.http).
		return replayReasoningContent
	case strings.HasPrefix(h, "bedrock-mantle."):
		// gpt-oss on Bedrock's OpenAI-compatible endpoint streams its
		// reasoning as delta.reasoning and takes it back in the same
		// field: opencode's recorded tool loop sent the tool-call turn's
		// reasoning so and was answered (testdata/README.md, Round 24
		// chat wave 2). gpt-oss keeps the reasoning of tool-call turns
		// until the final answer; other turns' is not sent.
		return replayReasoningField
	case h == "api.venice.ai":
		// Venice serves Kimi, GLM, DeepSeek, Gemini 3 and others that
		// think between tool calls; opencode's recorded tool loops
		// through it send the reasoning back as reasoning_content, and
		// Venice took them (testdata/real_venice_*).
		return replayReasoningContent
	case h == "openrouter.ai", strings.HasSuffix(h, ".openrouter.ai"):
		return replayReasoningDetails
	case h == "ai-gateway.vercel.sh":
		// The Vercel AI Gateway streams Claude's thinking as
		// OpenRouter-style reasoning_details (signed, format
		// anthropic-claude-v1) and takes them back on the tool-call
		// turn: opencode's recorded tool loop sent them so and was
		// answered (testdata/real_vercelgw_chat_claude_tool_stream_2);
		// Anthropic refuses a tool-use turn whose thinking was dropped.
		return replayReasoningDetails
	case mistralHost(baseURL):
		// Mistral's reasoning models answer with thinking chunks in a
		// content array; the assistant turn takes the same array back
		// (vercel/ai's Mistral provider sends it so since "preserve
		// reasoning in multi-turn conversations", and its live fixture
		// mistral-reasoning-history-live is Mistral's answer to one).
		return replayThinkingChunks
	case h == "api.minimax.io", h == "api.minimaxi.com":
		// MiniMax-M2's answers open their content with a <think> block
		// (split off as reasoning), which "must be preserved completely"
		// in the history (platform.minimax.io, OpenAI API compatibility,
		// "Important Note"): it goes back inline, as it came.
		return replayThinkTags
	}
	return replayNone
}

// googleHost reports whether baseURL is a Google API host (Gemini's
// OpenAI-compatible endpoint, generativelanguage.googleapis.com/v1beta/openai,
// or Vertex AI's).
func googleHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "googleapis.com" || strings.HasSuffix(h, ".googleapis.com")
}

// bedrockHost reports whether baseURL is AWS Bedrock's OpenAI-compatible
// endpoint (bedrock-runtime.<region>.amazonaws.com/openai/v1, its FIPS and
// China hosts, or bedrock-mantle.<region>...), where gpt-oss's reasoning
// comes in the content as <reasoning> blocks.
func bedrockHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	switch {
	case strings.HasPrefix(h, "bedrock-mantle."):
		return true
	case strings.HasPrefix(h, "bedrock-runtime.") || strings.HasPrefix(h, "bedrock-runtime-fips."):
		return strings.HasSuffix(h, ".amazonaws.com") || strings.HasSuffix(h, ".amazonaws.com.cn")
	}
	return false
}

// veniceHost reports whether baseURL is Venice's API (api.venice.ai).
func veniceHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.venice.ai")
}

// copilotHost reports whether baseURL is GitHub Copilot's API
// (api.githubcopilot.com, api.individual.githubcopilot.com,
// api.business.githubcopilot.com, …).
func copilotHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "githubcopilot.com" || strings.HasSuffix(h, ".githubcopilot.com")
}

// perplexityHost reports whether baseURL is Perplexity's API.
func perplexityHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.perplexity.ai")
}

// WithAzureAPIVersion sets the api-version query parameter (Azure only).
// Classic deployment routes default to DefaultAzureAPIVersion; v1 routes
// send none unless this option is given (e.g. "preview").
func WithAzureAPIVersion(v string) Option {
	return func(p *Provider) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("empty azure api version")
		}
		p.apiVer, p.apiVerSet = v, true
		return nil
	}
}

// WithAzureV1Routes selects Azure's v1 routes
// ({endpoint}/openai/v1/chat/completions, model in the body) instead of the
// classic deployment routes
// ({endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...).
func WithAzureV1Routes(enabled bool) Option {
	return func(p *Provider) error { p.azureV1 = enabled; return nil }
}

// WithEntraToken authenticates to Azure with a Microsoft Entra ID bearer
// token obtained per request (the function should cache and refresh it)
// instead of an api-key. NewAzure's apiKey must then be empty.
func WithEntraToken(token func(ctx context.Context) (string, error)) Option {
	return func(p *Provider) error {
		if token == nil {
			return errors.New("nil entra token function")
		}
		p.entra = token
		return nil
	}
}

// New returns an adapter for OpenAI or an OpenAI-compatible server. An
// empty apiKey sends no Authorization header (local servers).
func New(apiKey string, opts ...Option) (*Provider, error) {
	p := &Provider{name: providerOpenAI, apiKey: apiKey, baseURL: DefaultBaseURL, client: http.DefaultClient, headers: http.Header{}}
	if err := p.apply(opts); err != nil {
		return nil, err
	}
	if p.entra != nil || p.apiVerSet || p.azureV1 {
		return nil, errors.New("openai: azure options given to New; use NewAzure")
	}
	if !p.replaySet {
		p.replay = replayByHost(p.baseURL)
	}
	p.googleCompat = googleHost(p.baseURL)
	p.venice = veniceHost(p.baseURL)
	p.copilot = copilotHost(p.baseURL)
	p.mistral = mistralHost(p.baseURL)
	p.xai = xaiHost(p.baseURL)
	p.digitalOcean = digitalOceanHost(p.baseURL)
	p.openAI = openAIHost(p.baseURL)
	p.dashscope = dashscopeHost(p.baseURL)
	p.deepseek = deepseekHost(p.baseURL)
	p.perplexity = perplexityHost(p.baseURL)
	p.thinkSwitch = thinkSwitchHost(p.baseURL)
	p.zai = zaiHost(p.baseURL)
	p.moonshot = moonshotHost(p.baseURL)
	p.ollama = ollamaHost(p.baseURL)
	p.openRouter = openRouterHost(p.baseURL)
	p.baseten = basetenHost(p.baseURL)
	p.together = togetherHost(p.baseURL)
	switch {
	case bedrockHost(p.baseURL):
		p.think = provider.ThinkBlocks
	case p.googleCompat:
		// Thought summaries asked for through extra_body come as a
		// "<thought>" block opening the content.
		p.think = provider.ThinkThought
	}
	p.prepare()
	return p, nil
}

// prepare makes what every request shares. The slices are never changed
// (a request's header map holds them; appending to one copies it: cap 1).
func (p *Provider) prepare() {
	p.sec = secrets{p.apiKey}[:1:1]
	switch {
	case p.azure:
		p.auth = []string{p.apiKey}
	case p.apiKey != "":
		p.auth = []string{"Bearer " + p.apiKey}
	}
}

// Shared header values (see prepare).
var (
	acceptJSON = []string{"application/json"}
	acceptSSE  = []string{"text/event-stream"}
)

// NewAzure returns an adapter for Azure OpenAI. The endpoint is given with
// WithBaseURL; auth is apiKey (api-key header) or WithEntraToken, exactly
// one of them. Request.Model is the deployment name.
func NewAzure(apiKey string, opts ...Option) (*Provider, error) {
	p := &Provider{name: providerAzure, azure: true, apiKey: apiKey, client: http.DefaultClient, headers: http.Header{}, apiVer: DefaultAzureAPIVersion}
	if err := p.apply(opts); err != nil {
		return nil, err
	}
	if p.baseURL == "" {
		return nil, errors.New("azure: the resource endpoint is required (WithBaseURL)")
	}
	if (apiKey == "") == (p.entra == nil) {
		return nil, errors.New("azure: give exactly one of an api key and WithEntraToken")
	}
	if p.org != "" || p.project != "" {
		return nil, errors.New("azure: organization and project headers are OpenAI options")
	}
	p.prepare()
	return p, nil
}

func (p *Provider) apply(opts []Option) error {
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(p); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

// endpoint is the URL of an operation ("chat/completions", "embeddings").
func (p *Provider) endpoint(op, model string) string {
	if !p.azure {
		return p.baseURL + "/" + op
	}
	var u string
	q := url.Values{}
	if p.azureV1 {
		u = p.baseURL + "/openai/v1/" + op
		if p.apiVerSet {
			q.Set("api-version", p.apiVer)
		}
	} else if op == opResponses {
		// The classic Responses route names no deployment: the model
		// (deployment) goes in the body (checkResponsesRoute).
		u = p.baseURL + "/openai/" + op
		q.Set("api-version", p.apiVer)
	} else {
		u = p.baseURL + "/openai/deployments/" + url.PathEscape(model) + "/" + op
		q.Set("api-version", p.apiVer)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// requestIDHeader is the header carrying the provider's request id.
func (p *Provider) requestIDHeader() string {
	if p.azure {
		return "apim-request-id"
	}
	return "x-request-id"
}

// compatRequestIDHeaders are the request-id headers of OpenAI-compatible
// servers that send no x-request-id, in the order they are tried after it:
// Mistral's mistral-correlation-id and Cerebras's inference-id (both as
// recorded in pydantic-ai's cassettes, testdata/README.md), DeepSeek's
// x-ds-trace-id (api.deepseek.com answers with it and no x-request-id),
// Moonshot's msh-request-id (api.moonshot.ai answers with it beside a
// trace id, x-msh-trace-id, and no x-request-id: langchaingo's recording,
// testdata/real_lcg_moonshot_multi_turn_reasoning_1.http), and
// x-kong-request-id, the id api.mistral.ai's gateway gave each request
// before mistral-correlation-id existed (openinference's 2024 recording,
// testdata/real_oi_mistral_tool_call_stream.http, has only that one),
// request-id, which Anthropic's API (its OpenAI-compatible endpoint
// included) sends on every answer and no x-request-id (its API overview),
// x-amzn-requestid, the request id of every AWS API, Bedrock's
// OpenAI-compatible endpoint included, and nvcf-reqid, the id NVIDIA's
// hosted API (Cloud Functions behind integrate.api.nvidia.com) gives each
// invocation (testdata/dialect_nvidia_err_404.http), and apim-request-id,
// Azure's, for an Azure endpoint (AI Foundry's OpenAI-compatible v1 route)
// configured as a plain OpenAI-compatible base URL; before it,
// x-github-request-id, GitHub Models' (models.github.ai): its gateway
// answers errors with that id alone (401, 404: maruel/genai's cassettes,
// testdata/real_maruel_github_bad_model_err.http), and its answers with it
// beside the apim-request-id of the Azure deployment behind it, so one id
// names a GitHub request, answered or refused. x-baseten-request-id is
// Baseten's Model APIs' (inference.baseten.co): its answers carry it (and
// the same value as x-baseten-session-id) and no x-request-id
// (maruel/genai's 2026 cassettes, testdata/real_maruel_baseten_dsv4_*).
var compatRequestIDHeaders = [...]string{"mistral-correlation-id", "inference-id", "x-ds-trace-id", "msh-request-id", "x-kong-request-id",
	"request-id", "x-amzn-requestid", "nvcf-reqid", "x-github-request-id", "apim-request-id", "x-baseten-request-id"}

// requestID reads the provider's request id (Azure: apim-request-id, else
// x-request-id, else a compatible server's own header).
func (p *Provider) requestID(h http.Header) string {
	if p.azure {
		if v := provider.HeaderValue(h, "Apim-Request-Id"); v != "" {
			return v
		}
	}
	if v := provider.HeaderValue(h, "X-Request-Id"); v != "" {
		return v
	}
	for _, name := range compatRequestIDHeaders {
		if v := provider.HeaderValue(h, name); v != "" {
			return v
		}
	}
	return serverTimingRequestID(h.Values("Server-Timing"))
}

// serverTimingRequestID is the description of a Server-Timing metric
// named request_id: Databricks' model serving names every answer, and
// every refusal, only so (`server-timing: request_id;dur=0;desc="<uuid>",
// client_protocol;dur=0;desc="HTTP/1.1"`, the id its error messages quote
// as "[ReqId: <uuid>]": pydantic-ai's cassettes,
// testdata/real_pyd_databricks_*). The header's syntax (W3C Server
// Timing): metrics separated by commas, each a name and ;-separated
// parameters, desc a token or a quoted string. "" when no such metric.
func serverTimingRequestID(values []string) string {
	for _, v := range values {
		for _, metric := range splitUnquoted(v, ',') {
			params := splitUnquoted(metric, ';')
			if len(params) == 0 || !strings.EqualFold(strings.TrimSpace(params[0]), "request_id") {
				continue
			}
			for _, prm := range params[1:] {
				name, val, ok := strings.Cut(strings.TrimSpace(prm), "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(name), "desc") {
					continue
				}
				val = strings.TrimSpace(val)
				if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
					// A quoted-string: a backslash escapes the next byte.
					var b strings.Builder
					for i := 1; i < len(val)-1; i++ {
						if val[i] == '\\' && i+1 < len(val)-1 {
							i++
						}
						b.WriteByte(val[i])
					}
					val = b.String()
				}
				if val != "" {
					return strings.ToValidUTF8(val, "\uFFFD")
				}
			}
		}
	}
	return ""
}

// splitUnquoted splits s at each sep outside a quoted string.
func splitUnquoted(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// secrets are the credentials of one call, redacted from error texts.
type secrets []string

func (s secrets) redact(text string) string {
	for _, v := range s {
		if len(v) >= 4 {
			text = strings.ReplaceAll(text, v, "[REDACTED]")
			// OpenAI's 401 shows the key it refused masked ("Incorrect
			// API key provided: sk-proj-********…abcd."): its visible
			// ends are still the gateway's key.
			text = provider.RedactMaskedSecret(text, v, "[REDACTED]")
		}
	}
	return text
}

// send posts body to the operation's URL. It returns the response when the
// status is 2xx; any other status is an *provider.Error.
func (p *Provider) send(ctx context.Context, op, model string, body []byte, stream bool) (*http.Response, secrets, error) {
	httpReq, sec, err := p.newRequest(ctx, op, model, body, stream)
	if err != nil {
		return nil, sec, err
	}
	resp, err := provider.Do(p.client, httpReq) // client.Do's answers and errors, without its cost per call
	if err != nil {
		return nil, sec, p.transportError(err, sec)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, sec, p.failed(resp, model, sec)
	}
	return resp, sec, nil
}

// newRequest, transportError and failed are apart from send so that its
// frame stays small: the upstream request is written and its answer
// awaited below send, at the deepest point of the call's goroutine, and a
// goroutine whose stack grew past 8 KiB once keeps 16 KiB while its
// stream is open (docs/decisions.md, "An open stream's goroutine stays
// within 8 KiB").
//
//go:noinline
func (p *Provider) newRequest(ctx context.Context, op, model string, body []byte, stream bool) (*http.Request, secrets, error) {
	sec := p.sec
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint(op, model), bytes.NewReader(body))
	if err != nil {
		return nil, sec, &provider.Error{Provider: p.name, Kind: provider.KindInvalidRequest, Message: "build request: " + err.Error(), Err: err}
	}
	h := httpReq.Header
	h["Content-Type"] = acceptJSON
	if stream {
		h["Accept"] = acceptSSE
	} else {
		h["Accept"] = acceptJSON
	}
	if p.org != "" {
		h.Set("OpenAI-Organization", p.org)
	}
	if p.project != "" {
		h.Set("OpenAI-Project", p.project)
	}
	for k, vs := range p.headers {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	provider.ReserveTraceContext(h)
	switch {
	case p.entra != nil:
		tok, err := p.entra(ctx)
		if err != nil {
			// The credential library's text may carry secrets: it stays in
			// Err (for logs that choose to unwrap), not in Message.
			return nil, sec, &provider.Error{Provider: p.name, Kind: provider.KindUnauthenticated, Message: "could not obtain an Entra ID token", Err: err}
		}
		sec = append(sec, tok)
		h.Del("Api-Key")
		h.Set("Authorization", "Bearer "+tok)
	case p.azure:
		h.Del("Authorization")
		h["Api-Key"] = p.auth
	case p.apiKey != "":
		h["Authorization"] = p.auth
	}
	return httpReq, sec, nil
}

//go:noinline
func (p *Provider) transportError(err error, sec secrets) error {
	e := provider.TransportError(p.name, err)
	e.Message = sec.redact(e.Message)
	return e
}

//go:noinline
func (p *Provider) failed(resp *http.Response, model string, sec secrets) error {
	defer resp.Body.Close()
	return p.httpError(resp, model, sec)
}

// readBody reads a success body up to maxBodyBytes, and the warning of a
// complete body whose framing broke (provider.ReadBody).
func (p *Provider) readBody(resp *http.Response) ([]byte, string, error) {
	body, warning, err := provider.ReadBody(p.name, resp, maxBodyBytes)
	if err != nil {
		return nil, "", err
	}
	return body, warning, nil
}

// annotate adds what the response headers know to an error found in a 2xx
// body: the request id, the status (for error objects, not for unparseable
// bodies), and redacts credentials.
func (p *Provider) annotate(err error, resp *http.Response, model string, sec secrets) error {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return err
	}
	pe.RequestID = p.errorRequestID(resp.Header, pe.Message)
	if pe.RequestID == "" {
		// Z.ai names the request in the body only (request_id): an
		// answer broken off keeps it (testdata/dialect_zai_network_error.http).
		pe.RequestID = pe.Meta.GetProviderRequestId()
	}
	// What the body said (a failed response's id, model, usage) stays
	// over what the headers say.
	_ = provider.AnswerFailed(pe, "", p.errorMeta(resp.Header, model))
	if pe.Kind != provider.KindBadResponse {
		pe.HTTPStatus = resp.StatusCode
	}
	if p.azure && model != "" {
		if pe.Extended == nil {
			pe.Extended = map[string]any{}
		}
		pe.Extended[extAzureDeployment] = model
	}
	vendorReset(pe, resp.Header)
	pe.Message = sec.redact(pe.Message)
	return pe
}

// Generate calls POST /chat/completions (POST /responses for the openai-responses format).
func (p *Provider) Generate(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if req != nil && req.Format == formatResponses {
		return p.generateResponses(ctx, req)
	}
	body, warnings, err := p.buildChatRequest(req, false)
	if err != nil {
		return nil, err
	}
	resp, sec, err := p.send(ctx, "chat/completions", req.Model, body, false)
	if err != nil && p.dashscope {
		return p.dashscopeRetry(ctx, req, body, warnings, err)
	}
	if err != nil {
		return nil, err
	}
	return p.chatResult(resp, req.Model, warnings, sec, wantsLogprobs(req))
}

// wantsLogprobs reports whether the request asks for token logprobs.
func wantsLogprobs(req *provider.Request) bool {
	oo := req.ProviderOptions.GetOpenai()
	return oo.GetLogprobs() || oo.GetTopLogprobs() > 0
}

// warnNoLogprobs is the warning of an answer without the token logprobs
// the request asked for: OpenRouter's upstreams and other compatible
// servers answer "logprobs": null (testdata/
// real_maruel_openrouter_qwen35_logprobs.http), which said nothing.
const warnNoLogprobs = "logprobs were asked for and the answer has none: the server did not return them"

// chatResult reads and converts a chat completion. It is apart from
// Generate, which keeps a small frame: the request is written and its
// answer awaited below Generate (docs/decisions.md, "An open stream's
// goroutine stays within 8 KiB"; gRPC's reused workers keep the stack a
// unary call grew them to).
//
//go:noinline
func (p *Provider) chatResult(resp *http.Response, model string, warnings []string, sec secrets, logprobs bool) (*provider.Result, error) {
	defer resp.Body.Close()
	raw, cut, err := p.readBody(resp)
	if err != nil {
		return nil, provider.AnswerFailed(err, p.requestID(resp.Header), p.errorMeta(resp.Header, model))
	}
	return p.chatAnswer(raw, cut, resp, model, warnings, sec, logprobs)
}

// chatAnswer converts the body of a chat completion (cut: ReadBody's
// warning when the body's end was lost after a complete answer).
func (p *Provider) chatAnswer(raw []byte, cut string, resp *http.Response, model string, warnings []string, sec secrets, logprobs bool) (*provider.Result, error) {
	res, err := p.parseChatResponse(raw)
	if err != nil {
		return nil, p.annotate(p.errorInAnswer(err, raw, resp, model, sec), resp, model, sec)
	}
	p.headerMeta(res.Meta, resp.Header, model)
	res.Meta.Warnings = append(warnings, res.Meta.Warnings...)
	if _, ok := res.Meta.GetExtended().GetFields()[extLogprobs]; logprobs && !ok {
		res.Meta.Warnings = append(res.Meta.Warnings, warnNoLogprobs)
	}
	if cut != "" {
		res.Meta.Warnings = append(res.Meta.Warnings, cut)
	}
	return res, nil
}

// Stream calls POST /chat/completions with "stream": true (POST /responses for the openai-responses format).
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	if req != nil && req.Format == formatResponses {
		return p.streamResponses(ctx, req)
	}
	body, warnings, err := p.buildChatRequest(req, true)
	if err != nil {
		return nil, err
	}
	resp, sec, err := p.send(ctx, "chat/completions", req.Model, body, true)
	if err != nil {
		return nil, err
	}
	logprobs := wantsLogprobs(req)
	if whole, err := p.jsonInsteadOfStream(resp, req.Model, sec, func(raw []byte, cut string) (*provider.Result, error) {
		return p.chatAnswer(raw, cut, resp, req.Model, warnings, sec, logprobs)
	}); whole != nil || err != nil {
		return whole, err
	}
	s := p.newStream(resp, req.Model, warnings, sec)
	s.wantLogprobs = wantsLogprobs(req)
	return s, nil
}

// jsonInsteadOfStream reads the JSON body a stream request got instead of
// an event stream: an error object (some compatible servers answer a
// stream's failure in a 2xx) is the error, with the request id; any other
// body is given to answer, the format's unary conversion, and a whole
// answer (a server that ignored "stream": LiteLLM's guardrail
// passthrough, proxies, simple compatible servers) is relayed as a stream
// of its parts with provider.WholeAnswerWarning: it was a bad response,
// an answer paid for and lost. Both nil when the body is a stream.
func (p *Provider) jsonInsteadOfStream(resp *http.Response, model string, sec secrets,
	answer func(raw []byte, cut string) (*provider.Result, error)) (provider.Stream, error) {
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, nil
	}
	defer resp.Body.Close()
	raw, cut, rerr := p.readBody(resp)
	if rerr != nil {
		return nil, provider.AnswerFailed(rerr, p.requestID(resp.Header), p.errorMeta(resp.Header, model))
	}
	if e := p.bodyError(raw, resp, model, sec); e != nil {
		e.RequestID = p.requestID(resp.Header)
		vendorReset(e, resp.Header)
		e.Message = sec.redact(e.Message)
		e.Meta = p.errorMeta(resp.Header, model)
		return nil, e
	}
	res, err := answer(raw, cut)
	if err != nil {
		return nil, err
	}
	res.Meta.Warnings = append(res.Meta.Warnings, provider.WholeAnswerWarning)
	return provider.ResultStream(p.name, res), nil
}

// Embed calls POST /embeddings.
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Result, error) {
	body, warnings, err := p.buildEmbedRequest(req)
	if err != nil {
		return nil, err
	}
	resp, sec, err := p.send(ctx, "embeddings", req.Model, body, false)
	if err != nil {
		err = embedInputParam(err, len(req.Inputs))
		if req.Dimensions != nil && dimensionsRefused(err) {
			return p.embedWithoutDimensions(ctx, req, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	raw, cut, err := p.readBody(resp)
	if err != nil {
		return nil, provider.AnswerFailed(err, p.requestID(resp.Header), p.errorMeta(resp.Header, req.Model))
	}
	if cut != "" {
		warnings = append(warnings, cut)
	}
	dtype := embedOutputDtype(body)
	res, err := p.parseEmbedAnswer(raw, len(req.Inputs), dtype)
	if err != nil {
		return nil, p.annotate(err, resp, req.Model, sec)
	}
	perValue := 1
	if _, ok := byteDtype(dtype); ok {
		// The values are quantized: said, as they pass as floats.
		bits := "an 8-bit integer"
		if strings.HasSuffix(dtype, "binary") {
			perValue = 8
			bits = "an 8-bit integer holding 8 dimensions, bit-packed"
		}
		res.Meta.Warnings = append(res.Meta.Warnings, fmt.Sprintf("output_dtype %s: each value is %s, not a float", dtype, bits))
	}
	if d := req.Dimensions; d != nil && len(res.Embeddings) > 0 && len(res.Embeddings[0].Values)*perValue != int(*d) {
		// A server that cannot shorten the vectors may ignore
		// "dimensions": they are the model's own, and cutting them would
		// not make a shortened embedding.
		res.Meta.Warnings = append(res.Meta.Warnings, fmt.Sprintf("asked for %d dimensions, got %d", *d, len(res.Embeddings[0].Values)))
	}
	if p.ollama {
		if w := ollamaEmbedCutWarning(req.Inputs); w != "" {
			res.Meta.Warnings = append(res.Meta.Warnings, w)
		}
	}
	res.Meta.Warnings = append(res.Meta.Warnings, warnings...)
	p.headerMeta(res.Meta, resp.Header, req.Model)
	return res, nil
}
