package ollama

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/jsonscan"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Extended meta keys (ResponseMeta.extended) set by this adapter: Ollama's
// own names, durations as integer nanoseconds.
const (
	extTotalDuration   = "total_duration"
	extLoadDuration    = "load_duration"
	extPromptEvalCount = "prompt_eval_count"
	// extPromptEvalCachedCount is the part of prompt_eval_count read from
	// the prompt cache (newer Ollama, ollama.com since September 2026).
	extPromptEvalCachedCount = "prompt_eval_cached_count"
	extPromptEvalDuration    = "prompt_eval_duration"
	extEvalCount             = "eval_count"
	extEvalDuration          = "eval_duration"
	// extRemoteModel and extRemoteHost are the upstream model and Ollama
	// host that answered for a local alias of a remote model (Ollama's
	// remote_model and remote_host), as sent.
	extRemoteModel = "remote_model"
	extRemoteHost  = "remote_host"
	// extLogprobs is the answer's logprobs list as Ollama sent it (a
	// stream's lines joined in order), asked for with extra_body
	// {"logprobs": true, "top_logprobs": n}; the key the OpenAI adapter
	// uses for choices[].logprobs.
	extLogprobs = "logprobs"
)

// setRemote keeps remote_model and remote_host when the answer has them.
func setRemote(meta *llmrelayv1.ResponseMeta, r *chatResponse) {
	if r.RemoteModel != "" {
		provider.SetExtended(meta, extRemoteModel, r.RemoteModel)
	}
	if r.RemoteHost != "" {
		provider.SetExtended(meta, extRemoteHost, r.RemoteHost)
	}
}

// doneWarning explains a done_reason under which nothing was generated:
// Ollama's "load" (the model was loaded: /api/chat with no messages) and
// "unload" (keep_alive 0 with no messages), or the answer was cut:
// "connection_closed" (Ollama versions whose llm.DoneReason names it; older
// ones wrote it as "", which reads as a stop). "" otherwise.
func doneWarning(reason string) string {
	switch reason {
	case "load", "unload":
		return fmt.Sprintf("done_reason %q: Ollama %sed the model and generated nothing", reason, reason)
	case "connection_closed":
		// llm.DoneReasonConnectionClosed: the runner stopped the
		// sequence when it could not pass a token on (its connection to
		// the server closed), before the model ended or hit a limit.
		return `done_reason "connection_closed": Ollama's runner stopped generating when its connection closed; the answer is incomplete`
	}
	return ""
}

// logprobsCoverThinking is the warning of an answer that thought and has
// logprobs: Ollama lists every token the model generated, the thinking's
// and the markers around it included (gemma4's "<|channel>thought\n" before
// and "<channel|>" after), so the list is not the answer's alone, as a
// reader of extended.logprobs (the OpenAI adapter's content logprobs)
// would take it.
const logprobsCoverThinking = "logprobs: Ollama lists every generated token, the thinking's and its markers included, not the answer's alone"

// hasReasoning reports whether a message has a reasoning part.
func hasReasoning(m *llmrelayv1.Message) bool {
	for _, p := range m.GetParts() {
		if p.GetReasoning() != nil {
			return true
		}
	}
	return false
}

// logprobEntries decodes a logprobs value: its entries, or a warning when
// it is not a list. nil for an absent, null or empty value. line is the
// stream line it came from (0: a unary answer), named in the warning.
func logprobEntries(raw json.RawMessage, line int) ([]any, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	var entries []any
	if err := json.Unmarshal(raw, &entries); err != nil {
		where := "the answer's"
		if line > 0 {
			where = fmt.Sprintf("line %d", line)
		}
		return nil, fmt.Sprintf("%s logprobs is not a list (%s); dropped", where, truncate(string(raw), 64))
	}
	return entries, ""
}

// errGenerateShaped is the error of an /api/generate answer where an
// /api/chat one belongs.
const errGenerateShaped = "the answer has a \"response\" field and no \"message\": an /api/generate answer, not /api/chat's (does a proxy at base_url rewrite the path?)"

// parseChatResponse parses a unary /api/chat answer. salt is the
// conversation hash used to derive tool call ids (see callID); win is the
// request's context window, which the counts are checked against.
func parseChatResponse(body []byte, salt string, win window) (*provider.Result, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, provider.BadResponse(providerName, "chat response is not valid JSON: %v", err)
	}
	inBand := inBandError(r.Error, 200, "")
	if inBand != nil && r.Message == nil {
		return nil, inBand
	}
	if r.Message == nil && !r.Done {
		return nil, provider.BadResponse(providerName, "chat response has neither message nor done")
	}
	if r.generateShaped() {
		return nil, provider.BadResponse(providerName, errGenerateShaped)
	}
	meta := &llmrelayv1.ResponseMeta{ResolvedModel: r.Model}
	if inBand != nil {
		// An answer and an error in one body: the answer is kept, the
		// error is not lost.
		meta.Warnings = append(meta.Warnings, "Ollama reported an error along with its answer: "+inBand.Message)
	}
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	var calls int
	var thought, answered bool // thinking and content came (formatCountWarning)
	if m := r.Message; m != nil {
		// The model thinks before it answers: the reasoning part comes
		// first, as in a stream (thinking lines precede content lines).
		thinking, w := contentText(m.Thinking, 0, "message.thinking")
		meta.Warnings = append(meta.Warnings, w...)
		if thinking != "" {
			msg.Parts = append(msg.Parts, reasoningPart(thinking))
		}
		text, w := contentText(m.Content, 0, "message.content")
		meta.Warnings = append(meta.Warnings, w...)
		thought, answered = thinking != "", text != ""
		switch {
		case text == "":
		case thinking != "": // the reasoning came apart: the content is text as sent
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: text}})
		default: // inline reasoning opening the content (Ollama before 0.12.5 without "think")
			msg.Parts = append(msg.Parts, provider.ThinkParts(text)...)
		}
		seen := map[string]bool{}
		for i, tc := range m.ToolCalls {
			call, w := toolCall(tc, i, r.Model, salt, seen)
			if w != "" {
				meta.Warnings = append(meta.Warnings, w)
			}
			msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: call}})
			calls++
		}
	}
	meta.FinishReason = doneFinish(string(r.DoneReason), calls)
	if !r.Done {
		// A body with "done": false (a proxy passing on one line of a
		// stream as the answer) is the answer so far: not a finished one,
		// whatever its (absent) done_reason would read as.
		meta.Warnings = append(meta.Warnings, "response is not marked done: the answer may be incomplete")
		meta.FinishReason = llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
	meta.ProviderFinishReason = string(r.DoneReason)
	meta.ToolCallCount = int32(calls)
	meta.Usage = usage(r.metrics)
	if w := usageWarning(r.metrics); w != "" && meta.Usage != nil {
		meta.Warnings = append(meta.Warnings, w)
	}
	meta.Warnings = append(meta.Warnings, win.warnings(r.metrics, string(r.DoneReason))...)
	if w := win.formatCountWarning(r.metrics, thought, answered); w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	if w := doneWarning(string(r.DoneReason)); w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	setMetrics(meta, r.metrics)
	setRemote(meta, &r)
	if lp, w := logprobEntries(r.Logprobs, 0); lp != nil {
		provider.SetExtended(meta, extLogprobs, lp)
		if hasReasoning(msg) {
			meta.Warnings = append(meta.Warnings, logprobsCoverThinking)
		}
	} else if w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	if ts, w := createTime(r.CreatedAt); ts != nil {
		meta.CreateTime = ts
	} else if w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	return &provider.Result{Message: msg, Meta: meta}, nil
}

// reasoningPart is Ollama's thinking text as a Reasoning part. Ollama
// neither signs nor ids its thinking, so only the text is set.
func reasoningPart(thinking string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: thinking}}}
}

// contentText reads a content value: a string (Ollama), null, or an array
// of strings / {"text": ...} parts (seen from proxies). Anything else is
// kept as its JSON text with a warning rather than dropped.
//
// line is the stream line the field came from (0: a unary answer), named
// in warnings.
func contentText(raw json.RawMessage, line int, field string) (string, []string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	// The common case, a plain string, without reflection (jsonscan
	// decodes what it accepts as encoding/json does).
	sc := jsonscan.Scanner{B: raw}
	var scratch []byte
	if str, _, ok := sc.String(&scratch, ""); ok && sc.End() {
		return str, nil
	}
	if line > 0 {
		field = fmt.Sprintf("line %d %s", line, field)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) == nil {
		var b strings.Builder
		var warnings []string
		for _, it := range items {
			var str string
			if json.Unmarshal(it, &str) == nil {
				b.WriteString(str)
				continue
			}
			var part struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal(it, &part) == nil && part.Text != nil {
				b.WriteString(*part.Text)
				continue
			}
			warnings = append(warnings, fmt.Sprintf("%s: unrecognized content item kept as JSON text", field))
			// JSON text may hold bytes that are not UTF-8, which a proto
			// string may not.
			b.WriteString(strings.ToValidUTF8(string(it), "\uFFFD"))
		}
		return b.String(), warnings
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD"), []string{fmt.Sprintf("%s is not a string; kept as JSON text", field)}
}

// toolCall normalizes one of Ollama's tool calls. index is the call's
// position in the whole response.
// seen holds the ids used so far in the response: an id Ollama repeats is
// replaced by a made one (with a warning) so that calls stay apart.
func toolCall(tc respToolCall, index int, model, salt string, seen map[string]bool) (*llmrelayv1.ToolCall, string) {
	args := provider.ArgumentsText(tc.Function.Arguments, "{}")
	valid := fold.ValidArguments(args)
	id, warning := tc.ID, ""
	if id != "" && seen[id] {
		warning = fmt.Sprintf("tool call %d repeats id %q; replaced", index, truncate(id, 64))
		id = ""
	}
	if id == "" {
		id = callID(salt, model, index, tc.Function.Name)
	}
	seen[id] = true
	return &llmrelayv1.ToolCall{CallId: id, Name: tc.Function.Name, Arguments: args, ArgumentsValid: valid}, warning
}

// callID makes the id of a call Ollama sent without one: "call_" and 24
// hex digits of a hash of the conversation sent (salt), the answering
// model, the call's position and its function name. The same conversation
// answered the same way gets the same ids whether it was streamed or not
// (Ollama's created_at differs between the two and between stream lines,
// so it cannot be used); calls in later turns differ because the
// conversation grew.
func callID(salt, model string, index int, name string) string {
	h := sha256.New()
	for _, s := range []string{salt, model, strconv.Itoa(index), name} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "call_" + hex.EncodeToString(h.Sum(nil))[:24]
}

// doneFinish is the finish of an answer with calls tool calls that ended
// with done_reason reason: finishReason, then the tool-call rule. A
// "tool_calls" with calls is TOOL_CALLS: Ollama never sends it, but
// servers that speak its API in front of another backend end a calling
// answer so (tino-kuptz/cf-ollama-wrapper, Workers AI behind /api/chat),
// whose calls are whole; without calls it stays OTHER, nothing to run.
func doneFinish(reason string, calls int) llmrelayv1.FinishReason {
	if reason == "tool_calls" && calls > 0 {
		return llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
	}
	return provider.ToolCallsFinish(finishReason(reason), calls)
}

// finishReason maps done_reason. Ollama says "stop" after tool calls too;
// the caller applies provider.ToolCallsFinish.
func finishReason(reason string) llmrelayv1.FinishReason {
	switch reason {
	case "stop", "":
		// Ollama before 0.1.x sent no done_reason on a normal finish.
		return llmrelayv1.FinishReason_FINISH_REASON_STOP
	case "length":
		return llmrelayv1.FinishReason_FINISH_REASON_LENGTH
	default:
		// "load" and "unload" (no generation happened) and anything new.
		return llmrelayv1.FinishReason_FINISH_REASON_OTHER
	}
}

// usage: input = prompt_eval_count, output = eval_count, cached input =
// prompt_eval_cached_count (a part of prompt_eval_count, as Ollama's own
// OpenAI bridge maps it to cached_tokens). Ollama reports no reasoning
// split. nil when no count is present.
func usage(m metrics) *llmrelayv1.Usage {
	if !m.PromptEvalCount.Present && !m.EvalCount.Present && !m.PromptEvalCachedCount.Present {
		return nil
	}
	in, out := provider.Count(m.PromptEvalCount.Value), provider.Count(m.EvalCount.Value)
	if int64(in)+int64(out) > math.MaxInt32 {
		// Counts no answer reaches (a fuzzed or broken body): unknown,
		// not a total that disagrees with its parts; extended keeps them.
		return nil
	}
	return &llmrelayv1.Usage{
		InputTokens: in, OutputTokens: out, TotalTokens: in + out,
		CachedInputTokens: provider.Count(m.PromptEvalCachedCount.Value),
	}
}

// missingPromptCountWarning: Ollama before PR #5371 (July 2024; issues
// #2068, #3427) left prompt_eval_count out of the done answer when the
// whole prompt came from its cache, so the input count is unknown; the
// usage's 0 input tokens is not a count.
const missingPromptCountWarning = "prompt_eval_count is missing (Ollama before July 2024 left it out when the whole prompt came from its cache): input tokens unknown, reported as 0"

// usageWarning says when a done answer counted its output but not its
// prompt (see missingPromptCountWarning); "" otherwise.
func usageWarning(m metrics) string {
	if m.EvalCount.Present && !m.PromptEvalCount.Present {
		return missingPromptCountWarning
	}
	return ""
}

// setMetrics stores the timings and counts Ollama reported in extended.
func setMetrics(meta *llmrelayv1.ResponseMeta, m metrics) {
	for _, kv := range []struct {
		key string
		v   flexInt
	}{
		{extTotalDuration, m.TotalDuration}, {extLoadDuration, m.LoadDuration},
		{extPromptEvalCount, m.PromptEvalCount}, {extPromptEvalCachedCount, m.PromptEvalCachedCount},
		{extPromptEvalDuration, m.PromptEvalDuration},
		{extEvalCount, m.EvalCount}, {extEvalDuration, m.EvalDuration},
	} {
		switch {
		case kv.v.Present:
			provider.SetExtended(meta, kv.key, kv.v.Value)
		case kv.v.Odd != nil:
			// Not a number: kept as sent, and said.
			var v any
			if json.Unmarshal(kv.v.Odd, &v) != nil {
				v = string(kv.v.Odd)
			}
			provider.SetExtended(meta, kv.key, v)
			meta.Warnings = append(meta.Warnings, fmt.Sprintf("%s holds a value of an unexpected type; kept as sent in extended.%s", kv.key, kv.key))
		}
	}
}

// createTime parses created_at (RFC 3339 with nanoseconds). A malformed
// value gives a warning instead.
func createTime(s string) (*timestamppb.Timestamp, string) {
	if s == "" {
		return nil, ""
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fmt.Sprintf("created_at %q is not an RFC 3339 time", truncate(s, 64))
	}
	if t.IsZero() {
		return nil, ""
	}
	ts := timestamppb.New(t)
	if ts.CheckValid() != nil {
		return nil, fmt.Sprintf("created_at %q is out of range", truncate(s, 64))
	}
	return ts, ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// parseEmbedResponse parses an /api/embed answer for n inputs.
func parseEmbedResponse(body []byte, n int) (*provider.Result, error) {
	var r embedResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, provider.BadResponse(providerName, "embed response is not valid JSON: %v", err)
	}
	if e := inBandError(r.Error, 200, ""); e != nil {
		return nil, e
	}
	if len(r.Embeddings) != n {
		return nil, provider.BadResponse(providerName, "embed response has %d embeddings for %d inputs", len(r.Embeddings), n)
	}
	res := &provider.Result{Meta: &llmrelayv1.ResponseMeta{ResolvedModel: r.Model, EmbeddingsCount: int32(n)}}
	for i, v := range r.Embeddings {
		if len(v) == 0 {
			// Ollama 0.6.0 answered so ([null]) for a model its own engine
			// could not embed with (ollama/ollama#9739), before it said so
			// with "this model does not support embeddings".
			return nil, provider.BadResponse(providerName, "embed response: embedding %d is empty (null or []): the model gave no vector; a model Ollama cannot embed with is answered so by older servers", i)
		}
		if i > 0 && len(v) != len(r.Embeddings[0]) {
			return nil, provider.BadResponse(providerName, "embed response: embedding %d has %d values where the first has %d", i, len(v), len(r.Embeddings[0]))
		}
		res.Embeddings = append(res.Embeddings, &llmrelayv1.Embedding{Index: int32(i), Values: v})
	}
	if r.PromptEvalCount.Present {
		in := provider.Count(r.PromptEvalCount.Value)
		res.Meta.Usage = &llmrelayv1.Usage{InputTokens: in, TotalTokens: in}
	}
	setMetrics(res.Meta, r.metrics)
	return res, nil
}
