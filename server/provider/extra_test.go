package provider

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

func TestMergeExtraBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in  string
		extra     map[string]any
		reserved  []string
		want      string
		nWarnings int
	}{
		{"no extra", `{"model":"m","n":1}`, nil, nil, `{"model":"m","n":1}`, 0},
		{"replace in place and append sorted", `{"model":"m","temperature":0.5,"stream":true}`,
			map[string]any{"temperature": 1.0, "zeta": "z", "alpha": []any{1.0, "x"}}, nil,
			`{"model":"m","temperature":1,"stream":true,"alpha":[1,"x"],"zeta":"z"}`, 0},
		{"null value", `{"model":"m"}`, map[string]any{"user": nil}, nil, `{"model":"m","user":null}`, 0},
		{"reserved kept, with a warning", `{"model":"m","stream":true}`, map[string]any{"stream": false, "model": "x", "top_k": 3.0},
			[]string{"stream", "model"}, `{"model":"m","stream":true,"top_k":3}`, 2},
	}
	for _, tc := range cases {
		var extra *structpb.Struct
		if tc.extra != nil {
			var err error
			if extra, err = structpb.NewStruct(tc.extra); err != nil {
				t.Fatal(err)
			}
		}
		got, warnings, err := MergeExtraBody([]byte(tc.in), extra, tc.reserved...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want || len(warnings) != tc.nWarnings {
			t.Errorf("%s: got %s %q, want %s and %d warnings", tc.name, got, warnings, tc.want, tc.nWarnings)
		}
	}
	one, _ := structpb.NewStruct(map[string]any{"a": 1.0})
	if _, _, err := MergeExtraBody([]byte(`[1]`), one); err == nil {
		t.Error("merge into a non-object: no error")
	}
}
