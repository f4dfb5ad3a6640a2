package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestHasSurrogateEscapeSurrogate19(t *testing.T) {
	for in, want := range map[string]bool{
		`"\ud83d"`: true, `"\uDE00"`: true, `"\uD7FF"`: false, `"\u00e9"`: false,
		`"x\u"`: false, `"\ud"`: false, `"plain"`: false, `"a\\ud83d"`: true, // a false positive costs a second decode only
		// Other escapes before it (the scan goes from backslash to backslash).
		`"a\nb\u00e9\udbff"`: true, `"\n\t\"u"`: false, `"\\"`: false,
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
		{"empty delta between", []string{`"\ud83d"`, `""`, `"\ude00"`}, []string{"", "\uFFFD", "\uFFFD", ""}},
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

// FuzzSurrogateJoinSurrogate19: a text cut into deltas at any UTF-16 code
// unit, each JSON-encoded on its own as a JavaScript server does (a lone
// half as its escape), is the text again once joined: nothing lost or
// doubled, whatever the cuts.
func FuzzSurrogateJoinSurrogate19(f *testing.F) {
	f.Add("a😀b\\ud83d🤔", uint8(2), uint8(3))
	f.Add("😀😁", uint8(1), uint8(1))
	f.Add("\"\\\n😀", uint8(4), uint8(0))
	f.Fuzz(func(t *testing.T, s string, a, b uint8) {
		if !utf8.ValidString(s) {
			return
		}
		units := utf16.Encode([]rune(s))
		cuts := []int{int(a) % (len(units) + 1), int(b) % (len(units) + 1)}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		pieces := [][]uint16{units[:cuts[0]], units[cuts[0]:cuts[1]], units[cuts[1]:]}
		var j SurrogateJoin
		var got strings.Builder
		for _, p := range pieces {
			if len(p) == 0 {
				// An empty delta between the halves ends the pair
				// (TestSurrogateJoinSurrogate19); a server cutting by
				// code unit sends none.
				continue
			}
			raw := jsEncode(p)
			var dec string
			if err := json.Unmarshal(raw, &dec); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if !HasSurrogateEscape(raw) {
				raw = nil // as an adapter that has only the decoded text
			}
			got.WriteString(j.Text(dec, raw))
		}
		got.WriteString(j.Flush())
		if got.String() != s {
			t.Fatalf("cut at %v: got %q, want %q", cuts, got.String(), s)
		}
	})
}

// jsEncode is JSON.stringify of a UTF-16 string: pairs as UTF-8, lone
// halves as escapes.
func jsEncode(units []uint16) []byte {
	out := []byte{'"'}
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)) && u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF:
			out = utf8.AppendRune(out, utf16.DecodeRune(rune(u), rune(units[i+1])))
			i++
		case utf16.IsSurrogate(rune(u)):
			out = fmt.Appendf(out, `\u%04x`, u)
		default:
			b, _ := json.Marshal(string(rune(u)))
			out = append(out, b[1:len(b)-1]...)
		}
	}
	return append(out, '"')
}
