package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// fallback bounds every wait of these tests: reached only when the gateway
// does not do what the test waits for (the test fails then), never a
// measure of how long something took.
const fallback = 30 * time.Second

// barrier is passed once n parties arrived.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
	missed  atomic.Bool
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

// wait arrives and waits for the others; false (and missed set) when the
// request ended or the fallback passed first.
func (b *barrier) wait(r *http.Request) bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return true
	case <-r.Context().Done():
	case <-time.After(fallback):
	}
	b.missed.Store(true)
	return false
}

// connMCP is an MCP server (the official SDK over streamable HTTP) whose
// initialize and tools/list go through hooks, and which counts the
// sessions it opened and the DELETEs that closed them.
type connMCP struct {
	h *sdk.StreamableHTTPHandler
	// onInit runs before initialize is answered: false answers 503.
	onInit func(r *http.Request) bool
	// onList runs before tools/list is answered.
	onList func(r *http.Request)
	// onDelete runs before a DELETE (a session's close) is answered.
	onDelete      func(r *http.Request)
	sessions      atomic.Int32
	deletes       atomic.Int32
	listed        chan struct{}
	listedOnce    sync.Once
	srv           *httptest.Server
	initRejected  chan struct{}
	rejectOnce    sync.Once
	initCancelled chan struct{}
	cancelledOnce sync.Once
}

func newConnMCP(t *testing.T, tools ...string) *connMCP {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "conn", Version: "test"}, nil)
	for _, n := range tools {
		sdk.AddTool(s, &sdk.Tool{Name: n, Description: "tool " + n}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: n}}}, nil, nil
		})
	}
	m := &connMCP{h: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil),
		listed: make(chan struct{}), initRejected: make(chan struct{}), initCancelled: make(chan struct{})}
	m.srv = httptest.NewServer(m)
	t.Cleanup(m.srv.Close)
	return m
}

func (m *connMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	switch {
	case r.Method == http.MethodDelete:
		m.deletes.Add(1)
		if m.onDelete != nil {
			m.onDelete(r)
		}
	case bytes.Contains(body, []byte(`"method":"initialize"`)):
		if m.onInit != nil && !m.onInit(r) {
			if r.Context().Err() != nil {
				m.cancelledOnce.Do(func() { close(m.initCancelled) })
			}
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			m.rejectOnce.Do(func() { close(m.initRejected) })
			return
		}
		m.h.ServeHTTP(w, r)
		if w.Header().Get("Mcp-Session-Id") != "" {
			m.sessions.Add(1)
		}
		return
	case bytes.Contains(body, []byte(`"method":"tools/list"`)):
		if m.onList != nil {
			m.onList(r)
		}
		m.h.ServeHTTP(w, r)
		m.listedOnce.Do(func() { close(m.listed) })
		return
	}
	m.h.ServeHTTP(w, r)
}

// waitSignal waits for ch, or for the request or the fallback to end.
func waitSignal(r *http.Request, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-r.Context().Done():
	case <-time.After(fallback):
	}
}

// connAgent starts a builtin echo gateway whose MCP servers s0, s1, ...
// are ms, and returns it with a setup naming them in that order.
func connAgent(t *testing.T, ms ...*connMCP) (llmrelayv1.GatewayServiceClient, *llmrelayv1.AgentSetup) {
	t.Helper()
	var y strings.Builder
	y.WriteString(strings.SplitAfter(builtinAgentYAML, "mcp_servers:\n")[0])
	setup := echoSetup(t)
	for i, m := range ms {
		fmt.Fprintf(&y, "  - name: s%d\n    url: %s\n", i, m.srv.URL)
		setup.McpServers = append(setup.McpServers, &llmrelayv1.AgentMcpServer{Name: fmt.Sprintf("s%d", i)})
	}
	c, logs := startWith(t, y.String(), "")
	t.Cleanup(func() { t.Log(logs.String()) })
	return c, setup
}

// setupComplete runs setup until setup_complete (or the run's end) and
// cancels the run.
func setupComplete(t *testing.T, c llmrelayv1.GatewayServiceClient, setup *llmrelayv1.AgentSetup) (*llmrelayv1.AgentSetupComplete, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(setup)); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			return nil, err
		}
		if sc := ev.GetSetupComplete(); sc != nil {
			return sc, nil
		}
	}
}

// TestAgentMCPConnectsConcurrently: the setup's MCP servers are connected
// at once (each server's initialize waits until all of them were reached,
// which servers connected one after another never do), and the tools are
// offered in the setup's order then each server's list order, although the
// servers answer tools/list in the reverse order. A tool name offered by
// two servers is still refused naming the later server in setup order,
// though it listed first.
func TestAgentMCPConnectsConcurrently(t *testing.T) {
	t.Parallel()
	toolsOf := [][]string{{"b0", "a0"}, {"x1"}, {"c2", "a2", "z2"}, {"m3"}}
	run := func(t *testing.T, toolsOf [][]string) (*llmrelayv1.AgentSetupComplete, error) {
		b := newBarrier(len(toolsOf))
		ms := make([]*connMCP, len(toolsOf))
		for i, tools := range toolsOf {
			ms[i] = newConnMCP(t, tools...)
			ms[i].onInit = b.wait
		}
		for i := range len(ms) - 1 {
			next := ms[i+1]
			ms[i].onList = func(r *http.Request) { waitSignal(r, next.listed) }
		}
		c, setup := connAgent(t, ms...)
		sc, err := setupComplete(t, c, setup)
		if b.missed.Load() {
			t.Error("an MCP server's initialize came before the others were reached: the servers were not connected concurrently")
		}
		return sc, err
	}

	sc, err := run(t, toolsOf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range sc.GetTools() {
		got = append(got, tl.GetName())
	}
	var want []string
	for _, tl := range agentTools(t) {
		want = append(want, tl.GetName())
	}
	// The SDK's server lists its tools sorted by name.
	want = append(want, "a0", "b0", "x1", "a2", "c2", "z2", "m3")
	if !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}

	_, err = run(t, [][]string{{"one"}, {"two", "dup"}, {"dup"}})
	wantCode(t, err, codes.InvalidArgument, "setup.mcp_servers[2]")
	if !strings.Contains(err.Error(), `tool "dup" of MCP server s2 collides`) {
		t.Errorf("error %v", err)
	}
}

// TestAgentMCPConnectFirstFailureInOrder: of two servers that fail, the
// first in the setup's order is the error although the other failed first;
// the sessions of the servers that connected are closed (DELETE) before the
// status, and the failing servers leave none open.
func TestAgentMCPConnectFirstFailureInOrder(t *testing.T) {
	t.Parallel()
	b := newBarrier(4)
	ms := []*connMCP{newConnMCP(t, "t0"), newConnMCP(t, "t1"), newConnMCP(t, "t2"), newConnMCP(t, "t3")}
	ms[0].onInit, ms[2].onInit = b.wait, b.wait
	ms[3].onInit = func(r *http.Request) bool {
		b.wait(r)
		return false
	}
	ms[1].onInit = func(r *http.Request) bool {
		if b.wait(r) {
			// After the others: s0 and s2 listed, s3 failed.
			for _, ch := range []chan struct{}{ms[0].listed, ms[2].listed, ms[3].initRejected} {
				waitSignal(r, ch)
			}
		}
		return false
	}
	c, setup := connAgent(t, ms...)
	_, err := setupComplete(t, c, setup)
	if b.missed.Load() {
		t.Error("the servers were not connected concurrently")
	}
	wantCode(t, err, codes.Unavailable, "setup.mcp_servers[1]")
	if _, info, _ := statusDetails(t, err); info.GetReason() != "MCP_SERVER_UNAVAILABLE" {
		t.Errorf("reason %s", info.GetReason())
	}
	if !strings.Contains(err.Error(), "setup.mcp_servers[1]: mcp server s1: connect:") {
		t.Errorf("error %v", err)
	}
	for i, m := range ms {
		want := int32(0)
		if i == 0 || i == 2 {
			want = 1
		}
		if s, d := m.sessions.Load(), m.deletes.Load(); s != want || d != want {
			t.Errorf("s%d: %d sessions, %d closed; want %d", i, s, d, want)
		}
	}
}

// TestAgentMCPConnectCancelled: the client cancelling the RPC while one
// server's initialize hangs (the others connected) ends that connect, the
// sessions already opened are closed, and no goroutine outlives the run.
// Not parallel: goleak sees every goroutine of the process.
func TestAgentMCPConnectCancelled(t *testing.T) {
	b := newBarrier(3)
	ms := []*connMCP{newConnMCP(t, "t0"), newConnMCP(t, "t1"), newConnMCP(t, "t2")}
	hanging := make(chan struct{})
	ms[0].onInit, ms[2].onInit = b.wait, b.wait
	ms[1].onInit = func(r *http.Request) bool {
		if b.wait(r) {
			close(hanging)
			<-r.Context().Done()
		}
		return false
	}
	c, setup := connAgent(t, ms...)
	builtinCallIDs(t, c) // opens the gRPC connection the run shares
	ignore := goleak.IgnoreCurrent()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(setupReq(setup)); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		for {
			if _, err := s.Recv(); err != nil {
				ended <- err
				return
			}
		}
	}()
	for _, ch := range []chan struct{}{ms[0].listed, ms[2].listed, hanging} {
		select {
		case <-ch:
		case err := <-ended:
			t.Fatalf("the run ended before its MCP servers were all reached: %v", err)
		case <-time.After(fallback):
			t.Fatal("the MCP servers were not connected concurrently")
		}
	}
	cancel()
	if err := <-ended; grpcstatus.Code(err) != codes.Canceled {
		t.Fatalf("error %v", err)
	}
	select {
	case <-ms[1].initCancelled:
	case <-time.After(fallback):
		t.Fatal("the hanging initialize was not cancelled")
	}
	// The client sees its status before the handler closed the sessions:
	// wait for the DELETEs and the connections to go idle and close.
	var lerr error
	for range 300 {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if ms[0].deletes.Load() == 1 && ms[2].deletes.Load() == 1 {
			if lerr = goleak.Find(ignore); lerr == nil {
				break
			}
		} else {
			lerr = errors.New("sessions not closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lerr != nil {
		t.Fatal(lerr)
	}
	for i, m := range ms {
		if s, d := m.sessions.Load(), m.deletes.Load(); s != d {
			t.Errorf("s%d: %d sessions, %d closed", i, s, d)
		}
	}
}

// TestAgentMCPConnectBounded: a setup naming more servers than the gateway
// connects at once (8) has at most 8 initializes in flight: the first 8
// are all reached (each waits for the others), and the ninth starts only
// once one of them is done. Connected without a bound, the ninth would
// usually be in flight with the eight.
func TestAgentMCPConnectBounded(t *testing.T) {
	t.Parallel()
	const bound = 8
	b := newBarrier(bound)
	var mu sync.Mutex
	inFlight, most := 0, 0
	ms := make([]*connMCP, bound+1)
	for i := range ms {
		ms[i] = newConnMCP(t, fmt.Sprintf("t%d", i))
		ms[i].onInit = func(r *http.Request) bool {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			ok := true
			if i < bound {
				ok = b.wait(r)
			}
			mu.Lock()
			inFlight--
			mu.Unlock()
			return ok
		}
	}
	c, setup := connAgent(t, ms...)
	sc, err := setupComplete(t, c, setup)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sc.GetTools()); n != len(agentTools(t))+len(ms) {
		t.Errorf("%d tools offered", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != bound {
		t.Errorf("%d initializes in flight at most, want %d", most, bound)
	}
}

// TestAgentMCPSessionsCloseConcurrently: at the run's end the MCP sessions
// are closed at once (each server's DELETE waits until all of them were
// reached, which closes one after another never do).
func TestAgentMCPSessionsCloseConcurrently(t *testing.T) {
	t.Parallel()
	b := newBarrier(3)
	ms := []*connMCP{newConnMCP(t, "t0"), newConnMCP(t, "t1"), newConnMCP(t, "t2")}
	for _, m := range ms {
		m.onDelete = func(r *http.Request) { b.wait(r) }
	}
	c, setup := connAgent(t, ms...)
	if _, err := setupComplete(t, c, setup); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(fallback)
	for time.Now().Before(deadline) && (ms[0].deletes.Load() == 0 || ms[1].deletes.Load() == 0 || ms[2].deletes.Load() == 0) {
		time.Sleep(5 * time.Millisecond)
	}
	for i, m := range ms {
		if m.deletes.Load() != 1 {
			t.Errorf("s%d: %d DELETEs, want 1", i, m.deletes.Load())
		}
	}
	if b.missed.Load() {
		t.Error("a session's DELETE came before the others were reached: the sessions were not closed concurrently")
	}
}

// TestAgentSetupMCPServersBounded: a setup naming more MCP servers than
// the bound is InvalidArgument naming setup.mcp_servers, before any server
// is contacted.
func TestAgentSetupMCPServersBounded(t *testing.T) {
	t.Parallel()
	m := newConnMCP(t, "t0")
	c, setup := connAgent(t, m)
	for len(setup.McpServers) <= 32 {
		setup.McpServers = append(setup.McpServers, &llmrelayv1.AgentMcpServer{Name: "s0"})
	}
	_, err := setupComplete(t, c, setup)
	wantCode(t, err, codes.InvalidArgument, "setup.mcp_servers")
	if !strings.Contains(err.Error(), "at most 32 MCP servers, got 33") {
		t.Errorf("error %v", err)
	}
	if n := m.sessions.Load(); n != 0 {
		t.Errorf("%d sessions opened", n)
	}
	setup.McpServers = setup.McpServers[:32]
	if _, err := setupComplete(t, c, setup); err != nil && strings.Contains(err.Error(), "at most") {
		t.Errorf("32 servers refused: %v", err)
	}
}
