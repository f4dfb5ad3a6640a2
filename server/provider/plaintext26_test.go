package provider

import "testing"

// TestPlainTextMessage: a proxy's plain words are the message; JSON,
// markup, nothing and bytes that are not text are not.
func TestPlainTextMessage(t *testing.T) {
	for in, want := range map[string]string{
		"upstream connect error or disconnect/reset before headers.\n reset reason: connection termination\n": "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
		"\uFEFF404 page not found\n": "404 page not found",
		"":                           "",
		"  \n":                       "",
		`{"message":"x"}`:            "",
		"[1]":                        "",
		"<html>x</html>":             "",
		"\x1bW\x00`":                 "",
		"ok\xffno":                   "",
		"tab\there":                  "tab here",
	} {
		if got := PlainTextMessage([]byte(in)); got != want {
			t.Errorf("PlainTextMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
