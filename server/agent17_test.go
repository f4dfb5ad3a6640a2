package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// conformanceMCP is an MCP server speaking streamable HTTP 2025-11-25 by
// hand: tools/list answers testdata/agent/mcp_conformance_tools_list.json
// (the conformance suite's JSON Schema 2020-12 tools) as it is written;
// the first session expires at the first tools/call (404 with the
// typescript-sdk server's body); on the next session each call is
// answered on an event stream that first asks the client for a ping.
type conformanceMCP struct {
	t        *testing.T
	list     []byte
	mu       sync.Mutex
	sessions int
	inits    []string // Mcp-Session-Id each initialize carried
	pinged   chan json.RawMessage
	calls    map[string]json.RawMessage // tool name -> arguments
}

func (m *conformanceMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		m.t.Error(err)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		m.t.Errorf("%s: %v", body, err)
		return
	}
	session := r.Header.Get("Mcp-Session-Id")
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch {
	case msg.Method == "" && msg.ID != nil: // our ping, answered
		m.pinged <- msg.Result
		w.WriteHeader(http.StatusAccepted)
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		m.mu.Lock()
		m.sessions++
		m.inits = append(m.inits, session)
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("conf-%d", m.sessions))
		m.mu.Unlock()
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"conformance","version":"1.0.0"}}`)
	case msg.Method == "tools/list":
		reply(string(m.list))
	case msg.Method == "tools/call" && session == "conf-1":
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)
	case msg.Method == "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(msg.Params, &p)
		m.mu.Lock()
		m.calls[p.Name] = p.Arguments
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ping := fmt.Sprintf(`"ping-%s"`, p.Name)
		fmt.Fprintf(w, "id: 1\nretry: 1000\ndata: \n\nevent: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}\n\n", ping)
		w.(http.Flusher).Flush()
		select {
		case <-m.pinged:
		case <-time.After(5 * time.Second):
			m.t.Error("the ping on the call's stream was not answered")
			return
		}
		result := `{"content":[{"type":"text","text":"ok"},{"type":"resource_link","uri":"file:///contacts/ada.json","name":"ada.json","mimeType":"application/json"}],` +
			`"structuredContent":{"saved":true},"_meta":{"trace":"t-1"}}`
		if p.Name == "json_schema_echo" {
			result = `{"content":[{"type":"text","text":"schema mismatch: $defs missing"}],"isError":true}`
		}
		fmt.Fprintf(w, "event: message\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", msg.ID, result)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
	}
}

// TestAgentMCPConformance: an agent run against a 2025-11-25 MCP server
// shaped by the conformance suite. The JSON Schema 2020-12 tool's
// inputSchema reaches the provider byte for byte (key order, $schema,
// $defs, $anchor, allOf/anyOf, if/then/else, whitespace aside): the SDK's
// decoded map had sorted its keys. The session the server forgets at the
// first call is renewed once and both calls are sent again on the new
// one (the run used to give the model two transport errors); the ping the
// server sends on a call's stream is answered; a result with isError goes
// back to the model as an error result (no execution error), the other as
// its text and resource link.
func TestAgentMCPConformance(t *testing.T) {
	t.Parallel()
	list, err := os.ReadFile("testdata/agent/mcp_conformance_tools_list.json")
	if err != nil {
		t.Fatal(err)
	}
	mcpSrv := &conformanceMCP{t: t, list: list, pinged: make(chan json.RawMessage, 4), calls: map[string]json.RawMessage{}}
	hs := httptest.NewServer(mcpSrv)
	t.Cleanup(hs.Close)
	args := `{"name":"Ada","contactMethod":"email","email":"ada@example.com"}`
	up := providertest.Replay(t,
		chatStream("chatcmpl-Conf1", "", []chatCall{{"call_c", "json_schema_2020_12_tool", args}, {"call_e", "json_schema_echo", `{"schema":{"type":"object"}}`}}, 90, 30),
		chatStream("chatcmpl-Conf2", "Saved.", nil, 140, 3))
	c, _ := startWith(t, pricedChatYAML(hs.URL), up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Save Ada, by email.")},
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
	evs, err := agentRun(ctx, t, c, setup, nil)
	if err != nil {
		t.Fatalf("error %v (events %v)", err, evs)
	}

	var page struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list, &page); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, tl := range page.Tools {
		var b bytes.Buffer
		if err := json.Compact(&b, tl.InputSchema); err != nil {
			t.Fatal(err)
		}
		want[tl.Name] = b.String()
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var body struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 2 {
		t.Fatalf("tools sent %s", reqs[0].Body)
	}
	for _, tl := range body.Tools {
		if got := string(tl.Function.Parameters); got != want[tl.Function.Name] {
			t.Errorf("%s parameters\n got %s\nwant %s", tl.Function.Name, got, want[tl.Function.Name])
		}
	}
	for _, ev := range evs {
		if sc := ev.GetSetupComplete(); sc != nil {
			for _, tl := range sc.GetTools() {
				if tl.GetParameters() != want[tl.GetName()] {
					t.Errorf("setup_complete %s parameters %s", tl.GetName(), tl.GetParameters())
				}
			}
		}
	}

	mcpSrv.mu.Lock()
	inits, calls := append([]string(nil), mcpSrv.inits...), mcpSrv.calls
	mcpSrv.mu.Unlock()
	if len(inits) != 2 || inits[0] != "" || inits[1] != "" {
		t.Errorf("initializations with sessions %q, want two without one (the second after the 404)", inits)
	}
	if string(calls["json_schema_2020_12_tool"]) != args {
		t.Errorf("arguments sent %s", calls["json_schema_2020_12_tool"])
	}

	execs := map[string]*llmrelayv1.AgentMcpToolExecution{}
	for _, ev := range evs {
		if x := ev.GetMcpToolExecution(); x != nil {
			execs[x.GetCall().GetCallId()] = x
		}
	}
	okExec, errExec := execs["call_c"], execs["call_e"]
	// The resource link as the SDK encodes it (its field order; every field
	// the server sent is there).
	wantOK := `ok` + "\n" + `{"type":"resource_link","mimeType":"application/json","uri":"file:///contacts/ada.json","name":"ada.json"}`
	if okExec.GetError() != "" || okExec.GetResult().GetIsError() || okExec.GetResult().GetContent() != wantOK {
		t.Errorf("call_c execution %v", okExec)
	}
	if errExec.GetError() != "" || !errExec.GetResult().GetIsError() || errExec.GetResult().GetContent() != "schema mismatch: $defs missing" {
		t.Errorf("call_e execution %v", errExec)
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, m := range body.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if results["call_c"] != wantOK || !strings.Contains(results["call_e"], "schema mismatch") {
		t.Errorf("round 2 tool messages %v", results)
	}
}
