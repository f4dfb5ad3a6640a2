// Package config loads the server configuration: a YAML or JSON file (JSON
// is YAML), with secrets and URLs from the environment, or the embedded
// default that serves the built-in offline provider.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
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
}

// Transport are provider call settings: defaults, overridable per provider.
type Transport struct {
	PreserveRawData  *bool     `yaml:"preserve_raw_data"`
	RawCaptureLimit  *int      `yaml:"raw_capture_limit"`
	ConnectTimeout   *Duration `yaml:"connect_timeout"`
	FirstByteTimeout *Duration `yaml:"first_byte_timeout"`
	IdleTimeout      *Duration `yaml:"idle_timeout"`
	// HTTPVersion chooses the upstream HTTP client: "auto" (default:
	// HTTP/1.1 on llmrelay's own connection pool, net/http for cleartext
	// hosts that are not loopback or private and for proxied requests),
	// "1.1" (the own pool for every host) or "2" (net/http, HTTP/2 where
	// the server offers it: one multiplexed connection per host).
	HTTPVersion *string `yaml:"http_version"`
	Retry       *Retry  `yaml:"retry"`
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
	// Azure: "entra" takes a bearer token from the key sources (re-read from
	// the file on every call) instead of an api-key.
	Auth string `yaml:"auth"`
	// APIVersion: Azure api-version, Anthropic anthropic-version.
	APIVersion string `yaml:"api_version"`
	// AzureAPI: "deployments" (classic, default) or "v1".
	AzureAPI string `yaml:"azure_api"`
	// OpenAI organization and project headers.
	Organization string `yaml:"organization"`
	Project      string `yaml:"project"`
	// DefaultMaxTokens: Anthropic's required max_tokens when a call sets none.
	DefaultMaxTokens int               `yaml:"default_max_tokens"`
	Headers          map[string]string `yaml:"headers"`
	Transport        Transport         `yaml:"transport"`
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
	// Reasoning overrides the name-based detection of reasoning models
	// (o1, o3, o4, gpt-5 prefixes).
	Reasoning *bool `yaml:"reasoning"`
	// Capabilities: one entry per protocol (chat, vision, tools,
	// embeddings); the model supports exactly these.
	Capabilities map[string]Capability `yaml:"capabilities"`
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

// Parse decodes and validates a configuration; every problem is reported,
// each with where it is.
func Parse(raw []byte, source string) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	c.expandEnv()
	if errs := c.validate(); len(errs) > 0 {
		for i, e := range errs {
			errs[i] = fmt.Errorf("%s: %w", source, e)
		}
		return nil, errors.Join(errs...)
	}
	return &c, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default}.
func expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := envRef.FindStringSubmatch(m)
		if v, ok := os.LookupEnv(sub[1]); ok && v != "" {
			return v
		}
		return sub[3]
	})
}

func (c *Config) expandEnv() {
	if c.Server.Listen != nil {
		v := expand(*c.Server.Listen)
		c.Server.Listen = &v
	}
	c.Server.UnixSocket = expand(c.Server.UnixSocket)
	for i := range c.Providers {
		p := &c.Providers[i]
		p.BaseURL, p.APIKey, p.APIKeyFile = expand(p.BaseURL), expand(p.APIKey), expand(p.APIKeyFile)
		p.APIVersion, p.Organization, p.Project = expand(p.APIVersion), expand(p.Organization), expand(p.Project)
		for k, v := range p.Headers {
			p.Headers[k] = expand(v)
		}
	}
	for i := range c.Models {
		c.Models[i].UpstreamModel = expand(c.Models[i].UpstreamModel)
		for j := range c.Models[i].Deployments {
			d := &c.Models[i].Deployments[j]
			d.UpstreamModel = expand(d.UpstreamModel)
		}
	}
}

// ProviderTypes are the known provider types.
var ProviderTypes = []string{"builtin", "openai", "azure", "anthropic", "gemini", "ollama"}

// Protocols are the capability keys.
var Protocols = []string{"chat", "vision", "tools", "embeddings"}

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
	errs = append(errs, c.Defaults.validate("defaults")...)
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
		if p.Type != "builtin" && p.Type != "ollama" && p.APIKey == "" && p.APIKeyEnv == "" && p.APIKeyFile == "" {
			add("%s (%s): set api_key_env, api_key_file or api_key", where, p.Name)
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
		errs = append(errs, p.Transport.validate(where+".transport")...)
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
		case !names[m.Provider]:
			add("%s.provider: %q is not a configured provider", where, m.Provider)
		}
		switch m.Routing {
		case "", "fallback", "weighted":
		default:
			add("%s.routing: %q is not fallback or weighted", where, m.Routing)
		}
		if len(m.Capabilities) == 0 {
			add("%s.capabilities: at least one of %s", where, strings.Join(Protocols, ", "))
		}
		for proto, capab := range m.Capabilities {
			if !contains(Protocols, proto) {
				add("%s.capabilities.%s: unknown protocol (use %s)", where, proto, strings.Join(Protocols, ", "))
			}
			if capab.Format == "" {
				add("%s.capabilities.%s.format: required", where, proto)
			}
		}
	}
	return errs
}

func (t Transport) validate(where string) []error {
	var errs []error
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
	if over.IdleTimeout != nil {
		out.IdleTimeout = over.IdleTimeout
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
