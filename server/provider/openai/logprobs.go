package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// logprobBudget bounds the token logprobs kept of one answer (a chat
// stream's, a Responses answer's) at maxStreamLogprobBytes, with one
// warning when they pass it. A list's entries are kept joined in one
// buffer (joinEntries), not one slice element and allocation each: the
// bound then bounds the memory too, whatever the entries' sizes.
type logprobBudget struct {
	size   int
	warned bool
}

// joinEntries appends entries to dst, comma-separated, within the
// budget; false (with the warning in meta) when the budget was passed.
func (b *logprobBudget) joinEntries(dst *bytes.Buffer, entries []json.RawMessage, meta *llmrelayv1.ResponseMeta) bool {
	for _, e := range entries {
		e = bytes.TrimSpace(e)
		if b.size += len(e) + 1; b.size > maxStreamLogprobBytes {
			b.warn(meta, fmt.Sprintf("logprobs beyond %d bytes dropped", maxStreamLogprobBytes))
			return false
		}
		if dst.Len() > 0 {
			dst.WriteByte(',')
		}
		dst.Write(e)
	}
	return true
}

func (b *logprobBudget) warn(meta *llmrelayv1.ResponseMeta, w string) {
	if !b.warned {
		b.warned = true
		meta.Warnings = append(meta.Warnings, w)
	}
}

// writeList writes joined entries (joinEntries) as a JSON list.
func writeList(b *bytes.Buffer, joined *bytes.Buffer) {
	b.WriteByte('[')
	b.Write(joined.Bytes())
	b.WriteByte(']')
}
