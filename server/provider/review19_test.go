package provider

import "testing"

// TestReview19IsMarkupAfterBOM: a page that starts with a byte order mark
// and then a line break before its first tag is markup too (the pipeline's
// HTML check skips blanks and a BOM in any order); it was put into the
// error's message.
func TestReview19IsMarkupAfterBOM(t *testing.T) {
	for _, body := range []string{"<html>", " \n<html>", "\xEF\xBB\xBF<html>", "\xEF\xBB\xBF\r\n<!DOCTYPE html>", "\n\xEF\xBB\xBF <html>"} {
		if !IsMarkup([]byte(body)) {
			t.Errorf("IsMarkup(%q) = false", body)
		}
	}
	for _, body := range []string{"", "\xEF\xBB\xBF", "\xEF\xBB\xBF {\"error\":1}", "upstream connect error <x>"} {
		if IsMarkup([]byte(body)) {
			t.Errorf("IsMarkup(%q) = true", body)
		}
	}
}
