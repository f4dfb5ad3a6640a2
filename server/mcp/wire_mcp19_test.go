package mcp_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWireErrorWithNullID: a server that answers a call with a JSON-RPC
// error whose id is null (JSON-RPC 2.0 has "id": null when the server
// could not tell the request's id, and some servers send it for every
// error) fails the call with the server's own code and message, as JSON
// or on the call's event stream. The wire took it for a response to
// another request ("response for id null") and the server's message was
// lost (and on an event stream the SDK, unable to decode it, ended the
// whole session).
func TestWireErrorWithNullID(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params: city is required"}}`
	for _, mode := range []string{"json", "sse"} {
		t.Run(mode, func(t *testing.T) {
			ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
				if strings.Contains(string(m.Params), `"city"`) {
					writeJSON(w, m.ID, textResult)
					return
				}
				if mode == "json" {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(answer))
					return
				}
				startSSE(w).event("data: " + answer)
			})
			s := connectWire(t, ws)
			defer s.Close()
			_, err := s.Call(callCtx(t), "weather", `{}`)
			if err == nil || !strings.Contains(err.Error(), "Invalid params: city is required") || !strings.Contains(err.Error(), "-32602") {
				t.Fatalf("error %v", err)
			}
			if strings.Contains(err.Error(), "response for id null") {
				t.Errorf("error %v: reads as another request's answer", err)
			}
			// The session is still usable (the SDK ended the whole
			// connection over an event it could not decode).
			if res, err := s.Call(callCtx(t), "weather", `{"city":"Paris"}`); err != nil || res.Content != "sunny" {
				t.Fatalf("next call: %+v, %v", res, err)
			}
		})
	}
}

// TestWireTapResumesAfterLargeEvent: on a tools/list event stream, a log
// notification larger than the tap's bound (8 MiB) comes before the
// result: the tap skips that event only and keeps the result's schema as
// sent (key order kept). It stayed off for the rest of the stream, and
// the schema silently fell back to the SDK's decoded one (keys sorted).
func TestWireTapResumesAfterLargeEvent(t *testing.T) {
	const schema = `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}},"required":["zeta"]}`
	big := strings.Repeat("x", 9<<20)
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		s := startSSE(w)
		s.event(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"` + big + `"}}`)
		s.event(`data: {"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[{"name":"weather","inputSchema":` + schema + `}]}}`)
	})
	s := connectWire(t, ws)
	defer s.Close()
	tools, err := s.Tools(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].GetParameters() != schema {
		t.Fatalf("tools %v", tools)
	}
}
