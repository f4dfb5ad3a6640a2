package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// screenshotMCP is an in-process MCP server whose screenshot tool answers
// with text, a PNG, an embedded PDF resource, audio and an SVG.
func screenshotMCP(t *testing.T) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "browser", Version: "test"}, nil)
	type in struct {
		Page string `json:"page"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "screenshot", Description: "Screenshot of a page"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "Login page captured."},
			&sdk.ImageContent{Data: []byte("\x89PNG\r\n\x1a\n"), MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///login.pdf", MIMEType: "application/pdf", Blob: []byte("%PDF-1.4")}},
			&sdk.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
			&sdk.ImageContent{Data: []byte("<svg/>"), MIMEType: "image/svg+xml"},
		}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// anthropicStream is a Messages stream (the shape of
// testdata/agent/anthropic_round1.http, built here for these calls): tool
// calls, or text.
func anthropicStream(id, text string, calls []chatCall) providertest.Recording {
	var b strings.Builder
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":%q,"type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":410,"output_tokens":2}}}`, id))
	i := 0
	if text != "" {
		t, _ := json.Marshal(text)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(t)+`}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		i++
	}
	for _, c := range calls {
		a, _ := json.Marshal(c.args)
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, c.id, c.name))
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, a))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		i++
	}
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":40}}`, stop))
	ev("message_stop", `{"type":"message_stop"}`)
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("request-id", "req_"+id)
	return providertest.Recording{Status: 200, Header: h, Body: []byte(b.String())}
}

const agentPartsYAML = `
providers:
  - name: up
    type: anthropic
    base_url: {{URL}}
    api_key: sk-agent-test-key-0000000000
models:
  - name: m
    provider: up
    upstream_model: claude-sonnet-4-5
    capabilities:
      tools: {format: anthropic-messages}
      vision: {format: anthropic-messages}
      documents: {format: anthropic-messages}
mcp_servers:
  - name: browser
    url: {{MCP}}
`

// An MCP tool's image and PDF reach an Anthropic model as image and
// document blocks of its tool_result (ToolResult.parts), and the
// mcp_tool_execution event's result carries them; what the model cannot be
// given (audio: Anthropic takes none; an SVG) stays a note, with a warning.
// A client's tool result with parts reaches the model the same way.
func TestAgentToolResultParts(t *testing.T) {
	t.Parallel()
	mcpSrv := screenshotMCP(t)
	up := providertest.Replay(t,
		anthropicStream("msg_01AgtParts25Round1Qz", "", []chatCall{{"toolu_01AgtParts25Shot", "screenshot", `{"page":"login"}`}, {"toolu_01AgtParts25Wthr", "get_weather", `{"city":"Lyon"}`}}),
		anthropicStream("msg_01AgtParts25Round2Qz", "The login page shows a form.", nil))
	c, _ := startWith(t, strings.ReplaceAll(agentPartsYAML, "{{MCP}}", mcpSrv.URL), up.URL)
	gif := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("GIF89a")}, MimeType: "image/gif"}}}
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("What does the login page look like, and the weather?")},
		Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "browser"}}}
	evs, err := agentRun(context.Background(), t, c, setup, func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		// An error whose only part is an image: not an error without a
		// message (the run does not put its placeholder text in).
		return &llmrelayv1.ToolResult{CallId: r.GetCallId(), IsError: true, Parts: []*llmrelayv1.Part{gif}}
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		exec *llmrelayv1.AgentMcpToolExecution
		end  *llmrelayv1.AgentEnd
	)
	for _, ev := range evs {
		if x := ev.GetMcpToolExecution(); x != nil {
			exec = x
		}
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	if exec == nil || end == nil {
		t.Fatalf("events %v", evs)
	}
	wantText := "Login page captured.\n[audio (audio/wav, 4 bytes) omitted: the model cannot be given it in a tool result]\n" +
		"[image (image/svg+xml, 6 bytes) omitted: the model cannot be given it in a tool result]"
	r := exec.GetResult()
	if r.GetContent() != wantText || len(r.GetParts()) != 2 || r.GetParts()[0].GetImage().GetMimeType() != "image/png" ||
		string(r.GetParts()[1].GetFile().GetData()) != "%PDF-1.4" || r.GetParts()[1].GetFile().GetMimeType() != "application/pdf" {
		t.Errorf("mcp execution result %v", r)
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil || len(body.Messages) != 3 || len(body.Messages[2].Content) != 2 {
		t.Fatalf("round 2 body %s", reqs[1].Body)
	}
	tw, _ := json.Marshal(wantText)
	want := []string{
		`{"type":"tool_result","tool_use_id":"toolu_01AgtParts25Shot","content":[{"type":"text","text":` + string(tw) + `},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
			`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="}}]}`,
		`{"type":"tool_result","tool_use_id":"toolu_01AgtParts25Wthr","is_error":true,"content":[` +
			`{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGODlh"}}]}`,
	}
	for i, w := range want {
		if got := string(body.Messages[2].Content[i]); got != w {
			t.Errorf("round 2 tool_result %d\n got %s\nwant %s", i, got, w)
		}
	}
	warned := 0
	for _, w := range end.GetMeta().GetWarnings() {
		if strings.Contains(w, "omitted from the result: the model cannot be given it in a tool result") {
			warned++
		}
	}
	for _, w := range end.GetMeta().GetWarnings() {
		if strings.Contains(w, "has no content") {
			t.Errorf("warning %q", w)
		}
	}
	if warned != 2 {
		t.Errorf("warnings %q", end.GetMeta().GetWarnings())
	}
}

// A Chat Completions model cannot take media in a tool result: an MCP
// tool's image stays a note in the text (the run goes on), and a client's
// tool result with an image ends the run with InvalidArgument naming the
// part, before the model call: never dropped.
func TestAgentToolResultPartsChat(t *testing.T) {
	t.Parallel()
	mcpSrv := screenshotMCP(t)
	up := providertest.Replay(t,
		chatStream("chatcmpl-AgtParts25R1", "", []chatCall{{"call_agtparts25_shot", "screenshot", `{"page":"login"}`}}, 300, 20),
		chatStream("chatcmpl-AgtParts25R2", "A login form.", nil, 400, 5),
		chatStream("chatcmpl-AgtParts25R3", "", []chatCall{{"call_agtparts25_wthr", "get_weather", `{"city":"Lyon"}`}}, 300, 20))
	y := strings.ReplaceAll(providerYAML("openai", "gpt-4o-mini", "openai-tools"), "{{MCP}}", mcpSrv.URL)
	y = strings.Replace(y, "capabilities: {tools: {format: openai-tools}}", "capabilities: {tools: {format: openai-tools}, vision: {format: openai-chat}}", 1)
	y = strings.Replace(y, "  - name: pop\n", "  - name: browser\n", 1)
	c, _ := startWith(t, y, up.URL+"/v1")
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("What does the login page look like?")},
		Tools: agentTools(t), McpServers: []*llmrelayv1.AgentMcpServer{{Name: "browser"}}}
	if _, err := agentRun(context.Background(), t, c, setup, nil); err != nil {
		t.Fatal(err)
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil || len(body.Messages) != 3 {
		t.Fatalf("round 2 body %s", reqs[1].Body)
	}
	want := "Login page captured.\n[image (image/png, 8 bytes) omitted: the model cannot be given it in a tool result]\n" +
		"[resource file:///login.pdf (application/pdf, 8 bytes) omitted: the model cannot be given it in a tool result]\n" +
		"[audio (audio/wav, 4 bytes) omitted: the model cannot be given it in a tool result]\n" +
		"[image (image/svg+xml, 6 bytes) omitted: the model cannot be given it in a tool result]"
	if m := body.Messages[2]; m.Role != "tool" || m.Content != want {
		t.Errorf("tool message %v", m)
	}

	// A client's result with an image: refused, naming the part.
	setup.McpServers = nil
	img := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MimeType: "image/png"}}}
	_, err := agentRun(context.Background(), t, c, setup, func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: "sunny", Parts: []*llmrelayv1.Part{img}}
	})
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br == nil || br.GetFieldViolations()[0].GetField() != "setup.messages[2].parts[0].tool_result.parts[0].image" {
		t.Errorf("status %v, %v", st, br)
	}
	if n := len(up.Requests()); n != 3 {
		t.Errorf("%d model calls, want 3 (none with the image)", n)
	}
}
