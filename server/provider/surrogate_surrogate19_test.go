package provider

import (
	"encoding/json"
	"testing"
)

func TestHasSurrogateEscapeSurrogate19(t *testing.T) {
	for in, want := range map[string]bool{
		`"\ud83d"`: true, `"\uDE00"`: true, `"\uD7FF"`: false, `"\u00e9"`: false,
		`"x\u"`: false, `"\ud"`: false, `"plain"`: false, `"a\\ud83d"`: true, // a false positive costs a second decode only
	} {
		if got := HasSurrogateEscape([]byte(in)); got != want {
			t.Errorf("HasSurrogateEscape(%s) = %v, want %v", in, got, want)
		}
	}
}

// Each delta is decoded as the adapters decode it (decoded by encoding/json,
// raw only when the chunk has a surrogate escape), then the text's end.
func TestSurrogateJoinSurrogate19(t *testing.T) {
	cases := []struct {
		name   string
		deltas []string // JSON tokens; "" is a delta without a string (null, another shape)
		want   []string // the text of each delta, then Flush's
	}{
		{"pair cut", []string{`"a\ud83d"`, `"\ude00b"`}, []string{"a", "😀b", ""}},
		{"high alone at the end", []string{`"a\ud83d"`}, []string{"a", "\uFFFD"}},
		{"high then no low", []string{`"\ud83d"`, `"x"`}, []string{"", "\uFFFDx", ""}},
		{"high then not a string", []string{`"\ud83d"`, ``, `"x"`}, []string{"", "\uFFFD", "x", ""}},
		{"low alone", []string{`"\ude00x"`}, []string{"\uFFFDx", ""}},
		{"escaped backslash", []string{`"C:\\ud83d"`, `"\ude00"`}, []string{`C:\ud83d`, "\uFFFD", ""}},
		{"two pairs in a row", []string{`"\ud83d"`, `"\ude00\ud83d"`, `"\ude01"`}, []string{"", "😀", "😁", ""}},
		{"whole pair in one", []string{`"\ud83d\ude00"`}, []string{"😀", ""}},
		{"escapes kept", []string{`"\"\n\ud83d"`, `"\ude00\t"`}, []string{"\"\n", "😀\t", ""}},
		{"two highs", []string{`"\ud83d\ud83d"`, `"\ude00"`}, []string{"\uFFFD", "😀", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var j SurrogateJoin
			var got []string
			for _, d := range tc.deltas {
				if d == "" {
					got = append(got, j.Text("", nil))
					continue
				}
				var dec string
				if err := json.Unmarshal([]byte(d), &dec); err != nil {
					t.Fatal(err)
				}
				var raw []byte
				if HasSurrogateEscape([]byte(d)) {
					raw = []byte(d)
				}
				got = append(got, j.Text(dec, raw))
			}
			got = append(got, j.Flush())
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
			if j.Held() {
				t.Fatal("a half is still held after Flush")
			}
		})
	}
}
