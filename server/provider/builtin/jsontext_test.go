package builtin

import "encoding/json"

// jsonString is m as JSON text (keys sorted): schemas and extra_body are
// JSON text in the contract.
func jsonString(m map[string]any) (string, error) {
	b, err := json.Marshal(m)
	return string(b), err
}
