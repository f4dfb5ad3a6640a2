// Package config loads the server configuration: a YAML or JSON file (JSON
// is YAML), with secrets and URLs from the environment, or the embedded
// default that serves the built-in offline provider.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed default.yaml
var defaultYAML []byte

// Default returns the embedded default configuration.
func Default() (*Config, error) { return Parse(defaultYAML, "embedded default") }

// DefaultYAML is the text of the embedded default.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Config is the whole configuration.
type Config struct {
	Server    Server     `yaml:"server"`
	Defaults  Transport  `yaml:"defaults"`
	Providers []Provider `yaml:"providers"`
	Models    []Model    `yaml:"models"`
	Auth      Auth       `yaml:"auth"`
	Limits    Limits     `yaml:"limits"`
	// Telemetry is tracing and metrics; read only at start, like Server.
	Telemetry Telemetry `yaml:"telemetry"`
	// MCPServers are the MCP servers agent runs may name.
	MCPServers []MCPServer `yaml:"mcp_servers"`
	Agent      Agent       `yaml:"agent"`

	// root and source locate errors (Locate).
	root   *yaml.Node
	source string
	// unset are the ${VAR}s without a default whose variables were unset
	// or empty (UnsetVariables).
	unset []unsetRef
}

// UnsetVariables names, at their positions, the ${VAR}s without a default
// whose variables were unset or empty when the file was read. A valid file
// may have them (an optional header), but each gave its value "" in
// silence, and a forgotten export reads as a setting left out: serve logs
// them as warnings.
func (c *Config) UnsetVariables() []string {
	out := make([]string, 0, len(c.unset))
	for _, u := range c.unset {
		out = append(out, fmt.Sprintf("%s:%d:%d: ${%s} is unset or empty and has no default, so \"\" stands in its place (${%s:-value} gives a default)", c.source, u.line, u.col, u.name, u.name))
	}
	return out
}

// MCPServer is one MCP server agent runs may use by name.
type MCPServer struct {
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
	// Transport is "streamable" (default) or "sse".
	Transport string `yaml:"transport"`
	// Headers sent to the server; values from env, a file or inline. Never
	// logged.
	Headers map[string]HeaderValue `yaml:"headers"`
	// AllowedTools limits the tools offered (all when empty).
	AllowedTools []string `yaml:"allowed_tools"`
	// Hosted passes the server to the OpenAI Responses API as a hosted MCP
	// tool instead of executing it in the gateway.
	Hosted bool `yaml:"hosted"`
}

// HeaderValue is a secret-capable value: exactly one of env, file, value.
type HeaderValue struct {
	Env   string `yaml:"env"`
	File  string `yaml:"file"`
	Value string `yaml:"value"`
}

// Resolve reads the value; an unset variable or unreadable file is an
// error naming the source, never the value.
func (h HeaderValue) Resolve() (string, error) {
	switch {
	case h.Env != "":
		v := os.Getenv(h.Env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is not set", h.Env)
		}
		return strings.TrimSpace(v), nil
	case h.File != "":
		raw, err := os.ReadFile(h.File)
		if err != nil {
			return "", fmt.Errorf("file: %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	default:
		return h.Value, nil
	}
}

// Agent are the Agent RPC's settings.
type Agent struct {
	// AllowRequestMCPURLs are URL prefixes a request may name as MCP servers
	// itself; without one, a request-supplied URL is refused (no SSRF).
	AllowRequestMCPURLs []string `yaml:"allow_request_mcp_urls"`
	// MaxToolTimeout bounds how long a run waits for a round's client
	// tool results (and MCP calls): a setup's tool_timeout above it is
	// capped, and it applies when the setup gives none. Unset:
	// DefaultMaxToolTimeout; it must be positive (a waiting run holds a
	// stream slot and its upstream state, so there is no "unbounded").
	MaxToolTimeout *Duration `yaml:"max_tool_timeout"`
	// KeepRecentToolMedia is the runs' default for the setup's
	// keep_recent_tool_media: at most this many of the conversation's
	// most recent tool-result images and files are sent in each model
	// call, older ones replaced by a note (the conversation returned to
	// the client keeps them). A setup's own value wins. 0 or unset: all
	// are sent.
	KeepRecentToolMedia *int `yaml:"keep_recent_tool_media"`
}

// DefaultMaxToolTimeout is agent.max_tool_timeout where the configuration
// sets none: defaults.max_call_duration's default, so that a client that
// stays connected without answering holds a stream no longer than one
// model call may take.
const DefaultMaxToolTimeout = 10 * time.Minute

// ToolTimeoutBound is agent.max_tool_timeout or its default.
func (a Agent) ToolTimeoutBound() time.Duration {
	if a.MaxToolTimeout != nil {
		return a.MaxToolTimeout.Duration
	}
	return DefaultMaxToolTimeout
}

// RecentToolMedia is agent.keep_recent_tool_media, 0 when unset (all
// tool-result media are sent).
func (a Agent) RecentToolMedia() int {
	if a.KeepRecentToolMedia != nil {
		return *a.KeepRecentToolMedia
	}
	return 0
}

// Server are the listener and process settings.
type Server struct {
	// Listen is the TCP address (default 127.0.0.1:50051; "" with a unix
	// socket set means no TCP listener).
	Listen *string `yaml:"listen"`
	// UnixSocket is an optional unix socket path.
	UnixSocket string `yaml:"unix_socket"`
	// ShutdownGrace is how long in-flight calls may finish after SIGTERM.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// DrainDelay is how long health reports NOT_SERVING, with new calls
	// still accepted, before the drain starts, so that load balancers and
	// sidecar probes notice first (part of the grace period).
	DrainDelay Duration `yaml:"drain_delay"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text or json.
	LogFormat string `yaml:"log_format"`
	// AllowUnauthenticated lets the server listen on a non-loopback
	// address without auth tokens (a trusted network); without it such a
	// configuration refuses to start.
	AllowUnauthenticated bool `yaml:"allow_unauthenticated"`
	// UnixSocketMode is the socket's permission bits in octal (default
	// "0600").
	UnixSocketMode string `yaml:"unix_socket_mode"`
	// TLS secures the TCP listener (the unix socket stays plaintext,
	// guarded by its mode).
	TLS TLS `yaml:"tls"`
}

// Transport are provider call settings: defaults, overridable per provider.
type Transport struct {
	PreserveRawData *bool     `yaml:"preserve_raw_data"`
	RawCaptureLimit *int      `yaml:"raw_capture_limit"`
	ConnectTimeout  *Duration `yaml:"connect_timeout"`
	// FirstByteTimeout bounds the wait for a stream's response headers,
	// which come before its first token.
	FirstByteTimeout *Duration `yaml:"first_byte_timeout"`
	// UnaryFirstByteTimeout bounds the wait for a non-streaming call's
	// response headers, which come only once the whole answer is
	// generated (minutes for a reasoning model). Default: the call's
	// bound, defaults.max_call_duration (UnaryHeaderBound).
	UnaryFirstByteTimeout *Duration `yaml:"unary_first_byte_timeout"`
	IdleTimeout           *Duration `yaml:"idle_timeout"`
	// StreamFirstTokenTimeout bounds the provider's silence inside a
	// stream before its first content (text, reasoning, refusal, a tool
	// call): a reasoning model that thinks without sending anything
	// sends nothing for minutes there. Every byte resets it, as it
	// resets idle_timeout (an SSE comment, Anthropic's ping), and
	// idle_timeout takes over at the first content. Default:
	// idle_timeout.
	StreamFirstTokenTimeout *Duration `yaml:"stream_first_token_timeout"`
	// HTTPVersion chooses the upstream HTTP client: "auto" (default:
	// HTTP/1.1 on llmrelay's own connection pool, net/http for cleartext
	// hosts that are not loopback or private and for proxied requests),
	// "1.1" (the own pool for every host) or "2" (net/http, HTTP/2 where
	// the server offers it: one multiplexed connection per host).
	HTTPVersion *string `yaml:"http_version"`
	Retry       *Retry  `yaml:"retry"`
	// MaxCallDuration bounds a whole call (retries, fallbacks and a
	// stream's reading included) whatever the client's deadline, so that
	// a provider trickling bytes forever is cut by the gateway. Only under
	// defaults: a call may move between providers. Default
	// DefaultMaxCallDuration.
	MaxCallDuration *Duration `yaml:"max_call_duration"`
}

// DefaultMaxCallDuration is the bound of a call where the configuration
// sets none: generous, since an answer of a reasoning model may take
// minutes.
const DefaultMaxCallDuration = 10 * time.Minute

// CallBound is the configured max_call_duration, or the default.
func (t Transport) CallBound() time.Duration {
	if t.MaxCallDuration != nil {
		return t.MaxCallDuration.Duration
	}
	return DefaultMaxCallDuration
}

// UnaryHeaderBound is unary_first_byte_timeout, or where it is unset the
// call's bound (max_call_duration): a non-streaming answer may take as
// long as the call may, as the OpenAI and Anthropic SDKs' 10-minute
// timeouts let it. t is the provider's transport merged over the
// defaults (which alone hold max_call_duration).
func (t Transport) UnaryHeaderBound() time.Duration {
	if t.UnaryFirstByteTimeout != nil {
		return t.UnaryFirstByteTimeout.Duration
	}
	return t.CallBound()
}

// HTTPVersions are the values of transport.http_version.
var HTTPVersions = []string{"auto", "1.1", "2"}

// Retry is the retry policy.
type Retry struct {
	MaxAttempts *int      `yaml:"max_attempts"`
	BaseDelay   *Duration `yaml:"base_delay"`
	MaxDelay    *Duration `yaml:"max_delay"`
	// MaxRetryAfter is the longest Retry-After the gateway waits out
	// itself; a longer one ends the call with RetryInfo for the caller.
	MaxRetryAfter *Duration `yaml:"max_retry_after"`
}

// Provider is one configured provider account.
type Provider struct {
	Name string `yaml:"name"`
	// Type is builtin, openai, azure, anthropic, gemini or ollama.
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url"`
	// The API key: from an environment variable (api_key_env), a file
	// (api_key_file), or inline with ${VAR} expansion (api_key).
	APIKey     string `yaml:"api_key"`
	APIKeyEnv  string `yaml:"api_key_env"`
	APIKeyFile string `yaml:"api_key_file"`
	// Azure: "entra" takes a bearer token from the key sources instead of
	// an api-key: from api_key_file it is read again whenever the file
	// changes (one stat per call); env and inline values are read at start.
	Auth string `yaml:"auth"`
	// APIVersion: Azure api-version, Anthropic anthropic-version.
	APIVersion string `yaml:"api_version"`
	// AzureAPI: "deployments" (classic, default) or "v1".
	AzureAPI string `yaml:"azure_api"`
	// OpenAI organization and project headers.
	Organization string `yaml:"organization"`
	Project      string `yaml:"project"`
	// ReasoningReplay (openai only): how earlier assistant turns' reasoning
	// goes back to a compatible server: "auto" (by base URL host),
	// "none", "reasoning_content" (DeepSeek, Moonshot: on turns with
	// tool calls, which those servers require) or "reasoning_details"
	// (OpenRouter: the blocks it gave, with their format).
	ReasoningReplay string `yaml:"reasoning_replay"`
	// ThinkingSwitch (openai only): how a reasoning effort turns a
	// compatible server's thinking on or off: "auto" (by base URL host) or
	// "chat_template_kwargs" (a self-hosted vLLM, SGLang or llama.cpp
	// server: enable_thinking and thinking in chat_template_kwargs).
	ThinkingSwitch string `yaml:"thinking_switch"`
	// DefaultMaxTokens: Anthropic's required max_tokens when a call sets none.
	DefaultMaxTokens int `yaml:"default_max_tokens"`
	// MaxEmbeddingInputs is the most inputs one upstream embeddings
	// request carries (0: what the adapter knows of the API, e.g. Voyage
	// AI's 1000, else no limit below the gateway's 2048). A call with more
	// is sent as several requests and their embeddings joined in order.
	MaxEmbeddingInputs int               `yaml:"max_embedding_inputs"`
	Headers            map[string]string `yaml:"headers"`
	Transport          Transport         `yaml:"transport"`
}

// Model is one model clients can name.
type Model struct {
	// Name is what clients send as `model`.
	Name string `yaml:"name"`
	// Provider is the configured provider name (or use deployments).
	Provider string `yaml:"provider"`
	// UpstreamModel is the provider's model id (Azure: the deployment);
	// defaults to Name.
	UpstreamModel string `yaml:"upstream_model"`
	// Deployments route the model to several providers instead of one:
	// with routing "fallback" (default) in order, each tried when the
	// previous one failed with a retryable error after its retries; with
	// "weighted" the first is picked at random by weight and the others
	// follow as fallbacks.
	Deployments []Deployment `yaml:"deployments"`
	Routing     string       `yaml:"routing"`
	// ContentFilterFallback lets a deployment's content filter refusing
	// the prompt (Azure's content_filter, Gemini's blocked prompt, a
	// provider's moderation) give way to the route's next deployment,
	// whose filter may judge otherwise (LiteLLM's content_policy_fallbacks
	// opt in alike), and so does a non-streaming answer the filter
	// stopped (finish reason content_filter). Off by default: a filter's
	// verdict is usually meant to stand. Only with two deployments or
	// more.
	ContentFilterFallback bool `yaml:"content_filter_fallback"`
	// Reasoning overrides the name-based detection of reasoning models
	// (o1, o3, o4, gpt-5 prefixes). Only the OpenAI formats have rules
	// for reasoning models; the other formats judge options by their API.
	Reasoning *bool `yaml:"reasoning"`
	// StructuredOutput is how an Anthropic model answers a JSON schema
	// response_format: "tool" (default; a forced tool whose input is the
	// answer, every Claude model) or "native" (output_config.format, for
	// models that support structured outputs).
	StructuredOutput string `yaml:"structured_output"`
	// Capabilities: one entry per protocol (chat, vision, tools,
	// embeddings, documents, audio); the model supports exactly these.
	Capabilities map[string]Capability `yaml:"capabilities"`
	// PreserveRawData overrides the providers' raw capture default for
	// this model (call.preserve_raw overrides both).
	PreserveRawData *bool `yaml:"preserve_raw_data"`
	// Prices, when set, give every response of the model its cost.
	Prices *Prices `yaml:"prices"`
	// Context is prompt context merged before every request's messages.
	Context []ContextMessage `yaml:"context"`
}

// ContextMessage is one message of a model's prompt context.
type ContextMessage struct {
	// Role is system, user or assistant.
	Role string `yaml:"role"`
	Text string `yaml:"text"`
}

// Deployment is one provider serving a routed model.
type Deployment struct {
	// Name identifies the deployment in metadata; default: the provider name.
	Name          string `yaml:"name"`
	Provider      string `yaml:"provider"`
	UpstreamModel string `yaml:"upstream_model"`
	// Weight for routing "weighted" (default 1).
	Weight int `yaml:"weight"`
}

// Capability is how a model serves one protocol.
type Capability struct {
	Format  string         `yaml:"format"`
	Options map[string]any `yaml:"options"`
}

// Duration accepts "24s"-style strings and plain numbers of seconds.
type Duration struct{ time.Duration }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a duration must be a string like \"30s\" or a number of seconds", n.Line)
	}
	if secs, err := strconv.ParseFloat(n.Value, 64); err == nil {
		if secs < 0 {
			return fmt.Errorf("line %d: negative duration %q", n.Line, n.Value)
		}
		d.Duration = time.Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: invalid duration %q (use e.g. \"30s\", \"1m30s\" or seconds)", n.Line, n.Value)
	}
	if v < 0 {
		return fmt.Errorf("line %d: negative duration %q", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// MarshalYAML renders the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Load reads and validates a file.
func Load(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(raw, path)
}

// Parse decodes and validates a configuration. Every problem is reported
// at once, each as "source:line:column: path: problem".
func Parse(raw []byte, source string) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		// A syntax error: the YAML parser stops at the first one.
		return nil, yamlError(source, err, raw)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		return nil, &located{source: source, msg: `the file is empty ("llmrelay config default" prints a complete configuration)`}
	}
	unset, malformed := expandNode(&doc)
	c := Config{root: doc.Content[0], source: source}
	// The shape check reports and prunes unknown keys and values of the
	// wrong kind, so that the rest decodes and is validated too: every
	// problem of the file at once.
	var errs []error
	for _, m := range malformed {
		errs = append(errs, &located{source: source, line: m.line, col: m.col,
			msg: fmt.Sprintf("%q is not a ${VAR} or ${VAR:-default} reference (a \"}\" missing, a name other than letters, digits and _, or a shell form such as ${VAR:=x}, ${VAR-x} or a nested reference, which are not supported)", m.name)})
	}
	errs = append(errs, checkShape(source, doc.Content[0], reflect.TypeFor[Config](), "")...)
	if err := doc.Decode(&c); err != nil {
		return nil, yamlError(source, err, nil)
	}
	errs = append(errs, c.locateAll(notPruned(errs, c.validate()))...)
	if len(errs) > 0 {
		for _, u := range unset {
			errs = append(errs, &located{source: source, line: u.line, col: u.col,
				msg: fmt.Sprintf("${%s} is unset or empty and has no default (${%s:-value} gives one)", u.name, u.name)})
		}
		sortByPosition(errs)
		return nil, errors.Join(errs...)
	}
	c.unset = unset
	return &c, nil
}

var (
	yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)
	// flowRef is a ${VAR} unquoted in a flow mapping ({key: ${VAR}}),
	// whose "}" ends the mapping.
	flowRef = regexp.MustCompile(`\{[^"'#\n]*:[ \t]*\$\{`)
)

// yamlError words an error of the YAML parser or decoder as the others:
// "source:line: problem", one line per problem. With raw (a syntax
// error), an unquoted ${VAR} in a flow mapping, the usual cause, is named.
func yamlError(source string, err error, raw []byte) error {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	errs := make([]error, 0, len(msgs)+1)
	for _, m := range msgs {
		m = strings.TrimSpace(m)
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			if l := lines(raw); line >= 1 && line <= len(l) {
				switch t := strings.TrimSpace(l[line-1]); {
				case strings.HasPrefix(l[line-1], "\t"):
					g[2] += " (YAML indents with spaces, not tabs)"
				case strings.HasPrefix(t, "//"), strings.HasPrefix(t, "/*"):
					g[2] += " (JSON has no comments; YAML's start with #)"
				}
			}
			errs = append(errs, fmt.Errorf("%s:%d: %s", source, line, g[2]))
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s", source, m))
	}
	for i, l := range lines(raw) {
		if flowRef.MatchString(l) {
			errs = append(errs, fmt.Errorf(`%s:%d: a ${VAR} in a {...} mapping must be quoted ("${VAR}"): its "}" ends the mapping`, source, i+1))
			break
		}
	}
	return errors.Join(errs...)
}

func lines(raw []byte) []string {
	if len(raw) == 0 {
		return nil
	}
	return strings.Split(string(raw), "\n")
}

// notPruned drops the validation errors about a value the shape check
// already reported and pruned: "amount "abc": want a decimal number"
// need not be followed by "required" for the same key.
func notPruned(shape, errs []error) []error {
	pruned := map[string]bool{}
	for _, e := range shape {
		var l *located
		if errors.As(e, &l) {
			// An unknown key is dropped, not its parent: the parent's
			// own problems stand.
			if p := pathPrefix.FindString(l.msg); p != "" && strings.HasPrefix(l.msg[len(p):], ": ") &&
				!strings.HasPrefix(l.msg[len(p):], ": unknown key ") {
				pruned[p] = true
			}
		}
	}
	out := errs[:0:0]
next:
	for _, e := range errs {
		p := pathPrefix.FindString(e.Error())
		for pr := range pruned {
			// The pruned value itself, or a part of it.
			if p == pr || strings.HasPrefix(p, pr+".") || strings.HasPrefix(p, pr+"[") {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// sortByPosition orders located errors as the file reads, top to bottom
// (the checks find them key by key, in another order); the stable sort
// keeps errors at one position, and those without one first, as found.
func sortByPosition(errs []error) {
	pos := func(err error) (int, int) {
		var l *located
		if errors.As(err, &l) {
			return l.line, l.col
		}
		return 0, 0
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		al, ac := pos(a)
		bl, bc := pos(b)
		if al != bl {
			return al - bl
		}
		return ac - bc
	})
}

// providerHasKey reports whether the file's providers[i] mapping has key.
func (c *Config) providerHasKey(i int, key string) bool {
	if c.root == nil || c.root.Kind != yaml.MappingNode {
		return false
	}
	for j := 0; j+1 < len(c.root.Content); j += 2 {
		if c.root.Content[j].Value != "providers" {
			continue
		}
		seq := c.root.Content[j+1]
		if seq.Kind != yaml.SequenceNode || i >= len(seq.Content) || seq.Content[i].Kind != yaml.MappingNode {
			return false
		}
		m := seq.Content[i].Content
		for k := 0; k+1 < len(m); k += 2 {
			if m[k].Value == key {
				return true
			}
		}
	}
	return false
}

func (c *Config) locateAll(errs []error) []error {
	for i, e := range errs {
		errs[i] = c.Locate(e)
	}
	return errs
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default}, names the variables
// referenced without a default that are unset or empty, and returns each
// "${" that starts no such reference (a missing "}", a name that is not
// letters, digits and _, a shell form such as ${VAR:=x} or ${VAR-x}, a
// reference nested in a default): left as it is, it would reach the
// provider as literal text. "$${" is a literal "${".
func expand(s string) (_ string, missing, malformed []string) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var b strings.Builder
	for rest := s; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		if i > 0 && rest[i-1] == '$' {
			// "$${" is a literal "${" (prompt text, templates).
			b.WriteString(rest[:i-1])
			b.WriteString("${")
			rest = rest[i+2:]
			continue
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		loc := envRef.FindStringSubmatchIndex(rest)
		if loc == nil || loc[0] != 0 || (loc[6] >= 0 && strings.Contains(rest[loc[6]:loc[7]], "${")) {
			malformed = append(malformed, fragment(rest))
			b.WriteString("${")
			rest = rest[2:]
			continue
		}
		name := rest[loc[2]:loc[3]]
		switch v, ok := os.LookupEnv(name); {
		case ok && v != "":
			b.WriteString(v)
		case loc[4] >= 0:
			b.WriteString(rest[loc[6]:loc[7]])
		default:
			missing = append(missing, name)
		}
		rest = rest[loc[1]:]
	}
	return b.String(), missing, malformed
}

// fragment is the start of a malformed reference, for its error: up to
// its "}" or the first space, at most 40 bytes.
func fragment(s string) string {
	end := len(s)
	if i := strings.IndexAny(s, "} \t\n"); i >= 0 {
		end = i
		if s[i] == '}' {
			end++
		}
	}
	if end > 40 {
		return s[:40] + "..."
	}
	return s[:end]
}

// ProviderTypes are the known provider types.
var ProviderTypes = []string{"builtin", "openai", "azure", "anthropic", "gemini", "ollama"}

// Protocols are the capability keys.
var Protocols = []string{"chat", "vision", "tools", "embeddings", "documents", "audio"}

func (c *Config) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Server.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		add("server.log_level: %q is not one of debug, info, warn, error", c.Server.LogLevel)
	}
	switch c.Server.LogFormat {
	case "", "text", "json":
	default:
		add("server.log_format: %q is not text or json", c.Server.LogFormat)
	}
	if l := c.Server.Listen; l != nil && *l != "" {
		// The server would fail to listen on it; config check says so first.
		if _, _, err := net.SplitHostPort(*l); err != nil {
			add("server.listen: %q is not host:port (\"\" with unix_socket set: no TCP listener)", *l)
		}
	}
	// drain_delay is a part of the grace: a longer one was cut to the
	// grace in silence, leaving nothing to finish the calls in flight.
	grace := c.Server.ShutdownGrace.Duration
	if grace <= 0 {
		grace = 15 * time.Second
	}
	if d := c.Server.DrainDelay.Duration; d >= grace {
		add("server.drain_delay: %v is not shorter than server.shutdown_grace (%v), of which it is the first part: the calls in flight would have no time left to finish", d, grace)
	}
	errs = append(errs, c.Server.validateSecurity()...)
	errs = append(errs, c.Server.TLS.validate()...)
	errs = append(errs, c.Auth.validate()...)
	for i, t := range c.Auth.Tokens {
		if t.ClientCertificate != "" && c.Server.TLS.ClientCAFile == "" {
			add("auth.tokens[%d].client_certificate: needs mutual TLS (server.tls.client_ca_file), or no client presents a verified certificate", i)
		}
	}
	errs = append(errs, c.spendErrors()...)
	errs = append(errs, c.Limits.validate()...)
	errs = append(errs, c.Defaults.validate("defaults")...)
	if r := c.Defaults.Retry; r != nil && (r.BaseDelay != nil || r.MaxDelay != nil) {
		errs = append(errs, c.Defaults.retryDelayError("defaults", r.BaseDelay != nil)...)
	}
	if d := c.Defaults.MaxCallDuration; d != nil && d.Duration <= 0 {
		add("defaults.max_call_duration: must be positive, got %v", d.Duration)
	}
	errs = append(errs, c.Defaults.unaryHeaderError("defaults", c.Defaults.CallBound())...)
	errs = append(errs, c.Telemetry.validate()...)
	names := map[string]bool{}
	for i, p := range c.Providers {
		where := fmt.Sprintf("providers[%d]", i)
		if p.Name == "" {
			add("%s.name: required", where)
		} else if names[p.Name] {
			add("%s.name: duplicate provider %q", where, p.Name)
		}
		names[p.Name] = true
		if !contains(ProviderTypes, p.Type) {
			add("%s (%s).type: %q is not one of %s", where, p.Name, p.Type, strings.Join(ProviderTypes, ", "))
		}
		if p.Type == "azure" && p.BaseURL == "" {
			add("%s (%s).base_url: required for azure (https://<resource>.openai.azure.com)", where, p.Name)
		}
		// An unknown type is named above; whether it needs a key is not
		// known.
		if contains(ProviderTypes, p.Type) && p.Type != "builtin" && p.Type != "ollama" && p.APIKey == "" && p.APIKeyEnv == "" && p.APIKeyFile == "" {
			if c.providerHasKey(i, "api_key") {
				// Written, but empty: a ${VAR} that is unset (named with
				// the errors) or "".
				add("%s (%s).api_key: empty (use api_key_env or api_key_file for a key kept outside the file)", where, p.Name)
			} else {
				add("%s (%s): set api_key_env, api_key_file or api_key", where, p.Name)
			}
		}
		switch p.Auth {
		case "", "api-key":
		case "entra":
			if p.Type != "azure" {
				add("%s (%s).auth: entra is only for azure", where, p.Name)
			}
		default:
			add("%s (%s).auth: %q is not api-key or entra", where, p.Name, p.Auth)
		}
		switch p.AzureAPI {
		case "", "deployments", "v1":
		default:
			add("%s (%s).azure_api: %q is not deployments or v1", where, p.Name, p.AzureAPI)
		}
		if (p.Organization != "" || p.Project != "") && p.Type != "openai" {
			add("%s (%s): organization and project are OpenAI headers; a %s provider does not send them", where, p.Name, p.Type)
		}
		switch p.ReasoningReplay {
		case "", "auto", "none", "reasoning_content", "reasoning_details", "reasoning":
			if p.ReasoningReplay != "" && p.Type != "openai" {
				add("%s (%s).reasoning_replay: only for openai (OpenAI-compatible) providers, not %s", where, p.Name, p.Type)
			}
		default:
			add("%s (%s).reasoning_replay: %q is not auto, none, reasoning_content, reasoning or reasoning_details", where, p.Name, p.ReasoningReplay)
		}
		switch p.ThinkingSwitch {
		case "", "auto", "chat_template_kwargs":
			if p.ThinkingSwitch != "" && p.Type != "openai" {
				add("%s (%s).thinking_switch: only for openai (OpenAI-compatible) providers, not %s", where, p.Name, p.Type)
			}
		default:
			add("%s (%s).thinking_switch: %q is not auto or chat_template_kwargs", where, p.Name, p.ThinkingSwitch)
		}
		if p.MaxEmbeddingInputs < 0 {
			add("%s (%s).max_embedding_inputs: must be at least 1 (0 or unset: the adapter's default)", where, p.Name)
		}
		errs = append(errs, p.Transport.validate(where+".transport")...)
		errs = append(errs, p.Transport.unaryHeaderError(where+".transport", c.Defaults.CallBound())...)
		if r := p.Transport.Retry; r != nil && (r.BaseDelay != nil || r.MaxDelay != nil) {
			errs = append(errs, c.Defaults.Merge(p.Transport).retryDelayError(where+".transport", r.BaseDelay != nil)...)
		}
		if p.Transport.MaxCallDuration != nil {
			add("%s (%s).transport.max_call_duration: only under defaults (a call may move between providers)", where, p.Name)
		}
	}
	mcpNames := map[string]bool{}
	for i, m := range c.MCPServers {
		where := fmt.Sprintf("mcp_servers[%d]", i)
		if m.Name == "" {
			add("%s.name: required", where)
		} else if mcpNames[m.Name] {
			add("%s.name: duplicate MCP server %q", where, m.Name)
		}
		mcpNames[m.Name] = true
		if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("%s (%s).url: an http(s) URL is required", where, m.Name)
		}
		switch m.Transport {
		case "", "streamable", "sse":
		default:
			add("%s (%s).transport: %q is not streamable or sse", where, m.Name, m.Transport)
		}
		for k, h := range m.Headers {
			n := 0
			for _, v := range []string{h.Env, h.File, h.Value} {
				if v != "" {
					n++
				}
			}
			if n != 1 {
				add("%s (%s).headers.%s: set exactly one of env, file, value", where, m.Name, k)
			}
		}
	}
	for i, p := range c.Agent.AllowRequestMCPURLs {
		if u, err := url.Parse(p); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("agent.allow_request_mcp_urls[%d]: %q is not an http(s) URL prefix", i, p)
		}
	}
	if d := c.Agent.MaxToolTimeout; d != nil && d.Duration <= 0 {
		add("agent.max_tool_timeout: must be positive (unset: %v), got %v", DefaultMaxToolTimeout, d.Duration)
	}
	if n := c.Agent.KeepRecentToolMedia; n != nil && *n < 0 {
		add("agent.keep_recent_tool_media: must be at least 1, or 0 to send every tool-result image and file (the default), got %d", *n)
	}
	models := map[string]bool{}
	for i, m := range c.Models {
		where := fmt.Sprintf("models[%d]", i)
		if m.Name == "" {
			add("%s.name: required", where)
		} else if models[m.Name] {
			add("%s.name: duplicate model %q", where, m.Name)
		}
		models[m.Name] = true
		where = fmt.Sprintf("%s (%s)", where, m.Name)
		if !contains([]string{"", "tool", "native"}, m.StructuredOutput) {
			add("%s.structured_output: %q is not tool or native", where, m.StructuredOutput)
		}
		switch {
		case m.Provider != "" && len(m.Deployments) > 0:
			add("%s: set either provider or deployments, not both", where)
		case len(m.Deployments) > 0:
			seen := map[string]bool{}
			for j, d := range m.Deployments {
				dw := fmt.Sprintf("%s.deployments[%d]", where, j)
				if !names[d.Provider] {
					add("%s.provider: %q is not a configured provider", dw, d.Provider)
				}
				if d.Weight < 0 {
					add("%s.weight: must be >= 0", dw)
				}
				n := d.Name
				if n == "" {
					n = d.Provider
				}
				if seen[n] {
					add("%s.name: duplicate deployment %q (name them)", dw, n)
				}
				seen[n] = true
			}
		case m.Provider == "":
			add("%s.provider: required (a name from providers, or deployments to route over several)", where)
		case !names[m.Provider]:
			add("%s.provider: %q is not a configured provider", where, m.Provider)
		}
		switch m.Routing {
		case "", "fallback", "weighted":
		default:
			add("%s.routing: %q is not fallback or weighted", where, m.Routing)
		}
		if m.ContentFilterFallback && len(m.Deployments) < 2 {
			add("%s.content_filter_fallback: needs two deployments or more to fall back to (deployments), the model has %d", where, max(len(m.Deployments), 1))
		}
		if len(m.Capabilities) == 0 {
			add("%s.capabilities: at least one of %s", where, strings.Join(Protocols, ", "))
		}
		if m.Prices != nil {
			errs = append(errs, m.Prices.validate(where+".prices")...)
		}
		for proto, capab := range m.Capabilities {
			if !contains(Protocols, proto) {
				add("%s.capabilities.%s: unknown protocol (use %s)", where, proto, strings.Join(Protocols, ", "))
			}
			if capab.Format == "" {
				add("%s.capabilities.%s.format: required", where, proto)
			}
		}
		for j, cm := range m.Context {
			switch cm.Role {
			case "system", "user", "assistant":
			default:
				add("%s.context[%d].role: %q is not system, user or assistant", where, j, cm.Role)
			}
			if cm.Text == "" {
				add("%s.context[%d].text: required", where, j)
			}
		}
	}
	return errs
}

// The retry backoff where the configuration sets none (the values of
// pipeline.DefaultRetryPolicy).
const (
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultRetryMaxDelay  = 8 * time.Second
)

// retryDelayError refuses a base_delay longer than the max_delay in
// effect, t's (a section merged over the defaults) or the built-in one:
// each wait is base_delay doubled per attempt up to max_delay, so every
// wait was the maximum, in silence. A base_delay of 20s alone was taken,
// the check comparing two values of one section only. Named at where's
// base_delay when the section sets it (ownBase), else at its max_delay.
func (t Transport) retryDelayError(where string, ownBase bool) []error {
	base, limit := DefaultRetryBaseDelay, DefaultRetryMaxDelay
	if r := t.Retry; r != nil {
		if r.BaseDelay != nil {
			base = r.BaseDelay.Duration
		}
		if r.MaxDelay != nil {
			limit = r.MaxDelay.Duration
		}
	}
	if limit <= 0 || base <= limit {
		return nil // a max_delay of 0: no waits at all
	}
	if ownBase {
		return []error{fmt.Errorf("%s.retry.base_delay: %v is longer than the max_delay in effect (%v), which bounds every wait", where, base, limit)}
	}
	return []error{fmt.Errorf("%s.retry.max_delay: %v is shorter than the base_delay in effect (%v): every wait would be the maximum", where, limit, base)}
}

// unaryHeaderError checks the section's own unary_first_byte_timeout:
// positive, and not longer than max_call_duration (callBound), which
// would end every call first: the setting would do nothing, in silence.
func (t Transport) unaryHeaderError(where string, callBound time.Duration) []error {
	d := t.UnaryFirstByteTimeout
	switch {
	case d == nil:
		return nil
	case d.Duration <= 0:
		return []error{fmt.Errorf("%s.unary_first_byte_timeout: must be positive, got %v (unset: max_call_duration)", where, d.Duration)}
	case callBound > 0 && d.Duration > callBound:
		return []error{fmt.Errorf("%s.unary_first_byte_timeout: %v is longer than defaults.max_call_duration (%v), which ends the call first", where, d.Duration, callBound)}
	}
	return nil
}

func (t Transport) validate(where string) []error {
	var errs []error
	if d := t.StreamFirstTokenTimeout; d != nil && d.Duration <= 0 {
		errs = append(errs, fmt.Errorf("%s.stream_first_token_timeout: must be positive, got %v (unset: idle_timeout)", where, d.Duration))
	}
	if t.RawCaptureLimit != nil && *t.RawCaptureLimit < 0 {
		errs = append(errs, fmt.Errorf("%s.raw_capture_limit: must be >= 0", where))
	}
	if t.Retry != nil && t.Retry.MaxAttempts != nil && (*t.Retry.MaxAttempts < 1 || *t.Retry.MaxAttempts > 10) {
		errs = append(errs, fmt.Errorf("%s.retry.max_attempts: must be 1..10", where))
	}
	if t.HTTPVersion != nil && !contains(HTTPVersions, *t.HTTPVersion) {
		errs = append(errs, fmt.Errorf("%s.http_version: %q is not one of %s", where, *t.HTTPVersion, strings.Join(HTTPVersions, ", ")))
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// APIKeyValue resolves the provider's key: api_key_env, then api_key_file,
// then api_key. An unset variable or unreadable file is an error that
// names the source, never the value.
func (p Provider) APIKeyValue() (string, error) {
	switch {
	case p.APIKeyEnv != "":
		v := os.Getenv(p.APIKeyEnv)
		if v == "" {
			return "", fmt.Errorf("provider %s: environment variable %s is not set", p.Name, p.APIKeyEnv)
		}
		return strings.TrimSpace(v), nil
	case p.APIKeyFile != "":
		raw, err := os.ReadFile(p.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("provider %s: api_key_file: %w", p.Name, err)
		}
		return strings.TrimSpace(string(raw)), nil
	default:
		return p.APIKey, nil
	}
}

// CredentialErrors reads every provider's key and every caller's token as
// the server does at start and names each that cannot be read (an unset
// variable, a missing, unreadable or empty file; an Entra token file may
// start empty; a token too short), and every MCP server header, at its
// line, all at once: the server stops at the first, without a position.
func (c *Config) CredentialErrors() error {
	var errs []error
	for i, p := range c.Providers {
		if p.Type == "builtin" || (p.APIKeyEnv == "" && p.APIKeyFile == "") {
			continue
		}
		where := fmt.Sprintf("providers[%d] (%s)", i, p.Name)
		k, err := p.APIKeyValue()
		switch {
		case p.APIKeyEnv != "" && (err != nil || k == ""):
			errs = append(errs, fmt.Errorf("%s.api_key_env: the environment variable %s is unset or empty", where, p.APIKeyEnv))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s.api_key_file: %w", where, errors.Unwrap(err)))
		case k == "" && p.Auth != "entra": // an Entra token file is read again when it changes
			errs = append(errs, fmt.Errorf("%s.api_key_file: %s is empty", where, p.APIKeyFile))
		}
	}
	for i, t := range c.Auth.Tokens {
		field := ""
		switch {
		case t.SHA256 != "":
			continue // checked by the validation
		case t.TokenFile != "":
			field = "token_file"
		case t.TokenEnv != "":
			field = "token_env"
		default:
			continue
		}
		if _, err := t.Hash(); err != nil {
			msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "auth token "+t.Name+": "), "token_file: ")
			errs = append(errs, fmt.Errorf("auth.tokens[%d] (%s).%s: %s", i, t.Name, field, msg))
		}
	}
	for i, m := range c.MCPServers {
		names := make([]string, 0, len(m.Headers))
		for h := range m.Headers {
			names = append(names, h)
		}
		slices.Sort(names)
		for _, h := range names {
			v := m.Headers[h]
			field := "value"
			switch {
			case v.Env != "":
				field = "env"
			case v.File != "":
				field = "file"
			}
			if _, err := v.Resolve(); err != nil {
				errs = append(errs, fmt.Errorf("mcp_servers[%d] (%s).headers.%s.%s: %s", i, m.Name, h, field, strings.TrimPrefix(err.Error(), "file: ")))
			}
		}
	}
	return c.Locate(errors.Join(errs...))
}

// Merge returns t with the fields set in over replacing its own.
func (t Transport) Merge(over Transport) Transport {
	out := t
	if over.PreserveRawData != nil {
		out.PreserveRawData = over.PreserveRawData
	}
	if over.RawCaptureLimit != nil {
		out.RawCaptureLimit = over.RawCaptureLimit
	}
	if over.ConnectTimeout != nil {
		out.ConnectTimeout = over.ConnectTimeout
	}
	if over.FirstByteTimeout != nil {
		out.FirstByteTimeout = over.FirstByteTimeout
	}
	if over.UnaryFirstByteTimeout != nil {
		out.UnaryFirstByteTimeout = over.UnaryFirstByteTimeout
	}
	if over.IdleTimeout != nil {
		out.IdleTimeout = over.IdleTimeout
	}
	if over.StreamFirstTokenTimeout != nil {
		out.StreamFirstTokenTimeout = over.StreamFirstTokenTimeout
	}
	if over.HTTPVersion != nil {
		out.HTTPVersion = over.HTTPVersion
	}
	if over.Retry != nil {
		r := Retry{}
		if out.Retry != nil {
			r = *out.Retry
		}
		if over.Retry.MaxAttempts != nil {
			r.MaxAttempts = over.Retry.MaxAttempts
		}
		if over.Retry.BaseDelay != nil {
			r.BaseDelay = over.Retry.BaseDelay
		}
		if over.Retry.MaxDelay != nil {
			r.MaxDelay = over.Retry.MaxDelay
		}
		if over.Retry.MaxRetryAfter != nil {
			r.MaxRetryAfter = over.Retry.MaxRetryAfter
		}
		out.Retry = &r
	}
	return out
}
