package gemini

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 20: DataDog/dd-trace-js's google-genai cassettes
// (testdata/README.md, "Round 20"). The expectations are read off the
// recordings by hand; each recorded request is compared with ours.

func init() {
	round17Recordings = append(round17Recordings, "real_oljs_gemini15_flash", "real_ddjs_gemini25_flash_stream",
		"real_ddjs_gemini20_flash_stream", "real_ddjs_gemini25_flash_tool_unused", "real_ddjs_gemini20_flash")
}

func r20Hello(model string) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model,
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Hello, world!"))},
	}
}

// r20Stream replays a streamed recording and returns its events.
func r20Stream(t *testing.T, name string, req *provider.Request) ([]*provider.Event, *providertest.Server) {
	t.Helper()
	p, srv := replay(t, name)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	return evs, srv
}

// r20Sent checks the request's contents against the recorded one's.
func r20Sent(t *testing.T, srv *providertest.Server, path, contents string) map[string]any {
	t.Helper()
	last := srv.Last(t)
	if last.Path != path {
		t.Errorf("path %s, recorded %s", last.Path, path)
	}
	sent := r17JSON(t, last.Body)
	if !jsonEqual(sent["contents"], r19Decode(t, contents)) {
		t.Errorf("contents %v, recorded %s", sent["contents"], contents)
	}
	return sent
}

const r20HelloContents = `[{"parts":[{"text":"Hello, world!"}],"role":"user"}]`

// TestRound20DDGemini25Stream: gemini-2.5-flash (June 2026), streamed
// through google-genai 1.19.0: one event, its SSE framing CRLF CRLF, the
// JSON with a space after each colon but not after commas; "Hello, world!
// It's good to meet you. How can I help you today?", STOP; 5 in, 19
// out plus 29 thought tokens (total 53 = 5 + 19 + 29); serviceTier
// "standard" in usageMetadata (and no X-Gemini-Service-Tier header);
// responseId and modelVersion. The recorded request is ours.
func TestRound20DDGemini25Stream(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_gemini25_flash_stream"
	evs, srv := r20Stream(t, name, r20Hello("gemini-2.5-flash"))
	f := foldEvents(evs)
	if f.text != "Hello, world! It's good to meet you. How can I help you today?" || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 5, OutputTokens: 48, TotalTokens: 53, ReasoningTokens: 29}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "c3cpap_xFpLRjMcPt5CUwQw" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
		m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r20Sent(t, srv, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", r20HelloContents)
	if q := srv.Last(t).Query; q != "alt=sse" {
		t.Errorf("query %q, recorded alt=sse", q)
	}
}

// TestRound20DDGemini20Stream: gemini-2.0-flash (December 2025), streamed,
// two events with one responseId (CRLF framing): "Hello" with a usage of
// 5 prompt tokens and no finish reason, then " there! How can I help you
// today?\n" with STOP and a usage of 4 prompt, 11 candidate tokens, 15
// total. The prompt count went down between the events: the last usage is
// the answer's (4 in, not 5 and not 9).
func TestRound20DDGemini20Stream(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_gemini20_flash_stream"
	evs, srv := r20Stream(t, name, r20Hello("gemini-2.0-flash"))
	f := foldEvents(evs)
	if f.text != "Hello there! How can I help you today?\n" {
		t.Errorf("text %q", f.text)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 4, OutputTokens: 11, TotalTokens: 15}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "Xpcwac3qI-GSmNAPkaHBkA4" || m.GetResolvedModel() != "gemini-2.0-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r20Sent(t, srv, "/v1beta/models/gemini-2.0-flash:streamGenerateContent", r20HelloContents)
}

// TestRound20DDGemini25ToolUnused: gemini-2.5-flash (June 2026), unary,
// offered tool1 (OBJECT/STRING schema types, a required location) and
// not calling it: "Hello! How can I help you today?\n", STOP, 41 in, 9
// out, 50 total; serviceTier "standard" both in usageMetadata and in the
// X-Gemini-Service-Tier header. google-genai wrote the schema in the API's
// OpenAPI subset ("parameters", upper-case types); the contract's schema is
// JSON Schema, which we send as parametersJsonSchema: the same declaration
// with the same schema in that form.
func TestRound20DDGemini25ToolUnused(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_gemini25_flash_tool_unused"
	p, srv := replay(t, name)
	const schema = `{"type":"object","properties":{"location":{"type":"string","description":"The city name"}},"required":["location"]}`
	req := r20Hello("gemini-2.5-flash")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "tool1", Description: "A simple tool", Parameters: schema}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello! How can I help you today?\n")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "h4QpaqGNG8Wu_PUP7JaUmQE" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
		m.GetServiceTier() != "standard" || m.GetToolCallCount() != 0 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 41, OutputTokens: 9, TotalTokens: 50}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	sent := r20Sent(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent", r20HelloContents)
	const tools = `[{"functionDeclarations":[{"description":"A simple tool","name":"tool1","parametersJsonSchema":` + schema + `}]}]`
	if !jsonEqual(sent["tools"], r19Decode(t, tools)) {
		t.Errorf("tools %v, recorded %s", sent["tools"], tools)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
}

// TestRound20DDGemini20Unary: the streamed recording's question asked
// unary in the same second (December 2025, its own responseId): the same
// text, STOP, avgLogprobs -0.014444851062514565, and the usage the stream's
// last event gave: 4 prompt, 11 candidate, 15 total (not the 5 prompt
// tokens of the stream's first event).
func TestRound20DDGemini20Unary(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_gemini20_flash"
	p, srv := replay(t, name)
	res, err := p.Generate(context.Background(), r20Hello("gemini-2.0-flash"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello there! How can I help you today?\n")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "Xpcwab__A73f_uMPs9qB0A0" || m.GetResolvedModel() != "gemini-2.0-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 4, OutputTokens: 11, TotalTokens: 15}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if got, _ := m.GetExtended().AsMap()[extAvgLogprobs].(float64); got != -0.014444851062514565 {
		t.Errorf("avg logprobs %v", m.GetExtended().AsMap()[extAvgLogprobs])
	}
	r20Sent(t, srv, "/v1beta/models/gemini-2.0-flash:generateContent", r20HelloContents)
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
}
