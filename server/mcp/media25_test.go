package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/mcp"
)

// TestCallMedia: the media a caller's Media accepts become Result.Parts in
// the server's order (an image as an image part, an embedded blob and
// audio as file parts, an embedded image blob as an image part); the rest
// stay notes. MaxResultBytes bounds the text and the media together: a
// medium that would take the result past it is left out whole, with a note
// (OverBound lists it).
func TestCallMedia(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&sdk.Tool{Name: "media", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "shots:"},
			&sdk.ImageContent{Data: []byte("PNG1"), MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///r.pdf", MIMEType: "application/pdf", Blob: []byte("%PDF")}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///r.webp", MIMEType: "image/webp", Blob: []byte("RIFFWEBP")}},
			&sdk.AudioContent{Data: []byte("WAVE"), MIMEType: "audio/wav"},
			&sdk.ImageContent{Data: []byte("PNG2-LONGER"), MIMEType: "image/png"},
		}}, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	noAudio := func(p *llmrelayv1.Part) bool { return p.GetFile().GetMimeType() != "audio/wav" }

	sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallMedia(context.Background(), "media", "", noAudio)
	if err != nil {
		t.Fatal(err)
	}
	if want := "shots:\n[audio (audio/wav, 4 bytes) omitted: the model cannot be given it in a tool result]"; res.Content != want ||
		len(res.Omitted) != 1 || len(res.OverBound) != 0 {
		t.Errorf("content %q, omitted %q, over %q", res.Content, res.Omitted, res.OverBound)
	}
	p := res.Parts
	if len(p) != 4 || string(p[0].GetImage().GetData()) != "PNG1" || p[1].GetFile().GetMimeType() != "application/pdf" ||
		p[2].GetImage().GetMimeType() != "image/webp" || string(p[3].GetImage().GetData()) != "PNG2-LONGER" {
		t.Errorf("parts %v", p)
	}

	// Bound 30: "shots:" (6) + PNG1 (4) + %PDF (4) + RIFFWEBP (8) = 22;
	// PNG2-LONGER (11) would make 33.
	bounded, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL, MaxResultBytes: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Close()
	res, err = bounded.CallMedia(context.Background(), "media", "", noAudio)
	if err != nil {
		t.Fatal(err)
	}
	if want := "shots:\n[audio (audio/wav, 4 bytes) omitted: the model cannot be given it in a tool result]\n" +
		"[image (image/png, 11 bytes) omitted: the result would pass its bound of 30 bytes]"; res.Content != want ||
		len(res.Parts) != 3 || len(res.OverBound) != 1 {
		t.Errorf("content %q, parts %d, over %q", res.Content, len(res.Parts), res.OverBound)
	}
}
