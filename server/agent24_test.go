package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestAgentMCPRefusesCredentials: an MCP server that refuses the
// gateway's credentials at setup (401 with a WWW-Authenticate challenge,
// as the MCP authorization spec has a protected server answer) was
// Unavailable / MCP_SERVER_UNAVAILABLE with "Unauthorized" alone: a
// client retried a setup that cannot work, and the operator had nothing
// to go on. It is Unauthenticated / UPSTREAM_UNAUTHENTICATED (a 403:
// PermissionDenied / UPSTREAM_PERMISSION_DENIED), as a provider's 401 and
// 403 are, and the message carries the status and the challenge.
func TestAgentMCPRefusesCredentials(t *testing.T) {
	t.Parallel()
	const challenge = `Bearer error="invalid_token", error_description="The access token expired", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`
	for _, tc := range []struct {
		status int
		code   codes.Code
		reason string
	}{
		{http.StatusUnauthorized, codes.Unauthenticated, "UPSTREAM_UNAUTHENTICATED"},
		{http.StatusForbidden, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", challenge)
				http.Error(w, "no", tc.status)
			}))
			t.Cleanup(srv.Close)
			c := startBuiltinAgent(t, srv.URL)
			setup := &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Lyon")}, Tools: agentTools(t)[:1],
				McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
			evs, err := agentRun(context.Background(), t, c, setup, answerAll)
			wantCode(t, err, tc.code, "setup.mcp_servers[0]")
			if _, info, _ := statusDetails(t, err); info.GetReason() != tc.reason || len(evs) != 0 {
				t.Errorf("reason %q, events %v", info.GetReason(), evs)
			}
			for _, want := range []string{"setup.mcp_servers[0]: mcp server pop: connect:", "(HTTP " + strconv.Itoa(tc.status), "WWW-Authenticate: " + challenge} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want %q in it", err, want)
				}
			}
		})
	}
}
