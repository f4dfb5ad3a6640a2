package openai

import (
	"fmt"
	"net/url"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Hosts whose reasoning_effort takes fewer levels than OpenAI's, so that
// the effort reasoningEffortWire names would be refused or ignored there.
//
//   - Ollama's OpenAI-compatible routes (ollama/ollama openai/openai.go,
//     FromChatRequest, and openai/responses.go, FromResponsesRequest)
//     take "high", "medium", "low" and "none" and answer anything else
//     with a 400: "invalid reasoning value: 'xhigh' (must be \"high\",
//     \"medium\", \"low\", or \"none\")". Newer versions add "max" (the
//     same words with "max" among them; ollama.com's /api/chat names it
//     too: "invalid think value: \"minimal\" (must be \"high\", \"medium\",
//     \"low\", \"max\", true, or false)"), older ones do not; gpt-oss's
//     levels stay low, medium and high. XHIGH and MAX went as "xhigh" and
//     MINIMAL as "minimal": a 400 every time. Now a local Ollama (its
//     port, 11434) gets "high" for XHIGH and MAX, the highest level every
//     version takes, and ollama.com "max" (gpt-oss "high" everywhere);
//     MINIMAL gets "low"; each with a warning when the level was lowered. NONE,
//     which Ollama reads as think false, goes to gpt-oss as "low" with a
//     warning: gpt-oss ignores false and would think at its default.
//   - Moonshot / Kimi (api.moonshot.ai, api.moonshot.cn, api.kimi.com):
//     kimi-k3 and the K3.1 series take reasoning_effort "low", "high" and
//     "max" (their default max; platform.kimi.ai, guide
//     use-reasoning-effort, as the synaps-engine crate's Kimi catalog
//     quotes it, checked against api.moonshot.ai), and the API ignores a
//     value it does not name without a word; the K2 models have no graded
//     effort. XHIGH and MAX went as "xhigh", ignored: now "max", its top
//     level; MINIMAL goes as "low".

// ollamaDefaultPort is the port Ollama listens on unless told otherwise
// (OLLAMA_HOST's default, 127.0.0.1:11434): a base URL with it is taken to
// be an Ollama server's /v1.
const ollamaDefaultPort = "11434"

// ollamaHost reports whether baseURL is an Ollama server's OpenAI-compatible
// routes: ollama.com (or a host of it) or any host on Ollama's port.
func ollamaHost(baseURL string) bool {
	return ollamaCloudHost(baseURL) || ollamaLocalHost(baseURL)
}

// ollamaLocalHost reports whether baseURL names Ollama's port.
func ollamaLocalHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && u.Port() == ollamaDefaultPort
}

// ollamaCloudHost reports whether baseURL is ollama.com's API.
func ollamaCloudHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "ollama.com" || strings.HasSuffix(h, ".ollama.com")
}

// moonshotHost reports whether baseURL is Moonshot's (Kimi's) API.
func moonshotHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "api.moonshot.ai", "api.moonshot.cn", "api.kimi.com":
		return true
	}
	return false
}

// effortName is the effort's name as the warnings say it ("XHIGH").
func effortName(e llmrelayv1.ReasoningEffort) string {
	return strings.TrimPrefix(e.String(), "REASONING_EFFORT_")
}

// ollamaEffort is the reasoning effort an Ollama host takes for e and the
// warning when it is not the level asked for; ok is false when e goes as
// reasoningEffortWire names it. field is the extra_body that asks for max
// instead (reasoning_effort, or reasoning.effort on /v1/responses).
func ollamaEffort(baseURL, model string, e llmrelayv1.ReasoningEffort, field string) (wire, warning string, ok bool) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		if provider.OllamaLevelThinker(model) {
			// Ollama reads none as think false, which gpt-oss
			// ignores: it would think at its default (medium). Its
			// least, as the ollama adapter sends it.
			return "low", "reasoning_effort none: gpt-oss cannot turn thinking off on Ollama (it ignores think false and thinks at its default); sent low, the least", true
		}
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL:
		return "low", "reasoning_effort MINIMAL: Ollama's levels are low, medium, high (and none); it refuses minimal, sent low", true
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		if provider.OllamaLevelThinker(model) {
			// gpt-oss's levels are low, medium and high (docs.ollama.com,
			// capabilities/thinking), on every version.
			return "high", "reasoning_effort " + effortName(e) + ": gpt-oss's highest thinking level on Ollama is high; sent high", true
		}
		if ollamaCloudHost(baseURL) {
			// ollama.com names max: the top level, no lower than asked.
			return "max", "", true
		}
		return "high", "reasoning_effort " + effortName(e) + ": Ollama takes max only from newer versions (older ones refuse it, and every one refuses xhigh); sent high, the highest every version takes (for an Ollama that takes max: provider_options.extra_body " + field + ")", true
	}
	return "", "", false
}

// moonshotEffort is the reasoning_effort Moonshot takes for e and the
// warning when it is not the level asked for; ok is false when e goes as
// reasoningEffortWire names it.
func moonshotEffort(e llmrelayv1.ReasoningEffort) (wire, warning string, ok bool) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL:
		return "low", "reasoning_effort MINIMAL: Moonshot's levels are low, high and max, and it ignores one it does not name; sent low", true
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		// max is Moonshot's top level: no lower than asked.
		return "max", "", true
	}
	return "", "", false
}

// Ollama's /v1/embeddings cuts an input longer than the model's context
// without a word: its middleware (ollama/ollama middleware/openai.go,
// EmbeddingsMiddleware) hands /api/embed an api.EmbedRequest of the model,
// the input and the dimensions alone, so "truncate" is unset, which
// EmbedHandler (server/routes.go) reads as true: an input the runner
// refuses ("the input length exceeds the context length") is cut to the
// context and embedded again, and the answer says nothing of it (its
// usage counts the tokens embedded). The route takes no truncate switch
// and no options (openai.EmbedRequest: input, model, dimensions,
// encoding_format), so nothing sent to it makes Ollama refuse; the ollama
// adapter's /api/embed sends truncate false and is refused instead.
//
// The adapter cannot see which inputs were cut; it warns when one may have
// been: an input of more than ollamaEmbedSafeBytes bytes. A tokenizer
// makes no more tokens of a text than its bytes and a few of its own
// (BOS/CLS, EOS/SEP, SentencePiece's leading "▁"), so a shorter input fits
// the smallest context of Ollama's embedding models (all-minilm's 256
// tokens) and cannot have been cut.
const ollamaEmbedSafeBytes = 250

// ollamaEmbedCutWarning is the warning of an embeddings answer from an
// Ollama host whose inputs may have been cut, "" when none may have.
func ollamaEmbedCutWarning(inputs []string) string {
	first, n := -1, 0
	for i, in := range inputs {
		if len(in) > ollamaEmbedSafeBytes {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	which := fmt.Sprintf("input %d", first)
	if n > 1 {
		which = fmt.Sprintf("%d inputs (the first: input %d)", n, first)
	}
	return fmt.Sprintf("Ollama's /v1/embeddings cuts an input longer than the model's context to fit without saying so (the route takes no truncate switch): %s may be embedded from its beginning only; the ollama provider type (/api/embed, truncate false) refuses such an input instead", which)
}
