package provider

import (
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func TestReadUsageDetails(t *testing.T) {
	t.Parallel()
	got := ReadUsageDetails([]byte(`{"input_tokens":5,"a":{"b":2,"c":0,"d":null,"e":{"f":"x"}},"g":false,"h":[],"i":[1],"j":"","k":{},"l":true,"m":1.5}`),
		"input_tokens", "a.b")
	want := UsageDetails{"a.e.f": "x", "i": []any{1.0}, "l": true, "m": 1.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, raw := range []string{``, `null`, `[1]`, `{"x":0}`, `{"input_tokens":3}`} {
		if d := ReadUsageDetails([]byte(raw), "input_tokens"); d != nil {
			t.Errorf("%q: %v, want nil", raw, d)
		}
	}
	deep := ReadUsageDetails([]byte(`{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}`))
	if !reflect.DeepEqual(deep, UsageDetails{"a.b.c.d.e": map[string]any{"f": 1.0}}) {
		t.Errorf("deep %v", deep)
	}
}

func TestUsageDetailsMergeSet(t *testing.T) {
	t.Parallel()
	var d UsageDetails
	if d.Merge(nil) || d != nil {
		t.Error("merging nothing changed the details")
	}
	if !d.Merge(UsageDetails{"a": 1.0}) || !d.Merge(UsageDetails{"a": 2.0, "b": 1.0}) || d.Merge(UsageDetails{"b": 1.0}) {
		t.Error("Merge reports changes wrongly")
	}
	meta := &llmrelayv1.ResponseMeta{}
	UsageDetails(nil).Set(meta)
	if meta.Extended != nil {
		t.Error("empty details set")
	}
	d.Set(meta)
	f := meta.GetExtended().GetFields()[ExtUsageDetails].GetStructValue().GetFields()
	if f["a"].GetNumberValue() != 2 || f["b"].GetNumberValue() != 1 {
		t.Errorf("set %v", meta.Extended)
	}
}
