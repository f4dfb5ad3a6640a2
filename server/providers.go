package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/anthropic"
	"github.com/llmrelay/llmrelay/server/provider/builtin"
	"github.com/llmrelay/llmrelay/server/provider/gemini"
	"github.com/llmrelay/llmrelay/server/provider/ollama"
	"github.com/llmrelay/llmrelay/server/provider/openai"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// buildProviders constructs every configured provider with its own pooled
// HTTP client and call pipeline. It returns the secrets it read so that
// they can be redacted everywhere.
func buildProviders(cfg *config.Config, tel *telemetry.Telemetry, clock pipeline.Clock) (map[string]*catalog.Provider, []string, []*http.Client, error) {
	out := map[string]*catalog.Provider{}
	var secrets []string
	var clients []*http.Client
	for _, pc := range cfg.Providers {
		key := ""
		if pc.Type != "builtin" && (pc.APIKey != "" || pc.APIKeyEnv != "" || pc.APIKeyFile != "") {
			k, err := pc.APIKeyValue()
			if err != nil {
				return nil, nil, nil, err
			}
			key = k
			secrets = append(secrets, k)
		}
		t := cfg.Defaults.Merge(pc.Transport)
		redact := pipeline.NewRedactor(key)
		tc := transportConfig(t)
		tc.Propagator = tel.Propagator()
		client := pipeline.NewHTTPClient(tc, redact)
		clients = append(clients, client)
		impl, err := newProvider(pc, key, client)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("provider %s: %w", pc.Name, err)
		}
		out[pc.Name] = &catalog.Provider{
			Name: pc.Name, Type: pc.Type, Impl: impl,
			Pipeline:       newPipeline(t, tel, pc, clock),
			PreserveRaw:    t.PreserveRawData != nil && *t.PreserveRawData,
			MaxEmbedInputs: embedInputLimit(pc, impl),
		}
	}
	return out, secrets, clients, nil
}

func newProvider(pc config.Provider, key string, client *http.Client) (provider.Provider, error) {
	switch pc.Type {
	case "builtin":
		return builtin.New(), nil
	case "openai", "azure":
		opts := []openai.Option{openai.WithHTTPClient(client), openai.WithHeaders(headers(pc))}
		if pc.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(pc.BaseURL))
		}
		if pc.Type == "openai" {
			if pc.Organization != "" {
				opts = append(opts, openai.WithOrganization(pc.Organization))
			}
			if pc.Project != "" {
				opts = append(opts, openai.WithProject(pc.Project))
			}
			if pc.ReasoningReplay != "" {
				opts = append(opts, openai.WithReasoningReplay(pc.ReasoningReplay))
			}
			if pc.ThinkingSwitch != "" {
				opts = append(opts, openai.WithThinkingSwitch(pc.ThinkingSwitch))
			}
			return openai.New(key, opts...)
		}
		if pc.APIVersion != "" {
			opts = append(opts, openai.WithAzureAPIVersion(pc.APIVersion))
		}
		if pc.AzureAPI == "v1" {
			opts = append(opts, openai.WithAzureV1Routes(true))
		}
		if pc.Auth == "entra" {
			opts = append(opts, openai.WithEntraToken(entraToken(pc, key)))
			key = ""
		}
		return openai.NewAzure(key, opts...)
	case "gemini":
		opts := []gemini.Option{gemini.WithHTTPClient(client), gemini.WithHeaders(headers(pc))}
		if pc.BaseURL != "" {
			opts = append(opts, gemini.WithBaseURL(pc.BaseURL))
		}
		return gemini.New(key, opts...)
	case "anthropic":
		opts := []anthropic.Option{anthropic.WithHTTPClient(client), anthropic.WithHeaders(headers(pc))}
		if pc.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(pc.BaseURL))
		}
		if pc.APIVersion != "" {
			opts = append(opts, anthropic.WithVersion(pc.APIVersion))
		}
		if pc.DefaultMaxTokens > 0 {
			opts = append(opts, anthropic.WithDefaultMaxTokens(int32(pc.DefaultMaxTokens)))
		}
		return anthropic.New(key, opts...)
	case "ollama":
		opts := []ollama.Option{ollama.WithHTTPClient(client), ollama.WithHeaders(headers(pc))}
		if pc.BaseURL != "" {
			opts = append(opts, ollama.WithBaseURL(pc.BaseURL))
		}
		return ollama.New(key, opts...)
	default:
		return nil, fmt.Errorf("provider type %q is not available in this build", pc.Type)
	}
}

func transportConfig(t config.Transport) pipeline.TransportConfig {
	tc := pipeline.DefaultTransportConfig
	if t.ConnectTimeout != nil {
		tc.ConnectTimeout = t.ConnectTimeout.Duration
	}
	if t.FirstByteTimeout != nil {
		tc.FirstByteTimeout = t.FirstByteTimeout.Duration
	}
	tc.UnaryFirstByteTimeout = t.UnaryHeaderBound()
	if t.IdleTimeout != nil {
		tc.IdleTimeout = t.IdleTimeout.Duration
	}
	if t.StreamFirstTokenTimeout != nil {
		tc.FirstTokenTimeout = t.StreamFirstTokenTimeout.Duration
	}
	if t.HTTPVersion != nil {
		tc.HTTPVersion = *t.HTTPVersion
	}
	return tc
}

func retryPolicy(t config.Transport) pipeline.RetryPolicy {
	p := pipeline.DefaultRetryPolicy
	if r := t.Retry; r != nil {
		if r.MaxAttempts != nil {
			p.MaxAttempts = *r.MaxAttempts
		}
		if r.BaseDelay != nil {
			p.BaseDelay = r.BaseDelay.Duration
		}
		if r.MaxDelay != nil {
			p.MaxDelay = r.MaxDelay.Duration
		}
		if r.MaxRetryAfter != nil {
			p.MaxRetryAfter = r.MaxRetryAfter.Duration
		}
	}
	p.FirstContent = t.StreamFirstTokenTimeout != nil
	return p
}

// rawLimit is the raw capture cap per body.
func rawLimit(t config.Transport) int {
	if t.RawCaptureLimit != nil {
		return *t.RawCaptureLimit
	}
	return 1 << 20
}

// newPipeline is the provider call chain: retry (outermost), then, with
// tracing on, a client span per attempt, then timing per attempt, then raw
// capture. With tracing off the span interceptor is not in the chain at
// all.
func newPipeline(t config.Transport, tel *telemetry.Telemetry, pc config.Provider, clock pipeline.Clock) *pipeline.Pipeline {
	retryU, retryS := pipeline.Retry(retryPolicy(t), clock)
	timeU, timeS := pipeline.Timing(pipeline.RealClock{}.Now)
	rawU, rawS := pipeline.RawCapture(rawLimit(t))
	unary := []pipeline.Interceptor{retryU}
	stream := []pipeline.StreamInterceptor{retryS}
	if tel.Tracing() {
		traceU, traceS := pipeline.Trace(pipeline.Tracing{
			Tracer: tel.Tracer(), ProviderType: pc.Type, ProviderName: pc.Name, RecordContent: tel.RecordContent(),
		})
		unary, stream = append(unary, traceU), append(stream, traceS)
	}
	return pipeline.New(append(unary, timeU, rawU), append(stream, timeS, rawS))
}

func headers(pc config.Provider) http.Header {
	h := http.Header{}
	for k, v := range pc.Headers {
		h.Set(k, v)
	}
	return h
}

// entraToken is the bearer token of an Entra-authenticated Azure provider.
// From api_key_file it is re-read when the file changes (a sidecar that
// refreshes the token keeps llmrelay authenticated; one stat per call, a
// read only on change); an inline or environment value cannot change while
// the process runs, so it is the value read at start.
func entraToken(pc config.Provider, initial string) func(context.Context) (string, error) {
	if pc.APIKeyFile == "" {
		return func(context.Context) (string, error) { return initial, nil }
	}
	var (
		mu      sync.Mutex
		modTime time.Time
		size    int64
		token   = initial
	)
	if fi, err := os.Stat(pc.APIKeyFile); err == nil {
		modTime, size = fi.ModTime(), fi.Size()
	}
	return func(context.Context) (string, error) {
		fi, err := os.Stat(pc.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("entra token file: %w", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !fi.ModTime().Equal(modTime) || fi.Size() != size {
			t, err := pc.APIKeyValue()
			if err != nil {
				return "", err
			}
			token, modTime, size = t, fi.ModTime(), fi.Size()
		}
		return token, nil
	}
}
