package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/auth"
)

const maxPageSize = 1000

// pageToken is what ListModels' opaque page_token carries: the last name
// of the previous page (a reload that adds models elsewhere neither repeats
// nor skips any; one that removes it is reported) and the page size it was
// issued for (AIP-158: other request fields must not change between pages).
// Opaque so that its form can change without breaking clients.
type pageToken struct {
	V     int    `json:"v"`
	After string `json:"after"`
	Size  int    `json:"size"`
}

func encodePageToken(after string, size int) string {
	b, _ := json.Marshal(pageToken{V: 1, After: after, Size: size}) // strings and ints always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(s string) (pageToken, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return pageToken{}, false
	}
	var t pageToken
	if err := json.Unmarshal(b, &t); err != nil || t.V != 1 || t.After == "" {
		return pageToken{}, false
	}
	return t, true
}

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
	if s := req.GetPageToken(); s != "" {
		t, ok := decodePageToken(s)
		if !ok {
			return nil, toStatus(ctx, invalidField("page_token", "not a token from a previous response"), nil, st.redact, g.log)
		}
		if t.Size != size {
			return nil, toStatus(ctx, invalidField("page_size", "must stay %d while following its page_token", t.Size), nil, st.redact, g.log)
		}
		i := slices.Index(names, t.After)
		if i < 0 {
			return nil, toStatus(ctx, invalidField("page_token", "the model list changed since this token was issued (configuration reload): start from the first page"), nil, st.redact, g.log)
		}
		offset = i + 1
	}
	resp := &llmrelayv1.ListModelsResponse{}
	end := min(offset+size, len(names))
	for _, n := range names[offset:end] {
		m, _ := st.catalog.Lookup(n)
		resp.Models = append(resp.Models, m.Info())
	}
	if end < len(names) {
		resp.NextPageToken = encodePageToken(names[end-1], size)
	}
	return resp, nil
}
