package pipeline

import "testing"

// TestRedactorMaskedSecret: the Redactor replaces a masked form of a
// secret (OpenAI's 401 shows the refused key's ends around asterisks),
// in Bytes and String, with escapes in the text or not; a mask of
// another key and text without asterisks are returned as they were (Bytes:
// the same slice).
func TestRedactorMaskedSecret(t *testing.T) {
	t.Parallel()
	r := NewRedactor("sk-e2e-test-key-000000000000")
	for _, tc := range []struct{ in, want string }{
		{`{"message":"Incorrect API key provided: sk-e2e-te********************0000. You can"}`, `{"message":"Incorrect API key provided: [REDACTED]. You can"}`},
		{`{"message":"key sk-e2e-te****0000 at https:\/\/x"}`, `{"message":"key [REDACTED] at https:\/\/x"}`},
		{`{"message":"Incorrect API key provided: sk-proj-****wxyz."}`, `{"message":"Incorrect API key provided: sk-proj-****wxyz."}`},
	} {
		if got := string(r.Bytes([]byte(tc.in))); got != tc.want {
			t.Errorf("Bytes(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// Contains never says no where Bytes replaces: the gateway skips
		// redacting a meta Contains clears (FuzzRedactContains found a
		// masked key it cleared).
		if tc.in != tc.want && !r.Contains([]byte(tc.in)) {
			t.Errorf("Contains(%q) = false, but Bytes replaces a masked key in it", tc.in)
		}
	}
	p := []byte("nothing **** here")
	if got := r.Bytes(p); &got[0] != &p[0] {
		t.Error("Bytes copied a text it left as it was")
	}
}
