package server

import (
	"context"
	"strconv"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/auth"
)

const maxPageSize = 1000

// ListModels lists the configured models, page by page.
func (g *gateway) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	st := g.state.Load()
	size := int(req.GetPageSize())
	if size < 0 {
		return nil, toStatus(ctx, invalidField("page_size", "must not be negative"), nil, st.redact, g.log)
	}
	if size == 0 || size > maxPageSize {
		size = maxPageSize
	}
	names := st.catalog.Names()
	if c := auth.CallerFrom(ctx); c != nil {
		allowed := make([]string, 0, len(names))
		for _, n := range names {
			if c.Allows(n) {
				allowed = append(allowed, n)
			}
		}
		names = allowed
	}
	offset := 0
	if t := req.GetPageToken(); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 || n > len(names) {
			return nil, toStatus(ctx, invalidField("page_token", "not a token from a previous response"), nil, st.redact, g.log)
		}
		offset = n
	}
	resp := &llmrelayv1.ListModelsResponse{}
	end := min(offset+size, len(names))
	for _, n := range names[offset:end] {
		m, _ := st.catalog.Lookup(n)
		resp.Models = append(resp.Models, m.Info())
	}
	if end < len(names) {
		resp.NextPageToken = strconv.Itoa(end)
	}
	return resp, nil
}
