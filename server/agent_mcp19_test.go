package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestAgentMCPCallNotRunTwice: the MCP server takes the agent's tools/call
// on an event stream primed with an id (2025-11-25 polling) and forgets
// the session before the resumption (GET with Last-Event-ID: 404). The
// gateway used to send the call again on a new session, and the server
// ran the side-effecting tool twice; the execution now fails once, the
// run reports it (mcp_tool_execution.error) and the model gets it as an
// error result saying the server may have run the tool.
func TestAgentMCPCallNotRunTwice(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		sessions int
		charges  int
	)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if r.Header.Get("Last-Event-ID") != "" {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if r.Method != http.MethodPost {
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			t.Errorf("%s: %v", body, err)
			return
		}
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		}
		switch {
		case msg.ID == nil || msg.Method == "":
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			mu.Lock()
			sessions++
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s-%d", sessions))
			mu.Unlock()
			reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pay","version":"1.0.0"}}`)
		case msg.Method == "tools/list":
			reply(`{"tools":[{"name":"charge","description":"Charge the card.","inputSchema":{"type":"object","properties":{"amount":{"type":"number"}}}}]}`)
		case msg.Method == "tools/call":
			mu.Lock()
			charges++
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "id: 1\nretry: 5\ndata: \n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
		}
	}))
	t.Cleanup(hs.Close)
	up := providertest.Replay(t,
		chatStream("chatcmpl-Pay1", "", []chatCall{{"call_p", "charge", `{"amount":10}`}}, 40, 10),
		chatStream("chatcmpl-Pay2", "I could not confirm the charge.", nil, 90, 8))
	c, _ := startWith(t, pricedChatYAML(hs.URL), up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Charge 10.")},
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
	evs, err := agentRun(ctx, t, c, setup, nil)
	if err != nil {
		t.Fatalf("error %v (events %v)", err, evs)
	}
	mu.Lock()
	n := charges
	mu.Unlock()
	if n != 1 {
		t.Fatalf("the tool ran %d times", n)
	}
	var exec *llmrelayv1.AgentMcpToolExecution
	for _, ev := range evs {
		if e := ev.GetMcpToolExecution(); e != nil {
			exec = e
		}
	}
	if exec == nil || !strings.Contains(exec.GetError(), "may already have run it") || !exec.GetResult().GetIsError() {
		t.Fatalf("execution %v", exec)
	}
	reqs := up.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "may already have run it") {
		t.Fatalf("%d model calls; the second: %s", len(reqs), reqs[len(reqs)-1].Body)
	}
}
