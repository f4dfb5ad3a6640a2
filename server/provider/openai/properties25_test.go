package openai

import (
	"bytes"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// openAIWire tells a recording's format: a Responses object or stream of
// response.* events, else a chat completion.
func openAIWire(_ string, rec providertest.Recording) providertest.Wire {
	if bytes.Contains(rec.Body, []byte(`"object":"response"`)) || bytes.Contains(rec.Body, []byte(`"object": "response"`)) ||
		bytes.Contains(rec.Body, []byte(`"type":"response.`)) || bytes.Contains(rec.Body, []byte(`"type": "response.`)) {
		return providertest.WireResponses
	}
	return providertest.WireChat
}

// TestRound25Properties checks the cross-provider properties
// (providertest.Properties) over every real recording of this package.
func TestRound25Properties(t *testing.T) {
	t.Parallel()
	counts := providertest.Properties(t, providertest.PropertyCheck{
		Glob: td("real_*.http"),
		Wire: openAIWire,
		Request: func(w providertest.Wire) *provider.Request {
			req := simpleRequest("gpt-4o-mini")
			if w == providertest.WireResponses {
				req.Format = formatResponses
			}
			return req
		},
		NewProvider: func(url, _ string, _ providertest.Recording) provider.Provider {
			return newTestProvider(t, kOpenAI, url)
		},
		RequestIDHeaders: append([]string{"x-request-id"}, compatRequestIDHeaders[:]...),
	})
	counts.Log(t)
}
