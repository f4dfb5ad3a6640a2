package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/llmrelay/llmrelay/server/mcp"
)

// TestWireRenewalFailsOnce: when the new session cannot be made (the
// server's initialize fails once), the call that found the session gone
// fails, but the next call tries again and succeeds: the session the
// renewal closed was left in place, and every later call failed with
// "connection closed" without renewing.
func TestWireRenewalFailsOnce(t *testing.T) {
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		if r.Header.Get("Mcp-Session-Id") == "sess-1" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		writeJSON(w, m.ID, textResult)
	})
	var inits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m rpc
			json.Unmarshal(body, &m)
			if m.Method == "initialize" && inits.Add(1) == 2 {
				http.Error(w, "restarting", http.StatusServiceUnavailable)
				return
			}
		}
		ws.ServeHTTP(w, r)
	}))
	defer srv.Close()
	s, err := mcp.Connect(callCtx(t), mcp.Server{Name: "wire", URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Call(callCtx(t), "weather", `{}`); err == nil {
		t.Fatal("the renewal failed: no error")
	}
	res, err := s.Call(callCtx(t), "weather", `{}`)
	if err != nil || res.Content != "sunny" {
		t.Fatalf("call after a failed renewal: %+v, %v (requests %v)", res, err, ws.methods())
	}
	if n := inits.Load(); n != 3 {
		t.Errorf("%d initializations, want 3", n)
	}
}
