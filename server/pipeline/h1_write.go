package pipeline

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
)

// writeRequest writes req as net/http's Request.Write does, byte for byte,
// for the requests the adapters make (TestWriteRequestMatchesNetHTTP), and
// hands anything else to Request.Write. Request.Write formats its request
// line with fmt and sorts headers through a pool: a few µs per call, and
// the deepest point of a call's stack, which set the size (16 KiB) every
// open stream's goroutine keeps. Like Request.Write it closes the body.
func writeRequest(w *bufio.Writer, req *http.Request) error {
	if !simpleRequest(req) {
		return req.Write(w)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	ua := "Go-http-client/1.1"
	if vs, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(vs) > 0 {
			ua = vs[0]
		}
	}
	if ua != "" {
		w.WriteString("User-Agent: ")
		w.WriteString(ua)
		w.WriteString("\r\n")
	}
	if req.ContentLength > 0 || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(req.ContentLength, 10))
		w.WriteString("\r\n")
	}
	var keys [24]string
	ks := keys[:0]
	for k := range req.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		for _, v := range req.Header[k] {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	_, err := w.WriteString("\r\n")
	if req.Body == nil || req.Body == http.NoBody {
		return err
	}
	if err == nil {
		var n int64
		n, err = io.Copy(w, io.LimitReader(req.Body, req.ContentLength))
		if err == nil && n != req.ContentLength {
			err = fmt.Errorf("http: ContentLength=%d with Body length %d", req.ContentLength, n)
		}
		if err == nil {
			var one [1]byte
			if m, _ := io.ReadFull(req.Body, one[:]); m > 0 {
				err = fmt.Errorf("http: ContentLength=%d with a longer Body", req.ContentLength)
			}
		}
	}
	if cerr := req.Body.Close(); err == nil {
		err = cerr
	}
	return err
}

// simpleRequest: what writeRequest writes as Request.Write would. The rest
// (chunked or unknown lengths, trailers, Connection: close, opaque or
// non-ASCII targets, header text Request.Write would rewrite) goes to
// Request.Write.
func simpleRequest(req *http.Request) bool {
	if req.Close || req.URL == nil || req.URL.Opaque != "" || len(req.TransferEncoding) > 0 || len(req.Trailer) > 0 ||
		req.ContentLength < 0 || (req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody) ||
		(req.ContentLength > 0 && (req.Body == nil || req.Body == http.NoBody)) ||
		len(req.Header) > 24 || !token(req.Method) {
		return false
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if host == "" || !plainText(host, false) {
		return false
	}
	for k, vs := range req.Header {
		if !token(k) {
			return false
		}
		for _, v := range vs {
			if !plainText(v, true) {
				return false
			}
		}
		if k == "User-Agent" && len(vs) != 1 {
			return false
		}
	}
	return true
}

// token: an HTTP token (method, header name).
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == ':' || c == '(' || c == ')' || c == '<' || c == '>' || c == '@' || c == ',' ||
			c == ';' || c == '\\' || c == '"' || c == '/' || c == '[' || c == ']' || c == '?' || c == '=' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// plainText: printable ASCII (and spaces inside, when spaces is set), with
// no leading or trailing space: text Request.Write writes unchanged.
func plainText(s string, spaces bool) bool {
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x7f || (c == ' ' && !spaces) || c == '%' && !spaces {
			return false
		}
	}
	return true
}
