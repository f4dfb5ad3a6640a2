package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// decodeChunkFast decodes the common shape of a chat.completion and of a
// chat.completion.chunk (text, refusal, reasoning text or role of the
// message or delta, finish reason, usage) without reflection: it is the hot path of every
// call and of every relayed stream chunk, where encoding/json cost about
// half of the gateway's CPU (stream) and a sixth (unary). It accepts only input it can decode exactly as
// json.Unmarshal into chatResponse would (FuzzDecodeChunkFast checks this
// against encoding/json); for anything else (escapes in known strings,
// tool calls, logprobs, content filter results, non-integer counts,
// duplicate keys, case variants of known keys) it returns false and the caller takes
// the encoding/json path. Strings equal to prev's (the previous chunk of the
// stream; may be nil) are shared instead of allocated again. d is scratch
// space a stream reuses between chunks (nil: one is allocated).
func decodeChunkFast(raw []byte, c *chatResponse, prev *chunkStrings, d *fastDecoder) bool {
	if prev == nil {
		prev = &noPrev
	}
	if d == nil {
		d = &fastDecoder{}
	}
	*d = fastDecoder{b: raw, prev: prev}
	if !d.object(c.topField) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

type fastDecoder struct {
	b    []byte
	i    int
	seen uint32        // keys seen in the object being decoded (one bit each)
	prev *chunkStrings // the previous chunk's strings, for reuse (read only)
}

// chunkStrings are the strings of a chunk that the next chunk usually
// repeats: all a stream keeps of its previous chunk (not the whole
// chatResponse, so that an open stream holds less).
type chunkStrings struct {
	ID, Object, Model, SystemFingerprint, ServiceTier string
}

// noPrev is the previous chunk of a first chunk: nothing to share.
var noPrev chunkStrings

// reuse returns old when s has the same bytes (no allocation), else a new
// string.
func reuse(s []byte, old string) string {
	if string(s) == old {
		return old
	}
	return string(s)
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) consume(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// str reads a string without escapes and with valid UTF-8 (what
// json.Unmarshal would decode to the same bytes); raw is the quoted text.
// One table lookup per byte; utf8.Valid runs only for strings with
// non-ASCII bytes.
func (d *fastDecoder) str() (s, raw []byte, ok bool) {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, nil, false
	}
	start := d.i
	body := d.b[start+1:]
	ascii := true
	for j, c := range body {
		switch strClass[c] {
		case strPlain:
			continue
		case strHigh:
			ascii = false
		case strQuote:
			s = body[:j]
			if !ascii && !utf8.Valid(s) {
				return nil, nil, false
			}
			d.i = start + 2 + j
			return s, d.b[start:d.i], true
		default: // an escape or a control character
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// Byte classes inside a JSON string.
const (
	strPlain = iota // printable ASCII other than '"' and '\\'
	strHigh         // a byte of a multi-byte UTF-8 sequence
	strQuote        // the closing quote
	strStop         // '\\' or a control character: not for the fast path
)

var strClass = func() (t [256]byte) {
	for c := range t {
		switch {
		case c < 0x20 || c == '\\':
			t[c] = strStop
		case c == '"':
			t[c] = strQuote
		case c >= 0x80:
			t[c] = strHigh
		}
	}
	return t
}()

// counts decodes a details object of which the struct has the counts
// names (into dsts); other keys are skipped as encoding/json skips them,
// case variants of the names are left to encoding/json.
func (d *fastDecoder) counts(names []string, dsts ...*flexInt) bool {
	return d.object(func(d *fastDecoder, key []byte) bool {
		for i, n := range names {
			if string(key) == n {
				return d.mark(1<<i) && d.flexInt(dsts[i])
			}
		}
		return d.unknown(key, names...)
	})
}

var (
	promptDetailKeys = []string{"cached_tokens", "cache_write_tokens"}
	complDetailKeys  = []string{"reasoning_tokens"}
)

func (d *fastDecoder) null() bool {
	d.ws()
	if bytes.HasPrefix(d.b[d.i:], []byte("null")) {
		d.i += 4
		return true
	}
	return false
}

// int reads a JSON integer of at most 18 digits.
func (d *fastDecoder) int() (int64, bool) {
	d.ws()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	start := d.i
	var n int64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		n = n*10 + int64(d.b[d.i]-'0')
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 18 || (digits > 1 && d.b[start] == '0') {
		return 0, false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// scalar skips a string, an integer, null, true or false.
func (d *fastDecoder) scalar() bool {
	d.ws()
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, _, ok := d.str()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := d.int()
		return ok
	case bytes.HasPrefix(d.b[d.i:], []byte("true")):
		d.i += 4
		return true
	case bytes.HasPrefix(d.b[d.i:], []byte("false")):
		d.i += 5
		return true
	default:
		return d.null()
	}
}

// maxSkipDepth bounds the nesting of skipped values.
const maxSkipDepth = 32

// skip validates and skips any JSON value, as strictly as encoding/json's
// scanner (strings may hold any byte from 0x20 up, escapes must be valid,
// numbers follow the JSON grammar).
func (d *fastDecoder) skip(depth int) bool {
	d.ws()
	if d.i >= len(d.b) || depth > maxSkipDepth {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		return d.skipString()
	case c == '{':
		d.i++
		if d.consume('}') {
			return true
		}
		for {
			d.ws()
			if !d.skipString() || !d.consume(':') || !d.skip(depth+1) {
				return false
			}
			if d.consume(',') {
				continue
			}
			return d.consume('}')
		}
	case c == '[':
		d.i++
		if d.consume(']') {
			return true
		}
		for {
			if !d.skip(depth + 1) {
				return false
			}
			if d.consume(',') {
				continue
			}
			return d.consume(']')
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return d.skipNumber()
	default:
		return d.scalar()
	}
}

func (d *fastDecoder) skipString() bool {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return false
	}
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(d.b) {
				return false
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d.b) {
					return false
				}
				for _, h := range d.b[j+1 : j+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func (d *fastDecoder) skipNumber() bool {
	b, i := d.b, d.i
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	n := digits()
	if n == 0 || (n > 1 && b[start] == '0') {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	d.i = i
	return true
}

// optString reads a string or null ("" for null), reusing old when equal.
func (d *fastDecoder) optString(old string) (string, bool) {
	if d.null() {
		return "", true
	}
	s, _, ok := d.str()
	return reuse(s, old), ok
}

// object decodes an object, calling field for each key; field returns false
// to give up. Duplicate keys give up (json.Unmarshal would merge them).
func (d *fastDecoder) object(field func(d *fastDecoder, key []byte) bool) bool {
	if !d.consume('{') {
		return false
	}
	saved := d.seen
	d.seen = 0
	defer func() { d.seen = saved }()
	if d.consume('}') {
		return true
	}
	for {
		key, _, ok := d.str()
		if !ok || !d.consume(':') || !field(d, key) {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume('}')
	}
}

// mark records a known key (bit); false when it was already seen.
func (d *fastDecoder) mark(bit uint32) bool {
	if d.seen&bit != 0 {
		return false
	}
	d.seen |= bit
	return true
}

// unknown skips the value of a key the struct does not have, but never a
// case variant of a known key (json.Unmarshal matches keys
// case-insensitively).
func (d *fastDecoder) unknown(key []byte, known ...string) bool {
	for _, k := range known {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return d.skip(0)
}

// chunkTopKeys are the chunk fields the slow path decodes: a chunk with
// one the fast path does not read (prompt_filter_results and its older
// name prompt_annotations, error, x_groq,
// timings, base_resp, error_type, Perplexity's sources, the serving
// statistics of Cerebras, LM Studio and Fireworks, Groq's usage_breakdown,
// Venice's cost, Azure's latency_checkpoint and routing) goes to
// encoding/json.
var chunkTopKeys = []string{"id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier", "provider", "prompt_filter_results", "prompt_annotations", "error", "x_groq", "timings",
	"base_resp", "error_type", "citations", "search_results", "images", "related_questions", "time_info", "moderation",
	"stats", "model_info", "runtime", "perf_metrics", "usage_breakdown", "latency_checkpoint", "routing", "cost"}

func (c *chatResponse) topField(d *fastDecoder, key []byte) bool {
	var ok bool
	switch string(key) {
	case "id":
		ok = d.mark(1 << 0)
		var s []byte
		s, _, ok = okStr(ok, d)
		c.ID = reuse(s, d.prev.ID)
	case "object":
		ok = d.mark(1 << 1)
		var s []byte
		s, _, ok = okStr(ok, d)
		c.Object = reuse(s, d.prev.Object)
	case "created":
		if !d.mark(1 << 2) {
			return false
		}
		var n int64
		n, ok = d.int()
		c.Created = flexInt(n)
	case "model":
		ok = d.mark(1 << 3)
		var s []byte
		s, _, ok = okStr(ok, d)
		c.Model = reuse(s, d.prev.Model)
	case "system_fingerprint":
		if !d.mark(1 << 4) {
			return false
		}
		c.SystemFingerprint, ok = d.optString(d.prev.SystemFingerprint)
	case "service_tier":
		if !d.mark(1 << 5) {
			return false
		}
		c.ServiceTier, ok = d.optString(d.prev.ServiceTier)
	case "provider":
		// OpenRouter's upstream, on every chunk. Not a string: the slow
		// path ignores it.
		if !d.mark(1 << 8) {
			return false
		}
		var s string
		s, ok = d.optString("")
		c.Provider = upstreamName(s)
	case "usage":
		if !d.mark(1 << 6) {
			return false
		}
		if d.null() {
			return true
		}
		u := &wireUsage{}
		d.ws()
		start := d.i
		if !d.object(u.field) {
			return false
		}
		// As encoding/json hands wireUsage.UnmarshalJSON the object's bytes.
		u.Raw = append(json.RawMessage(nil), d.b[start:d.i]...)
		c.Usage, ok = u, true
	case "choices":
		ok = d.mark(1<<7) && d.choices(c)
	default:
		ok = d.unknown(key, chunkTopKeys...)
	}
	return ok
}

// okStr reads a string when ok.
func okStr(ok bool, d *fastDecoder) ([]byte, []byte, bool) {
	if !ok {
		return nil, nil, false
	}
	return d.str()
}

func (d *fastDecoder) choices(c *chatResponse) bool {
	if !d.consume('[') {
		return false
	}
	if d.consume(']') {
		c.Choices = []chatChoice{}
		return true
	}
	for {
		var ch chatChoice
		if !d.object(ch.field) {
			return false
		}
		c.Choices = append(c.Choices, ch)
		if d.consume(',') {
			continue
		}
		return d.consume(']')
	}
}

var chunkChoiceKeys = []string{"index", "message", "delta", "finish_reason", "native_finish_reason", "logprobs", "content_filter_results", "content_filter_result", "content_filter_offsets", "usage", "stop_reason", "matched_stop", "error", "seed"}

func (ch *chatChoice) field(d *fastDecoder, key []byte) bool {
	switch string(key) {
	case "index":
		if !d.mark(1 << 0) {
			return false
		}
		n, ok := d.int()
		ch.Index = flexInt(n)
		return ok
	case "delta", "message":
		bit := uint32(1 << 1)
		if string(key) == "message" {
			bit = 1 << 4
		}
		if !d.mark(bit) {
			return false
		}
		if d.null() {
			return true
		}
		m := &respMessage{}
		if !d.object(m.deltaField) {
			return false
		}
		if bit == 1<<4 {
			ch.Message = m
		} else {
			ch.Delta = m
		}
		return true
	case "finish_reason":
		if !d.mark(1 << 2) {
			return false
		}
		if d.null() {
			return true
		}
		s, _, ok := d.str()
		v := finishReason(s)
		ch.FinishReason = &v
		return ok
	case "native_finish_reason":
		// OpenRouter's, null on every chunk but the finishing one; a
		// value that is no string goes to encoding/json.
		if !d.mark(1 << 7) {
			return false
		}
		if d.null() {
			return true
		}
		s, _, ok := d.str()
		v := finishReason(s)
		ch.NativeFinishReason = &v
		return ok
	case "logprobs":
		// Only null; json.Unmarshal keeps it as the raw text "null".
		if !d.mark(1<<3) || !d.null() {
			return false
		}
		ch.Logprobs = json.RawMessage("null")
		return true
	case "stop_reason", "matched_stop", "seed":
		// vLLM and SGLang send them null on every chunk, Together its
		// seed; a value (on the finishing chunk) goes to encoding/json.
		dst, bit := &ch.StopReason, uint32(1<<5)
		switch string(key) {
		case "matched_stop":
			dst, bit = &ch.MatchedStop, 1<<6
		case "seed":
			dst, bit = &ch.Seed, 1<<8
		}
		if !d.mark(bit) || !d.null() {
			return false
		}
		*dst = json.RawMessage("null")
		return true
	default:
		return d.unknown(key, chunkChoiceKeys...)
	}
}

var usageKeys = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details", "prompt_cache_hit_tokens", "cached_tokens", "reasoning_tokens"}

func (u *wireUsage) field(d *fastDecoder, key []byte) bool {
	var dst *flexInt
	var bit uint32
	switch string(key) {
	case "prompt_tokens":
		dst, bit = &u.PromptTokens, 1<<0
	case "completion_tokens":
		dst, bit = &u.CompletionTokens, 1<<1
	case "total_tokens":
		dst, bit = &u.TotalTokens, 1<<2
	case "prompt_cache_hit_tokens", "reasoning_tokens":
		// DeepSeek's cached count; SGLang's reasoning count.
		dst, bit := &u.PromptCacheHitTokens, uint32(1<<5)
		if string(key) == "reasoning_tokens" {
			dst, bit = &u.ReasoningTokens, 1<<6
		}
		if !d.mark(bit) {
			return false
		}
		if d.null() {
			return true
		}
		n := new(flexInt)
		*dst = n
		return d.flexInt(n)
	case "prompt_tokens_details":
		if !d.mark(1 << 3) {
			return false
		}
		if d.null() {
			return true
		}
		pd := &promptDetails{}
		u.PromptTokensDetails = pd
		return d.counts(promptDetailKeys, &pd.CachedTokens, &pd.CacheWriteTokens)
	case "completion_tokens_details":
		if !d.mark(1 << 4) {
			return false
		}
		if d.null() {
			return true
		}
		cd := &complDetails{}
		u.CompletionTokensDetails = cd
		return d.counts(complDetailKeys, &cd.ReasoningTokens)
	default:
		return d.unknown(key, usageKeys...)
	}
	return d.mark(bit) && d.flexInt(dst)
}

// flexInt reads an integer into a flexInt.
func (d *fastDecoder) flexInt(dst *flexInt) bool {
	n, ok := d.int()
	*dst = flexInt(n)
	return ok
}

var chunkDeltaKeys = []string{"role", "content", "refusal", "tool_calls", "function_call", "reasoning_content", "reasoning", "reasoning_details", "thought_signature", "reasoning_text", "reasoning_opaque", "executed_tools", "annotations", "images", "audio", "provider_metadata", "phase"}

func (m *respMessage) deltaField(d *fastDecoder, key []byte) bool {
	switch string(key) {
	case "role":
		if !d.mark(1 << 0) {
			return false
		}
		s, _, ok := d.str()
		m.Role = string(s)
		return ok
	case "content":
		if !d.mark(1 << 1) {
			return false
		}
		if d.null() {
			m.Content = json.RawMessage("null")
			return true
		}
		// A RawMessage keeps the text as sent, escapes included
		// (contentText decodes it).
		d.ws()
		start := d.i
		if !d.skipString() {
			return false
		}
		m.Content = json.RawMessage(d.b[start:d.i])
		return true
	case "refusal":
		if !d.mark(1 << 2) {
			return false
		}
		if d.null() {
			return true
		}
		s, _, ok := d.str()
		v := string(s)
		m.Refusal = &v
		return ok
	case "reasoning_content", "reasoning":
		// The reasoning deltas of compatible servers (DeepSeek, vLLM,
		// Ollama's /v1): as frequent as text deltas on those streams.
		dst, bit := &m.ReasoningContent, uint32(1<<3)
		if string(key) == "reasoning" {
			dst, bit = &m.Reasoning, 1<<4
		}
		if !d.mark(bit) {
			return false
		}
		if d.null() {
			return true
		}
		s, _, ok := d.str()
		v := string(s)
		*dst = &v
		return ok
	case "annotations":
		// OpenAI sends "annotations": [] on every message: null and an
		// empty array stay on the fast path, citations go to
		// encoding/json.
		if !d.mark(1 << 5) {
			return false
		}
		if d.null() {
			m.Annotations = json.RawMessage("null")
			return true
		}
		d.ws()
		start := d.i
		if !d.consume('[') || !d.consume(']') {
			return false
		}
		m.Annotations = append(json.RawMessage(nil), d.b[start:d.i]...)
		return true
	default:
		// reasoning_details (typed blocks) is left to encoding/json.
		return d.unknown(key, chunkDeltaKeys...)
	}
}
