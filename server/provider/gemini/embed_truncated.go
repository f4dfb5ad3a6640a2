package gemini

import (
	"bytes"
	"encoding/json"
	"errors"

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

// embedBatchTooLarge marks the refusal of a batchEmbedContents body over
// the size limit (provider.Error.BatchTooLarge, provider.GooglePayloadLimit): the same inputs in
// smaller requests pass, which the gateway sends, in as many parts as the
// body's size over the limit needs (BatchParts). inputs and size are the
// request's.
func embedBatchTooLarge(err error, inputs, size int) error {
	var pe *provider.Error
	if inputs < 2 || !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest {
		return err
	}
	limit, ok := provider.GooglePayloadLimit(pe.Message)
	if !ok {
		return err
	}
	pe.BatchTooLarge = true
	if limit > 0 && size > limit {
		pe.BatchParts = (size + limit - 1) / limit
	}
	return err
}
