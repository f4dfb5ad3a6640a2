package ollama

import (
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25Properties checks the cross-provider properties
// (providertest.Properties) over every real recording of this package.
func TestRound25Properties(t *testing.T) {
	t.Parallel()
	counts := providertest.Properties(t, providertest.PropertyCheck{
		Glob:    filepath.Join("testdata", "real_*.http"),
		Wire:    func(string, providertest.Recording) providertest.Wire { return providertest.WireOllama },
		Request: func(providertest.Wire) *provider.Request { return providertest.BenchRequest("llama3.2", "ollama") },
		NewProvider: func(url, _ string, _ providertest.Recording) provider.Provider {
			p, err := New(testKey, WithBaseURL(url))
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		RequestIDHeaders: []string{requestIDHeader},
		IgnoredFields: map[string]string{
			// Found by the kept property (round 26), not kept: the line
			// comes after the done line, where the stream ends; reading on
			// would wait on a connection a proxy may hold open.
			"signature": "a signing proxy's attestation line after the done line (real_tdx_llama3_stream_signed, tolak/tdx-llama3): not read",
		},
	})
	counts.Log(t)
}
