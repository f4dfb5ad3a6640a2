package provider

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestRefSiblings(t *testing.T) {
	t.Parallel()
	allowed := func(k string) bool { return strings.HasPrefix(k, "$") || k == "description" || k == "default" }
	for _, tc := range []struct{ name, in, want string }{
		{"no ref", `{"type":"object","title":"T","properties":{"a":{"type":"string","title":"A"}}}`, `{"type":"object","title":"T","properties":{"a":{"type":"string","title":"A"}}}`},
		{"allowed siblings", `{"properties":{"city":{"$ref":"#/$defs/City","description":"The city.","default":null,"$comment":"c"}}}`, `{"properties":{"city":{"$ref":"#/$defs/City","description":"The city.","default":null,"$comment":"c"}}}`},
		{"title into description", `{"properties":{"c":{"title":"Paint","$ref":"#/$defs/Color","description":"The <paint>."}},"type":"object"}`,
			`{"properties":{"c":{"$ref":"#/$defs/Color","description":"The <paint>.\n\n{title: \"Paint\"}"}},"type":"object"}`},
		{"no description", `{"items":{"$ref":"#/$defs/X","type":"object","nullable":true}}`, `{"items":{"$ref":"#/$defs/X","description":"{type: \"object\", nullable: true}"}}`},
		{"empty description", `{"anyOf":[{"$ref":"#/$defs/X","description":"","examples":[1, 2]},{"type":"null"}]}`, `{"anyOf":[{"$ref":"#/$defs/X","description":"{examples: [1,2]}"},{"type":"null"}]}`},
		{"in defs and additionalProperties", `{"$defs":{"A":{"$ref":"#/$defs/B","title":"A"},"B":{"type":"string"}},"additionalProperties":{"$ref":"#/$defs/B","readOnly":true}}`,
			`{"$defs":{"A":{"$ref":"#/$defs/B","description":"{title: \"A\"}"},"B":{"type":"string"}},"additionalProperties":{"$ref":"#/$defs/B","description":"{readOnly: true}"}}`},
		{"not an object", `[1,2]`, `[1,2]`},
	} {
		out, moved := RefSiblings(json.RawMessage(tc.in), allowed)
		if string(out) != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, out, tc.want)
		}
		if (len(moved) > 0) != (tc.in != tc.want) {
			t.Errorf("%s: moved %v", tc.name, moved)
		}
	}
	_, moved := RefSiblings(json.RawMessage(`{"properties":{"a":{"$ref":"#/$defs/A","title":"A","type":"object"},"b":{"$ref":"#/$defs/B","title":"B"}}}`), allowed)
	if !slices.Equal(moved, []string{"title", "type"}) {
		t.Errorf("moved %v", moved)
	}
}

func FuzzRefSiblings(f *testing.F) {
	f.Add(`{"properties":{"c":{"title":"Paint","$ref":"#/$defs/Color","description":"d"}}}`)
	f.Add(`{"additionalProperties":{"additionalProperties":{"$ref":"#","x":1}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		allowed := func(k string) bool { return strings.HasPrefix(k, "$") || k == "description" }
		out, moved := RefSiblings(json.RawMessage(s), allowed)
		if again, moved2 := RefSiblings(out, allowed); len(moved2) > 0 || string(again) != string(out) {
			t.Fatalf("%q → %q → %q (moved %v)", s, out, again, moved2)
		}
		if len(moved) > 0 && !json.Valid(out) {
			t.Fatalf("%q → invalid %q", s, out)
		}
		if len(moved) == 0 && json.Valid([]byte(s)) && !json.Valid(out) {
			t.Fatalf("%q → invalid %q", s, out)
		}
	})
}
