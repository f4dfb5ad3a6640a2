package mcp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// toolCalls counts the tools/call requests the server received for tool.
func toolCalls(ws *wireServer, tool string) int {
	n := 0
	for _, r := range ws.seen() {
		var p struct{ Name string }
		json.Unmarshal(r.msg.Params, &p)
		if r.msg.Method == "tools/call" && p.Name == tool {
			n++
		}
	}
	return n
}

// TestCallNotResentAfterResumed404: the server takes a tools/call (its
// event stream primed with an id, then closed: 2025-11-25 polling), and
// the resumption (GET with Last-Event-ID) answers 404: the server forgot
// the session after it had the call. The call is not sent again on a new
// session (the server may have run it: a side-effecting tool would run
// twice); it fails saying so, and the next call works on a new session.
// tools/list, which changes nothing, is still sent again.
func TestCallNotResentAfterResumed404(t *testing.T) {
	ws := newWireServer(t, "2025-11-25", func(w http.ResponseWriter, r *http.Request, m rpc) {
		if r.Header.Get("Mcp-Session-Id") == "sess-1" && m.Method == "tools/call" {
			startSSE(w).event("id: call-1", "retry: 5", "data: ")
			return
		}
		if m.Method == "tools/list" {
			if r.Header.Get("Mcp-Session-Id") == "sess-2" {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			writeJSON(w, m.ID, `{"tools":[{"name":"charge","inputSchema":{"type":"object"}}]}`)
			return
		}
		writeJSON(w, m.ID, textResult)
	})
	ws.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
	s := connectWire(t, ws)
	defer s.Close()
	_, err := s.Call(callCtx(t), "charge", `{"amount":10}`)
	if n := toolCalls(ws, "charge"); n != 1 {
		t.Fatalf("the tool was sent %d times (requests %v)", n, ws.methods())
	}
	if err == nil || !strings.Contains(err.Error(), "not sent again") {
		t.Fatalf("error %v", err)
	}
	if res, err := s.Call(callCtx(t), "weather", `{}`); err != nil || res.Content != "sunny" {
		t.Fatalf("next call: %+v, %v (requests %v)", res, err, ws.methods())
	}
	// tools/list on sess-2 meets a 404: listed again on sess-3.
	tools, err := s.Tools(callCtx(t))
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v (requests %v)", tools, err, ws.methods())
	}
}

// TestCallNotResentAfterRenewalByAnother: a call is running on the server
// (its event stream open) when the server forgets the session; another
// call meets the 404 and renews the session, which ends the first one
// ("client is closing"). The first was sent again on the new session,
// and the server ran the tool twice; now it fails, saying why.
func TestCallNotResentAfterRenewalByAnother(t *testing.T) {
	running := make(chan struct{})
	var once sync.Once
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		sess := r.Header.Get("Mcp-Session-Id")
		switch {
		case p.Name == "charge" && sess == "sess-1":
			startSSE(w)
			once.Do(func() { close(running) })
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case sess == "sess-1":
			http.Error(w, "session not found", http.StatusNotFound)
		default:
			writeJSON(w, m.ID, textResult)
		}
	})
	s := connectWire(t, ws)
	defer s.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(callCtx(t), "charge", `{"amount":10}`)
		errc <- err
	}()
	<-running
	if res, err := s.Call(callCtx(t), "weather", `{}`); err != nil || res.Content != "sunny" {
		t.Fatalf("weather: %+v, %v", res, err)
	}
	err := <-errc
	if n := toolCalls(ws, "charge"); n != 1 {
		t.Fatalf("the tool was sent %d times (requests %v)", n, ws.methods())
	}
	if err == nil || !strings.Contains(err.Error(), "not sent again") {
		t.Fatalf("error %v", err)
	}
}
