package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// compareRead parses in with readResponseFast and with http.ReadResponse
// and reports how they differ (head, body, trailer, what is left for the
// next response); fast tells whether the fast path took it.
func compareRead(in []byte, method string) (fast bool, diff string) {
	req, _ := http.NewRequest(method, "http://h/", nil)
	fbr := bufio.NewReaderSize(bytes.NewReader(in), 4096)
	if _, err := fbr.Peek(1); err != nil {
		return false, ""
	}
	fr, ok := readResponseFast(fbr, req)
	if !ok {
		if fbr.Buffered() != min(len(in), 4096) {
			return false, "refused after consuming bytes"
		}
		return false, ""
	}
	sr, err := http.ReadResponse(bufio.NewReaderSize(bytes.NewReader(in), 4096), req)
	if err != nil {
		return true, fmt.Sprintf("fast path took it, http.ReadResponse: %v", err)
	}
	sbr := sr.Body
	type head struct {
		Status               string
		StatusCode           int
		Proto                string
		ProtoMajor, ProtoMin int
		Header, Trailer      http.Header
		ContentLength        int64
		TE                   []string
		Close, Uncompressed  bool
		NoBody               bool
	}
	h := func(r *http.Response) head {
		return head{r.Status, r.StatusCode, r.Proto, r.ProtoMajor, r.ProtoMinor, r.Header, r.Trailer, r.ContentLength, r.TransferEncoding, r.Close, r.Uncompressed, r.Body == http.NoBody}
	}
	if a, b := h(fr), h(sr); !reflect.DeepEqual(a, b) {
		return true, fmt.Sprintf("head:\nfast %+v\nstd  %+v", a, b)
	}
	fb, ferr := io.ReadAll(fr.Body)
	sb, serr := io.ReadAll(sbr)
	if !bytes.Equal(fb, sb) || fmt.Sprint(ferr) != fmt.Sprint(serr) {
		return true, fmt.Sprintf("body: fast %q %v, std %q %v", fb, ferr, sb, serr)
	}
	if !reflect.DeepEqual(fr.Trailer, sr.Trailer) {
		return true, fmt.Sprintf("trailer: fast %v, std %v", fr.Trailer, sr.Trailer)
	}
	if ferr == nil {
		// What follows (the next response on the connection) is where
		// both left it. (net/http's body reads ahead nothing either.)
		frest, _ := io.ReadAll(fbr)
		srest := restOf(in, sr)
		if srest != nil && !bytes.Equal(frest, srest) {
			return true, fmt.Sprintf("rest: fast %q, std %q", frest, srest)
		}
	}
	return true, ""
}

// restOf re-parses in with net/http to find what follows the response.
func restOf(in []byte, _ *http.Response) []byte {
	br := bufio.NewReaderSize(bytes.NewReader(in), 4096)
	r, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil
	}
	if _, err := io.ReadAll(r.Body); err != nil {
		return nil
	}
	rest, _ := io.ReadAll(br)
	return rest
}

// readCases are response heads and bodies: the shapes the fast path takes
// and the edge cases net/http's transport tests cover (h1_limits_test.go
// runs the bounds through the transport).
var readCases = []struct {
	name, in string
	fast     bool
}{
	{"length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\nok", true},
	{"length then next", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", true},
	{"zero length", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
	{"leading zeros", "HTTP/1.1 200 OK\r\nContent-Length: 002\r\n\r\nok", true},
	{"no reason", "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", true},
	{"reason blank", "HTTP/1.1 429 \r\nContent-Length: 2\r\n\r\nok", true},
	{"odd status", "HTTP/1.1 999 Whatever it is\r\nContent-Length: 2\r\n\r\nok", true},
	{"lower-case keys", "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-request-id: r1\r\nx-unusual-KEY: v\r\nX-Multi: a\r\nx-multi: b\r\n\r\nok", true},
	{"blanks around values", "HTTP/1.1 200 OK\r\nContent-Length:  \t2 \t\r\nX-Empty:\r\nX-Tab: a\tb\r\n\r\nok", true},
	{"obs-text", "HTTP/1.1 200 OK\r\nX-Bytes: caf\xc3\xa9 \xff\r\nContent-Length: 2\r\n\r\nok", true},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n3\r\n!!!\r\n0\r\n\r\nHTTP", true},
	{"chunked mixed case", "HTTP/1.1 200 OK\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n", true},
	{"chunked and length", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n2\r\nok\r\n0\r\n\r\n", true},
	{"chunked and bad length", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n0\r\n\r\n", false},
	{"chunked trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\nnext", true},
	{"chunked extension", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a=b\r\nok\r\n0\r\n\r\n", true},
	{"chunked bad size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", true},
	{"chunked cut", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nok", true},
	{"chunked no final CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", true},
	{"connection close", "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok", true},
	{"connection keep-alive", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", true},
	{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok", true},
	{"declared trailer", "HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n\r\n", false},
	{"pragma", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 2\r\n\r\nok", false},
	{"same length twice", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false},
	{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false},
	{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", false},
	{"huge length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nok", false},
	{"empty length", "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nok", false},
	{"no length", "HTTP/1.1 200 OK\r\nX: y\r\n\r\nok until close", false},
	{"two encodings", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", false},
	{"two encoding fields", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false},
	{"identity encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", false},
	{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"http/2 in text", "HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"informational", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"no content", "HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n", false},
	{"not modified", "HTTP/1.1 304 Not Modified\r\n\r\n", false},
	{"two spaces", "HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"long code", "HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"signed code", "HTTP/1.1 +20 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"no status", "HTTP/1.1\r\nContent-Length: 2\r\n\r\nok", false},
	{"control in reason", "HTTP/1.1 200 O\x01K\r\nContent-Length: 2\r\n\r\nok", false},
	{"bare LF lines", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok\r\n\r\n", false},
	{"bare LF header", "HTTP/1.1 200 OK\r\nX: a\nContent-Length: 2\r\n\r\nok", false},
	{"bare CR", "HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 2\r\n\r\nok", false},
	{"obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\nok", false},
	{"folded first line", "HTTP/1.1 200 OK\r\n X: a\r\nContent-Length: 2\r\n\r\nok", false},
	{"space before colon", "HTTP/1.1 200 OK\r\nX : a\r\nContent-Length: 2\r\n\r\nok", false},
	{"no colon", "HTTP/1.1 200 OK\r\nX a\r\nContent-Length: 2\r\n\r\nok", false},
	{"empty name", "HTTP/1.1 200 OK\r\n: a\r\nContent-Length: 2\r\n\r\nok", false},
	{"control in value", "HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 2\r\n\r\nok", false},
	{"DEL in value", "HTTP/1.1 200 OK\r\nX: a\x7fb\r\nContent-Length: 2\r\n\r\nok", false},
	{"head incomplete", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", false},
	{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", false},
}

func TestReadResponseFast(t *testing.T) {
	t.Parallel()
	for _, c := range readCases {
		fast, diff := compareRead([]byte(c.in), http.MethodPost)
		if diff != "" {
			t.Errorf("%s: %s", c.name, diff)
		}
		if fast != c.fast {
			t.Errorf("%s: fast path %v, want %v", c.name, fast, c.fast)
		}
	}
	if fast, _ := compareRead([]byte(readCases[0].in), http.MethodHead); fast {
		t.Error("HEAD: the fast path took it")
	}
	// A head longer than what is buffered goes to http.ReadResponse.
	long := "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", 5000) + "\r\nContent-Length: 2\r\n\r\nok"
	if fast, diff := compareRead([]byte(long), http.MethodPost); fast || diff != "" {
		t.Errorf("long head: fast %v %s", fast, diff)
	}
}

// TestReadResponseFastReads: a length body gives its last bytes with EOF
// (the connection goes back to the pool at once), then EOF; reads after
// Close fail.
func TestReadResponseFastReads(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"} {
		br := bufio.NewReader(strings.NewReader(in))
		br.Peek(1)
		resp, ok := readResponseFast(br, &http.Request{Method: http.MethodPost})
		if !ok {
			t.Fatalf("%q: not taken", in)
		}
		buf := make([]byte, 10)
		n, err := io.ReadFull(resp.Body, buf[:2])
		if n != 2 || err != nil || string(buf[:2]) != "ok" {
			t.Errorf("%q: %d %v", in, n, err)
		}
		if n, err := resp.Body.Read(buf); n != 0 || err != io.EOF {
			t.Errorf("%q: after the end %d %v", in, n, err)
		}
		resp.Body.Close()
		if _, err := resp.Body.Read(buf); err != http.ErrBodyReadAfterClose {
			t.Errorf("%q: after close %v", in, err)
		}
	}
	br := bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	br.Peek(1)
	resp, _ := readResponseFast(br, &http.Request{Method: http.MethodPost})
	buf := make([]byte, 10)
	if n, err := resp.Body.Read(buf); n != 2 || err != io.EOF {
		t.Errorf("last bytes: %d %v, want 2 and EOF", n, err)
	}
}

// FuzzReadResponseHead: whatever response the fast path takes,
// http.ReadResponse reads the same (head, body, trailer, what follows).
func FuzzReadResponseHead(f *testing.F) {
	for _, c := range readCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, diff := compareRead(in, http.MethodPost); diff != "" {
			t.Fatalf("%q: %s", in, diff)
		}
	})
}

// TestH1ResponseFraming: through the transport, a chunked answer with
// trailer fields leaves the connection ready for the next answer (and the
// trailer in the response), and the heads net/http refuses (conflicting
// lengths, an unsupported transfer encoding, a malformed header line) fail
// with its errors.
func TestH1ResponseFraming(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, answerEach("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: t\r\n\r\n"))
	client := NewHTTPClient(DefaultTransportConfig, nil)
	for i := 0; i < 3; i++ {
		resp, err := post(t, client, t.Context(), srv.URL(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); got != "ok" || resp.Trailer.Get("X-Trailer") != "t" {
			t.Errorf("call %d: body %q, trailer %v", i, got, resp.Trailer)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	for _, c := range []struct{ resp, want string }{
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", "multiple Content-Length headers"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok", "unsupported transfer encoding"},
		{"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 2\r\n\r\nok", "malformed MIME header line"},
		{"HTTP/1.1 20x OK\r\nContent-Length: 2\r\n\r\nok", "malformed HTTP status code"},
	} {
		srv := newRawServer(t, answerOnce(c.resp))
		_, err := post(t, client, t.Context(), srv.URL(), "x")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.resp, err, c.want)
		}
	}
}

// TestH1PoolByHost: the spellings of one address share a pool, schemes
// do not.
func TestH1PoolByHost(t *testing.T) {
	t.Parallel()
	h1 := newH1Transport(DefaultTransportConfig, nil)
	get := func(u string) *h1Pool {
		req, _ := http.NewRequest(http.MethodPost, u, nil)
		return h1.pool(req)
	}
	a := get("http://127.0.0.1/x")
	if b := get("http://127.0.0.1:80/y"); a != b || a != get("http://127.0.0.1/z") {
		t.Error("one address, several pools")
	}
	if get("https://127.0.0.1/x") == a || get("https://127.0.0.1:443/x") != get("https://127.0.0.1/y") {
		t.Error("pools by scheme")
	}
}
