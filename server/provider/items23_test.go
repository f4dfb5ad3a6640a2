package provider

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestItemJSON: an item is kept compacted, with bytes that are not UTF-8
// replaced as a JSON decoder reads them (protobuf strings must be UTF-8:
// a fuzzed Responses stream's item made the relayed message unmarshalable);
// anything but one JSON object is not an item.
func TestItemJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"{\n  \"type\": \"web_search_call\",\n  \"id\": \"ws_1\"\n}", `{"type":"web_search_call","id":"ws_1"}`, true},
		{"{\"tYpe\":\"\x8b\"}", "{\"tYpe\":\"\uFFFD\"}", true},
		{`[{}]`, "", false},
		{`"{}"`, "", false},
		{`{"a":`, "", false},
		{``, "", false},
	} {
		got, ok := ItemJSON([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ItemJSON(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	w := DroppedItemWarning(2, 1, &llmrelayv1.ProviderItem{Provider: "anthropic", Type: "server_tool_use"}, "Gemini")
	if w != "messages[2].parts[1]: provider item server_tool_use from anthropic not sent: Gemini has no place for it" {
		t.Errorf("warning %q", w)
	}
}
