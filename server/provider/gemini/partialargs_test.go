package gemini

import (
	"encoding/json"
	"testing"
)

func TestStreamedArguments(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	var n argNode
	for _, pa := range []partialArg{
		{JSONPath: "$.city", StringValue: s("San "), WillContinue: true},
		{JSONPath: "$.city", StringValue: s("Francisco <&>")},
		{JSONPath: "$.days[0].n", NumberValue: json.RawMessage("3")},
		{JSONPath: "$.days[1]['ok']", BoolValue: json.RawMessage("true")},
		{JSONPath: "$.note", NullValue: json.RawMessage(`"NULL_VALUE"`)},
	} {
		if err := n.apply(pa, nil); err != nil {
			t.Fatalf("apply %+v: %v", pa, err)
		}
	}
	want := `{"city":"San Francisco <&>","days":[{"n":3},{"ok":true}],"note":null}`
	if got := n.text(); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var empty argNode
	if got := empty.text(); got != "{}" {
		t.Errorf("no pieces: got %s, want {}", got)
	}
	for _, pa := range []partialArg{
		{JSONPath: "city", StringValue: s("x")},
		{JSONPath: "$.days[5]", StringValue: s("x")},
		{JSONPath: "$.city.x", StringValue: s("x")},
		{JSONPath: "$.days", StringValue: s("x")},
		{JSONPath: "$.other"},
	} {
		if err := n.apply(pa, nil); err == nil {
			t.Errorf("apply %+v: no error", pa)
		}
	}
}
