package mcp_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWireJSONRPCErrorNamed: a tools/call answered with a JSON-RPC error
// reached the model as "... (JSON-RPC error -32602)": nothing told it
// that the server refused its arguments (invalid params) rather than
// failed on its own (-32603 internal error). The standard codes are
// named; others stay numbers.
func TestWireJSONRPCErrorNamed(t *testing.T) {
	for code, want := range map[int]string{
		-32602: "Invalid arguments for tool weather: city is required (JSON-RPC error -32602: invalid params)",
		-32603: "Invalid arguments for tool weather: city is required (JSON-RPC error -32603: internal error)",
		-32001: "Invalid arguments for tool weather: city is required (JSON-RPC error -32001)",
	} {
		ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
			writeError(w, m.ID, code, "Invalid arguments for tool weather: city is required")
		})
		s := connectWire(t, ws)
		_, err := s.Call(callCtx(t), "weather", `{}`)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("code %d: error %v, want it to end %q", code, err, want)
		}
		s.Close()
	}
}
