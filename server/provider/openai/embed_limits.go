package openai

import (
	"net/url"
	"strings"
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
	u, err := url.Parse(p.baseURL)
	if err != nil {
		return 0
	}
	if h := strings.ToLower(u.Hostname()); h == "voyageai.com" || strings.HasSuffix(h, ".voyageai.com") {
		return maxVoyageEmbedInputs
	}
	return 0
}
