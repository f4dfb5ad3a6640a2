package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"

	"golang.org/x/net/http/httpguts"
)

// readResponseFast parses the response head already buffered in br when
// it is of the shape model servers send: "HTTP/1.1", a final status other
// than 204 and 304, "\r\n"-terminated lines of valid header fields without
// continuation lines, a body framed by one Content-Length or by
// Transfer-Encoding: chunked (no declared trailers, no Pragma), for a
// request other than HEAD. It returns the response exactly as
// http.ReadResponse would (FuzzReadResponseHead compares them), with the
// head consumed from br, and false with nothing consumed for anything else
// (an incomplete, unusual or malformed head), which http.ReadResponse then
// reads, reporting errors its way.
//
// Where http.ReadResponse allocates each value, most keys and a reader per
// head, this takes one string for the whole head, of which values and
// already canonical keys are substrings.
func readResponseFast(br *bufio.Reader, req *http.Request) (*http.Response, bool) {
	if req.Method == http.MethodHead {
		return nil, false
	}
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 {
		return nil, false // the head is not all here yet
	}
	head := buf[:end+2] // every line with its CRLF
	// The status line: "HTTP/1.1 200" and an optional reason.
	line, rest, ok := cutLine(head)
	if !ok || len(line) < 12 || string(line[:9]) != "HTTP/1.1 " || !digit(line[9]) || !digit(line[10]) || !digit(line[11]) ||
		(len(line) > 12 && line[12] != ' ') || !validText(line[12:]) {
		return nil, false
	}
	code := int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		return nil, false // no body, or informational: the rare paths
	}
	if len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		return nil, false // a header line that continues the status line
	}
	n := bytes.Count(rest, crlf)
	s := string(head) // the one copy: values and keys are cut from it
	off := len(head) - len(rest)
	status := s[9:len(line)]
	h := make(http.Header, n)
	fr := &fastResponse{} // the response, its body and most headers' value slices in one allocation
	slab := fr.vals[:]
	if n > len(slab) {
		slab = make([]string, n)
	}
	var canon [64]byte
	for len(rest) > 0 {
		line, rest, ok = cutLine(rest)
		if !ok || (len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t')) {
			return nil, false // a bare LF, or obs-fold
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return nil, false
		}
		k, v := line[:colon], line[colon+1:]
		if !validToken(k) || !validText(v) {
			return nil, false
		}
		vs, ve := trimBlanks(v)
		value := s[off+colon+1+vs : off+colon+1+ve]
		key := canonicalKey(k, canon[:0], s[off:off+colon])
		if vv, ok := h[key]; ok {
			h[key] = append(vv, value)
		} else {
			slab[0] = value
			h[key], slab = slab[:1:1], slab[1:]
		}
		off += len(line) + 2
	}
	if _, ok := h["Pragma"]; ok {
		return nil, false // fixPragmaCacheControl
	}
	if _, ok := h["Trailer"]; ok {
		return nil, false // declared trailers
	}
	resp := &fr.resp
	*resp = http.Response{Status: status, StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: req}
	if te, ok := h["Transfer-Encoding"]; ok {
		if len(te) != 1 || !asciiEqualFold(te[0], "chunked") {
			return nil, false
		}
		if cl := h["Content-Length"]; len(cl) > 1 || (len(cl) == 1 && !validLength(cl[0])) {
			return nil, false // http.ReadResponse refuses these
		}
		delete(h, "Transfer-Encoding")
		delete(h, "Content-Length")
		resp.TransferEncoding = []string{"chunked"}
		resp.ContentLength = -1
	} else {
		cl := h["Content-Length"]
		if len(cl) != 1 || !validLength(cl[0]) {
			return nil, false // several, invalid, or none (a body up to the close)
		}
		for _, c := range cl[0] {
			resp.ContentLength = resp.ContentLength*10 + int64(c-'0')
		}
	}
	if conn, ok := h["Connection"]; ok && httpguts.HeaderValuesContainsToken(conn, "close") {
		delete(h, "Connection")
		resp.Close = true
	}
	switch {
	case resp.ContentLength == 0:
		resp.Body = http.NoBody
	case resp.ContentLength > 0:
		fr.body = lengthBody{br: br, n: resp.ContentLength}
		resp.Body = &fr.body
	default:
		resp.Body = &chunkedBody{cr: httputil.NewChunkedReader(br), br: br, resp: resp}
	}
	_, _ = br.Discard(end + 4) // buffered: cannot fail
	return resp, true
}

// fastResponse is what readResponseFast allocates for a response.
type fastResponse struct {
	resp http.Response
	body lengthBody
	vals [16]string
}

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// cutLine cuts the first CRLF-terminated line off b; false when the line
// has a bare CR or LF.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	return b[:i-1], b[i+1:], true
}

func digit(c byte) bool { return c >= '0' && c <= '9' }

// validText: bytes textproto accepts in a header value (no control bytes
// but tabs; obs-text allowed).
func validText(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// validToken: a non-empty header field name (token characters).
func validToken(b []byte) bool {
	for _, c := range b {
		if !httpguts.IsTokenRune(rune(c)) {
			return false
		}
	}
	return len(b) > 0
}

// validLength: a Content-Length value http.ReadResponse reads as the same
// number (digits only; at most 18 of them, below its 63-bit bound).
func validLength(v string) bool {
	if v == "" || len(v) > 18 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !digit(v[i]) {
			return false
		}
	}
	return true
}

// trimBlanks returns the bounds of v without its leading and trailing
// spaces and tabs.
func trimBlanks(v []byte) (start, end int) {
	start, end = 0, len(v)
	for start < end && (v[start] == ' ' || v[start] == '\t') {
		start++
	}
	for end > start && (v[end-1] == ' ' || v[end-1] == '\t') {
		end--
	}
	return start, end
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// canonicalKey returns the canonical form of the token k (as
// textproto.CanonicalMIMEHeaderKey): raw when k is canonical already (a
// substring of the head), a shared string for common names, else a new
// string. scratch is room for the canonical bytes.
func canonicalKey(k, scratch []byte, raw string) string {
	upper, same := true, true
	for _, c := range k {
		switch {
		case upper && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
			same = false
		case !upper && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			same = false
		}
		scratch = append(scratch, c)
		upper = c == '-'
	}
	if same {
		return raw
	}
	if v, ok := commonKeys[string(scratch)]; ok {
		return v
	}
	return string(scratch)
}

// commonKeys are the response header names sent often in other spellings
// (HTTP/2-style lower case by proxies and model servers).
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Date", "Server",
		"Cache-Control", "Vary", "Keep-Alive", "Set-Cookie", "Strict-Transport-Security", "Alt-Svc", "Via", "Retry-After",
		"X-Request-Id", "X-Content-Type-Options", "Access-Control-Expose-Headers", "Access-Control-Allow-Origin", "Cf-Ray", "Cf-Cache-Status",
		"Openai-Organization", "Openai-Processing-Ms", "Openai-Project", "Openai-Version", "X-Envoy-Upstream-Service-Time",
		"X-Ratelimit-Limit-Requests", "X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Remaining-Tokens",
		"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens", "Apim-Request-Id", "Azureml-Model-Session", "X-Ms-Region",
		"Request-Id", "Anthropic-Organization-Id", "X-Goog-Api-Key", "Server-Timing"} {
		m[k] = k
	}
	return m
}()

// lengthBody reads a body of Content-Length bytes as net/http's does: the
// last bytes come with io.EOF, a connection that ends early is
// io.ErrUnexpectedEOF, nothing is read past the body.
type lengthBody struct {
	br     *bufio.Reader
	n      int64
	eof    bool
	closed bool
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.eof {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	m, err := b.br.Read(p)
	b.n -= int64(m)
	if b.n == 0 {
		b.eof = true
		return m, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return m, err
}

func (b *lengthBody) Close() error {
	b.closed = true
	return nil
}

// chunkedBody reads a chunked body as net/http's does, the trailer section
// included (into the response's Trailer).
type chunkedBody struct {
	cr     io.Reader
	br     *bufio.Reader
	resp   *http.Response
	eof    bool
	closed bool
}

var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.cr.Read(p)
	if err == io.EOF {
		b.eof = true
		if terr := b.readTrailer(); terr != nil {
			b.eof, b.closed = false, true
			return n, terr
		}
	}
	return n, err
}

// readTrailer reads what follows the last chunk, as net/http's body does:
// usually just CRLF; trailer fields go into resp.Trailer, bounded by the
// reader's buffer.
func (b *chunkedBody) readTrailer() error {
	buf, err := b.br.Peek(2)
	if bytes.Equal(buf, crlf) {
		_, _ = b.br.Discard(2) // peeked
		return nil
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	if !upcomingDoubleCRLF(b.br) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	hdr, err := textproto.NewReader(b.br).ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	if b.resp.Trailer == nil {
		b.resp.Trailer = http.Header(hdr)
		return nil
	}
	for k, vv := range hdr {
		b.resp.Trailer[k] = vv
	}
	return nil
}

// upcomingDoubleCRLF is net/http's seeUpcomingDoubleCRLF: whether the
// trailer ends within what the reader can buffer.
func upcomingDoubleCRLF(r *bufio.Reader) bool {
	for peekSize := 4; ; peekSize++ {
		buf, err := r.Peek(peekSize)
		if bytes.HasSuffix(buf, crlfcrlf) {
			return true
		}
		if err != nil {
			break
		}
	}
	return false
}

func (b *chunkedBody) Close() error {
	b.closed = true
	return nil
}
