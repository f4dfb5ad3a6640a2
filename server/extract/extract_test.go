package extract

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// wantResponse parses the expected response, written as protojson.
func wantResponse(t *testing.T, js string) *llmrelayv1.ExtractResponse {
	t.Helper()
	want := &llmrelayv1.ExtractResponse{}
	if err := protojson.Unmarshal([]byte(js), want); err != nil {
		t.Fatalf("bad expectation %s: %v", js, err)
	}
	return want
}

func assertResponse(t *testing.T, got, want *llmrelayv1.ExtractResponse) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", protojson.Format(got), protojson.Format(want))
	}
}

type extractCase struct {
	name  string
	input string
	want  string // protojson of the expected ExtractResponse
}

func runExtractCases(t *testing.T, cases []extractCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Extract([]byte(tc.input))
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			assertResponse(t, got, wantResponse(t, tc.want))
		})
	}
}

// The seed's "Text Content Extraction" patterns, in its order.
func TestSeedTextPatterns(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"direct text field", `{"text": "Hello world"}`,
			`{"texts":[{"text":"Hello world","pattern":"text_field","path":"/text"}],"matched_patterns":["text_field"]}`},
		{"content as string", `{"content": "Hello world"}`,
			`{"texts":[{"text":"Hello world","pattern":"content_string","path":"/content"}],"matched_patterns":["content_string"]}`},
		{"content array of strings", `{"content": ["Text part 1", "Text part 2"]}`,
			`{"texts":[{"text":"Text part 1","pattern":"content_string_item","path":"/content/0"},
			{"text":"Text part 2","pattern":"content_string_item","path":"/content/1"}],"matched_patterns":["content_string_item"]}`},
		{"content array of text objects", `{"content": [{"text": "Hello"}, {"text": "world"}]}`,
			`{"texts":[{"text":"Hello","pattern":"text_field","path":"/content/0/text"},
			{"text":"world","pattern":"text_field","path":"/content/1/text"}],"matched_patterns":["text_field"]}`},
		{"mixed content", `{"content": ["String", {"text": "Object"}, {"other": "data"}]}`,
			`{"texts":[{"text":"String","pattern":"content_string_item","path":"/content/0"},
			{"text":"Object","pattern":"text_field","path":"/content/1/text"}],
			"matched_patterns":["content_string_item","text_field"]}`},
	})
}

// The seed's "Tool Use Extraction" patterns, in its order.
func TestSeedToolUsePatterns(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"bedrock nested toolUse", `{"toolUse": {"name": "search", "input": {"query": "test"}}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"bedrock_tool_use"}],"matched_patterns":["bedrock_tool_use"]}`},
		{"snake_case tool_use", `{"tool_use": {"name": "search", "input": {"query": "test"}}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"tool_use_field"}],"matched_patterns":["tool_use_field"]}`},
		{"type tool_use", `{"type": "tool_use", "name": "search", "input": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"typed_tool_use"}],"matched_patterns":["typed_tool_use"]}`},
		{"type function", `{"type": "function", "name": "search", "input": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"typed_tool_use"}],"matched_patterns":["typed_tool_use"]}`},
		{"type tool_call", `{"type": "tool_call", "name": "search", "input": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"typed_tool_use"}],"matched_patterns":["typed_tool_use"]}`},
		{"flat input", `{"name": "search", "input": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"flat arguments", `{"name": "search", "arguments": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"flat parameters", `{"name": "search", "parameters": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"openai nested function with JSON string arguments",
			`{"type": "function", "function": {"name": "search", "arguments": "{\"query\": \"test\"}"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"openai_function"}],"matched_patterns":["openai_function"]}`},
		{"message-level tool_calls",
			`{"text": "Using tools", "tool_calls": [{"id": "call_123", "type": "function", "function": {"name": "search", "arguments": "{}"}}]}`,
			`{"texts":[{"text":"Using tools","pattern":"text_field","path":"/text"}],
			"tool_uses":[{"name":"search","id":"call_123","input":{},"pattern":"openai_function","path":"/tool_calls/0"}],
			"matched_patterns":["text_field","openai_function"]}`},
		{"seed example: generic tool in content",
			`{"content": [{"name": "search", "parameters": {"query": "test"}}]}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"flat_tool_use","path":"/content/0"}],"matched_patterns":["flat_tool_use"]}`},
		{"seed example: content text object", `{"content": [{"text": "Hello"}]}`,
			`{"texts":[{"text":"Hello","pattern":"text_field","path":"/content/0/text"}],"matched_patterns":["text_field"]}`},
		{"seed example: mixed text, tool, result",
			`{"content": ["Processing your request", {"name": "search", "input": {"q": "test"}}, {"type": "tool_result", "content": "Found results"}]}`,
			`{"texts":[{"text":"Processing your request","pattern":"content_string_item","path":"/content/0"}],
			"tool_uses":[{"name":"search","input":{"q":"test"},"pattern":"flat_tool_use","path":"/content/1"}],
			"tool_results":[{"content":"Found results","pattern":"typed_tool_result","path":"/content/2"}],
			"matched_patterns":["content_string_item","flat_tool_use","typed_tool_result"]}`},
		// Not in the seed but in real payloads.
		{"gemini functionCall", `{"functionCall": {"name": "search", "args": {"q": "x"}, "id": "fc-1"}}`,
			`{"tool_uses":[{"name":"search","id":"fc-1","input":{"q":"x"},"pattern":"function_call_field"}],"matched_patterns":["function_call_field"]}`},
		{"gemini functionCall without args", `{"functionCall": {"name": "now"}}`,
			`{"tool_uses":[{"name":"now","input":{},"pattern":"function_call_field"}],"matched_patterns":["function_call_field"]}`},
		{"openai legacy function_call message",
			`{"role": "assistant", "content": null, "function_call": {"name": "search", "arguments": "{\"q\":1}"}}`,
			`{"tool_uses":[{"name":"search","input":{"q":1},"pattern":"function_call_field","role":"assistant"}],"matched_patterns":["function_call_field"]}`},
		{"openai legacy function_call request control is not a call", `{"function_call": {"name": "search"}}`, `{}`},
		{"openai legacy function_call streamed: the first fragment names the call",
			`{"choices": [{"index": 0, "delta": {"role": "assistant", "function_call": {"name": "search"}}}]}`,
			`{"tool_uses":[{"name":"search","input":{},"pattern":"function_call_field","path":"/choices/0/delta","role":"assistant"}],"matched_patterns":["function_call_field"]}`},
		{"openai chat custom tool call",
			`{"tool_calls": [{"id": "call_c1", "type": "custom", "custom": {"name": "math_exp", "input": "4 + 4"}}]}`,
			`{"tool_uses":[{"name":"math_exp","id":"call_c1","raw_arguments":"4 + 4","pattern":"openai_function","path":"/tool_calls/0"}],"matched_patterns":["openai_function"]}`},
		{"choice text mirroring its delta is one text",
			`{"choices": [{"index": 0, "text": "Hi", "delta": {"content": "Hi"}}]}`,
			`{"texts":[{"text":"Hi","pattern":"content_string","path":"/choices/0/delta/content"}],"matched_patterns":["content_string"]}`},
		{"openai responses function_call uses call_id",
			`{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"}`,
			`{"tool_uses":[{"name":"f","id":"call_1","input":{},"pattern":"typed_tool_use"}],"matched_patterns":["typed_tool_use"]}`},
		{"langchain args", `{"name": "search", "args": {"q": "x"}, "id": "call_9", "type": "tool_call"}`,
			`{"tool_uses":[{"name":"search","id":"call_9","input":{"q":"x"},"pattern":"typed_tool_use"}],"matched_patterns":["typed_tool_use"]}`},
		{"ollama object arguments", `{"function": {"name": "get_weather", "arguments": {"city": "Toronto"}}}`,
			`{"tool_uses":[{"name":"get_weather","input":{"city":"Toronto"},"pattern":"openai_function"}],"matched_patterns":["openai_function"]}`},
		{"type without name is not a tool use", `{"type": "function"}`, `{}`},
		{"name alone is not a tool use", `{"name": "search"}`, `{}`},
	})
}

// The seed's "Tool Arguments Handling" formats, inside a tool use.
func TestSeedArgumentFormats(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"object", `{"name": "search", "input": {"query": "test", "limit": 10}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test","limit":10},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"JSON string", `{"name": "search", "arguments": "{\"query\": \"test\", \"limit\": 10}"}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test","limit":10},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"alternative name", `{"name": "search", "parameters": {"query": "test"}}`,
			`{"tool_uses":[{"name":"search","input":{"query":"test"},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"malformed JSON", `{"name": "search", "arguments": "not valid json {"}`,
			`{"tool_uses":[{"name":"search","raw_arguments":"not valid json {","pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"unexpected type", `{"name": "search", "input": [1, 2, 3]}`,
			`{"tool_uses":[{"name":"search","input":{"value":[1,2,3]},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"number", `{"name": "search", "input": 7}`,
			`{"tool_uses":[{"name":"search","input":{"value":7},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"string holding an array", `{"name": "search", "arguments": "[1,2]"}`,
			`{"tool_uses":[{"name":"search","input":{"value":[1,2]},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"null", `{"name": "search", "input": null}`,
			`{"tool_uses":[{"name":"search","input":{},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"empty string", `{"type": "function", "function": {"name": "now", "arguments": ""}}`,
			`{"tool_uses":[{"name":"now","input":{},"pattern":"openai_function"}],"matched_patterns":["openai_function"]}`},
		{"truncated JSON string", `{"type": "function", "function": {"name": "f", "arguments": "{\"a\": "}}`,
			`{"tool_uses":[{"name":"f","raw_arguments":"{\"a\": ","pattern":"openai_function"}],"matched_patterns":["openai_function"]}`},
		{"number beyond double range kept as literal", `{"name": "f", "input": {"n": 1e400, "big": 12345678901234567890}}`,
			`{"tool_uses":[{"name":"f","input":{"n":"1e400","big":12345678901234567890},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
	})
}

// The seed's "Tool ID Field Variations", in its order of precedence.
func TestSeedToolIDVariations(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"item id", `{"id": "a", "toolUse": {"id": "b", "toolUseId": "c", "name": "s", "input": {}}}`,
			`{"tool_uses":[{"name":"s","id":"a","input":{},"pattern":"bedrock_tool_use"}],"matched_patterns":["bedrock_tool_use"]}`},
		{"nested id", `{"toolUse": {"id": "b", "toolUseId": "c", "name": "s", "input": {}}}`,
			`{"tool_uses":[{"name":"s","id":"b","input":{},"pattern":"bedrock_tool_use"}],"matched_patterns":["bedrock_tool_use"]}`},
		{"toolUseId", `{"toolUse": {"toolUseId": "c", "tool_use_id": "d", "name": "s", "input": {}}}`,
			`{"tool_uses":[{"name":"s","id":"c","input":{},"pattern":"bedrock_tool_use"}],"matched_patterns":["bedrock_tool_use"]}`},
		{"tool_use_id", `{"name": "s", "input": {}, "tool_use_id": "d", "call_id": "e"}`,
			`{"tool_uses":[{"name":"s","id":"d","input":{},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"call_id", `{"name": "s", "input": {}, "call_id": "e"}`,
			`{"tool_uses":[{"name":"s","id":"e","input":{},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
		{"tool_call_id on a call", `{"type": "tool_use", "name": "s", "input": {}, "tool_call_id": "f"}`,
			`{"tool_uses":[{"name":"s","id":"f","input":{},"pattern":"typed_tool_use"}],"matched_patterns":["typed_tool_use"]}`},
		{"numeric id", `{"name": "s", "input": {}, "id": 42}`,
			`{"tool_uses":[{"name":"s","id":"42","input":{},"pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
	})
}

// The seed's "Tool Result Extraction" patterns and detection criteria.
func TestSeedToolResultPatterns(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"bedrock nested toolResult", `{"toolResult": {"id": "123", "content": "Result"}}`,
			`{"tool_results":[{"id":"123","content":"Result","pattern":"bedrock_tool_result"}],"matched_patterns":["bedrock_tool_result"]}`},
		{"type-based", `{"type": "tool_result", "id": "123", "content": "Result"}`,
			`{"tool_results":[{"id":"123","content":"Result","pattern":"typed_tool_result"}],"matched_patterns":["typed_tool_result"]}`},
		{"role-based", `{"role": "tool", "tool_call_id": "123", "content": "Result"}`,
			`{"tool_results":[{"id":"123","content":"Result","pattern":"role_tool","role":"tool"}],"matched_patterns":["role_tool"]}`},
		{"content array item", `{"content": [{"type": "tool_result", "content": "Result"}]}`,
			`{"tool_results":[{"content":"Result","pattern":"typed_tool_result","path":"/content/0"}],"matched_patterns":["typed_tool_result"]}`},
		{"snake_case tool_result field", `{"tool_result": {"tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]}}`,
			`{"tool_results":[{"id":"t1","content":[{"type":"text","text":"ok"}],"pattern":"tool_result_field"}],"matched_patterns":["tool_result_field"]}`},
		{"tool_call_id alone", `{"tool_call_id": "123", "content": "Result"}`,
			`{"tool_results":[{"id":"123","content":"Result","pattern":"tool_call_id_field"}],"matched_patterns":["tool_call_id_field"]}`},
		{"bedrock status error", `{"toolResult": {"toolUseId": "tu_1", "content": [{"text": "boom"}], "status": "error"}}`,
			`{"tool_results":[{"id":"tu_1","content":[{"text":"boom"}],"is_error":true,"pattern":"bedrock_tool_result"}],"matched_patterns":["bedrock_tool_result"]}`},
		{"anthropic is_error", `{"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": true}`,
			`{"tool_results":[{"id":"toolu_1","content":"boom","is_error":true,"pattern":"typed_tool_result"}],"matched_patterns":["typed_tool_result"]}`},
		{"gemini functionResponse", `{"functionResponse": {"name": "f", "response": {"ok": true}}}`,
			`{"tool_results":[{"name":"f","content":{"ok":true},"pattern":"function_response_field"}],"matched_patterns":["function_response_field"]}`},
		{"openai responses function_call_output", `{"type": "function_call_output", "call_id": "call_1", "output": "42"}`,
			`{"tool_results":[{"id":"call_1","content":"42","pattern":"typed_tool_result"}],"matched_patterns":["typed_tool_result"]}`},
		{"ollama tool message", `{"role": "tool", "content": "11 degrees", "tool_name": "get_weather"}`,
			`{"tool_results":[{"name":"get_weather","content":"11 degrees","pattern":"role_tool","role":"tool"}],"matched_patterns":["role_tool"]}`},
		{"openai legacy function role", `{"role": "function", "name": "f", "content": "done"}`,
			`{"tool_results":[{"name":"f","content":"done","pattern":"role_tool","role":"function"}],"matched_patterns":["role_tool"]}`},
		{"result without content", `{"type": "tool_result", "tool_use_id": "t"}`,
			`{"tool_results":[{"id":"t","pattern":"typed_tool_result"}],"matched_patterns":["typed_tool_result"]}`},
	})
}

// The seed's "Tool Definitions" formats.
func TestSeedToolDefinitions(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"direct", `{"tools": [{"name": "search", "description": "Search tool"}]}`,
			`{"tool_definitions":[{"name":"search","description":"Search tool","pattern":"definition_direct","path":"/tools/0"}],"matched_patterns":["definition_direct"]}`},
		{"nested function", `{"tools": [{"type": "function", "function": {"name": "search", "description": "Search tool"}}]}`,
			`{"tool_definitions":[{"name":"search","description":"Search tool","pattern":"definition_function","path":"/tools/0"}],"matched_patterns":["definition_function"]}`},
		{"generic nesting", `{"tools": [{"tool": {"name": "search", "description": "..."}}, {"definition": {"name": "search", "description": "..."}}]}`,
			`{"tool_definitions":[{"name":"search","description":"...","pattern":"definition_tool","path":"/tools/0"},
			{"name":"search","description":"...","pattern":"definition_definition","path":"/tools/1"}],
			"matched_patterns":["definition_tool","definition_definition"]}`},
		{"with parameters", `{"tools": [{"name": "s", "parameters": {"type": "object"}}]}`,
			`{"tool_definitions":[{"name":"s","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_direct","path":"/tools/0"}],"matched_patterns":["definition_direct"]}`},
		{"anthropic input_schema", `{"tools": [{"name": "s", "input_schema": {"type": "object"}}]}`,
			`{"tool_definitions":[{"name":"s","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_direct","path":"/tools/0"}],"matched_patterns":["definition_direct"]}`},
		{"mcp inputSchema kept", `{"tools": [{"name": "s", "inputSchema": {"type": "object"}}]}`,
			`{"tool_definitions":[{"name":"s","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_direct","path":"/tools/0"}],"matched_patterns":["definition_direct"]}`},
		{"bedrock toolSpec unwraps inputSchema.json", `{"tools": [{"toolSpec": {"name": "s", "inputSchema": {"json": {"type": "object"}}}}]}`,
			`{"tool_definitions":[{"name":"s","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_bedrock_tool_spec","path":"/tools/0"}],"matched_patterns":["definition_bedrock_tool_spec"]}`},
		{"gemini functionDeclarations", `{"tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b", "parametersJsonSchema": {"type": "object"}}]}]}`,
			`{"tool_definitions":[{"name":"a","pattern":"definition_gemini_declaration","path":"/tools/0/functionDeclarations/0"},
			{"name":"b","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_gemini_declaration","path":"/tools/0/functionDeclarations/1"}],
			"matched_patterns":["definition_gemini_declaration"]}`},
		{"legacy functions array", `{"functions": [{"name": "f", "parameters": {"type": "object"}}]}`,
			`{"tool_definitions":[{"name":"f","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_direct","path":"/functions/0"}],"matched_patterns":["definition_direct"]}`},
		{"standalone openai definition", `{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}`,
			`{"tool_definitions":[{"name":"f","description":"d","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_function"}],"matched_patterns":["definition_function"]}`},
		{"standalone anthropic definition", `{"name": "f", "description": "d", "input_schema": {"type": "object"}}`,
			`{"tool_definitions":[{"name":"f","description":"d","parameters":{"type":"object"},"parameters_json":"{\"type\":\"object\"}","pattern":"definition_direct"}],"matched_patterns":["definition_direct"]}`},
		{"schema text keeps document order and bytes", `{"tools": [{"name": "s", "parameters": {"type": "object", "properties": {"zeta": {"type": "string", "pattern": "^a<b>&c$"}, "alpha": {"type": "integer", "maximum": 1e3}}, "required": ["zeta"]}}]}`,
			`{"tool_definitions":[{"name":"s","parameters":{"type":"object","properties":{"zeta":{"type":"string","pattern":"^a<b>&c$"},"alpha":{"type":"integer","maximum":1000}},"required":["zeta"]},
			"parameters_json":"{\"type\":\"object\",\"properties\":{\"zeta\":{\"type\":\"string\",\"pattern\":\"^a<b>&c$\"},\"alpha\":{\"type\":\"integer\",\"maximum\":1e3}},\"required\":[\"zeta\"]}",
			"pattern":"definition_direct","path":"/tools/0"}],"matched_patterns":["definition_direct"]}`},
		{"built-in tools without a name are skipped", `{"tools": [{"type": "web_search_preview"}, {"googleSearch": {}}, "x", 3]}`, `{}`},
	})
}

// The seed's robustness cases: empty content, unexpected types, and more.
func TestEdgeCases(t *testing.T) {
	t.Parallel()
	runExtractCases(t, []extractCase{
		{"empty content string", `{"content": ""}`, `{}`},
		{"empty content array", `{"content": []}`, `{}`},
		{"null content", `{"content": null}`, `{}`},
		{"empty object", `{}`, `{}`},
		{"empty strings in content array", `{"content": ["", {"text": ""}]}`, `{}`},
		{"content number", `{"content": 42}`, `{}`},
		{"text object", `{"text": {"value": "x"}}`, `{}`},
		{"content scalars", `{"content": [1, true, null, 2.5]}`, `{}`},
		{"content object", `{"content": {"text": "inner"}}`,
			`{"texts":[{"text":"inner","pattern":"text_field","path":"/content/text"}],"matched_patterns":["text_field"]}`},
		{"top-level string", `"hello"`, `{}`},
		{"top-level number", `42`, `{}`},
		{"top-level null", `null`, `{}`},
		{"top-level array of messages", `[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]`,
			`{"texts":[{"text":"a","pattern":"content_string","path":"/0/content","role":"user"},
			{"text":"b","pattern":"content_string","path":"/1/content","role":"assistant"}],"matched_patterns":["content_string"]}`},
		{"tools not an array", `{"tools": "search"}`, `{}`},
		{"tool_calls not an array", `{"tool_calls": {"function": 1}}`, `{}`},
		{"function not an object", `{"function": "f", "name": "g"}`, `{}`},
		{"toolUse not an object", `{"toolUse": "x"}`, `{}`},
		{"name not a string", `{"name": 5, "input": {}}`, `{}`},
		{"tool_choice is not a call", `{"tool_choice": {"type": "function", "function": {"name": "f"}}, "toolChoice": {"tool": {"name": "g"}}}`, `{}`},
		{"refusal", `{"role": "assistant", "content": null, "refusal": "I can't help with that."}`,
			`{"texts":[{"text":"I can't help with that.","pattern":"refusal_field","path":"/refusal","role":"assistant"}],"matched_patterns":["refusal_field"]}`},
		{"system, instructions, prompt, input strings",
			`{"system": "s", "instructions": "i", "prompt": "p", "input": "in"}`,
			`{"texts":[{"text":"s","pattern":"instructions_string","path":"/system"},
			{"text":"i","pattern":"instructions_string","path":"/instructions"},
			{"text":"p","pattern":"prompt_string","path":"/prompt"},
			{"text":"in","pattern":"prompt_string","path":"/input"}],
			"matched_patterns":["instructions_string","prompt_string"]}`},
		{"pointer escaping", `{"a/b": {"m~n": {"text": "x"}}}`,
			`{"texts":[{"text":"x","pattern":"text_field","path":"/a~1b/m~0n/text"}],"matched_patterns":["text_field"]}`},
		{"duplicate keys: both texts, last wins for lookups", `{"content": "a", "content": "b", "role": "x", "role": "user"}`,
			`{"texts":[{"text":"a","pattern":"content_string","path":"/content","role":"user"},
			{"text":"b","pattern":"content_string","path":"/content","role":"user"}],"matched_patterns":["content_string"]}`},
		{"escapes and unicode", `{"text": "caf\u00e9 \ud83d\ude00 \"q\"\n"}`,
			`{"texts":[{"text":"café 😀 \"q\"\n","pattern":"text_field","path":"/text"}],"matched_patterns":["text_field"]}`},
		{"same call in content and tool_calls reported once",
			`{"content": [{"type": "tool_use", "id": "t1", "name": "s", "input": {"q": 1}}], "tool_calls": [{"name": "s", "args": {"q": 1}, "id": "t1", "type": "tool_call"}]}`,
			`{"tool_uses":[{"name":"s","id":"t1","input":{"q":1},"pattern":"typed_tool_use","path":"/content/0"}],"matched_patterns":["typed_tool_use"]}`},
		{"same id different names are two calls",
			`[{"name": "a", "input": {}, "id": "1"}, {"name": "b", "input": {}, "id": "1"}]`,
			`{"tool_uses":[{"name":"a","id":"1","input":{},"pattern":"flat_tool_use","path":"/0"},
			{"name":"b","id":"1","input":{},"pattern":"flat_tool_use","path":"/1"}],"matched_patterns":["flat_tool_use"]}`},
		{"calls without ids are not merged",
			`[{"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "a", "args": {}}}]`,
			`{"tool_uses":[{"name":"a","input":{},"pattern":"function_call_field","path":"/0"},
			{"name":"a","input":{},"pattern":"function_call_field","path":"/1"}],"matched_patterns":["function_call_field"]}`},
		{"tool result content is not reported as text",
			`{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "inner"}]}`,
			`{"tool_results":[{"id":"t","content":[{"type":"text","text":"inner"}],"pattern":"typed_tool_result"}],"matched_patterns":["typed_tool_result"]}`},
		{"other members of a wrapper are still visited",
			`{"text": "before", "toolUse": {"toolUseId": "x", "name": "s", "input": {}}}`,
			`{"texts":[{"text":"before","pattern":"text_field","path":"/text"}],
			"tool_uses":[{"name":"s","id":"x","input":{},"pattern":"bedrock_tool_use"}],
			"matched_patterns":["bedrock_tool_use","text_field"]}`},
		{"role is inherited", `{"role": "model", "parts": [{"text": "a"}, "b"]}`,
			`{"texts":[{"text":"a","pattern":"text_field","path":"/parts/0/text","role":"model"},
			{"text":"b","pattern":"content_string_item","path":"/parts/1","role":"model"}],
			"matched_patterns":["text_field","content_string_item"]}`},
	})
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	nest := func(levels int) string {
		return strings.Repeat(`{"a":`, levels-1) + `{"text":"deep"}` + strings.Repeat(`}`, levels-1)
	}
	for _, tc := range []struct {
		levels  int
		found   bool
		limited bool
	}{
		{1, true, false},
		{MaxDepth, true, false},
		{MaxDepth + 1, false, true},
		{5000, false, true},
	} {
		got, err := Extract([]byte(nest(tc.levels)))
		if err != nil {
			t.Fatalf("%d levels: %v", tc.levels, err)
		}
		if found := len(got.GetTexts()) == 1; found != tc.found || got.GetDepthLimitReached() != tc.limited {
			t.Errorf("%d levels: found=%v limited=%v, want %v %v", tc.levels, found, got.GetDepthLimitReached(), tc.found, tc.limited)
		}
	}
	// Arrays count as levels too.
	got, err := Extract([]byte(strings.Repeat("[", 70) + `{"text":"x"}` + strings.Repeat("]", 70)))
	if err != nil || len(got.GetTexts()) != 0 || !got.GetDepthLimitReached() {
		t.Errorf("deep arrays: %v %v", got, err)
	}
}

// A passed-on value nested deeper than maxValueDepth is cut to JSON text,
// so the response still marshals (protobuf refuses >10000 levels).
func TestDeepValueStillMarshals(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 3000) + "1" + strings.Repeat("]", 3000)
	got, err := Extract([]byte(`{"name": "f", "input": {"v": ` + deep + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !got.GetDepthLimitReached() || len(got.GetToolUses()) != 1 {
		t.Fatalf("got %v", got)
	}
	if _, err := proto.Marshal(got); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if _, err := protojson.Marshal(got); err != nil {
		t.Fatalf("protojson: %v", err)
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		offset int64
	}{
		{``, 0},
		{`{`, 1},
		{`{"a": "b`, 8},
		{`{"a": }`, 6},
		{`{"a": 1,}`, 8},
		{`[1, 2`, 5},
		{`{"a": 1} x`, 9},
		{`nul`, 3},
		{`nul `, 3},
		{`1.`, 2},
		{"{\"a\":1}\n]", 8},
		{"\"a\x01\"", 2},
		{`{'a': 1}`, 1},
	} {
		_, err := Extract([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want *SyntaxError", tc.in, err)
			continue
		}
		if se.Offset != tc.offset {
			t.Errorf("%q: offset %d, want %d (%s)", tc.in, se.Offset, tc.offset, se.Msg)
		}
		if !strings.Contains(se.Error(), "offset") || se.Msg == "" {
			t.Errorf("%q: message %q", tc.in, se.Error())
		}
	}
}
