package ollama

import (
	"slices"
	"testing"
)

// TestMergeExtraOptionsFieldByField: extra_body's "options" adds to the
// request's options instead of replacing the object (which dropped the
// temperature and num_predict the request asked for); a field both have
// takes extra_body's value, warned when it differs; "format" (a schema) is
// still replaced whole.
func TestMergeExtraOptionsFieldByField(t *testing.T) {
	body := []byte(`{"model":"m","format":{"type":"object","properties":{"a":{}}},"options":{"temperature":0.2,"num_predict":64},"stream":false}`)
	extra := `{"options":{"num_ctx":8192,"temperature":0.2,"num_predict":32},"format":{"type":"object"}}`
	out, warnings, err := mergeExtraBody(body, extra)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","format":{"type":"object"},"options":{"temperature":0.2,"num_predict":32,"num_ctx":8192},"stream":false}`
	if string(out) != want {
		t.Errorf("body\n got %s\nwant %s", out, want)
	}
	wantW := []string{"extra_body.options.num_predict replaced the value the gateway built from the request", "extra_body.format replaced the value the gateway built from the request"}
	if !slices.Equal(warnings, wantW) {
		t.Errorf("warnings\n got %q\nwant %q", warnings, wantW)
	}
}
