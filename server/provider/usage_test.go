package provider

import (
	"encoding/json"
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

// usageCases are usage objects of every provider and the edge cases of
// the fast path (TestReadUsageFast, seeds of FuzzReadUsageDetails).
var usageCases = []string{
	`{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`,
	`{"prompt_tokens":24,"completion_tokens_details":{"audio_tokens":7,"accepted_prediction_tokens":1e2},"cost":0.00012,"is_byok":false,"tier":"flex"}`,
	`{"input_tokens":5,"a":{"b":2,"c":0,"d":null,"e":{"f":"x"}},"g":false,"h":[],"i":[1],"j":"","k":{},"l":true,"m":1.5}`,
	`{"input_tokens":10,"cache_creation":{"ephemeral_5m_input_tokens":3,"ephemeral_1h_input_tokens":0},"server_tool_use":{"web_search_requests":1},"service_tier":"standard"}`,
	`{"promptTokenCount":4,"promptTokensDetails":[{"modality":"TEXT","tokenCount":4}],"thoughtsTokenCount":12}`,
	` { "a" : { "b" : -0.0 , "c" : [ ] , "d" : "" } , "e" : 3 } `,
	`{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}`, `{"a":{"b":{"c":{"d":{"e":0}}}}}`, `{"a":{"b":{"c":{"d":{}}}}}`,
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":{"y":2}}`, `{"a.b":1,"a":{"b":2}}`, `{"a.b":1,"a":{"b":0}}`,
	`{"a":1,}`, `{"a":01}`, `{"a":1 "b":2}`, `{,"a":1}`, `{"a":tru}`, `{"skip":[1,]}`, `{"skip":"\x"}`, `{"a":1}x`, `{"a":-}`,
	`{"a":1.}`, `{"a":.5}`, `{"a":+1}`, `{"skip":{"k" 1}}`, `{"skip":"\u12G4"}`, `{"skip":"\u12"}`, `{"a":[ ]}`, "{\"skip\":\"a\x01\"}",
	"{\"skip\":\"\xff\xfe\"}", `{"skip":[{"a":[true,false,null,-1.5e+3,"\"\\\/\b\f\n\r\t\u00e9"]}]}`, `{"a":1}}`, `{"a" : 1 , "b" :2}`, "\t{\"a\":\r\n1}\n",
	`{"\u0061":1}`, `{"é":1}`, `{"a":"\u00e9"}`, `{"a":"é"}`, `{"a":"x\"y"}`, `{"a":1e400}`, `{"a":-1e-400}`,
	`{"input_tokens":{"x":1},"skip":[1,{"a":"}"}],"z":2}`, `{"skip":"a,b}","z":2}`, `{"":1}`, `{}`, `null`, `[1]`, `3`, `"x"`, ``, `{`,
}

// TestReadUsageFast: the fast path, where it answers, answers what
// decoding the whole object does.
func TestReadUsageFast(t *testing.T) {
	t.Parallel()
	answered := 0
	for _, c := range usageCases {
		if checkUsageFast(t, []byte(c)) {
			answered++
		}
	}
	if answered < 10 {
		t.Errorf("the fast path answered %d cases only", answered)
	}
	if !checkUsageFast(t, []byte(usageCases[0])) || !checkUsageFast(t, []byte(usageCases[1])) {
		t.Error("the fast path does not answer OpenAI's usage")
	}
}

var usageMapped = []string{"input_tokens", "prompt_tokens", "completion_tokens_details.reasoning_tokens", "a.b", "skip", "prompt_tokens_details.cached_tokens"}

func checkUsageFast(t *testing.T, raw []byte) bool {
	t.Helper()
	want := readUsageSlow(raw, usageMapped)
	if got := ReadUsageDetails(raw, usageMapped...); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ReadUsageDetails %#v, decoding all %#v", raw, got, want)
	}
	got, ok := readUsageFast(raw, usageMapped)
	if ok && !json.Valid(raw) {
		t.Errorf("%q: the fast path answers invalid JSON", raw)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Errorf("%s: fast path %#v, decoding all %#v", raw, got, want)
	}
	return ok
}

func FuzzReadUsageDetails(f *testing.F) {
	for _, c := range usageCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkUsageFast(t, raw) })
}

func BenchmarkReadUsageDetails(b *testing.B) {
	raw := []byte(usageCases[0])
	openai := []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens"}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ReadUsageDetails(raw, openai...)
		}
	})
	b.Run("slow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readUsageSlow(raw, openai)
		}
	})
}
