package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/server/mcp"
)

// TestMaxResultBytes: a result text longer than MaxResultBytes is cut at
// a rune boundary (never inside a multi-byte rune) with a note saying how
// much was left out; the notes of omitted contents follow it whole, and
// the Result says what was cut. A text at the bound is not touched.
func TestMaxResultBytes(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&sdk.Tool{Name: "long", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "ab€cd"}, // € is 3 bytes: 2..4
			&sdk.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"},
		}}, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	for _, tc := range []struct {
		max       int
		want      string
		cut, text int
	}{
		{4, "ab\n[result cut: 5 of 7 bytes omitted]", 5, 7},
		{5, "ab€\n[result cut: 2 of 7 bytes omitted]", 2, 7},
		{7, "ab€cd", 0, 7},
		{0, "ab€cd", 0, 7},
	} {
		sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL, MaxResultBytes: tc.max}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sess.Call(context.Background(), "long", "{}")
		if cerr := sess.Close(); cerr != nil {
			t.Error(cerr)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := tc.want + "\n[image (image/png, 3 bytes) omitted: tool results reach the model as text]"
		if res.Content != want || res.CutBytes != tc.cut || res.TextBytes != tc.text || len(res.Omitted) != 1 {
			t.Errorf("max %d: content %q (cut %d of %d), want %q", tc.max, res.Content, res.CutBytes, res.TextBytes, want)
		}
	}
}
