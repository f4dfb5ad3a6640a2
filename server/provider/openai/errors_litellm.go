package openai

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// LiteLLM's proxy answers a provider's failure with its own error object,
// {"error": {"message": "litellm.BadRequestError: <Provider>Exception -
// <the provider's answer>. Received Model Group=…\nAvailable Model Group
// Fallbacks=…", "type": null, "param": null, "code": "400"}}: the status
// and code are LiteLLM's mapping of the provider's (litellm/
// litellm_core_utils/exception_mapping_utils.py), the message a chain of
// its exception names (litellm/exceptions.py: BadRequestError,
// ContextWindowExceededError, ContentPolicyViolationError, RateLimitError,
// AuthenticationError, …) around the provider's own body or words
// (BrokkAi/brokk-app#540: Anthropic's context-limit refusal as
// b'{"type":"error",…}'; meta-llama/PurpleLlama#109 and BerriAI/litellm#16231:
// Azure's content filter as "AzureException - The response was filtered
// …\nmodel=…. content_policy_fallback=None. …"). The provider's words are
// what classify the failure (and say what to fix): a capability, a
// context length or a signature refused reads as the same refusal
// unwrapped would.

// litellmNameRE matches one LiteLLM exception name at the start of a
// message ("litellm.BadRequestError: ").
var litellmNameRE = regexp.MustCompile(`^litellm\.(\w+Error|Timeout): `)

// litellmProviderRE matches the provider exception LiteLLM names before
// the provider's answer ("AnthropicException - ", "OpenAIException -
// Error code: 400 - "), its name in group 1.
var litellmProviderRE = regexp.MustCompile(`^(\w+?)Exception - (?:Error code: \d{3} - )?`)

// litellmTails are the texts LiteLLM appends after the provider's answer:
// the router's model group and fallbacks, the content-policy advice.
var litellmTails = []string{". Received Model Group=", "\nReceived Model Group=", "\nmodel=", ". Enable 'litellm.modify_params=True'"}

// litellmUpstream reads the provider's answer inside a LiteLLM proxy's
// message: its error object (OpenAI's, Anthropic's, Google's) where the
// answer is JSON, else its text; the provider is the name of LiteLLM's
// <Provider>Exception. The exception names, outermost first, come back
// too. nil, nil when msg is not LiteLLM's.
func litellmUpstream(msg string) (*upstreamError, []string) {
	s := strings.TrimSpace(msg)
	var names []string
	for {
		m := litellmNameRE.FindStringSubmatch(s)
		if m == nil {
			break
		}
		names = append(names, m[1])
		s = s[len(m[0]):]
	}
	if len(names) == 0 {
		return nil, nil
	}
	m := litellmProviderRE.FindStringSubmatch(s)
	if m == nil {
		return nil, names
	}
	up := &upstreamError{provider: m[1]}
	s = s[len(m[0]):]
	for _, tail := range litellmTails {
		if i := strings.Index(s, tail); i >= 0 {
			s = s[:i]
		}
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "b'") && strings.HasSuffix(s, "'") && len(s) >= 3 {
		// The provider's body as Python prints bytes.
		s = strings.TrimSpace(s[2 : len(s)-1])
	}
	body := []byte(s)
	if len(body) > 0 && (body[0] == '{' || body[0] == '[') {
		up.status = googleStatusName(body)
		up.requestID = strings.TrimSpace(bodyRequestID(body))
		if !upstreamObject(body, &up.err) {
			// JSON without an error in it, or Python's repr of a dict:
			// nothing read safely.
			return nil, names
		}
	} else {
		up.err.Message = flexString(strings.ToValidUTF8(s, "\uFFFD"))
	}
	if strings.TrimSpace(string(up.err.Message)) == "" {
		return nil, names
	}
	return up, names
}

// litellmKind is the kind LiteLLM's own exception names give a failure
// its status does not (a 400 for each): ContextWindowExceededError and
// ContentPolicyViolationError, which LiteLLM raises from the provider's
// code or words; KindUnknown for any other chain.
func litellmKind(names []string) provider.Kind {
	for _, n := range names {
		switch n {
		case "ContextWindowExceededError":
			return provider.KindContextLength
		case "ContentPolicyViolationError":
			return provider.KindContentFilter
		}
	}
	return provider.KindUnknown
}

// gatewayPrefixed reads the error of a gateway that keeps the provider's
// error object but prefixes its message with the provider's slug:
// Portkey's generateErrorResponse writes {"error": {"message":
// "${provider} error: ${message}", "type", "param", "code"}, "provider":
// provider} (Portkey-AI/gateway, src/providers/utils.ts), and
// TrueFoundry's gateway the same beside "status": "failure" and
// "error_origin_level" ({'message': 'deepinfra error: Tool calling is not
// supported for model: …', 'error': {'message': 'deepinfra error: …',
// 'type': 'APIError', 'code': '405'}, 'provider': 'deepinfra'}:
// truefoundry/models#944). It returns the error object with the
// provider's own message, and the provider; "" when the body has no
// "provider" string or the message does not start with its prefix (the
// gateway's own errors).
func gatewayPrefixed(env map[string]json.RawMessage, errRaw json.RawMessage) (json.RawMessage, string) {
	var prov string
	if json.Unmarshal(env["provider"], &prov) != nil || strings.TrimSpace(prov) == "" {
		return nil, ""
	}
	var obj map[string]json.RawMessage
	var msg string
	if json.Unmarshal(errRaw, &obj) != nil || json.Unmarshal(obj["message"], &msg) != nil {
		return nil, ""
	}
	inner, ok := strings.CutPrefix(msg, prov+" error: ")
	if !ok || strings.TrimSpace(inner) == "" {
		return nil, ""
	}
	m, err := json.Marshal(inner)
	if err != nil {
		return nil, ""
	}
	obj["message"] = m
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, ""
	}
	return out, prov
}
