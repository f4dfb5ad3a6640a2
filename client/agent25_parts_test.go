package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestAgentResultParts: a Results handler's parts (a screenshot) go back
// with its content and is_error in the call's result; a tool may have its
// handler in Tools or in Results.
func TestAgentResultParts(t *testing.T) {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	shot := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MimeType: "image/png"}}}
	a := client.Agent{Client: c,
		Tools: map[string]client.ToolFunc{"get_time": func(context.Context, string) (string, error) { return "12:00", nil }},
		Results: map[string]client.ResultFunc{"get_weather": func(context.Context, string) (*llmrelayv1.ToolResult, error) {
			return &llmrelayv1.ToolResult{Content: "radar map attached", Parts: []*llmrelayv1.Part{shot}, IsError: true}, nil
		}}}
	res, err := a.Run(context.Background(), agentSetup())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 4 {
		t.Fatalf("%d messages", len(res.Messages))
	}
	calls := map[string]string{}
	for _, p := range res.Messages[1].GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			calls[tc.GetCallId()] = tc.GetName()
		}
	}
	seen := 0
	for _, p := range res.Messages[2].GetParts() {
		r := p.GetToolResult()
		if calls[r.GetCallId()] != "get_weather" {
			continue
		}
		seen++
		if r.GetContent() != "radar map attached" || !r.GetIsError() || len(r.GetParts()) != 1 || r.GetParts()[0].GetImage().GetMimeType() != "image/png" || r.GetName() != "get_weather" {
			t.Errorf("result %v", r)
		}
	}
	if seen != 1 {
		t.Errorf("%d get_weather results in %v", seen, res.Messages[2])
	}
	// The echo model says what it received: the text and the image's type.
	if got := res.Messages[3].GetParts()[0].GetText(); !strings.Contains(got, "=radar map attached [image image/png]") {
		t.Errorf("answer %q", got)
	}
}
