package openai

import (
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// maxVoyageEmbedInputs is the most inputs Voyage AI's /v1/embeddings takes
// in one request ("The maximum length of the list is 1,000",
// docs.voyageai.com/reference/embeddings-api); the gateway takes 2048.
const maxVoyageEmbedInputs = 1000

// MaxEmbedInputs is the most inputs one embeddings request to this API may
// carry where the base URL tells it (Voyage AI), 0 otherwise. The gateway
// sends a call with more as several requests (providers[].
// max_embedding_inputs overrides it, e.g. for a TEI server).
func (p *Provider) MaxEmbedInputs() int {
	if voyageHost(p.baseURL) {
		return maxVoyageEmbedInputs
	}
	return 0
}

// voyageHost reports whether baseURL is Voyage AI's API (api.voyageai.com).
func voyageHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "voyageai.com" || strings.HasSuffix(h, ".voyageai.com")
}

// voyageInputRE reads the input Voyage AI names when one is longer than
// the model's context and truncation is off: "Request to model
// 'voyage-4-large' failed. The example at index 0 in your batch has too
// many tokens and does not fit into the model's context window of 32000
// tokens. …" (a 400 with {"detail": …}, as latitude-dev/latitude-llm#3554
// quotes it).
var voyageInputRE = regexp.MustCompile(`(?i)\bexample at index (\d+) in your batch\b`)

// embedInputParam names the input an embeddings error is about, as
// OpenAI's own "Invalid 'input[0]': …" does (param input[N]), where the
// message says it another way (Voyage's "example at index N in your
// batch"): the caller learns which input to shorten.
func embedInputParam(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Param == "" {
		if m := voyageInputRE.FindStringSubmatch(pe.Message); m != nil {
			pe.Param = "input[" + m[1] + "]"
		}
	}
	return err
}
