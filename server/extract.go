package server

import (
	"context"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// extractServer serves ExtractService with errors mapped to statuses in
// the one place (errors.go).
type extractServer struct {
	llmrelayv1.UnimplementedExtractServiceServer
	inner llmrelayv1.ExtractServiceServer
	g     *gateway
}

// Extract normalizes any LLM payload into parts.
func (s *extractServer) Extract(ctx context.Context, req *llmrelayv1.ExtractRequest) (*llmrelayv1.ExtractResponse, error) {
	resp, err := s.inner.Extract(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, err, nil, s.g.state.Load().redact, s.g.log)
	}
	return resp, nil
}
