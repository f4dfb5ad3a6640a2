package server

import (
	"context"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Chat generates an assistant message.
func (g *gateway) Chat(ctx context.Context, req *llmrelayv1.ChatRequest) (*llmrelayv1.ChatResponse, error) {
	ctx, p, err := g.prepareChat(ctx, req)
	if err != nil {
		return nil, g.notPrepared(ctx, err)
	}
	msg, meta, err := g.runUnary(ctx, p)
	if err != nil {
		return nil, err
	}
	return &llmrelayv1.ChatResponse{Message: msg, Meta: meta}, nil
}

// StreamChat is Chat, streamed.
func (g *gateway) StreamChat(req *llmrelayv1.StreamChatRequest, ss llmrelayv1.GatewayService_StreamChatServer) error {
	ctx, p, err := g.prepareStreamChat(ss.Context(), req)
	if err != nil {
		return g.notPrepared(ctx, err)
	}
	return g.runStream(ctx, p, &chatSink{ss: ss})
}

// prepareChat builds the generation in a frame of its own, gone before
// the call goes upstream (runUnary), as prepareStreamChat.
//
//go:noinline
func (g *gateway) prepareChat(ctx context.Context, req *llmrelayv1.ChatRequest) (context.Context, *prepared, error) {
	return g.prepareGeneration(ctx, generation{
		req: req, model: req.GetModel(), messages: req.GetMessages(), options: req.GetOptions(),
		providerOptions: req.GetProviderOptions(), call: req.GetCall(),
	})
}

// prepareStreamChat builds the generation in a frame of its own, gone
// before the stream opens (runStream).
//
//go:noinline
func (g *gateway) prepareStreamChat(ctx context.Context, req *llmrelayv1.StreamChatRequest) (context.Context, *prepared, error) {
	return g.prepareGeneration(ctx, generation{
		req: req, model: req.GetModel(), messages: req.GetMessages(), options: req.GetOptions(),
		providerOptions: req.GetProviderOptions(), call: req.GetCall(),
	})
}

type chatSink struct {
	ss llmrelayv1.GatewayService_StreamChatServer
	// A text delta's three messages, reused for every chunk (most of a
	// stream's events): Send encodes the message before it returns and
	// keeps no reference to it.
	textResp  llmrelayv1.StreamChatResponse
	textEvent llmrelayv1.StreamChatResponse_TextDelta
	textDelta llmrelayv1.TextDelta
}

func (s *chatSink) send(ev *llmrelayv1.StreamChatResponse) error { return s.ss.Send(ev) }

func (s *chatSink) start(e *llmrelayv1.StreamStart) error {
	return s.send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_Start{Start: e}})
}

func (s *chatSink) text(t, phase, item string, begins bool) error {
	s.textDelta.Text, s.textDelta.Phase, s.textDelta.ItemId, s.textDelta.BeginsPart = t, phase, item, begins
	s.textEvent.TextDelta = &s.textDelta
	s.textResp.Event = &s.textEvent
	return s.send(&s.textResp)
}

func (s *chatSink) refusal(t, item string) error {
	return s.send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_RefusalDelta{RefusalDelta: &llmrelayv1.RefusalDelta{Text: t, ItemId: item}}})
}

func (*chatSink) toolDelta(*llmrelayv1.ToolCallDelta) error { return nil }
func (*chatSink) toolDone(*llmrelayv1.ToolCallDone) error   { return nil }
func (*chatSink) tools() bool                               { return false }

func (s *chatSink) usage(u *llmrelayv1.Usage) error {
	return s.send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_Usage{Usage: u}})
}

func (s *chatSink) end(e *llmrelayv1.StreamEnd) error {
	return s.send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_End{End: e}})
}

func (s *chatSink) reasoning(d *llmrelayv1.ReasoningDelta) error {
	return s.send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_ReasoningDelta{ReasoningDelta: d}})
}

func (s *chatSink) providerItem(it *llmrelayv1.ProviderItem) error {
	return s.send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_ProviderItem{ProviderItem: it}})
}
