package provider

import (
	"regexp"
	"strings"
)

// ollama.com's and Ollama's runner's error words, read by the ollama
// adapter (its native API) and the openai adapter (Ollama's /v1 route,
// which puts the same message in OpenAI's error object).

// ollamaRefRE matches the reference ollama.com puts at the end of its
// error messages, a UUID new for each failure: "Internal Server Error
// (ref: bddedf60-d799-48d6-ad1f-6783dcfc8e9b)" (its opaque 500,
// tinyhumansai/openhuman#4042), "this model requires a subscription,
// upgrade for access: https://ollama.com/upgrade (ref: b7b9f6f9-…)" (a
// 403).
var ollamaRefRE = regexp.MustCompile(`\(ref: ([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\)\s*$`)

// OllamaCloudRef is the reference an ollama.com error message ends with,
// "" when it has none. It stands as the error's request id when no header
// gave one: a local Ollama passes a cloud model's error body on without
// ollama.com's headers, and the reference is what Ollama's support asks
// for.
func OllamaCloudRef(msg string) string {
	if m := ollamaRefRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// The runner's refusals of an image (runner/ollamarunner/runner.go:
// NewSequence's "failed to process inputs: %w" of the model's
// EncodeMultimodal error, answered "Failed to create new sequence: …" with
// a 500): Go's image decoder's "image: unknown format" for a format Ollama
// cannot read (ollama/ollama#11320), and model.ErrNoVisionModel "this
// model is missing data required for image input" for a model without a
// vision component. The same request fails every time.
const (
	OllamaImageFormatAdvice = " (Ollama cannot decode this image's format: the same request fails again; send it as PNG or JPEG)"
	OllamaNoVisionAdvice    = " (this model takes no images: send them to a vision model, or leave them out)"
)

// OllamaImageAdvice is what the message of one of the runner's image
// refusals gets added, to say what to change; "" for any other message.
func OllamaImageAdvice(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "image: unknown format"):
		return OllamaImageFormatAdvice
	case strings.Contains(m, "missing data required for image input"):
		return OllamaNoVisionAdvice
	}
	return ""
}

// OllamaLevelThinker reports whether model is gpt-oss (any tag or
// namespace: gpt-oss:20b, gpt-oss:120b-cloud, library/gpt-oss), the model
// family whose thinking Ollama sets by level and cannot turn off ("GPT-OSS
// requires think to be set to low, medium, or high. Passing true/false is
// ignored for that model": docs.ollama.com, capabilities/thinking). The
// ollama adapter and the openai adapter's Ollama routes read it.
func OllamaLevelThinker(model string) bool {
	return strings.Contains(strings.ToLower(model), "gpt-oss")
}

// OllamaUsageLimit recognizes ollama.com's 429 for an exhausted plan:
// "you've reached your hourly usage limit, please wait or upgrade to
// continue", "you (user) have reached your session usage limit, upgrade
// for higher limits: …" (hourly, session and weekly limits). Retrying
// seconds later meets the same limit: the adapters code it
// insufficient_quota, not retried, a reason to fall back. Its native API
// sends it as {"error": "…"}, its /v1 routes (and a local Ollama passing a
// cloud model's answer on) in OpenAI's error object, type api_error.
func OllamaUsageLimit(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "usage limit") && strings.Contains(m, "reached your")
}
