package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/mcp"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
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

// TestAgentMCPAllowedToolMissing: allowed_tools naming a tool the server
// does not list (a typo, a tool renamed upstream) beside one it lists: the
// listed one is offered, and the run's warnings name the missing one; it
// was left out without a word, and the model ran without it unexplained.
func TestAgentMCPAllowedToolMissing(t *testing.T) {
	t.Parallel()
	srv := mcpServer(t, 0)
	c := startBuiltinAgent(t, srv.URL)
	setup := echoSetup(t)
	setup.McpServers = []*llmrelayv1.AgentMcpServer{{Url: srv.URL + "/allowed", AllowedTools: []string{"lookup_population", "lookup_populaton"}}}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatalf("error %v", err)
	}
	offered := evs[0].GetSetupComplete().GetTools()
	if n := len(offered); n == 0 || offered[n-1].GetName() != "lookup_population" {
		t.Fatalf("offered %v", offered)
	}
	end := evs[len(evs)-1].GetEnd()
	if !hasWarning(end.GetMeta().GetWarnings(), "setup.mcp_servers[0]: MCP server 127.0.0.1") ||
		!hasWarning(end.GetMeta().GetWarnings(), "does not list the allowed tool(s) lookup_populaton: not offered") {
		t.Errorf("warnings %q", end.GetMeta().GetWarnings())
	}
}

// TestAgentEmptyErrorResult: a client's error result without content (a
// Go handler returning an error with an empty message) went to Anthropic
// as an is_error tool_result without content, which the API refuses
// ("tool_result: content cannot be empty if is_error is true",
// bytedance/trae-agent#230): round 2 failed. The model gets a message
// saying the tool failed without one, and the run's warnings say so.
func TestAgentEmptyErrorResult(t *testing.T) {
	t.Parallel()
	mcpSrv := mcpServer(t, 0)
	up := providertest.Replay(t, providertest.Load(t, "testdata/agent/anthropic_round1.http"), providertest.Load(t, "testdata/agent/anthropic_round2.http"))
	c, _ := startWith(t, strings.ReplaceAll(providerYAML("anthropic", "claude-sonnet-4-5", "anthropic-messages"), "{{MCP}}", mcpSrv.URL), up.URL)
	failTime := func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		if r.GetName() == "get_time" {
			return &llmrelayv1.ToolResult{CallId: r.GetCallId(), IsError: true}
		}
		return answerAll(r)
	}
	evs, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Lyon")},
		Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}, failTime)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []map[string]any
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(up.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		var bs []map[string]any
		if json.Unmarshal(m.Content, &bs) == nil {
			blocks = append(blocks, bs...)
		}
	}
	found := false
	for _, b := range blocks {
		if b["type"] == "tool_result" && b["is_error"] == true {
			found = true
			if b["content"] != mcp.EmptyError {
				t.Errorf("error tool_result %v", b)
			}
		}
	}
	end := evs[len(evs)-1].GetEnd()
	if !found || !hasWarning(end.GetMeta().GetWarnings(), "has no content: the model got") {
		t.Errorf("error result sent: %v, warnings %q", found, end.GetMeta().GetWarnings())
	}
}
