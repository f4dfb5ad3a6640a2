package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadReplayCapture(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.http")
	body := "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n"
	if err := os.WriteFile(path, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Request-Id: req_1\r\nTransfer-Encoding: chunked\r\n\r\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := Load(t, path)
	if rec.Status != 200 || rec.Header.Get("X-Request-Id") != "req_1" || string(rec.Body) != body || rec.Header.Get("Transfer-Encoding") != "" {
		t.Fatalf("recording = %+v", rec)
	}
	srv := Replay(t, rec)
	resp, err := http.Post(srv.URL+"/v1/x?alt=sse", "application/json", strings.NewReader(`{"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != body || resp.Header.Get("X-Request-Id") != "req_1" {
		t.Errorf("replayed %q %v", got, resp.Header)
	}
	headers := []string{"X-B", "Content-Type", "A-Missing"}
	g := string(RequestGolden(srv.Last(t), headers...))
	want := "POST /v1/x?alt=sse\na-missing: <absent>\ncontent-type: application/json\nx-b: <absent>\n\n{\n  \"b\": 2\n}\n"
	if g != want {
		t.Errorf("golden:\n%s\nwant:\n%s", g, want)
	}
	if headers[0] != "X-B" {
		t.Error("RequestGolden reordered the caller's slice")
	}
}

// TestStringPieces: the pieces are JSON string literals whose joined
// contents decode to the text, a character outside the BMP cut between
// its surrogate halves when n is 1, the escaped characters written as
// \u escapes.
func TestStringPieces(t *testing.T) {
	const s = "a\"é😀\n"
	got := StringPieces(s, 1, func(r rune) bool { return r == 'é' })
	want := []string{`"a"`, `"\""`, `"\u00e9"`, `"\ud83d"`, `"\ude00"`, `"\n"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pieces %q, want %q", got, want)
	}
	var joined strings.Builder
	for _, p := range StringPieces(s, 2, nil) {
		joined.WriteString(p[1 : len(p)-1])
	}
	var back string
	if err := json.Unmarshal([]byte(`"`+joined.String()+`"`), &back); err != nil || back != s {
		t.Errorf("joined %q decodes to %q (%v)", joined.String(), back, err)
	}
}
