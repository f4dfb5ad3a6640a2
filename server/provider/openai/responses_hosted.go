package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Output items of the Responses API the contract has no place for: the
// calls of tools OpenAI runs itself (web_search_call, file_search_call,
// code_interpreter_call, image_generation_call, mcp_call, mcp_list_tools,
// tool_search_call, …), the calls of OpenAI's built-in tools that the
// client is to run (local_shell_call, shell_call, computer_call,
// apply_patch_call), and a hosted MCP tool's approval request. Each is
// reported in one warning (unary: parseResponsesResponse; streams: on its
// output_item.done, or from the final response for an item the stream
// did not carry), which names the item and what of it matters to the
// caller: that it failed, that the client was to act on it, what a
// generated image was. The answer's text, calls and usage are unchanged.

// clientRunItems are the items of OpenAI's built-in tools that the model
// asks the client to run and answer with an output item of their own
// (local_shell_call_output, shell_call_output, computer_call_output,
// apply_patch_call_output): not function calls, they cannot be answered
// with a ToolResult.
var clientRunItems = map[string]bool{
	"local_shell_call": true,
	"shell_call":       true,
	"computer_call":    true,
	"apply_patch_call": true,
}

// maxItemErrorBytes bounds the text of a hosted item's error repeated in
// its warning.
const maxItemErrorBytes = 512

// byteCount is the length of a JSON string value without its bytes
// (image_generation_call.result: a base64 image of megabytes). It is the
// length of the string token as sent, quotes excluded; -1 when the value
// is not a string (null included).
type byteCount int

// UnmarshalJSON records the length.
func (n *byteCount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		*n = byteCount(len(b) - 2)
	} else {
		*n = -1
	}
	return nil
}

// hostedItemWarning is the warning for an output item the contract has no
// place for (parseResponsesResponse and responsesStream.itemDone report
// every item of a type they do not translate with it).
func hostedItemWarning(it *respOutputItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ignored output item of type %q", it.Type)
	var facts []string
	if it.ID != "" {
		facts = append(facts, "id "+it.ID)
	}
	switch {
	case it.Type == "mcp_approval_request":
		facts = append(facts, fmt.Sprintf("OpenAI asks the client to approve the call of MCP tool %q on server %q before it runs it "+
			"(an mcp_approval_response in the next request), which the contract has no place for", it.Name, string(it.ServerLabel)))
	case clientRunItems[it.Type] && isPresent(it.Environment):
		// OpenAI's hosted shell: the call runs in a container of
		// OpenAI's, its output follows in the same response.
		if it.CallID != "" {
			facts = append(facts, "call_id "+it.CallID)
		}
		where := "run by the provider"
		var env struct {
			ContainerID string `json:"container_id"`
		}
		if json.Unmarshal(it.Environment, &env) == nil && env.ContainerID != "" {
			where += " in container " + env.ContainerID
		}
		facts = append(facts, where)
	case clientRunItems[it.Type]:
		what := "a call of OpenAI's built-in tool for the client to run"
		if it.CallID != "" {
			what = fmt.Sprintf("call_id %s: %s", it.CallID, what)
		}
		facts = append(facts, what+", which the contract has no place for")
	case it.Type == "image_generation_call":
		facts = append(facts, imageItemFacts(it))
	case it.Type == "mcp_call" || it.Type == "mcp_list_tools":
		if it.ServerLabel != "" {
			facts = append(facts, fmt.Sprintf("MCP server %q", string(it.ServerLabel)))
		}
		if it.Name != "" {
			facts = append(facts, fmt.Sprintf("tool %q", it.Name))
		}
		facts = append(facts, "run by the provider")
	case it.Type == "program":
		// Programmatic tool calling: code the model wrote, run by OpenAI,
		// which calls the client's functions (function_call items whose
		// caller names this item's call_id: callerWarning).
		if it.CallID != "" {
			facts = append(facts, "call_id "+it.CallID)
		}
		facts = append(facts, "a program the model wrote, run by the provider, whose function calls are the client's")
	case strings.HasSuffix(it.Type, "_call"):
		facts = append(facts, "a tool the provider ran itself")
	case strings.HasSuffix(it.Type, "_output"):
		facts = append(facts, "the output of a tool the provider ran itself")
	default:
		facts = append(facts, "an item the contract has no place for")
	}
	if it.Status != "" && it.Status != "completed" {
		facts = append(facts, fmt.Sprintf("status %q", it.Status))
	}
	if e := itemError(it.Error); e != "" {
		facts = append(facts, "error: "+e)
	}
	b.WriteString(" (")
	b.WriteString(strings.Join(facts, "; "))
	b.WriteString(")")
	return b.String()
}

// imageItemFacts describes an image_generation_call's image, which has no
// place in the answer (the contract's Image part is an input): its format
// and size and the length of its base64 result, so that an image is never
// lost without a word.
func imageItemFacts(it *respOutputItem) string {
	var desc []string
	if it.OutputFormat != "" {
		desc = append(desc, string(it.OutputFormat))
	}
	if it.Size != "" {
		desc = append(desc, string(it.Size))
	}
	img := "a generated image"
	if len(desc) > 0 {
		img += " (" + strings.Join(desc, ", ") + ")"
	}
	switch {
	case it.Result == nil:
		return img + " without a result"
	case *it.Result < 0:
		return img + " whose result is not a string"
	case *it.Result == 0:
		return img + " with an empty result"
	default:
		return fmt.Sprintf("%s of %d bytes of base64, which the answer has no place for", img, int(*it.Result))
	}
}

// itemError is a hosted item's error as text ("" for none: absent, null,
// ""): a string's value, another value's JSON, cut at maxItemErrorBytes.
func itemError(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == `""` {
		return ""
	}
	s := string(t)
	if t[0] == '"' {
		var v string
		if json.Unmarshal(t, &v) == nil {
			s = v
		}
	}
	s = provider.Shorten(s, maxItemErrorBytes)
	// The JSON of a non-string error keeps its strings' bytes as sent:
	// invalid UTF-8 could not go into a proto string.
	return strings.ToValidUTF8(s, "\uFFFD")
}

// namespaceWarning reports a function_call's namespace, which a ToolCall
// has no place for. OpenAI refuses a call sent back without the namespace
// it was made in ("Missing namespace for function_call '…'. It does not
// exist in the default namespace. Round-trip the model's function_call
// item with its namespace field included.", param input[i].namespace: the
// AI SDK's fixture openai-missing-function-call-namespace-error.1.json)
// unless the function is also in the default namespace.
func namespaceWarning(callID, ns string) string {
	return fmt.Sprintf("tool call %s was made in namespace %q, which the contract has no place for: "+
		"sent back without it, OpenAI refuses the call unless the function is also in the default namespace", callID, ns)
}

// parallelWrapperWarning reports a function_call to an undeclared tool
// named "parallel" ("" otherwise): GPT-5.4's (and 5.5's) internal
// parallel-call wrapper, which the Responses API intermittently returns as
// a call whose arguments are {"tool_uses":[{"recipient_name":
// "functions.<name>", "parameters": {…}}, …]} (vercel/ai#19067, the
// fixtures issue-19067-parallel-tool-call-wrapper.chunks.txt and
// parallel-tool-call-wrapper.1.json of vercel/ai). The calls inside have
// no call ids of their own, so they are not split into calls the
// provider never issued (the follow-up answers the wrapper's call_id);
// the call is relayed as sent and said. A declared tool of that name is
// the client's own.
func parallelWrapperWarning(callID, name string, tools []*llmrelayv1.Tool) string {
	if name != "parallel" {
		return ""
	}
	for _, t := range tools {
		if t.GetName() == name {
			return ""
		}
	}
	return fmt.Sprintf("tool call %s is to the undeclared tool \"parallel\": the model's parallel-call wrapper, whose arguments' "+
		"tool_uses[] hold the calls (recipient_name \"functions.<name>\", parameters) without call ids of their own; relayed as sent", callID)
}

// callerWarning reports what made a function_call when it is not the
// model itself ("" otherwise: no caller, null, or one without a type): a program
// item's code (programmatic tool calling: {type: "program", caller_id:
// the program's call_id}), which the contract has no place for. The
// program item is reported on its own (hostedItemWarning) and is not
// sent back with the call's result.
func callerWarning(callID string, raw json.RawMessage) string {
	if !isPresent(raw) {
		return ""
	}
	var c struct {
		Type     flexString `json:"type"`
		CallerID flexString `json:"caller_id"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Sprintf("tool call %s has a caller of an unrecognized shape; ignored", callID)
	}
	if c.Type == "" {
		return ""
	}
	who := fmt.Sprintf("a %s", string(c.Type))
	if c.CallerID != "" {
		who += " (caller_id " + string(c.CallerID) + ")"
	}
	return fmt.Sprintf("tool call %s was made by %s, not by the model directly (programmatic tool calling), which the contract has no place for: "+
		"the call goes back without its caller (the %s item goes back as a provider item)", callID, who, string(c.Type))
}

// hostedItem is the provider item of a hosted output item (one the
// contract has no part for), and the warning for what of it matters to a
// caller reading only the normalized answer ("" when nothing does): that
// it failed or is unfinished, that the client was to act on it (a call
// of OpenAI's built-in tools for the client to run, an MCP approval
// request), that it holds no JSON object to keep. The item goes back
// unchanged in the next request, in its place (encodeInputItems), so
// that a reasoning item that led to it can be sent paired with it.
func hostedItem(it *respOutputItem) (*provider.ProviderItem, string) {
	if len(it.raw) == 0 || it.raw[0] != '{' {
		return nil, hostedItemWarning(it)
	}
	notable := it.Type == "mcp_approval_request" || (clientRunItems[it.Type] && !isPresent(it.Environment)) ||
		(it.Status != "" && it.Status != "completed") || itemError(it.Error) != ""
	warning := ""
	if notable {
		warning = strings.Replace(hostedItemWarning(it), "ignored output item", "output item", 1) + "; kept as a provider item"
	}
	return &provider.ProviderItem{Type: it.Type, JSON: string(it.raw)}, warning
}
