package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/server/mcp"
)

func names(t *testing.T, s *mcp.Session) []string {
	t.Helper()
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range tools {
		out = append(out, tl.GetName())
	}
	return out
}

// TestToolsChangedNotification: notifications/tools/list_changed was
// ignored (the client had no handler), so a run kept offering the tools
// listed at setup. Over the transports that carry it (protocol 2026-07-28's
// subscriptions/listen, the SSE transport's event stream), the
// notification marks the list changed until Tools lists again.
func TestToolsChangedNotification(t *testing.T) {
	for _, transport := range []string{mcp.Streamable, mcp.SSE} {
		t.Run(transport, func(t *testing.T) {
			s := testServer()
			// Protocol 2026-07-28 (the SDK serves it stateless only).
			var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
			if transport == mcp.SSE {
				h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL, Transport: transport}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if got := names(t, sess); len(got) != 3 {
				t.Fatalf("tools %v", got)
			}
			if sess.ToolsChanged() {
				t.Fatal("changed before any notification")
			}
			s.AddTool(&sdk.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
			// The notification travels on a stream of its own: wait for it
			// (the bound only ends a test that would otherwise hang).
			for deadline := time.Now().Add(10 * time.Second); !sess.ToolsChanged(); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("notifications/tools/list_changed never marked the list changed")
				}
			}
			if got := names(t, sess); len(got) != 4 || !slices.Contains(got, "added") {
				t.Fatalf("tools after the change %v", got)
			}
			if sess.ToolsChanged() {
				t.Fatal("still changed after listing again")
			}
		})
	}
}

// TestToolsChangedUnheard: a server on protocol 2025-11-25 over streamable
// HTTP sends its notifications on the standalone GET stream, which the
// gateway does not open; when it declares tools.listChanged, its list is
// always worth taking again (a round cannot know it changed). One that
// does not declare it never changes.
func TestToolsChangedUnheard(t *testing.T) {
	for _, declared := range []bool{true, false} {
		opts := &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}
		if !declared {
			opts.Capabilities = &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}}
		}
		s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, opts)
		s.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
		srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
		sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		names(t, sess)
		if got := sess.ToolsChanged(); got != declared {
			t.Errorf("listChanged declared %v: ToolsChanged %v", declared, got)
		}
		sess.Close()
		srv.Close()
	}
}
