package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// agentBenchServer answers a request without tool results with the agent
// fixtures' round 1 (three parallel tool calls) and one with results with
// round 2 (text), each in one piece.
func agentBenchServer(b *testing.B) llmrelayv1.GatewayServiceClient {
	b.Helper()
	recs := [2]providertest.Recording{providertest.Load(b, "testdata/agent/openai_round1.http"), providertest.Load(b, "testdata/agent/openai_round2.http")}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			b.Error(err)
			return
		}
		rec := recs[0]
		if bytes.Contains(body, []byte(`"role":"tool"`)) {
			rec = recs[1]
		}
		for k, v := range rec.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Status)
		_, _ = w.Write(rec.Body)
	}))
	b.Cleanup(up.Close)
	yaml := strings.Replace(benchYAML, "{chat: {format: openai-chat}}", "{tools: {format: openai-chat}}", 1)
	cfg, err := config.Parse([]byte(strings.ReplaceAll(yaml, "{{URL}}", up.URL)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		b.Fatal(err)
	}
	return llmrelayv1.NewGatewayServiceClient(serveBufconn(b, srv))
}

func agentBenchTools(b *testing.B) []*llmrelayv1.Tool {
	params := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	return []*llmrelayv1.Tool{{Name: "get_weather", Parameters: params}, {Name: "get_time", Parameters: params}, {Name: "lookup_population", Parameters: params}}
}

// BenchmarkAgentTwoRounds: one Agent run of two model calls (three client
// tool calls answered in between), end to end. Compare with
// BenchmarkAgentBaseline, the same two model calls made as StreamTools calls
// by a client that runs the loop itself: the difference is what the loop
// costs.
func BenchmarkAgentTwoRounds(b *testing.B) {
	c := agentBenchServer(b)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: benchMessages(), Tools: agentBenchTools(b), Call: &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(false)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.Agent(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: setup}}); err != nil {
			b.Fatal(err)
		}
		var end *llmrelayv1.AgentEnd
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if r := ev.GetToolCallRequest(); r != nil {
				if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: "ok"}}}); err != nil {
					b.Fatal(err)
				}
			}
			if ev.GetEnd() != nil {
				end = ev.GetEnd()
			}
		}
		if end.GetMeta().GetModelCalls() != 2 {
			b.Fatalf("end %v", end)
		}
	}
}

// BenchmarkAgentBaseline: the two model calls of BenchmarkAgentTwoRounds as
// StreamTools calls, the client folding round 1 and appending the results.
func BenchmarkAgentBaseline(b *testing.B) {
	c := agentBenchServer(b)
	ctx := context.Background()
	tools := agentBenchTools(b)
	call := &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(false)}
	b.ReportAllocs()
	for b.Loop() {
		msgs := benchMessages()
		for round := 0; round < 2; round++ {
			s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: tools, Call: call})
			if err != nil {
				b.Fatal(err)
			}
			var acc fold.Accumulator
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := acc.AddTools(ev); err != nil {
					b.Fatal(err)
				}
			}
			msg := acc.Message()
			msgs = append(msgs, msg)
			var results []*llmrelayv1.Part
			for _, tc := range acc.ToolCalls() {
				results = append(results, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: tc.GetCallId(), Content: "ok"}}})
			}
			if len(results) > 0 {
				msgs = append(msgs, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: results})
			}
		}
	}
}
