package config

import (
	"strings"
	"testing"
	"time"
)

// TestUnaryFirstByteTimeout: unary_first_byte_timeout, under defaults or
// a provider's transport, is positive and not longer than
// max_call_duration (which would end every call first); unset, it is the
// call's bound, max_call_duration, whatever first_byte_timeout says.
func TestUnaryFirstByteTimeout(t *testing.T) {
	const models = "models: [{name: m, provider: b, capabilities: {chat: {format: builtin}}}]\n"
	for body, want := range map[string]string{
		"defaults: {unary_first_byte_timeout: 5m}\nproviders: [{name: b, type: builtin}]\n":                                       "",
		"defaults: {unary_first_byte_timeout: 10m}\nproviders: [{name: b, type: builtin}]\n":                                      "",
		"defaults: {unary_first_byte_timeout: 0s}\nproviders: [{name: b, type: builtin}]\n":                                       "t.yaml:1:12: defaults.unary_first_byte_timeout: must be positive, got 0s",
		"defaults: {unary_first_byte_timeout: 11m}\nproviders: [{name: b, type: builtin}]\n":                                      "t.yaml:1:12: defaults.unary_first_byte_timeout: 11m0s is longer than defaults.max_call_duration (10m0s), which ends the call first",
		"defaults: {max_call_duration: 2m, unary_first_byte_timeout: 3m}\nproviders: [{name: b, type: builtin}]\n":                "defaults.unary_first_byte_timeout: 3m0s is longer than defaults.max_call_duration (2m0s)",
		"defaults: {max_call_duration: 2m}\nproviders: [{name: b, type: builtin, transport: {unary_first_byte_timeout: 3m}}]\n":   "providers[0].transport.unary_first_byte_timeout: 3m0s is longer than defaults.max_call_duration (2m0s)",
		"defaults: {max_call_duration: 20m}\nproviders: [{name: b, type: builtin, transport: {unary_first_byte_timeout: 15m}}]\n": "",
		"providers: [{name: b, type: builtin, transport: {unary_first_byte_timeout: -1s}}]\n":                                     "providers[0] (b).transport.unary_first_byte_timeout: negative duration",
	} {
		_, err := Parse([]byte(body+models), "t.yaml")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	for body, want := range map[string]time.Duration{
		"defaults: {first_byte_timeout: 30s}\nproviders: [{name: b, type: builtin}]\n":                                                  10 * time.Minute,
		"defaults: {max_call_duration: 30m}\nproviders: [{name: b, type: builtin}]\n":                                                   30 * time.Minute,
		"defaults: {unary_first_byte_timeout: 4m}\nproviders: [{name: b, type: builtin}]\n":                                             4 * time.Minute,
		"defaults: {unary_first_byte_timeout: 4m}\nproviders: [{name: b, type: builtin, transport: {unary_first_byte_timeout: 90s}}]\n": 90 * time.Second,
	} {
		cfg, err := Parse([]byte(body+models), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Defaults.Merge(cfg.Providers[0].Transport).UnaryHeaderBound(); got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
}
