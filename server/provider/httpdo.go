package provider

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Do sends req as client.Do(req) does, with the same response, redirects
// and errors (a *url.Error), without Client.Do's work per call when the
// client has neither a cookie jar nor a timeout (the gateway's provider
// clients: their transport bounds the call): the request goes straight to
// the transport, and a redirect answer (which Client.Do follows) is handed
// to a Client that starts from it, so it is followed as before under the
// client's CheckRedirect. Anything else goes through client.Do.
func Do(client *http.Client, req *http.Request) (*http.Response, error) {
	if resp := answeredFor(req); resp != nil {
		return resp, nil // the answer already read (WithAnswer)
	}
	if client.Jar != nil || client.Timeout != 0 || req.URL == nil || req.RequestURI != "" || req.Header == nil || req.URL.User != nil {
		return client.Do(req)
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch // as Client.Do says it
		}
		return nil, urlError(req, err)
	}
	if resp == nil {
		return nil, urlError(req, fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", rt))
	}
	if resp.Body == nil {
		if resp.ContentLength > 0 && req.Method != http.MethodHead {
			return nil, urlError(req, fmt.Errorf("http: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", rt, resp.ContentLength))
		}
		resp.Body = io.NopCloser(strings.NewReader(""))
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		follow := &http.Client{Transport: &answered{resp: resp, rt: rt}, CheckRedirect: client.CheckRedirect}
		return follow.Do(req)
	}
	return resp, nil
}

// urlError wraps a transport error as Client.Do does.
func urlError(req *http.Request, err error) error {
	return &url.Error{Op: urlErrorOp(req.Method), URL: stripPassword(req.URL), Err: err}
}

func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	for i := 0; i < len(method); i++ {
		if c := method[i]; c < ' ' || c > '~' {
			return method // not printable ASCII: as it is
		}
	}
	return method[:1] + strings.ToLower(method[1:])
}

func stripPassword(u *url.URL) string {
	if pass, ok := u.User.Password(); ok {
		return strings.Replace(u.String(), pass+"@", "***@", 1)
	}
	return u.String()
}

// answered is a transport whose first round trip is the response already
// received; the next ones (the redirects) go to rt.
type answered struct {
	resp *http.Response
	rt   http.RoundTripper
}

func (a *answered) RoundTrip(req *http.Request) (*http.Response, error) {
	if r := a.resp; r != nil {
		a.resp = nil
		return r, nil
	}
	return a.rt.RoundTrip(req)
}

// TraceContextKey is the header an adapter reserves with
// ReserveTraceContext.
const TraceContextKey = "Traceparent"

// ReserveTraceContext marks h, the headers of a request an adapter made
// for this one send and does not read again, as open to the trace
// context: the pipeline's transport then writes traceparent (and the
// propagator's other headers) into h instead of copying the request and
// its header map to add them, and removes the mark when there is no
// trace context to send. The mark is the key with a nil value, which
// nothing writes on the wire. A traceparent already in h (a configured
// header) is left as it is, and the request is copied as before.
func ReserveTraceContext(h http.Header) {
	if _, ok := h[TraceContextKey]; !ok {
		h[TraceContextKey] = nil
	}
}

// TraceContextReserved reports whether h carries ReserveTraceContext's
// mark.
func TraceContextReserved(h http.Header) bool {
	v, ok := h[TraceContextKey]
	return ok && v == nil
}
