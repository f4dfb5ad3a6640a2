// Package extract normalizes any logged LLM payload (OpenAI, Anthropic,
// Bedrock, Gemini, Ollama, LangChain-style shapes, or a single message) into
// text parts, tool uses, tool results and tool definitions; ParseArguments
// normalizes tool arguments (text, validity and a Struct).
//
// The patterns are documented in docs/extract.md; their names are the
// Pattern* constants.
package extract

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// MaxDepth is how many levels of nested objects and arrays are examined.
// Deeper parts are skipped and ExtractResponse.depth_limit_reached is set.
const MaxDepth = 64

// Pattern names, reported in ExtractResponse.matched_patterns and on each
// item. The set is stable: names are never renamed or reused.
const (
	// Text.
	PatternTextField          = "text_field"          // {"text": "..."}
	PatternContentString      = "content_string"      // {"content": "..."}
	PatternContentStringItem  = "content_string_item" // {"content": ["...", ...]} or "parts"
	PatternRefusalField       = "refusal_field"       // {"refusal": "..."} (OpenAI)
	PatternInstructionsString = "instructions_string" // {"system": "..."}, {"instructions": "..."}
	PatternPromptString       = "prompt_string"       // {"prompt": "..."}, {"input": "..."}
	PatternDeltaField         = "delta_field"         // {"type": "response.output_text.delta", "delta": "..."} (OpenAI Responses stream)
	PatternResponseString     = "response_string"     // {"response": "..."} (Ollama /api/generate, LlamaIndex)

	// Tool uses.
	PatternBedrockToolUse    = "bedrock_tool_use"    // {"toolUse": {...}}
	PatternToolUseField      = "tool_use_field"      // {"tool_use": {...}}
	PatternFunctionCallField = "function_call_field" // {"functionCall": {...}} (Gemini), {"function_call": {...}}
	PatternOpenAIFunction    = "openai_function"     // {"id": ..., "function": {"name", "arguments"}} or "custom": {"name", "input"}
	PatternTypedToolUse      = "typed_tool_use"      // {"type": "tool_use"|"function"|"tool_call"|"function_call"|"custom_tool_call", "name": ...}
	PatternFlatToolUse       = "flat_tool_use"       // {"name": ..., "input"|"arguments"|"args"|"parameters": ...}

	// Tool results.
	PatternBedrockToolResult     = "bedrock_tool_result"     // {"toolResult": {...}}
	PatternToolResultField       = "tool_result_field"       // {"tool_result": {...}}
	PatternFunctionResponseField = "function_response_field" // {"functionResponse": {...}} (Gemini)
	PatternTypedToolResult       = "typed_tool_result"       // {"type": "tool_result"|"function_call_output"|"custom_tool_call_output"|"*_tool_result", ...}
	PatternRoleTool              = "role_tool"               // {"role": "tool"|"function", "content": ...}
	PatternToolCallIDField       = "tool_call_id_field"      // {"tool_call_id": ..., ...}

	// Tool definitions.
	PatternDefinitionDirect            = "definition_direct"             // {"tools": [{"name", "description", ...}]}
	PatternDefinitionFunction          = "definition_function"           // {"tools": [{"function": {...}}]} (OpenAI)
	PatternDefinitionTool              = "definition_tool"               // {"tools": [{"tool": {...}}]}
	PatternDefinitionDefinition        = "definition_definition"         // {"tools": [{"definition": {...}}]}
	PatternDefinitionBedrockToolSpec   = "definition_bedrock_tool_spec"  // {"toolSpec": {...}}
	PatternDefinitionGeminiDeclaration = "definition_gemini_declaration" // {"functionDeclarations": [...]}
)

// Extract normalizes a JSON payload. Parts are reported in document order.
// The only error is a *SyntaxError for data that is not JSON.
func Extract(data []byte) (*llmrelayv1.ExtractResponse, error) {
	n, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	return extractNode(&n), nil
}

// ExtractValue normalizes a payload given as a google.protobuf.Value.
// Object members are visited in key order. A nil value gives an empty
// response.
func ExtractValue(v *structpb.Value) *llmrelayv1.ExtractResponse {
	n := nodeFromValue(v)
	return extractNode(&n)
}

func extractNode(n *node) *llmrelayv1.ExtractResponse {
	e := extractor{resp: &llmrelayv1.ExtractResponse{}}
	e.walk(n, 1, "")
	e.resp.DepthLimitReached = e.resp.DepthLimitReached || e.conv.depthLimited
	return e.resp
}

// segment is one step of a JSON Pointer.
type segment struct {
	key   string
	index int
	isKey bool
}

type useKey struct{ id, name string }

type extractor struct {
	resp     *llmrelayv1.ExtractResponse
	conv     converter
	path     []segment
	patterns map[string]bool
	uses     map[useKey]bool
}

func (e *extractor) pushKey(k string) { e.path = append(e.path, segment{key: k, isKey: true}) }
func (e *extractor) pushIndex(i int)  { e.path = append(e.path, segment{index: i}) }
func (e *extractor) pop()             { e.path = e.path[:len(e.path)-1] }

// inKey reports whether the node being matched is the value of member k.
func (e *extractor) inKey(k string) bool {
	last := len(e.path) - 1
	return last >= 0 && e.path[last].isKey && e.path[last].key == k
}

// pointer renders the current path as an RFC 6901 JSON Pointer.
func (e *extractor) pointer() string {
	if len(e.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range e.path {
		b.WriteByte('/')
		if !s.isKey {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		if !strings.ContainsAny(s.key, "~/") {
			b.WriteString(s.key)
			continue
		}
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s.key))
	}
	return b.String()
}

func (e *extractor) matched(pattern string) {
	if e.patterns == nil {
		e.patterns = make(map[string]bool)
	}
	if !e.patterns[pattern] {
		e.patterns[pattern] = true
		e.resp.MatchedPatterns = append(e.resp.MatchedPatterns, pattern)
	}
}

// deep reports whether a container at depth is beyond MaxDepth, and records it.
func (e *extractor) deep(depth int) bool {
	if depth > MaxDepth {
		e.resp.DepthLimitReached = true
		return true
	}
	return false
}

// walk visits n, a value at depth (the root is at depth 1).
func (e *extractor) walk(n *node, depth int, role string) {
	switch n.kind {
	case kindObject:
		if e.deep(depth) {
			return
		}
		e.objectNode(n, depth, role)
	case kindArray:
		if e.deep(depth) {
			return
		}
		for i := range n.elems {
			e.pushIndex(i)
			e.walk(&n.elems[i], depth+1, role)
			e.pop()
		}
	}
}

// objectNode matches an object against the patterns, then visits the
// members the match did not consume.
func (e *extractor) objectNode(n *node, depth int, role string) {
	if r, ok := n.stringMember("role"); ok {
		role = r
	}
	if isReasoning(n) {
		return
	}
	consumed := e.match(n, role)
	if consumed.all {
		return
	}
	if t, _ := n.stringMember("type"); strings.HasPrefix(t, "response.") {
		// An OpenAI Responses stream event: its "input" is a custom tool
		// call's input (response.custom_tool_call_input.done), not a prompt.
		consumed.keys = append(consumed.keys[:len(consumed.keys):len(consumed.keys)], "input")
		// Its text deltas carry their text in "delta": the answer (or the
		// refusal) as it streams, like a Chat Completions delta's content.
		if d, ok := n.stringMember("delta"); ok && d != "" && (t == "response.output_text.delta" || t == "response.refusal.delta") {
			pattern := PatternDeltaField
			if t == "response.refusal.delta" {
				pattern = PatternRefusalField
			}
			e.pushKey("delta")
			e.text(d, pattern, role)
			e.pop()
			consumed.keys = append(consumed.keys, "delta")
		}
	}
	// A chat choice carrying a delta or a message: some servers (Together,
	// vLLM's legacy mirror) repeat the delta's text in the choice's "text",
	// which is the same text, not more of it.
	mirror := n.object("delta") != nil || n.object("message") != nil
	for i, k := range n.keys {
		if consumed.has(k) || (mirror && k == "text" && n.elems[i].kind == kindString) {
			continue
		}
		e.pushKey(k)
		e.member(k, &n.elems[i], depth, role)
		e.pop()
	}
}

// isReasoning reports whether the object is the model's reasoning, whose
// text is not the answer: a Gemini part with "thought": true, a block typed
// thinking / redacted_thinking (Anthropic, Mistral), reasoning_text (OpenAI
// Responses) or reasoning.text (OpenRouter reasoning_details), or a Responses
// stream event about reasoning
// (response.reasoning_text.done, response.reasoning_summary_part.done, ...).
// Reasoning summary items inside a "summary" array are not objects of these
// kinds: they are reported as text under their path.
func isReasoning(n *node) bool {
	if n.boolTrue("thought") {
		return true
	}
	switch typ, _ := n.stringMember("type"); typ {
	case "thinking", "redacted_thinking", "reasoning_text", "reasoning.text":
		return true
	default:
		return strings.HasPrefix(typ, "response.reasoning")
	}
}

// member visits the value v of member k of an object at depth.
func (e *extractor) member(k string, v *node, depth int, role string) {
	switch k {
	case "annotations", "groundingMetadata", "grounding_metadata", "search_results":
		// Citation metadata quotes the answer (Gemini grounding segments)
		// or its sources (OpenRouter url_citation content, the search
		// results of Groq's server-side tools): not text of the payload's
		// own.
		return
	}
	switch v.kind {
	case kindString:
		if v.str == "" {
			return
		}
		switch k {
		case "text":
			e.text(v.str, PatternTextField, role)
		case "content":
			e.text(v.str, PatternContentString, role)
		case "refusal":
			e.text(v.str, PatternRefusalField, role)
		case "system", "instructions":
			e.text(v.str, PatternInstructionsString, role)
		case "prompt", "input":
			e.text(v.str, PatternPromptString, role)
		case "response":
			e.text(v.str, PatternResponseString, role)
		}
	case kindArray:
		if e.deep(depth + 1) {
			return
		}
		switch k {
		case "content", "parts":
			for i := range v.elems {
				e.pushIndex(i)
				if el := &v.elems[i]; el.kind == kindString {
					if el.str != "" {
						e.text(el.str, PatternContentStringItem, role)
					}
				} else {
					e.walk(el, depth+2, role)
				}
				e.pop()
			}
		case "tools", "functions":
			for i := range v.elems {
				e.pushIndex(i)
				e.toolsItem(&v.elems[i], depth+2, role)
				e.pop()
			}
		case "functionDeclarations", "function_declarations":
			e.declarations(v, depth+1, role)
		default:
			e.walk(v, depth+1, role)
		}
	case kindObject:
		switch k {
		case "tool_choice", "toolChoice":
			// Names a tool the model must call; not a call.
			return
		}
		e.walk(v, depth+1, role)
	}
}

// toolsItem visits an element of a "tools" or "functions" array: a tool
// definition, directly or wrapped.
func (e *extractor) toolsItem(n *node, depth int, role string) {
	if n.kind != kindObject || e.deep(depth) {
		e.walk(n, depth, role)
		return
	}
	for _, w := range [...]struct{ key, pattern string }{
		{"function", PatternDefinitionFunction},
		{"tool", PatternDefinitionTool},
		{"definition", PatternDefinitionDefinition},
		{"toolSpec", PatternDefinitionBedrockToolSpec},
	} {
		if inner := n.object(w.key); inner != nil && e.definition(inner, w.pattern) {
			return
		}
	}
	for _, k := range [...]string{"functionDeclarations", "function_declarations"} {
		if decls := n.array(k); decls != nil {
			e.pushKey(k)
			e.declarations(decls, depth+1, role)
			e.pop()
			return
		}
	}
	if e.definition(n, PatternDefinitionDirect) {
		return
	}
	// Not a definition (e.g. {"googleSearch": {}}): look inside anyway.
	e.objectNode(n, depth, role)
}

// declarations visits a Gemini functionDeclarations array at depth.
func (e *extractor) declarations(arr *node, depth int, role string) {
	if e.deep(depth) {
		return
	}
	for i := range arr.elems {
		e.pushIndex(i)
		if el := &arr.elems[i]; !e.definition(el, PatternDefinitionGeminiDeclaration) {
			e.walk(el, depth+1, role)
		}
		e.pop()
	}
}

// consumption is the set of members a match took; the others are still
// visited.
type consumption struct {
	all  bool
	keys []string
}

var consumeAll = consumption{all: true}

func consume(keys ...string) consumption { return consumption{keys: keys} }

func (c consumption) has(k string) bool {
	if c.all {
		return true
	}
	for _, x := range c.keys {
		if x == k {
			return true
		}
	}
	return false
}

var (
	argumentKeys = []string{"input", "arguments", "args", "parameters"}
	contentKeys  = []string{"content", "output", "result", "response"}
	schemaKeys   = []string{"parameters", "input_schema", "inputSchema", "parametersJsonSchema", "parameters_json_schema"}
)

// match reports a tool use, tool result or tool definition that the object
// n is, checked in a fixed order, and returns the members it consumed.
func (e *extractor) match(n *node, role string) consumption {
	// A member holding the call or result: the object is its wrapper.
	if in := n.object("toolUse"); in != nil {
		return e.nestedUse(n, in, "toolUse", PatternBedrockToolUse, role)
	}
	if in := n.object("tool_use"); in != nil {
		return e.nestedUse(n, in, "tool_use", PatternToolUseField, role)
	}
	if in := n.object("functionCall"); in != nil {
		return e.nestedUse(n, in, "functionCall", PatternFunctionCallField, role)
	}
	// A legacy function_call with its arguments is a call; with a name
	// only it is a request's forced function (the legacy tool_choice),
	// except in a stream delta, whose first fragment names the call before
	// its arguments follow (Azure's 2023 streams).
	if in := n.object("function_call"); in != nil && (in.has("arguments") || in.has("args") || (in.has("name") && e.inKey("delta"))) {
		return e.nestedUse(n, in, "function_call", PatternFunctionCallField, role)
	}
	if in := n.object("function"); in != nil {
		if definitionShaped(in) && e.definition(in, PatternDefinitionFunction) {
			return consume("function")
		}
		return e.nestedUse(n, in, "function", PatternOpenAIFunction, role)
	}
	if in := n.object("custom"); in != nil && in.has("input") {
		// A Chat Completions custom (free-form) tool call: {"id",
		// "type": "custom", "custom": {"name", "input"}}, its input text.
		return e.nestedUse(n, in, "custom", PatternOpenAIFunction, role)
	}
	if in := n.object("toolSpec"); in != nil && e.definition(in, PatternDefinitionBedrockToolSpec) {
		return consume("toolSpec")
	}
	for _, r := range [...]struct{ key, pattern string }{
		{"toolResult", PatternBedrockToolResult},
		{"tool_result", PatternToolResultField},
		{"functionResponse", PatternFunctionResponseField},
		{"function_response", PatternFunctionResponseField},
	} {
		if in := n.object(r.key); in != nil {
			e.toolResult(n, in, r.pattern, role)
			return consume(r.key)
		}
	}

	typ, _ := n.stringMember("type")
	name, hasName := n.stringMember("name")
	switch typ {
	case "tool_use", "function", "tool_call", "function_call", "custom_tool_call":
		if hasName {
			e.toolUse(n, n, PatternTypedToolUse, role, typ == "function_call" || typ == "custom_tool_call")
			return consume(argumentKeys...)
		}
	case "tool_result", "function_call_output", "custom_tool_call_output":
		e.toolResult(n, n, PatternTypedToolResult, role)
		return consume(contentKeys...)
	}
	if strings.HasSuffix(typ, "_tool_result") {
		// Anthropic server and MCP tool results: web_search_tool_result,
		// code_execution_tool_result, mcp_tool_result, ...
		e.toolResult(n, n, PatternTypedToolResult, role)
		return consume(contentKeys...)
	}
	if r, _ := n.stringMember("role"); (r == "tool" || r == "function") && (n.has("content") || n.has("tool_call_id")) {
		e.toolResult(n, n, PatternRoleTool, role)
		return consume(contentKeys...)
	}
	if n.scalar("tool_call_id") != "" {
		e.toolResult(n, n, PatternToolCallIDField, role)
		return consume(contentKeys...)
	}
	if hasName && name != "" {
		if definitionShaped(n) && e.definition(n, PatternDefinitionDirect) {
			return consumeAll
		}
		for _, k := range argumentKeys {
			if n.has(k) {
				e.toolUse(n, n, PatternFlatToolUse, role, false)
				return consume(argumentKeys...)
			}
		}
	}
	return consumption{}
}

// definitionShaped reports whether an object outside a "tools" array looks
// like a tool definition rather than a call: a name, no call arguments, and a
// schema member that only definitions have (input_schema, inputSchema,
// parametersJsonSchema) or a description next to parameters.
func definitionShaped(n *node) bool {
	if n.has("input") || n.has("arguments") || n.has("args") {
		return false
	}
	if _, ok := n.stringMember("name"); !ok {
		return false
	}
	if n.has("input_schema") || n.has("inputSchema") || n.has("parametersJsonSchema") || n.has("parameters_json_schema") {
		return true
	}
	// A definition's description is text; a call with "description": null
	// beside its parameters is text-generation-inference 1.4's tool call
	// (testdata/real/openai_tgi_tool_call_object.json).
	d := n.get("description")
	return d != nil && d.kind != kindNull && n.has("parameters")
}

// nestedUse reports the tool use held in member key of outer.
func (e *extractor) nestedUse(outer, inner *node, key, pattern, role string) consumption {
	e.toolUse(outer, inner, pattern, role, false)
	return consume(key)
}

// firstID returns the first non-empty id among keys, looking in inner, then
// outer, for each key in turn.
func firstID(outer, inner *node, keys ...string) string {
	for _, k := range keys {
		if id := inner.scalar(k); id != "" {
			return id
		}
		if outer != inner {
			if id := outer.scalar(k); id != "" {
				return id
			}
		}
	}
	return ""
}

// toolUse reports the call described by inner (name, arguments), wrapped by
// outer (which may be inner itself). preferCallID: an OpenAI Responses
// function_call item, whose call_id (not its item id) is what results name.
func (e *extractor) toolUse(outer, inner *node, pattern, role string, preferCallID bool) {
	var id string
	switch {
	case preferCallID && inner.scalar("call_id") != "":
		id = inner.scalar("call_id")
	case outer.scalar("id") != "":
		id = outer.scalar("id")
	default:
		id = firstID(outer, inner, "id", "toolUseId", "tool_use_id", "call_id", "tool_call_id")
	}
	name := inner.scalar("name")
	if id != "" {
		k := useKey{id: id, name: name}
		if e.uses[k] {
			return
		}
		if e.uses == nil {
			e.uses = make(map[useKey]bool)
		}
		e.uses[k] = true
	}
	var args *node
	for _, k := range argumentKeys {
		if v := inner.get(k); v != nil {
			args = v
			break
		}
	}
	a := parseArgumentsNode(args)
	if a.DepthLimitReached {
		e.resp.DepthLimitReached = true
	}
	e.matched(pattern)
	u := &llmrelayv1.ExtractedToolUse{Name: name, Id: id, Pattern: pattern, Path: e.pointer(), Role: role}
	if a.Malformed() {
		u.RawArguments = &a.Raw
	} else {
		u.Input = structpb.NewStructValue(a.Input)
	}
	e.resp.ToolUses = append(e.resp.ToolUses, u)
}

// toolResult reports the result described by inner, wrapped by outer.
func (e *extractor) toolResult(outer, inner *node, pattern, role string) {
	r := &llmrelayv1.ExtractedToolResult{
		Id:      firstID(outer, inner, "toolUseId", "tool_use_id", "tool_call_id", "call_id", "id"),
		Pattern: pattern,
		Path:    e.pointer(),
		Role:    role,
	}
	for _, k := range []string{"name", "tool_name"} {
		if r.Name = firstID(outer, inner, k); r.Name != "" {
			break
		}
	}
	for _, k := range contentKeys {
		if v := inner.get(k); v != nil {
			r.Content = e.conv.value(v, 1)
			// Anthropic server tools give an error as the content:
			// {"type": "web_fetch_tool_result_error", "error_code": ...}.
			if t, _ := v.stringMember("type"); strings.HasSuffix(t, "_tool_result_error") {
				r.IsError = true
			}
			break
		}
	}
	for _, n := range []*node{inner, outer} {
		if n.boolTrue("is_error") || n.boolTrue("isError") {
			r.IsError = true
		}
		if s, _ := n.stringMember("status"); s == "error" {
			r.IsError = true
		}
	}
	e.matched(pattern)
	e.resp.ToolResults = append(e.resp.ToolResults, r)
}

// definition reports the tool definition n when it has a name.
func (e *extractor) definition(n *node, pattern string) bool {
	if n.kind != kindObject {
		return false
	}
	name, ok := n.stringMember("name")
	if !ok || name == "" {
		return false
	}
	e.matched(pattern)
	d := &llmrelayv1.ExtractedToolDefinition{Name: name, Pattern: pattern, Path: e.pointer()}
	d.Description, _ = n.stringMember("description")
	for _, k := range schemaKeys {
		v := n.get(k)
		if v == nil {
			continue
		}
		if k == "inputSchema" && v.kind == kindObject && len(v.keys) == 1 && v.keys[0] == "json" {
			v = &v.elems[0] // Bedrock: {"inputSchema": {"json": {...}}}
		}
		d.Parameters = e.conv.value(v, 1)
		d.ParametersJson = string(appendJSON(nil, v))
		break
	}
	e.resp.ToolDefinitions = append(e.resp.ToolDefinitions, d)
	return true
}

func (e *extractor) text(s, pattern, role string) {
	e.matched(pattern)
	e.resp.Texts = append(e.resp.Texts, &llmrelayv1.ExtractedText{Text: s, Pattern: pattern, Path: e.pointer(), Role: role})
}
