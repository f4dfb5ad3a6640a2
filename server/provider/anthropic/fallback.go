package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Server-side fallback (beta server-side-fallback-2026-07-01, request field
// `fallbacks`): when the requested model declines, the API continues on a
// fallback model. Routed before generation, the answer simply names the
// fallback model and usage.iterations holds a fallback_message iteration
// (testdata/real_oi_server_side_fallback_stream.http). Declined mid-answer,
// a `fallback` content block marks the switch: what comes before it is the
// first model's, what comes after the fallback model's
// (testdata/fallback_block_stream.http); message_start named the first
// model, so the resolved model is the block's `to`.

// extFallback is the meta.extended key listing the fallback blocks, in
// order, each {from, to, trigger} as sent.
const extFallback = "fallback"

// fallbackRecord is a fallback block as kept in meta.extended.fallback.
func fallbackRecord(b *contentBlock) map[string]any {
	rec := map[string]any{}
	if b.From != nil {
		rec["from"] = map[string]any{"model": b.From.Model}
	}
	if b.To != nil {
		rec["to"] = map[string]any{"model": b.To.Model}
	}
	if t := bytes.TrimSpace(b.Trigger); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		var v any
		if err := json.Unmarshal(t, &v); err != nil {
			// The enclosing block decoded, so this cannot fail; keep the text.
			v = string(t)
		}
		rec["trigger"] = v
	}
	return rec
}

// fallbackTo is the model a fallback block hands the answer to ("" when
// the block names none).
func fallbackTo(b *contentBlock) string {
	if b.To == nil {
		return ""
	}
	return b.To.Model
}

// fallbackWarning says what a fallback block meant and that it is not in
// the message: the contract has no part for it, so a history sent back
// lacks it.
func fallbackWarning(b *contentBlock) string {
	from, to := "?", "?"
	if b.From != nil && b.From.Model != "" {
		from = b.From.Model
	}
	if b.To != nil && b.To.Model != "" {
		to = b.To.Model
	}
	trigger := ""
	var t struct {
		Type     string `json:"type"`
		Category string `json:"category"`
	}
	if json.Unmarshal(b.Trigger, &t) == nil && t.Type != "" {
		trigger = " (" + t.Type
		if t.Category != "" {
			trigger += " " + t.Category
		}
		trigger += ")"
	}
	return fmt.Sprintf("server-side fallback: %s declined%s and %s answered the rest; content before the fallback is %s's "+
		"(the fallback block is kept in meta.extended.fallback, not in the message)", from, trigger, to, from)
}
