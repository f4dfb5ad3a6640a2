package provider

import (
	"strings"
	"testing"
)

func TestMergeExtraBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, extra string
		reserved        []string
		want            string
		nWarnings       int
	}{
		{"no extra", `{"model":"m","n":1}`, "", nil, `{"model":"m","n":1}`, 0},
		{"replace in place (warned) and append in extra's order", `{"model":"m","temperature":0.5,"stream":true}`,
			`{"zeta": "z", "temperature": 1.0, "alpha": [1, "x"]}`, nil,
			`{"model":"m","temperature":1.0,"stream":true,"zeta":"z","alpha":[1, "x"]}`, 1},
		{"the same value again replaces nothing", `{"model":"m","temperature":0.5,"stop":["a","b"]}`,
			`{"temperature": 0.5, "stop": ["a", "b"]}`, nil, `{"model":"m","temperature":0.5,"stop":["a", "b"]}`, 0},
		{"null value", `{"model":"m"}`, `{"user":null}`, nil, `{"model":"m","user":null}`, 0},
		{"reserved kept, with a warning", `{"model":"m","stream":true}`, `{"stream": false, "model": "x", "top_k": 3}`,
			[]string{"stream", "model"}, `{"model":"m","stream":true,"top_k":3}`, 2},
	}
	for _, tc := range cases {
		got, warnings, err := MergeExtraBody([]byte(tc.in), tc.extra, tc.reserved...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want || len(warnings) != tc.nWarnings {
			t.Errorf("%s: got %s %q, want %s and %d warnings", tc.name, got, warnings, tc.want, tc.nWarnings)
		}
	}
	if _, _, err := MergeExtraBody([]byte(`[1]`), `{"a":1}`); err == nil {
		t.Error("merge into a non-object: no error")
	}
	for extra, want := range map[string]string{
		`[1]`:             "not a JSON object",
		`{"a":1,"a":2}`:   `duplicate field "a"`,
		`{"a":1} {"b":2}`: "text after the object",
		`{"a":}`:          "extra_body",
		`"text"`:          "not a JSON object",
	} {
		_, _, err := MergeExtraBody([]byte(`{"model":"m"}`), extra)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("extra %s: error %v, want it to say %q", extra, err, want)
		}
	}
}

// TestMergeExtraDefaults: extra_body replacing a field the request gave
// is warned, naming the field; one the adapter set on its own (Defaults:
// Ollama's truncate) is the caller's to override, silently; a reserved
// one is kept, warned. extra_body replaced any field silently before.
func TestMergeExtraDefaults(t *testing.T) {
	t.Parallel()
	body := `{"model":"m","options":{"temperature":0.2},"truncate":false,"stream":true}`
	got, warnings, err := MergeExtra([]byte(body), `{"truncate":true,"options":{"mirostat":2},"stream":false,"raw":true}`,
		ExtraFields{Reserved: []string{"stream"}, Defaults: []string{"truncate"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","options":{"mirostat":2},"truncate":true,"stream":true,"raw":true}`; string(got) != want {
		t.Errorf("body %s, want %s", got, want)
	}
	want := []string{"extra_body.stream ignored: the gateway sets it", "extra_body.options replaced the value the gateway built from the request"}
	if strings.Join(warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}

func TestSchemaJSON(t *testing.T) {
	t.Parallel()
	if raw, err := SchemaJSON(""); raw != nil || err != nil {
		t.Errorf("empty: %s %v", raw, err)
	}
	in := `{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}}}`
	raw, err := SchemaJSON(in)
	if err != nil || string(raw) != in {
		t.Errorf("got %s %v, want the text unchanged", raw, err)
	}
	if _, err := SchemaJSON(`{"type":`); err == nil {
		t.Error("invalid JSON: no error")
	}
}
