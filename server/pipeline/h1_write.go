package pipeline

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"

	"golang.org/x/net/http/httpguts"
)

// writeRequest writes req (request line, headers, body) to bw, closing
// its body, as req.Write does. The requests the adapters make (a method,
// a plain host and path, valid headers, a body of known length or none)
// are written by writeRequestFast; anything else by req.Write.
func writeRequest(bw *bufio.Writer, req *http.Request) error {
	if !fastWritable(req) {
		return req.Write(bw)
	}
	return writeRequestFast(bw, req)
}

// maxFastHeaders bounds the headers writeRequestFast sorts on the stack;
// a request with more goes to req.Write.
const maxFastHeaders = 32

// fastWritable reports whether writeRequestFast writes req exactly as
// req.Write would (the same bytes; TestWriteRequestFast and
// FuzzWriteRequestFast compare them). Not: a host that needs cleaning (non-ASCII, an IPv6 zone, invalid bytes), an opaque URL
// or control bytes in it, Connection: close asked through req.Close, a
// transfer encoding, trailers, a body of unknown length, a length without
// a body, a body-less request of a method net/http sends Content-Length: 0
// for, header names req.Write drops, values it rewrites (line breaks,
// surrounding blanks), an httptrace.ClientTrace to report to.
func fastWritable(req *http.Request) bool {
	u := req.URL
	if u == nil || u.Opaque != "" || req.Close || len(req.TransferEncoding) > 0 || req.Trailer != nil ||
		!httpguts.ValidHeaderFieldName(req.Method) || !plainHost(requestHost(req)) || hasCTL(u.EscapedPath()) || hasCTL(u.RawQuery) {
		return false
	}
	if req.Body == nil || req.Body == http.NoBody {
		if req.ContentLength != 0 || req.Method != http.MethodGet {
			return false
		}
	} else if req.ContentLength <= 0 {
		return false
	}
	if len(req.Header) > maxFastHeaders {
		return false
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return false
		}
		for _, v := range vs {
			if !plainValue(v) {
				return false
			}
		}
	}
	return httptrace.ContextClientTrace(req.Context()) == nil
}

// requestHost is the Host header's value: req.Host (NewRequest sets it
// from the URL), else the URL's host.
func requestHost(req *http.Request) string {
	if req.Host != "" {
		return req.Host
	}
	return req.URL.Host
}

// plainHost: a non-empty ASCII host[:port] that req.Write sends as it is
// (valid in a Host header, no IPv6 zone to remove).
func plainHost(h string) bool {
	if h == "" || !httpguts.ValidHostHeader(h) {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c >= 0x80 || c == '%' {
			return false
		}
	}
	return true
}

// plainValue: a valid header value (no line breaks, no control bytes but
// tabs) without the surrounding blanks req.Write trims.
func plainValue(v string) bool {
	if !httpguts.ValidHeaderFieldValue(v) {
		return false
	}
	if n := len(v); n > 0 {
		switch {
		case v[0] == ' ', v[0] == '\t', v[n-1] == ' ', v[n-1] == '\t':
			return false
		}
	}
	return true
}

// hasCTL: a control byte, which req.Write refuses in the request URI.
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c == 0x7f {
			return true
		}
	}
	return false
}

// excludedHeaders are the caller's headers req.Write does not copy: it
// writes Host, User-Agent and the framing itself.
func excludedHeader(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// writeRequestFast writes a request fastWritable accepted: the same bytes
// as req.Write (request line, Host, User-Agent, Content-Length, the other
// headers sorted by name, the body), without its allocations.
func writeRequestFast(bw *bufio.Writer, req *http.Request) (err error) {
	defer func() {
		if req.Body != nil {
			if cerr := req.Body.Close(); cerr != nil && err == nil {
				err = cerr // as req.Write reports it
			}
		}
	}()
	u := req.URL
	bw.WriteString(req.Method)
	bw.WriteByte(' ')
	if p := u.EscapedPath(); p != "" {
		bw.WriteString(p)
	} else {
		bw.WriteByte('/')
	}
	if u.ForceQuery || u.RawQuery != "" {
		bw.WriteByte('?')
		bw.WriteString(u.RawQuery)
	}
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(requestHost(req))
	bw.WriteString("\r\n")
	ua := "Go-http-client/1.1" // net/http's default
	if vs, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(vs) > 0 {
			ua = vs[0]
		}
	}
	if ua != "" {
		bw.WriteString("User-Agent: ")
		bw.WriteString(ua)
		bw.WriteString("\r\n")
	}
	if req.ContentLength > 0 {
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), req.ContentLength, 10))
		bw.WriteString("\r\n")
	}
	var keysBuf [maxFastHeaders]string
	keys := keysBuf[:0]
	for k := range req.Header {
		if !excludedHeader(k) {
			keys = append(keys, k)
		}
	}
	// Insertion sort: a handful of keys, no allocation.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	for _, k := range keys {
		for _, v := range req.Header[k] {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	if _, err := bw.WriteString("\r\n"); err != nil {
		return err
	}
	if req.ContentLength == 0 {
		return nil
	}
	if req.GetBody == nil {
		// Not one of net/http's in-memory bodies (those come with
		// GetBody): the headers go out before the body is read, as
		// req.Write sends them, in case the body waits on the server.
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return writeBody(bw, req.Body, req.ContentLength)
}

// writeBody copies exactly n bytes of body into bw's buffer (flushing as
// it fills), and fails as req.Write does when the body is shorter or
// longer.
func writeBody(bw *bufio.Writer, body io.Reader, n int64) error {
	var copied int64
	for copied < n {
		if bw.Available() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		buf := bw.AvailableBuffer()
		buf = buf[:min(int64(cap(buf)), n-copied)]
		m, err := body.Read(buf)
		if m > 0 {
			if _, werr := bw.Write(buf[:m]); werr != nil {
				return werr
			}
			copied += int64(m)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if copied == n {
		// Any bytes past the length are an error too (req.Write reads
		// them all to say how many).
		if bw.Available() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		buf := bw.AvailableBuffer()
		m, err := body.Read(buf[:cap(buf)])
		for m == 0 && err == nil {
			m, err = body.Read(buf[:cap(buf)])
		}
		if m == 0 && err == io.EOF {
			return nil
		}
		if m == 0 {
			return err
		}
		extra, err := io.Copy(io.Discard, body)
		if err != nil {
			return err
		}
		copied += int64(m) + extra
	}
	return fmt.Errorf("http: ContentLength=%d with Body length %d", n, copied)
}
