package mcp

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
)

// TestSendLogNote: a call's request counts as possibly run by the server
// unless the connection was never made (a dial error) or the server
// refused it for its session (404 with Mcp-Session-Id).
func TestSendLogNote(t *testing.T) {
	withSession, _ := http.NewRequest(http.MethodPost, "http://mcp.test/", nil)
	withSession.Header.Set("Mcp-Session-Id", "s-1")
	noSession, _ := http.NewRequest(http.MethodPost, "http://mcp.test/", nil)
	refused := fmt.Errorf("post: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	for _, tc := range []struct {
		name string
		r    *http.Request
		res  *http.Response
		err  error
		want bool
	}{
		{"refused", withSession, nil, refused, false},
		{"session 404", withSession, &http.Response{StatusCode: http.StatusNotFound}, nil, false},
		{"404 without a session", noSession, &http.Response{StatusCode: http.StatusNotFound}, nil, true},
		{"answered", withSession, &http.Response{StatusCode: http.StatusOK}, nil, true},
		{"connection reset after writing", withSession, nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"other error", withSession, nil, errors.New("EOF"), true},
	} {
		l := &sendLog{}
		l.note(tc.r, tc.res, tc.err)
		if got := l.mayHaveReached(); got != tc.want {
			t.Errorf("%s: reached %v, want %v", tc.name, got, tc.want)
		}
	}
}
