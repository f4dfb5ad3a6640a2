package server

import (
	"context"
	"fmt"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Embed returns one embedding per input.
func (g *gateway) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest) (*llmrelayv1.EmbedResponse, error) {
	st := g.state.Load()
	ctx, p, err := g.prepareEmbed(ctx, st, req)
	if err != nil {
		return nil, toStatus(ctx, err, nil, st.redact, g.log)
	}
	defer p.cancel()
	res, err := g.unaryRoute(ctx, p)
	if err != nil {
		meta := g.finishMeta(p, reported(err))
		return nil, g.account(ctx, p, meta, toStatus(ctx, err, meta, st.redact, g.log))
	}
	meta := g.finishMeta(p, res)
	meta.EmbeddingsCount = int32(len(res.Embeddings))
	if len(res.Embeddings) != len(req.GetInputs()) {
		return nil, g.account(ctx, p, meta, toStatus(ctx, provider.BadResponse(p.providerType, "provider returned %d embeddings for %d inputs", len(res.Embeddings), len(req.GetInputs())), meta, st.redact, g.log))
	}
	g.account(ctx, p, meta, nil)
	return &llmrelayv1.EmbedResponse{Embeddings: res.Embeddings, Meta: meta}, nil
}

func (g *gateway) prepareEmbed(ctx context.Context, st *state, req *llmrelayv1.EmbedRequest) (context.Context, *prepared, error) {
	if err := g.labelsGate(ctx, req.GetCall()); err != nil {
		return ctx, nil, err
	}
	if err := checkFields(req.ProtoReflect()); err != nil {
		return ctx, nil, err
	}
	if err := validateCall(req.GetCall()); err != nil {
		return ctx, nil, err
	}
	if len(req.GetInputs()) == 0 {
		return ctx, nil, invalidField("inputs", "at least one input is required")
	}
	if len(req.GetInputs()) > maxEmbedInput {
		return ctx, nil, invalidField("inputs", "at most %d inputs, got %d", maxEmbedInput, len(req.GetInputs()))
	}
	for i, in := range req.GetInputs() {
		if in == "" {
			return ctx, nil, invalidField(fmt.Sprintf("inputs[%d]", i), "empty input")
		}
	}
	if req.Dimensions != nil && req.GetDimensions() < 1 {
		return ctx, nil, invalidField("dimensions", "must be at least 1")
	}
	m, capab, err := g.resolve(ctx, st, req.GetModel(), llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS, "embeddings")
	if err != nil {
		return ctx, nil, err
	}
	dims := capab.Dimensions
	if req.Dimensions != nil {
		d := req.GetDimensions()
		dims = &d
	}
	pOpts, dropped, err := checkProviderOptions(m, req.GetProviderOptions(), req.GetCall().GetIgnoreInvalidOptions())
	if err != nil {
		return ctx, nil, err
	}
	p := g.newPrepared(ctx, st, m, llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS, capab)
	p.meta.DroppedOptions = dropped
	p.call.Op = pipeline.OpEmbed
	p.call.Embed = &provider.EmbedRequest{Model: m.UpstreamModel, Format: capab.Format.Name, Inputs: req.GetInputs(), Dimensions: dims, ProviderOptions: pOpts}
	if req.GetCall() != nil {
		p.rawExplicit = req.GetCall().PreserveRaw
	}
	ctx, p.cancel = g.callContext(ctx, req.GetCall(), st.callBound)
	return ctx, p, nil
}
