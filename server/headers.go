package server

import (
	"fmt"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// validateHeaderValues checks the request fields that become upstream HTTP
// header values (Anthropic betas): visible ASCII only, so that a caller can
// neither inject a header nor make the HTTP client fail the call as a
// connection error. Betas are joined with commas, so a comma is refused
// too.
func validateHeaderValues(po *llmrelayv1.ProviderOptions) error {
	for i, b := range po.GetAnthropic().GetBetas() {
		field := fmt.Sprintf("provider_options.anthropic.betas[%d]", i)
		if b == "" {
			return invalidField(field, "empty beta name")
		}
		for j := 0; j < len(b); j++ {
			if c := b[j]; c <= ' ' || c >= 0x7f || c == ',' {
				return invalidField(field, "byte %d (0x%02x) is not allowed in a header value: use visible ASCII, one beta per entry", j, c)
			}
		}
	}
	return nil
}
