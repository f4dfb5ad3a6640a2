package config

import (
	"strings"
	"testing"
	"time"
)

// TestContentFilterFallback: models[].content_filter_fallback is a bool
// that needs deployments to fall back over (two or more); set on a model
// of one provider or one deployment it is refused, the error naming the
// key where it stands; a value that is not a bool is refused by its type.
func TestContentFilterFallback(t *testing.T) {
	const providers = "providers: [{name: a, type: builtin}, {name: b, type: builtin}]\n"
	const caps = "capabilities: {chat: {format: builtin}}"
	for body, want := range map[string]string{
		"models: [{name: m, content_filter_fallback: true, deployments: [{provider: a}, {provider: b}], " + caps + "}]\n":  "",
		"models: [{name: m, content_filter_fallback: false, deployments: [{provider: a}, {provider: b}], " + caps + "}]\n": "",
		"models: [{name: m, content_filter_fallback: false, provider: a, " + caps + "}]\n":                                 "",
		"models: [{name: m, content_filter_fallback: true, provider: a, " + caps + "}]\n":                                  "t.yaml:2:20: models[0] (m).content_filter_fallback: needs two deployments or more to fall back to (deployments), the model has 1",
		"models: [{name: m, content_filter_fallback: true, deployments: [{provider: a}], " + caps + "}]\n":                 "models[0] (m).content_filter_fallback: needs two deployments or more",
		"models: [{name: m, content_filter_fallback: often, deployments: [{provider: a}, {provider: b}], " + caps + "}]\n": "content_filter_fallback",
	} {
		cfg, err := Parse([]byte(providers+body), "t.yaml")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
			continue
		}
		if err == nil && cfg.Models[0].ContentFilterFallback != strings.Contains(body, "content_filter_fallback: true") {
			t.Errorf("%s: ContentFilterFallback = %v", body, cfg.Models[0].ContentFilterFallback)
		}
	}
}

// TestStreamFirstTokenTimeout: stream_first_token_timeout, under defaults
// or a provider's transport, is positive; a provider's replaces the
// defaults', and unset it stays unset (the transport then uses
// idle_timeout).
func TestStreamFirstTokenTimeout(t *testing.T) {
	const models = "models: [{name: m, provider: b, capabilities: {chat: {format: builtin}}}]\n"
	for body, want := range map[string]string{
		"defaults: {stream_first_token_timeout: 10m}\nproviders: [{name: b, type: builtin}]\n":                               "",
		"defaults: {stream_first_token_timeout: 0s}\nproviders: [{name: b, type: builtin}]\n":                                "t.yaml:1:12: defaults.stream_first_token_timeout: must be positive, got 0s (unset: idle_timeout)",
		"providers: [{name: b, type: builtin, transport: {stream_first_token_timeout: 0}}]\n":                                "t.yaml:1:50: providers[0].transport.stream_first_token_timeout: must be positive",
		"providers: [{name: b, type: builtin, transport: {stream_first_token_timeout: -1s}}]\n":                              "providers[0] (b).transport.stream_first_token_timeout: negative duration",
		"providers: [{name: b, type: builtin, transport: {stream_first_token_timeout: soon}}]\n":                             "stream_first_token_timeout: invalid duration",
		"defaults: {stream_first_token_timeout: 5m}\nproviders: [{name: b, type: builtin, transport: {idle_timeout: 1m}}]\n": "",
	} {
		_, err := Parse([]byte(body+models), "t.yaml")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	for body, want := range map[string]time.Duration{
		"providers: [{name: b, type: builtin}]\n":                                                                                           0,
		"defaults: {stream_first_token_timeout: 5m}\nproviders: [{name: b, type: builtin}]\n":                                               5 * time.Minute,
		"defaults: {stream_first_token_timeout: 5m}\nproviders: [{name: b, type: builtin, transport: {stream_first_token_timeout: 90s}}]\n": 90 * time.Second,
	} {
		cfg, err := Parse([]byte(body+models), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var got time.Duration
		if d := cfg.Defaults.Merge(cfg.Providers[0].Transport).StreamFirstTokenTimeout; d != nil {
			got = d.Duration
		}
		if got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
}
