package gemini

import (
	"bytes"
	"encoding/json"
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
