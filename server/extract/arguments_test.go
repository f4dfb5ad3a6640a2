package extract

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

func TestParseArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		raw    string
		form   ArgumentsForm
		input  string // protojson of Input; "" when nil
		rawOut string
		text   string
		valid  bool
	}{
		{"object kept", `{"query": "test", "limit": 10}`, ArgumentsObject, `{"query":"test","limit":10}`, "", `{"query":"test","limit":10}`, true},
		{"object text keeps order and literals", `{"b": 1.50, "a": 12345678901234567890}`, ArgumentsObject,
			`{"a":12345678901234567890,"b":1.5}`, "", `{"b":1.50,"a":12345678901234567890}`, true},
		{"JSON string parsed", `"{\"query\": \"test\", \"limit\": 10}"`, ArgumentsString, `{"query":"test","limit":10}`, "",
			`{"query": "test", "limit": 10}`, true},
		{"malformed string", `"not valid json {"`, ArgumentsMalformed, "", "not valid json {", "not valid json {", false},
		{"truncated string", `"{\"a\": "`, ArgumentsMalformed, "", `{"a": `, `{"a": `, false},
		{"array wrapped", `[1, 2, 3]`, ArgumentsWrapped, `{"value":[1,2,3]}`, "", `[1,2,3]`, false},
		{"number wrapped", `42`, ArgumentsWrapped, `{"value":42}`, "", `42`, false},
		{"bool wrapped", `true`, ArgumentsWrapped, `{"value":true}`, "", `true`, false},
		{"string holding array wrapped", `"[1]"`, ArgumentsWrapped, `{"value":[1]}`, "", `[1]`, false},
		{"string holding string wrapped", `"\"x\""`, ArgumentsWrapped, `{"value":"x"}`, "", `"x"`, false},
		{"null is missing", `null`, ArgumentsMissing, `{}`, "", `{}`, true},
		{"absent is missing", ``, ArgumentsMissing, `{}`, "", `{}`, true},
		{"whitespace is missing", " \n", ArgumentsMissing, `{}`, "", `{}`, true},
		{"empty string is blank", `""`, ArgumentsBlank, `{}`, "", ``, false},
		{"spaces string is blank", `"  "`, ArgumentsBlank, `{}`, "", `  `, false},
		{"bytes that are not JSON", `{"a":`, ArgumentsMalformed, "", `{"a":`, `{"a":`, false},
		{"invalid UTF-8 made valid", "\"\xff{\"", ArgumentsMalformed, "", "\uFFFD{", "\uFFFD{", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := ParseArguments([]byte(tc.raw))
			checkArguments(t, []byte(tc.raw), a)
			if a.Form != tc.form {
				t.Errorf("form %s, want %s", a.Form, tc.form)
			}
			if tc.input == "" {
				if a.Input != nil {
					t.Errorf("input %v, want nil", a.Input)
				}
			} else {
				got, err := protojson.Marshal(a.Input)
				if err != nil {
					t.Fatal(err)
				}
				assertJSONEqual(t, string(got), tc.input)
			}
			if a.Raw != tc.rawOut || a.Text != tc.text || a.Valid != tc.valid {
				t.Errorf("raw %q text %q valid %v, want %q %q %v", a.Raw, a.Text, a.Valid, tc.rawOut, tc.text, tc.valid)
			}
		})
	}
}

func TestArgumentsFormString(t *testing.T) {
	t.Parallel()
	if ArgumentsMalformed.String() != "malformed" || ArgumentsForm(0).String() != "unknown" {
		t.Errorf("String: %s %s", ArgumentsMalformed, ArgumentsForm(0))
	}
}
