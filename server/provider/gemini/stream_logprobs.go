package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// maxStreamLogprobBytes bounds the token logprobs kept of one stream (the
// OpenAI adapter's bound); what passes it is dropped with a warning.
const maxStreamLogprobBytes = 16 << 20

// The keys of a logprobsResult whose lists run over the decoding steps,
// and its sum.
const (
	lpTop    = "topCandidates"
	lpChosen = "chosenCandidates"
	lpSum    = "logProbabilitySum"
)

// streamLogprobs gathers the candidate's logprobsResult and avgLogprobs
// of every chunk of a stream. A chunk's logprobsResult covers the tokens
// of that chunk (its lists are "Length = total number of decoding
// steps", of the response the chunk is), as its text does; keeping only
// the last chunk's, as the stream did, dropped every earlier token's. The
// lists are joined in the order the chunks came, logProbabilitySum is
// summed, and the result is the one object a unary answer has.
//
// The live API refuses logprobs on streamGenerateContent today (400
// "LogProbs is not supported in streaming mode",
// testdata/real_maruel_gemini35_flash_stream_logprobs_error.http), so only
// a relay or a later API version streams them; one chunk's logprobsResult
// is relayed as sent.
type streamLogprobs struct {
	// chunks counts the chunks with a logprobsResult; first is the only
	// one, as sent, while chunks is 1.
	chunks int
	first  json.RawMessage
	// top, chosen: the lists' entries so far, comma-joined; listed: the
	// key was seen; sum, summed: logProbabilitySum's total.
	top, chosen      bytes.Buffer
	listed           [2]bool
	sum              float64
	summed           bool
	other            map[string]json.RawMessage
	otherOrder       []string
	size             int
	warnedSize       bool
	warnedShape      bool
	warnedOther      bool
	avg              json.RawMessage
	avgChunks        int
	avgWeighted      float64
	avgTokens        int
	avgUnweighted    bool
	warnedAverage    bool
	lastChosenTokens int
}

// add takes one chunk's candidate logprobsResult and avgLogprobs (either
// may be absent), with warnings in warn.
func (l *streamLogprobs) add(result, avg json.RawMessage, warn func(string)) {
	l.lastChosenTokens = -1
	if present(result) {
		l.addResult(result, warn)
	}
	if present(avg) {
		l.addAverage(avg, warn)
	}
}

func (l *streamLogprobs) addResult(raw json.RawMessage, warn func(string)) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		if !l.warnedShape {
			l.warnedShape = true
			warn("a streamed logprobsResult that is not an object was dropped")
		}
		return
	}
	if l.size += len(raw); l.size > maxStreamLogprobBytes {
		if !l.warnedSize {
			l.warnedSize = true
			warn(fmt.Sprintf("streamed logprobs beyond %d bytes dropped", maxStreamLogprobBytes))
		}
		return
	}
	l.chunks++
	if l.chunks == 1 {
		l.first = append(l.first[:0], raw...)
	}
	chosen := 0
	for k, v := range obj {
		switch k {
		case lpTop, lpChosen:
			var entries []json.RawMessage
			if err := json.Unmarshal(v, &entries); err != nil {
				l.keepOther(k, v, warn)
				continue
			}
			i, dst := 0, &l.top
			if k == lpChosen {
				i, dst, chosen = 1, &l.chosen, len(entries)
			}
			l.listed[i] = true
			for _, e := range entries {
				if dst.Len() > 0 {
					dst.WriteByte(',')
				}
				dst.Write(bytes.TrimSpace(e))
			}
		case lpSum:
			var f float64
			if err := json.Unmarshal(v, &f); err != nil {
				l.keepOther(k, v, warn)
				continue
			}
			if math.IsInf(l.sum+f, 0) {
				l.keepOther(k, v, warn)
				continue
			}
			l.sum += f
			l.summed = true
		default:
			l.keepOther(k, v, warn)
		}
	}
	l.lastChosenTokens = chosen
}

// keepOther keeps a key the lists and the sum are not: the last chunk's
// value, with a warning when two chunks differ on it.
func (l *streamLogprobs) keepOther(k string, v json.RawMessage, warn func(string)) {
	if l.other == nil {
		l.other = map[string]json.RawMessage{}
	}
	prev, seen := l.other[k]
	if !seen {
		l.otherOrder = append(l.otherOrder, k)
	} else if !bytes.Equal(prev, v) && !l.warnedOther {
		l.warnedOther = true
		warn("streamed logprobsResult." + k + " differs between chunks: the last chunk's is kept")
	}
	l.other[k] = append(json.RawMessage(nil), v...)
}

// addAverage takes a chunk's avgLogprobs: the average over that chunk's
// tokens. Several are one average weighted by each chunk's token count
// (its chosenCandidates); where a chunk has no such count, the last
// average is kept, with a warning.
func (l *streamLogprobs) addAverage(raw json.RawMessage, warn func(string)) {
	l.avgChunks++
	l.avg = append(l.avg[:0], raw...)
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || l.lastChosenTokens <= 0 {
		l.avgUnweighted = true
	} else {
		l.avgWeighted += f * float64(l.lastChosenTokens)
		l.avgTokens += l.lastChosenTokens
	}
	if l.avgChunks > 1 && l.avgUnweighted && !l.warnedAverage {
		l.warnedAverage = true
		warn("avgLogprobs came in more than one chunk without their token counts: the last chunk's is kept")
	}
}

// set puts what was gathered in meta.extended.
func (l *streamLogprobs) set(meta *llmrelayv1.ResponseMeta) {
	switch {
	case l.avgChunks == 1 || (l.avgChunks > 1 && l.avgUnweighted):
		provider.SetExtended(meta, extAvgLogprobs, rawValue(l.avg))
	case l.avgChunks > 1:
		provider.SetExtended(meta, extAvgLogprobs, l.avgWeighted/float64(l.avgTokens))
	}
	switch {
	case l.chunks == 1:
		provider.SetExtended(meta, extLogprobsResult, rawValue(l.first))
	case l.chunks > 1:
		provider.SetExtended(meta, extLogprobsResult, rawValue(l.joined()))
	}
}

// joined is the chunks' logprobsResult as one object.
func (l *streamLogprobs) joined() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(k string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k) // a string always marshals
		b.Write(key)
		b.WriteByte(':')
	}
	for i, k := range [2]string{lpTop, lpChosen} {
		if !l.listed[i] {
			continue
		}
		field(k)
		b.WriteByte('[')
		if i == 0 {
			b.Write(l.top.Bytes())
		} else {
			b.Write(l.chosen.Bytes())
		}
		b.WriteByte(']')
	}
	if l.summed {
		field(lpSum)
		b.WriteString(strconv.FormatFloat(l.sum, 'g', -1, 64))
	}
	for _, k := range l.otherOrder {
		field(k)
		b.Write(l.other[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}
