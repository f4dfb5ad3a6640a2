package anthropic

import "testing"

// TestCompactionItemRebuilt: a streamed compaction block is its start
// block with `content` continued by the compaction_delta pieces (null or
// a string before them) and `encrypted_content` the last one sent; a
// start whose content is anything but text is not rebuilt (the deltas
// would silently replace it), an error the stream turns into a warning.
// Hand-built blocks in the shape of anthropic-sdk-python's
// BetaCompactionBlock and BetaCompactionContentBlockDelta.
func TestCompactionItemRebuilt(t *testing.T) {
	enc := "enc_r23_cmp_2"
	for _, tc := range []struct {
		name, start, want string
		fails             bool
	}{
		{"null content", `{"type":"compaction","content":null}`, `{"content":"first second","encrypted_content":"enc_r23_cmp_2","type":"compaction"}`, false},
		{"text content", `{"type":"compaction","content":"zero "}`, `{"content":"zero first second","encrypted_content":"enc_r23_cmp_2","type":"compaction"}`, false},
		{"no content", `{"type":"compaction"}`, `{"content":"first second","encrypted_content":"enc_r23_cmp_2","type":"compaction"}`, false},
		{"object content", `{"type":"compaction","content":{"x":1}}`, "", true},
	} {
		it := &itemState{start: []byte(tc.start), encrypted: &enc}
		it.content.WriteString("first ")
		it.content.WriteString("second")
		it.gotContent = true
		got, err := it.item("compaction")
		if tc.fails {
			if err == nil {
				t.Errorf("%s: rebuilt %s, want an error", tc.name, got.JSON)
			}
			continue
		}
		if err != nil || got.JSON != tc.want || got.Type != "compaction" {
			t.Errorf("%s: %+v, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}
