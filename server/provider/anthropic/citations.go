package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Citations of text blocks (web search `web_search_result_location`,
// documents `char_location` / `page_location` / `content_block_location`,
// `search_result_location`) have no place in the contract: like OpenAI's
// annotations and Gemini's grounding metadata they are kept as sent, in
// meta.extended.citations, one entry per cited text block in order:
// {"text": <the block's text>, "citations": [<each citation as sent>]}.
const (
	extCitations = "citations"
	// maxCitedBlocks bounds the entries of meta.extended.citations.
	maxCitedBlocks = 256
)

// citationsDroppedWarning says that cited blocks past the bound lost their
// citations.
var citationsDroppedWarning = fmt.Sprintf("more than %d cited text blocks; the citations of the rest dropped (their text is kept)", maxCitedBlocks)

// citationList decodes a text block's `citations`: none when absent, null
// or []; ok is false when the value is not a list.
func citationList(raw json.RawMessage) (list []any, ok bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, true
	}
	if t[0] != '[' {
		return nil, false
	}
	if err := json.Unmarshal(t, &list); err != nil {
		// The enclosing block decoded, so this cannot fail.
		return nil, false
	}
	return list, true
}

// citation decodes one citations_delta's citation; nil when absent or null.
func citation(raw json.RawMessage) any {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		// The enclosing event decoded, so this cannot fail; keep the text.
		return string(t)
	}
	return v
}

// citedEntry is one entry of meta.extended.citations.
func citedEntry(text string, cites []any) map[string]any {
	return map[string]any{"text": text, extCitations: cites}
}

// unaryCitations collects the entries of a unary answer.
type unaryCitations struct {
	entries []any
	dropped bool
}

// add records a text block's citations (content[i]); it returns a warning
// when they cannot be kept.
func (c *unaryCitations) add(i int, b *contentBlock) string {
	list, ok := citationList(b.Citations)
	if !ok {
		return fmt.Sprintf("content[%d]: text block citations are not a list; dropped (the text is kept)", i)
	}
	if len(list) == 0 {
		return ""
	}
	if len(c.entries) >= maxCitedBlocks {
		if c.dropped {
			return ""
		}
		c.dropped = true
		return citationsDroppedWarning
	}
	c.entries = append(c.entries, citedEntry(b.Text, list))
	return ""
}

func (c *unaryCitations) set(meta *llmrelayv1.ResponseMeta) {
	if len(c.entries) > 0 {
		provider.SetExtended(meta, extCitations, c.entries)
	}
}

// streamCitations collects a stream's cited text blocks. Every open text
// block's text is buffered (blockState.text) because a citation may come
// after some of the text it belongs to; a block that stops uncited drops
// its buffer. The list is reported whole (extended keys are replaced
// whole) by flush, at the finish, at message_stop and when the stream
// breaks, not after every delta.
type streamCitations struct {
	// cited are the blocks with at least one citation kept.
	cited   []*blockState
	dirty   bool
	dropped bool
}

// add adds citations to text block b (at index idx); it returns a warning
// the first time a block past the bound is dropped.
func (c *streamCitations) add(b *blockState, idx int, list ...any) string {
	if len(list) == 0 || b.citesDropped {
		return ""
	}
	if b.cites == nil {
		if len(c.cited) >= maxCitedBlocks {
			b.citesDropped = true
			if c.dropped {
				return ""
			}
			c.dropped = true
			return citationsDroppedWarning
		}
		b.index = idx
		c.cited = append(c.cited, b)
	}
	b.cites = append(b.cites, list...)
	c.dirty = true
	return ""
}

// flush returns the meta reporting the list when it changed since it was
// last reported, nil otherwise.
func (c *streamCitations) flush() *llmrelayv1.ResponseMeta {
	if !c.dirty {
		return nil
	}
	c.dirty = false
	sort.SliceStable(c.cited, func(i, j int) bool { return c.cited[i].index < c.cited[j].index })
	entries := make([]any, len(c.cited))
	for i, b := range c.cited {
		entries[i] = citedEntry(string(b.text), b.cites)
	}
	meta := &llmrelayv1.ResponseMeta{}
	provider.SetExtended(meta, extCitations, entries)
	return meta
}
