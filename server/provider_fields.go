package server

import (
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/protobuf/reflect/protoreflect"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// A provider that refuses a request names the field in its own wire terms
// ("tools[0].function.name", "stop", "tools.0.custom.input_schema.type",
// "generation_config.temperature"): the adapters keep it as
// provider.Error.Param, and the status's BadRequest carried it as the
// field. requestFieldOf translates the ones whose request field the
// adapter's encoding makes certain into the request's path
// ("tools[0].name", "options.stop", "tools[0].parameters",
// "options.temperature"); the provider's own path stays in the message.
// Paths it does not know (a message's content after Anthropic merged
// turns) are left as the provider gave them. A Responses input item
// (input[k]…) is no message index: the OpenAI adapter, which alone knows
// how messages expanded into items, names its messages[i]… itself.

// wirePath splits a provider's field path into its segments: names and
// indexes, whether written a.b[0].c, a.b.0.c or camelCase (Google's JSON
// names), names in snake_case.
func wirePath(param string) []string {
	var segs []string
	for _, dotted := range strings.Split(param, ".") {
		name, rest, _ := strings.Cut(dotted, "[")
		if name != "" {
			segs = append(segs, snake(name))
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil
			}
			segs = append(segs, idx)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return segs
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func index(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// has reports whether name is one of segs.
func has(segs []string, name string) bool {
	for _, s := range segs {
		if s == name {
			return true
		}
	}
	return false
}

// requestFieldOf is the request's field for a provider's field path on a
// request of format, "" when the translation is not certain. The
// conversation's indexes are the adapter's (its context first):
// requestField shifts them.
func requestFieldOf(req *provider.Request, param string) string {
	segs := wirePath(param)
	if req == nil || len(segs) == 0 {
		return ""
	}
	if extra := req.ProviderOptions.GetExtraBody(); extra != "" && extraSets(extra, param) {
		// extra_body set (or replaced) that field: it is no option's.
		return ""
	}
	var f string
	switch {
	case strings.HasPrefix(req.Format, "openai-"):
		f = openAIField(req, segs)
	case req.Format == "anthropic-messages":
		f = anthropicField(req, segs)
	case req.Format == "gemini":
		f = geminiField(req, segs)
	}
	if !fieldSet(req, f) {
		// The provider blamed a field this request did not set (an
		// adapter's default, another version's name): not the option.
		return ""
	}
	return f
}

// fieldSet reports whether the option or provider option f names is set
// in the request (a tool or message path is one the request has).
func fieldSet(req *provider.Request, f string) bool {
	var m protoreflect.Message
	var rest string
	switch {
	case f == "":
		return false
	case strings.HasPrefix(f, "options."):
		if req.Options == nil {
			return false
		}
		m, rest = req.Options.ProtoReflect(), strings.TrimPrefix(f, "options.")
	case strings.HasPrefix(f, "provider_options."):
		po := req.ProviderOptions.ProtoReflect()
		kind, after, _ := strings.Cut(strings.TrimPrefix(f, "provider_options."), ".")
		fd := po.Descriptor().Fields().ByName(protoreflect.Name(kind))
		if fd == nil || !po.Has(fd) {
			return false
		}
		m, rest = po.Get(fd).Message(), after
	default:
		return true
	}
	name := rest
	if i := strings.IndexAny(name, ".["); i >= 0 {
		name = name[:i]
	}
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	return fd != nil && m.Has(fd)
}

// extraSets reports whether extra_body has the provider path's top-level
// field (as written, or in the other casing).
func extraSets(extra, param string) bool {
	top, _, _ := strings.Cut(param, ".")
	top, _, _ = strings.Cut(top, "[")
	return strings.Contains(extra, `"`+top+`"`) || strings.Contains(extra, `"`+snake(top)+`"`) || strings.Contains(extra, `"`+camel(top)+`"`)
}

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// toolField is tools[n] and the field of it segs (after the tool's index)
// name, the tool being one the request offered.
func toolField(req *provider.Request, n int, segs []string) string {
	if n >= len(req.Tools) {
		return "" // a tool the adapter added (Anthropic's answer tool, a hosted MCP server)
	}
	f := "tools[" + strconv.Itoa(n) + "]"
	switch {
	case has(segs, "parameters"), has(segs, "input_schema"), has(segs, "parameters_json_schema"):
		return f + ".parameters"
	case len(segs) > 0 && segs[len(segs)-1] == "name":
		return f + ".name"
	case len(segs) > 0 && segs[len(segs)-1] == "description":
		return f + ".description"
	case has(segs, "strict"):
		return f + ".strict"
	}
	return f
}

// responseFormatField names the response format field of a path below it.
func responseFormatField(rest []string) string {
	switch {
	case has(rest, "schema"):
		return "options.response_format.schema"
	case has(rest, "name"):
		return "options.response_format.schema_name"
	case has(rest, "strict"):
		return "options.response_format.strict"
	case len(rest) == 1 && rest[0] == "type":
		return "options.response_format.type"
	}
	return "options.response_format"
}

// optionPath is options.<name>, with the index of a list entry.
func optionPath(name string, rest []string) string {
	f := "options." + name
	if len(rest) > 0 {
		if n, ok := index(rest[0]); ok {
			f += "[" + strconv.Itoa(n) + "]"
		}
	}
	return f
}

func openAIField(req *provider.Request, segs []string) string {
	head, rest := segs[0], segs[1:]
	switch head {
	case "temperature", "top_p", "seed", "presence_penalty", "frequency_penalty", "parallel_tool_calls", "reasoning_effort":
		return "options." + head
	case "stop":
		return optionPath("stop", rest)
	case "max_tokens", "max_completion_tokens", "max_output_tokens":
		return "options.max_tokens"
	case "tool_choice":
		return "options.tool_choice"
	case "response_format":
		return responseFormatField(rest)
	case "text":
		if has(rest, "format") {
			return responseFormatField(rest[1:])
		}
	case "reasoning":
		switch {
		case has(rest, "effort"):
			return "options.reasoning_effort"
		case has(rest, "summary"):
			return "provider_options.openai.reasoning_summary"
		}
	case "user", "safety_identifier":
		return "provider_options.openai.user"
	case "store", "service_tier", "logprobs", "top_logprobs":
		return "provider_options.openai." + head
	case "metadata":
		return "provider_options.openai.metadata"
	case "tools":
		if len(rest) > 0 {
			if n, ok := index(rest[0]); ok {
				return toolField(req, n, rest[1:])
			}
		}
		return "tools"
	case "messages":
		if req.Format != "openai-responses" && len(rest) > 0 {
			if n, ok := index(rest[0]); ok {
				return chatMessageField(req.Messages, n, rest[1:])
			}
		}
	}
	return ""
}

// chatMessageField is the request field of Chat Completions message n
// (the adapter sends a tool message's results as one message each, and
// the other messages one for one) and the path below it: a tool result's
// content, a part of a content array (one per part), else the message.
func chatMessageField(msgs []*llmrelayv1.Message, n int, rest []string) string {
	wire := 0
	for i, m := range msgs {
		if m == nil {
			continue
		}
		if m.GetRole() == llmrelayv1.Role_ROLE_TOOL {
			for j, p := range m.GetParts() {
				if p.GetToolResult() == nil {
					continue
				}
				if wire == n {
					f := "messages[" + strconv.Itoa(i) + "].parts[" + strconv.Itoa(j) + "].tool_result"
					if has(rest, "tool_call_id") {
						return f + ".call_id"
					}
					if has(rest, "content") {
						return f + ".content"
					}
					return f
				}
				wire++
			}
			continue
		}
		if wire == n {
			f := "messages[" + strconv.Itoa(i) + "]"
			if m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT && len(m.GetParts()) > 1 && len(rest) >= 2 && rest[0] == "content" {
				if k, ok := index(rest[1]); ok && k < len(m.GetParts()) {
					return f + ".parts[" + strconv.Itoa(k) + "]"
				}
			}
			return f
		}
		wire++
	}
	return ""
}

func anthropicField(req *provider.Request, segs []string) string {
	head, rest := segs[0], segs[1:]
	switch head {
	case "temperature", "top_p", "top_k":
		return "options." + head
	case "max_tokens":
		if req.Options == nil || req.Options.MaxTokens == nil {
			return "" // the configured default_max_tokens, no field of the request
		}
		return "options.max_tokens"
	case "stop_sequences":
		return optionPath("stop", rest)
	case "tool_choice":
		return "options.tool_choice"
	case "thinking":
		if a := req.ProviderOptions.GetAnthropic(); a != nil && a.ThinkingBudgetTokens != nil {
			return "provider_options.anthropic.thinking_budget_tokens"
		}
		if req.Options.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
			return "options.reasoning_effort"
		}
	case "metadata":
		return "provider_options.anthropic.user_id"
	case "output_config":
		if has(rest, "format") {
			return "options.response_format.schema"
		}
	case "tools":
		if len(rest) > 0 {
			if n, ok := index(rest[0]); ok {
				return toolField(req, n, rest[1:])
			}
		}
		return "tools"
	}
	return ""
}

func geminiField(req *provider.Request, segs []string) string {
	head, rest := segs[0], segs[1:]
	switch head {
	case "generation_config":
		if len(rest) == 0 {
			return ""
		}
		switch name := rest[0]; name {
		case "temperature", "top_p", "top_k", "seed", "presence_penalty", "frequency_penalty":
			return "options." + name
		case "max_output_tokens":
			return "options.max_tokens"
		case "stop_sequences":
			return optionPath("stop", rest[1:])
		case "response_schema", "response_json_schema", "_response_json_schema":
			return "options.response_format.schema"
		case "response_mime_type":
			return "options.response_format"
		case "thinking_config":
			g := req.ProviderOptions.GetGemini()
			switch {
			case has(rest, "include_thoughts") && g != nil && g.IncludeThoughts != nil:
				return "provider_options.gemini.include_thoughts"
			case g != nil && g.ThinkingBudget != nil:
				return "provider_options.gemini.thinking_budget"
			case req.Options.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
				return "options.reasoning_effort"
			}
		}
	case "safety_settings":
		if len(rest) > 0 {
			if n, ok := index(rest[0]); ok && n < len(req.ProviderOptions.GetGemini().GetSafetySettings()) {
				f := "provider_options.gemini.safety_settings[" + strconv.Itoa(n) + "]"
				if len(rest) > 1 && (rest[1] == "category" || rest[1] == "threshold") {
					f += "." + rest[1]
				}
				return f
			}
		}
	case "tool_config":
		return "options.tool_choice"
	case "tools":
		// The adapter sends every function in tools[0].functionDeclarations.
		if len(rest) >= 3 && rest[0] == "0" && rest[1] == "function_declarations" {
			if n, ok := index(rest[2]); ok {
				return toolField(req, n, rest[3:])
			}
		}
	}
	return ""
}
