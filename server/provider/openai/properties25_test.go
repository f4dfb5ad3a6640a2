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
		IgnoredFields: map[string]string{
			"choices[].delta.channel":      "gpt-oss's harmony channel (Groq: analysis) beside a reasoning delta, which its reasoning key already says",
			"metadata":                     "SGLang's serving metadata (Together: weight_version \"default\", the weights' label): serving internals",
			"usage.additional_usage_field": "a usage field that is no count (a string, the AI SDK's Mistral fixture): usage_details keeps the usage's counts",
			// Found by the kept property (round 26), not kept yet.
			"choices[].delta.token_id": "NOT KEPT: the sampled token's id beside its text (Together's stream, real_oljs_together_stream): no place short of logprobs",
			"response.output[].format": "NOT KEPT: OpenRouter's label of a reasoning item's encrypted content (openai-responses-v1, real_llm_openrouter_reasoning_2)",
		},
	})
	counts.Log(t)
}
