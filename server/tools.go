package server

import (
	"context"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Tools generates an assistant message that may call the offered tools.
func (g *gateway) Tools(ctx context.Context, req *llmrelayv1.ToolsRequest) (*llmrelayv1.ToolsResponse, error) {
	ctx, p, err := g.prepareTools(ctx, req)
	if err != nil {
		return nil, g.notPrepared(ctx, err)
	}
	msg, meta, err := g.runUnary(ctx, p)
	if err != nil {
		return nil, err
	}
	return &llmrelayv1.ToolsResponse{Message: msg, Meta: meta}, nil
}

// StreamTools is Tools, streamed; tool-call deltas carry call_id.
func (g *gateway) StreamTools(req *llmrelayv1.StreamToolsRequest, ss llmrelayv1.GatewayService_StreamToolsServer) error {
	ctx, p, err := g.prepareStreamTools(ss.Context(), req)
	if err != nil {
		return g.notPrepared(ctx, err)
	}
	return g.runStream(ctx, p, &toolsSink{ss: ss})
}

// prepareTools: as prepareChat.
//
//go:noinline
func (g *gateway) prepareTools(ctx context.Context, req *llmrelayv1.ToolsRequest) (context.Context, *prepared, error) {
	return g.prepareGeneration(ctx, generation{
		req: req, model: req.GetModel(), messages: req.GetMessages(), tools: req.GetTools(), options: req.GetOptions(),
		providerOptions: req.GetProviderOptions(), call: req.GetCall(), wantTools: true,
	})
}

// prepareStreamTools: as prepareStreamChat.
//
//go:noinline
func (g *gateway) prepareStreamTools(ctx context.Context, req *llmrelayv1.StreamToolsRequest) (context.Context, *prepared, error) {
	return g.prepareGeneration(ctx, generation{
		req: req, model: req.GetModel(), messages: req.GetMessages(), tools: req.GetTools(), options: req.GetOptions(),
		providerOptions: req.GetProviderOptions(), call: req.GetCall(), wantTools: true,
	})
}

type toolsSink struct {
	ss toolsSender
	// A text delta's three messages, reused for every chunk: the stream's
	// Send encodes the message before it returns, and the agent's sender
	// keeps only the text (fold), never the messages.
	textResp  llmrelayv1.StreamToolsResponse
	textEvent llmrelayv1.StreamToolsResponse_TextDelta
	textDelta llmrelayv1.TextDelta
}

// toolsSender is where StreamTools events go: the StreamTools stream, or an
// agent round.
type toolsSender interface {
	Send(*llmrelayv1.StreamToolsResponse) error
}

func (s *toolsSink) send(ev *llmrelayv1.StreamToolsResponse) error { return s.ss.Send(ev) }

func (s *toolsSink) start(e *llmrelayv1.StreamStart) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_Start{Start: e}})
}

func (s *toolsSink) text(t, phase, item string, begins bool) error {
	s.textDelta.Text, s.textDelta.Phase, s.textDelta.ItemId, s.textDelta.BeginsPart = t, phase, item, begins
	s.textEvent.TextDelta = &s.textDelta
	s.textResp.Event = &s.textEvent
	return s.send(&s.textResp)
}

func (s *toolsSink) refusal(t, item string) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_RefusalDelta{RefusalDelta: &llmrelayv1.RefusalDelta{Text: t, ItemId: item}}})
}

func (s *toolsSink) toolDelta(d *llmrelayv1.ToolCallDelta) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: d}})
}

func (s *toolsSink) toolDone(d *llmrelayv1.ToolCallDone) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ToolCallDone{ToolCallDone: d}})
}

func (*toolsSink) tools() bool { return true }

func (s *toolsSink) usage(u *llmrelayv1.Usage) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_Usage{Usage: u}})
}

func (s *toolsSink) end(e *llmrelayv1.StreamEnd) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_End{End: e}})
}

func (s *toolsSink) reasoning(d *llmrelayv1.ReasoningDelta) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ReasoningDelta{ReasoningDelta: d}})
}

func (s *toolsSink) providerItem(it *llmrelayv1.ProviderItem) error {
	return s.send(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ProviderItem{ProviderItem: it}})
}
