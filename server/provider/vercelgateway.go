package provider

import (
	"encoding/json"
	"strings"
)

// VercelGateway reads the Vercel AI Gateway's provider_metadata (on an
// Anthropic message, a Chat Completions finish chunk or message, a
// Responses response): gateway.routing.finalProvider, the provider that
// served the call after the gateway's fallbacks ("baseten", "vertex",
// "xai"), which the answer says nowhere else (its model is the id asked
// for); and gateway.cost, what the gateway charged for the call in US
// dollars, a decimal string kept as sent ("0.00134": every recording of
// its endpoints, July to October 2026, carries it). Either is "" when
// absent, not a string, or (the cost) not a non-negative decimal. The
// rest of the metadata (routing plans, the other cost fields, which
// repeat or split cost) is not read.
func VercelGateway(raw json.RawMessage) (upstream, cost string) {
	if len(raw) == 0 {
		return "", ""
	}
	var pm struct {
		Gateway *struct {
			Routing *struct {
				FinalProvider json.RawMessage `json:"finalProvider"`
			} `json:"routing"`
			Cost json.RawMessage `json:"cost"`
		} `json:"gateway"`
	}
	if json.Unmarshal(raw, &pm) != nil || pm.Gateway == nil {
		return "", ""
	}
	if json.Unmarshal(pm.Gateway.Cost, &cost) != nil || !isDecimal(cost) {
		cost = ""
	}
	if pm.Gateway.Routing != nil && json.Unmarshal(pm.Gateway.Routing.FinalProvider, &upstream) == nil {
		upstream = strings.TrimSpace(strings.ToValidUTF8(upstream, "\uFFFD"))
	}
	return upstream, cost
}

// isDecimal reports whether s is a non-negative decimal number as the
// gateway writes costs: digits, at most one point between digits.
func isDecimal(s string) bool {
	digits, point := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point && digits > 0 && i+1 < len(s):
			point = true
		default:
			return false
		}
	}
	return digits > 0 && len(s) <= 64
}
