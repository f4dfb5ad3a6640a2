package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"

	"github.com/llmrelay/llmrelay/server/provider"
)

// embedTruncatedWarning is the warning of an embedContent answer that says
// the input was cut before it was embedded.
const embedTruncatedWarning = "the provider cut the input to the model's maximum length before embedding it (\"truncated\": true): the vector is of its beginning only"

// embedTruncated reports whether an embedContent answer says the input was
// cut before it was embedded: Vertex AI's EmbedContentResponse.truncated
// ("Whether the input content was truncated before generating the
// embedding"; its autoTruncate, which cuts silently, is on unless the
// request turns it off). The Gemini API's answer has no such field.
func embedTruncated(raw []byte) bool {
	if !bytes.Contains(raw, []byte(`"truncated"`)) {
		return false
	}
	var r struct {
		Truncated bool `json:"truncated"`
	}
	return json.Unmarshal(raw, &r) == nil && r.Truncated
}

// payloadLimitRE reads the Gemini API's refusal of a request body over its
// size limit: "Request payload size exceeds the limit: 4194304 bytes."
// (INVALID_ARGUMENT; quarkiverse/quarkus-langchain4j#1705 quotes it for a
// batch of embeddings).
var payloadLimitRE = regexp.MustCompile(`(?i)\brequest payload size exceeds the limit: (\d{1,12}) bytes\b`)

// embedBatchTooLarge marks the refusal of a batchEmbedContents body over
// the size limit (provider.Error.BatchTooLarge): the same inputs in
// smaller requests pass, which the gateway sends, in as many parts as the
// body's size over the limit needs (BatchParts). inputs and size are the
// request's.
func embedBatchTooLarge(err error, inputs, size int) error {
	var pe *provider.Error
	if inputs < 2 || !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest {
		return err
	}
	m := payloadLimitRE.FindStringSubmatch(pe.Message)
	if m == nil {
		return err
	}
	pe.BatchTooLarge = true
	if limit, perr := strconv.Atoi(m[1]); perr == nil && limit > 0 && size > limit {
		pe.BatchParts = (size + limit - 1) / limit
	}
	return err
}
