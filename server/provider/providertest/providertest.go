// Package providertest replays recorded provider traffic for adapter tests
// and compares results with golden files.
//
// A recording is a file holding one HTTP response exactly as the provider
// sends it: status line, headers, a blank line, then the body bytes (JSON,
// SSE or NDJSON, CRLF framing and all). Replay serves it from an httptest
// server, writing the body in small pieces at arbitrary byte boundaries with
// a flush after each, and captures the request the adapter sent.
package providertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Recording is a parsed recorded response.
type Recording struct {
	Status int
	Header http.Header
	Body   []byte
}

// Load parses a recording file.
func Load(t testing.TB, path string) Recording {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read recording: %v", err)
	}
	// Split head and body by hand: http.ReadResponse would de-chunk and
	// need Content-Length; we want the body bytes verbatim.
	sep := []byte("\r\n\r\n")
	i := bytes.Index(raw, sep)
	if j := bytes.Index(raw, []byte("\n\n")); i < 0 || (j >= 0 && j < i) {
		i, sep = j, []byte("\n\n")
	}
	if i < 0 {
		t.Fatalf("%s: no blank line after the headers", path)
	}
	head, body := raw[:i], raw[i+len(sep):]
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(bytes.NewReader(head), strings.NewReader("\r\n\r\n"))), nil)
	if err != nil {
		t.Fatalf("%s: parse head: %v", path, err)
	}
	resp.Header.Del("Content-Length")
	resp.Header.Del("Transfer-Encoding")
	return Recording{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// Captured is a request an adapter sent.
type Captured struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// Server replays recordings and captures requests.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Captured
	// Chunk is the size of the body pieces written (default 7 bytes, so
	// that events and CRLF pairs are split across reads).
	Chunk int
	conns atomic.Int32
}

// Connections is the number of TCP connections clients opened.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Replay starts a server that answers every request with the recordings in
// order (the last one repeats).
func Replay(t testing.TB, recs ...Recording) *Server {
	t.Helper()
	s := &Server{Chunk: 7}
	var n int
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("replay: reading the request body: %v", err)
		}
		s.mu.Lock()
		s.requests = append(s.requests, Captured{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		rec := recs[min(n, len(recs)-1)]
		n++
		chunk := s.Chunk
		s.mu.Unlock()
		for k, vs := range rec.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Status)
		fl, _ := w.(http.Flusher)
		for b := rec.Body; len(b) > 0; {
			k := min(chunk, len(b))
			if _, err := w.Write(b[:k]); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			b = b[k:]
		}
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// ReplayFile is Replay of one recording file.
func ReplayFile(t testing.TB, path string) *Server {
	t.Helper()
	return Replay(t, Load(t, path))
}

// Requests returns the captured requests.
func (s *Server) Requests() []Captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Captured(nil), s.requests...)
}

// Last returns the last captured request.
func (s *Server) Last(t testing.TB) Captured {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the replay server")
	}
	return reqs[len(reqs)-1]
}

// RequestGolden renders a captured request for a golden file: method, path,
// query, the named headers (sorted; absent ones shown as absent) and the
// body re-indented if it is JSON.
func RequestGolden(c Captured, headers ...string) []byte {
	var b bytes.Buffer
	b.WriteString(c.Method + " " + c.Path)
	if c.Query != "" {
		b.WriteString("?" + c.Query)
	}
	b.WriteString("\n")
	headers = append([]string(nil), headers...) // the caller's slice may be shared
	sort.Strings(headers)
	for _, h := range headers {
		if vs, ok := c.Header[http.CanonicalHeaderKey(h)]; ok {
			b.WriteString(strings.ToLower(h) + ": " + strings.Join(vs, ", ") + "\n")
		} else {
			b.WriteString(strings.ToLower(h) + ": <absent>\n")
		}
	}
	b.WriteString("\n")
	b.Write(IndentJSON(c.Body))
	return b.Bytes()
}

// IndentJSON re-indents JSON (keeping key order), or returns the input as
// is when it is not JSON.
func IndentJSON(in []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, in, "", "  "); err != nil {
		return in
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// ProtoJSON renders a message as stable, indented protojson (protojson's
// own whitespace is deliberately unstable).
func ProtoJSON(t testing.TB, m proto.Message) []byte {
	t.Helper()
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatalf("protojson: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("compact: %v", err)
	}
	return IndentJSON(compact.Bytes())
}

// Golden compares got with the file at path, or rewrites the file when the
// test runs with -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from golden (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// IsJSONObject is the fuzz tests' own answer to "do these arguments parse
// as a JSON object", written independently of fold.ValidArguments (which
// the adapters use), so that the tests check the adapters instead of
// comparing a function with itself.
func IsJSONObject(s string) bool {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") {
		return false
	}
	var m map[string]any
	return json.Unmarshal([]byte(t), &m) == nil
}
