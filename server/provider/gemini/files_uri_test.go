package gemini

import "testing"

// TestFilesAPIURI: a Files API name ("files/abc123", as the SDKs print a
// file's name) goes as the file's URI, which fileData needs; a full URI,
// gs:// or any other id goes unchanged.
func TestFilesAPIURI(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"files/abc123": "https://generativelanguage.googleapis.com/v1beta/files/abc123",
		"https://generativelanguage.googleapis.com/v1beta/files/abc123": "https://generativelanguage.googleapis.com/v1beta/files/abc123",
		"gs://bucket/a.pdf": "gs://bucket/a.pdf",
		"abc123":            "abc123",
	} {
		if got := filesAPIURI(in); got != want {
			t.Errorf("filesAPIURI(%q) = %q, want %q", in, got, want)
		}
	}
}
