package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmrelay/llmrelay/internal/sse"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Wire is the wire format of a recording's body, which says how
// Properties reads what the provider said from its bytes.
type Wire int

const (
	WireNone      Wire = iota // not read: the recording is skipped
	WireChat                  // OpenAI Chat Completions (and compatible servers)
	WireResponses             // OpenAI Responses
	WireAnthropic             // Anthropic Messages
	WireGemini                // Gemini generateContent
	WireOllama                // Ollama /api/chat (and /api/generate)
)

// Property names, as Properties counts them.
const (
	PropIDs       = "ids"
	PropRateLimit = "ratelimit"
	PropUsage     = "usage"
	PropFinish    = "finish"
	PropToolCalls = "toolcalls"
	PropText      = "text"
)

// PropertyCheck configures Properties for one adapter.
type PropertyCheck struct {
	// Glob selects the recordings (real_*.http).
	Glob string
	// Wire tells a recording's format (WireNone skips it).
	Wire func(name string, rec Recording) Wire
	// Request is the request made for a recording of that format.
	Request func(w Wire) *provider.Request
	// NewProvider makes the adapter for a replay server's URL (and the
	// recording, when the adapter's dialect depends on it).
	NewProvider func(url string, name string, rec Recording) provider.Provider
	// RequestIDHeaders are the headers that name the provider's request
	// id, in the order the adapter reads them. When a recording has one,
	// meta.provider_request_id is the first one present.
	RequestIDHeaders []string
	// IgnoredFields are the adapter's fields (IgnoredFields' paths) that
	// the kept property does not ask to be kept, each with why.
	IgnoredFields map[string]string
	// Except are documented exceptions: file name → property → why. A
	// listed file's violations of that property are not errors; an
	// exception that no longer matches a violation is.
	Except map[string]map[string]string
}

// PropertyCounts are, per property, how many recordings it was checked on.
type PropertyCounts map[string]int

// Properties checks, for every 2xx recording of c.Glob in a format
// c.Wire reads, properties of the answer the adapter gives that hold for
// every provider: what the recording's bytes say (read here,
// independently of the adapter's parser) is what the answer says.
//
//   - ids: the provider's request id header is meta.provider_request_id,
//     the body's response id meta.response_id; a recording with any
//     request-id-like header (RequestIDLike) has one of their values as
//     its id;
//   - ratelimit: a recording with rate-limit headers has them in
//     meta.rate_limit, with remaining ≤ limit and resets not before the
//     answer's Date;
//   - usage: the last token counts the body reports are meta.usage's,
//     normalized as the contract says (input includes cached and cache
//     writes, output includes reasoning); the body's own total is the
//     answer's where it is at least input + output; no count is negative;
//   - finish: a stream without the terminal marker of its format is never
//     an answer with a normal finish and no warning; a finish reason the
//     body sends maps to a finish reason;
//   - toolcalls: every call id the body sends is a tool call's call_id, in
//     order; a streamed call's arguments are its deltas joined byte for
//     byte; arguments_valid is whether they parse as a JSON object;
//   - text: the answer's text is the body's text (deltas joined), and its
//     reasoning the body's reasoning (compared without whitespace: the
//     adapters separate summary parts);
//   - kept: every field of a body's objects (top level, usage, choices,
//     messages and deltas, candidates and parts, content blocks, output
//     items: keptScopes) that says something is kept in the answer (one
//     of its values is in the message or meta, meta.extended included),
//     named by a warning, or listed with why (IgnoredFields per format,
//     PropertyCheck.IgnoredFields per adapter).
//
// Every violation of every recording is reported.
func Properties(t *testing.T, c PropertyCheck) PropertyCounts {
	t.Helper()
	files, err := filepath.Glob(c.Glob)
	if err != nil {
		t.Fatal(err)
	}
	counts := PropertyCounts{}
	excepted := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		rec := Load(t, f)
		w := c.Wire(name, rec)
		if w == WireNone {
			continue
		}
		report := func(prop, format string, args ...any) {
			if why, ok := c.Except[name][prop]; ok && why != "" {
				excepted[name+" "+prop] = true
				return
			}
			t.Errorf("%s: %s: %s", name, prop, fmt.Sprintf(format, args...))
		}
		req := c.Request(w)
		p := c.NewProvider(Replay(t, rec).URL, name, rec)
		if rec.Status/100 != 2 {
			counts[PropIDs]++
			if pe := checkErrorIDs(p, req, rec.Header, rec.Body, c.RequestIDHeaders, report); pe != nil && hasRateLimitHeaders(rec.Header) {
				counts[PropRateLimit]++
				counts["ratelimit.errors"]++
				checkRateLimit(rec.Header, pe.Meta, report)
			}
			continue
		}
		said, ok := Said(w, rec)
		if !ok {
			continue
		}
		var (
			res  *provider.Result
			rerr error
		)
		if said.Stream {
			var s provider.Stream
			if s, rerr = p.Stream(context.Background(), req); rerr == nil {
				res, rerr = provider.FoldStream(s)
			}
		} else {
			res, rerr = p.Generate(context.Background(), req)
		}
		var meta *llmrelayv1.ResponseMeta
		if rerr == nil {
			meta = res.Meta
		} else {
			var pe *provider.Error
			if !errors.As(rerr, &pe) {
				report(PropFinish, "error without meta: %v", rerr)
				continue
			}
			meta = pe.Meta
		}
		counts[PropIDs]++
		checkIDs(said, rec.Header, c.RequestIDHeaders, meta, rerr, report)
		if hasRateLimitHeaders(rec.Header) {
			counts[PropRateLimit]++
			checkRateLimit(rec.Header, meta, report)
		}
		counts[PropFinish]++
		checkFinish(said, res, rerr, report)
		if rerr != nil {
			continue // an error: the answer's content is not given
		}
		if said.Usage != nil {
			counts[PropUsage]++
			checkUsage(said.Usage, meta, report)
		}
		if len(said.Calls) > 0 || len(toolCalls(res.Message)) > 0 {
			counts[PropToolCalls]++
			checkCalls(said, toolCalls(res.Message), cutFinish(meta.GetFinishReason()), report)
		}
		counts[PropText]++
		checkText(said, res.Message, report)
		counts[PropKept]++
		counts["kept.fields"] += checkKept(w, said, res, c.IgnoredFields, report)
		if said.Stream && said.Terminal {
			if cut, mid, ok := cutBeforeTerminal(w, rec); ok {
				counts["finish.cut"]++
				checkCut(c.NewProvider(Replay(t, cut).URL, name, cut), req, "before", report)
				checkCut(c.NewProvider(Replay(t, mid).URL, name, mid), req, "inside", report)
			}
		}
		// What the recordings exercised, for the log.
		if said.Reasoning != "" {
			counts["text.reasoning"]++
		}
		if said.Stream {
			counts["stream"]++
			if !said.Terminal {
				counts["finish.no_terminal"]++
			}
		}
		for _, c := range said.Calls {
			if c.Deltas && said.Stream {
				counts["toolcalls.streamed_calls"]++
			}
		}
	}
	for name, props := range c.Except {
		for prop := range props {
			if !excepted[name+" "+prop] {
				t.Errorf("%s: %s: documented exception no longer needed (or the file is gone)", name, prop)
			}
		}
	}
	return counts
}

// Log logs the counts in a stable order.
func (pc PropertyCounts) Log(t *testing.T) {
	t.Helper()
	var keys []string
	for k := range pc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, pc[k])
	}
	t.Logf("recordings checked per property:%s", b.String())
}

func toolCalls(m *llmrelayv1.Message) []*llmrelayv1.ToolCall { return calls(m) }

// RequestIDLike are headers that name a provider's request id, whichever
// adapter reads them: a recording with one has a provider_request_id (one
// of its request-id headers' values). Left out on purpose: edge and
// tracing ids that name no request of the provider (cf-ray,
// x-amz-cf-id, x-amzn-trace-id, x-vercel-id, Aliyun's eagleeye-traceid,
// x-datadog-trace-id) and ids the body repeats (OpenRouter's
// x-generation-id), as the testdata READMEs say.
var RequestIDLike = []string{"x-request-id", "request-id", "x-amzn-requestid", "apim-request-id", "x-ds-trace-id",
	"msh-request-id", "x-kong-request-id", "mistral-correlation-id", "inference-id", "nvcf-reqid", "x-github-request-id",
	"x-baseten-request-id", "x-log-id", "x-inference-id"}

// checkAnyRequestID: a recording with a request-id-like header has a
// provider_request_id, the value of one of them (got: the answer's or
// the error's id).
func checkAnyRequestID(h http.Header, got string, report func(string, string, ...any)) {
	var vals []string
	for _, n := range RequestIDLike {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return
	}
	for _, v := range vals {
		if got == v {
			return
		}
	}
	report(PropIDs, "provider_request_id %q, the recording's request-id headers say %q", got, vals)
}

func checkIDs(said *SaidAnswer, h http.Header, names []string, meta *llmrelayv1.ResponseMeta, rerr error, report func(string, string, ...any)) {
	checkAnyRequestID(h, meta.GetProviderRequestId(), report)
	for _, n := range names {
		if v := h.Get(n); v != "" {
			if got := meta.GetProviderRequestId(); got != v {
				report(PropIDs, "provider_request_id %q, the recording's %s is %q", got, n, v)
			}
			break
		}
	}
	if rerr == nil && said.ResponseID != "" && meta.GetResponseId() != said.ResponseID {
		report(PropIDs, "response_id %q, the body's id is %q", meta.GetResponseId(), said.ResponseID)
	}
	if rerr == nil && said.Model != "" && meta.GetResolvedModel() != said.Model {
		report(PropIDs, "resolved_model %q, the body's model is %q", meta.GetResolvedModel(), said.Model)
	}
}

// checkErrorIDs: a failed call's error names the provider's request id
// of the recording's headers.
// It returns the error (nil when the call did not fail).
func checkErrorIDs(p provider.Provider, req *provider.Request, h http.Header, errBody []byte, names []string, report func(string, string, ...any)) *provider.Error {
	_, err := p.Generate(context.Background(), req)
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return nil // an error status read as an answer is other tests' concern
	}
	checkAnyRequestID(h, pe.RequestID, report)
	for _, n := range names {
		if v := h.Get(n); v != "" {
			if pe.RequestID != v {
				report(PropIDs, "error's request id %q, the recording's %s is %q", pe.RequestID, n, v)
			}
			return pe
		}
	}
	// No header: the id the error body names (Anthropic's request_id
	// beside the error object).
	var body map[string]any
	if json.Unmarshal(errBody, &body) == nil {
		if v, ok := body["request_id"].(string); ok && v != "" && pe.RequestID != v {
			report(PropIDs, "error's request id %q, the body's request_id is %q", pe.RequestID, v)
		}
	}
	return pe
}

// hasRateLimitHeaders reports a header of a rate-limit family.
func hasRateLimitHeaders(h http.Header) bool {
	for k := range h {
		if rateLimitHeader(k) {
			return true
		}
	}
	return false
}

func rateLimitHeader(k string) bool {
	k = strings.ToLower(k)
	// x-ratelimit-*, Mistral's x-ratelimitbysize-* and ratelimitbysize-*,
	// the IETF draft's ratelimit-* and ratelimit, Anthropic's.
	return strings.HasPrefix(k, "x-ratelimit") || strings.HasPrefix(k, "ratelimit") || strings.HasPrefix(k, "anthropic-ratelimit-")
}

// checkRateLimit: every count a recording's rate-limit headers send is in
// meta (typed, a window's, or a value of meta.extended), remaining ≤ limit,
// each window names its budget and headers, resets
// not before the answer's Date.
func checkRateLimit(h http.Header, meta *llmrelayv1.ResponseMeta, report func(string, string, ...any)) {
	rl := meta.GetRateLimit()
	// Every count a rate-limit header sends is in meta: a typed count or
	// a value of meta.extended.
	kept := map[string]bool{}
	var counts []*int64
	if rl != nil {
		counts = []*int64{rl.RequestsLimit, rl.RequestsRemaining, rl.TokensLimit, rl.TokensRemaining}
	}
	for _, w := range rl.GetWindows() {
		counts = append(counts, w.Limit, w.Remaining)
		if p := w.GetPeriod(); p != nil && p.GetNanos() == 0 {
			// A period sent in seconds (x-ratelimit-renewalperiod-*).
			counts = append(counts, &p.Seconds)
		}
	}
	for _, n := range counts {
		if n != nil {
			kept[strconv.FormatInt(*n, 10)] = true
		}
	}
	for _, v := range meta.GetExtended().GetFields() {
		extendedValues(v.AsInterface(), kept)
	}
	var lost []string
	for k, v := range h {
		lk := strings.ToLower(k)
		if !rateLimitHeader(k) || strings.Contains(lk, "reset") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
		if err != nil || n < 0 || kept[strconv.FormatInt(n, 10)] {
			continue // not a count, a count not tracked (-1), or kept
		}
		lost = append(lost, lk+": "+v[0])
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		report(PropRateLimit, "counts not in meta: %v", lost)
	}
	if rl == nil {
		return
	}
	if rl.RequestsLimit != nil && rl.RequestsRemaining != nil && rl.GetRequestsRemaining() > rl.GetRequestsLimit() {
		report(PropRateLimit, "requests remaining %d > limit %d", rl.GetRequestsRemaining(), rl.GetRequestsLimit())
	}
	if rl.TokensLimit != nil && rl.TokensRemaining != nil && rl.GetTokensRemaining() > rl.GetTokensLimit() {
		report(PropRateLimit, "tokens remaining %d > limit %d", rl.GetTokensRemaining(), rl.GetTokensLimit())
	}
	for _, w := range rl.GetWindows() {
		// A window's counts are as sent (Cerebras's hour window of
		// tokens: 2983371 remaining of 1000000), not checked here.
		if w.GetBudget() == "" || w.GetHeader() == "" {
			report(PropRateLimit, "window %v without its budget or header", w)
		}
	}
	// A reset sent as a time is that time.
	for what, ts := range map[string]*timestamppb.Timestamp{"requests": rl.GetRequestsResetTime(), "tokens": rl.GetTokensResetTime()} {
		for k, v := range h {
			lk := strings.ToLower(k)
			if lk != "anthropic-ratelimit-"+what+"-reset" && lk != "x-ratelimit-reset-"+what {
				continue
			}
			if at, err := time.Parse(time.RFC3339, strings.TrimSpace(v[0])); err == nil && (ts == nil || !ts.AsTime().Equal(at)) {
				report(PropRateLimit, "%s reset %v, the recording's %s is %s", what, ts.AsTime(), lk, v[0])
			}
		}
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil || absoluteResets(h) {
		return
	}
	for what, ts := range map[string]interface {
		IsValid() bool
		AsTime() time.Time
	}{"requests": rl.GetRequestsResetTime(), "tokens": rl.GetTokensResetTime()} {
		if ts.IsValid() && ts.AsTime().Before(date) {
			report(PropRateLimit, "%s reset %s before the answer's Date %s", what, ts.AsTime(), date)
		}
	}
}

// extendedValues adds the numbers and strings of v (a meta.extended
// value) to kept, as their decimal or string forms.
func extendedValues(v any, kept map[string]bool) {
	switch x := v.(type) {
	case float64:
		kept[strconv.FormatFloat(x, 'f', -1, 64)] = true
	case string:
		kept[strings.TrimSpace(x)] = true
	case []any:
		for _, e := range x {
			extendedValues(e, kept)
		}
	case map[string]any:
		for _, e := range x {
			extendedValues(e, kept)
		}
	}
}

// absoluteResets: the resets are times as sent (Anthropic's
// anthropic-ratelimit-*-reset, RFC 3339), when the provider's bucket is
// full again as computed when the request began: for a bucket nearly full
// that is before the answer's Date (by the call's duration), and kept as
// sent.
func absoluteResets(h http.Header) bool {
	for k, v := range h {
		if rateLimitHeader(k) && strings.HasSuffix(strings.ToLower(k), "-reset") {
			if _, err := time.Parse(time.RFC3339, strings.TrimSpace(v[0])); err == nil {
				return true
			}
		}
	}
	return false
}

func checkUsage(want *SaidUsage, meta *llmrelayv1.ResponseMeta, report func(string, string, ...any)) {
	got := meta.GetUsage()
	if got == nil && want.zero() && len(meta.GetWarnings()) > 0 {
		return // a usage of zeros is no count, and a warning says so
	}
	if got == nil {
		report(PropUsage, "the body reports usage, meta has none")
		return
	}
	cmp := func(field string, w *int64, g int32) {
		if w != nil && int64(g) != min(max(*w, 0), 1<<31-1) {
			report(PropUsage, "%s %d, the body says %d", field, g, *w)
		}
	}
	cmp("input_tokens", want.Input, got.GetInputTokens())
	cmp("output_tokens", want.Output, got.GetOutputTokens())
	cmp("cached_input_tokens", want.Cached, got.GetCachedInputTokens())
	cmp("reasoning_tokens", want.Reasoning, got.GetReasoningTokens())
	cmp("cache_creation_input_tokens", want.CacheCreation, got.GetCacheCreationInputTokens())
	// The contract's normalization: input includes the cache reads and
	// writes, output the reasoning, total both (or the provider's own
	// larger total: provider.UsageTotal).
	if in := got.GetInputTokens(); int64(got.GetCachedInputTokens())+int64(got.GetCacheCreationInputTokens()) > int64(in) {
		report(PropUsage, "cached %d + cache creation %d input tokens exceed input_tokens %d", got.GetCachedInputTokens(), got.GetCacheCreationInputTokens(), in)
	}
	if got.GetReasoningTokens() > got.GetOutputTokens() {
		report(PropUsage, "reasoning_tokens %d exceed output_tokens %d", got.GetReasoningTokens(), got.GetOutputTokens())
	}
	if int64(got.GetTotalTokens()) < min(int64(got.GetInputTokens())+int64(got.GetOutputTokens()), 1<<31-1) {
		report(PropUsage, "total_tokens %d below input %d + output %d", got.GetTotalTokens(), got.GetInputTokens(), got.GetOutputTokens())
	}
	// The provider's own total is the answer's where it is at least input
	// + output (provider.UsageTotal): a total the body sends is never lost
	// nor made up.
	if t := want.Total; t != nil && *t > 0 {
		sum := min(int64(got.GetInputTokens())+int64(got.GetOutputTokens()), 1<<31-1)
		if w := max(min(*t, 1<<31-1), sum); int64(got.GetTotalTokens()) != w {
			report(PropUsage, "total_tokens %d, the body's total is %d (input + output %d)", got.GetTotalTokens(), *t, sum)
		}
	}
	// No count is negative.
	for name, n := range map[string]int32{"input": got.GetInputTokens(), "output": got.GetOutputTokens(), "total": got.GetTotalTokens(),
		"cached": got.GetCachedInputTokens(), "cache creation": got.GetCacheCreationInputTokens(), "reasoning": got.GetReasoningTokens()} {
		if n < 0 {
			report(PropUsage, "%s tokens %d are negative", name, n)
		}
	}
}

func checkFinish(said *SaidAnswer, res *provider.Result, rerr error, report func(string, string, ...any)) {
	if rerr != nil {
		return
	}
	meta := res.Meta
	fr := meta.GetFinishReason()
	if said.Stream && !said.Terminal && len(meta.GetWarnings()) == 0 &&
		(fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS) {
		report(PropFinish, "the stream has no terminal marker, the answer ends %v without a warning", fr)
	}
	if said.Finish != "" && fr == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		report(PropFinish, "the body's finish reason %q maps to no finish reason", said.Finish)
	}
}

// checkCut: the stream cut before its terminal marker is not an answer
// that ends normally without a warning.
func checkCut(p provider.Provider, req *provider.Request, where string, report func(string, string, ...any)) {
	st, err := p.Stream(context.Background(), req)
	if err != nil {
		return
	}
	res, err := provider.FoldStream(st)
	if err != nil {
		return
	}
	fr := res.Meta.GetFinishReason()
	if len(res.Meta.GetWarnings()) == 0 && (fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS) {
		report(PropFinish, "cut %s its terminal marker, the stream ends %v without a warning", where, fr)
	}
}

// terminalMarkers are, per format, the texts of the events that end a
// stream: the cut copy of a recording ends before the first one.
var terminalMarkers = map[Wire][]*regexp.Regexp{
	WireChat:      {regexp.MustCompile(`"finish_reason"\s*:\s*"`), regexp.MustCompile(`(?m)^data:\s*\[DONE\]`)},
	WireResponses: {regexp.MustCompile(`"type"\s*:\s*"response\.(completed|incomplete|failed)"`)},
	WireAnthropic: {regexp.MustCompile(`"type"\s*:\s*"message_stop"`)},
	WireGemini:    {regexp.MustCompile(`"finishReason"\s*:\s*"`)},
	WireOllama:    {regexp.MustCompile(`"done"\s*:\s*true`)},
}

// cutBeforeTerminal is rec with its body cut before the event (SSE event
// or NDJSON line) holding its format's first terminal marker, and cut
// inside it, just after the marker.
func cutBeforeTerminal(w Wire, rec Recording) (before, inside Recording, ok bool) {
	at, end := -1, -1
	for _, re := range terminalMarkers[w] {
		if loc := re.FindIndex(rec.Body); loc != nil && (at < 0 || loc[0] < at) {
			at, end = loc[0], loc[1]
		}
	}
	if at <= 0 {
		return rec, rec, false
	}
	// Back to the start of the event: after the blank line before it
	// (SSE), or the line's start (NDJSON).
	start := 0
	seps := []string{"\n\n", "\n\r\n"}
	if w == WireOllama {
		seps = []string{"\n"}
	}
	for _, sep := range seps {
		if i := bytes.LastIndex(rec.Body[:at], []byte(sep)); i >= 0 {
			start = max(start, i+len(sep))
		}
	}
	if start <= 0 {
		return rec, rec, false
	}
	cut := func(n int) Recording {
		return Recording{Status: rec.Status, Header: rec.Header.Clone(), Body: bytes.Clone(rec.Body[:n])}
	}
	return cut(start), cut(end), true
}

// cutFinish: an answer the provider cut (the token limit, a filter),
// whose last call the adapters mark invalid even where its arguments
// parse: they may be a prefix that happens to (provider.ToolCallsFinish).
func cutFinish(fr llmrelayv1.FinishReason) bool {
	return fr == llmrelayv1.FinishReason_FINISH_REASON_LENGTH || fr == llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
}

func checkCalls(said *SaidAnswer, got []*llmrelayv1.ToolCall, cut bool, report func(string, string, ...any)) {
	var wantIDs, gotIDs []string
	for _, c := range said.Calls {
		if c.ID != "" {
			wantIDs = append(wantIDs, c.ID)
		}
	}
	for _, c := range got {
		gotIDs = append(gotIDs, c.GetCallId())
	}
	// Every id the body sends, in order, among the answer's call ids
	// (Gemini and Ollama calls without one get ids the gateway made).
	j := 0
	for _, id := range wantIDs {
		for j < len(gotIDs) && gotIDs[j] != id {
			j++
		}
		if j == len(gotIDs) {
			report(PropToolCalls, "call ids %q, the body's are %q", gotIDs, wantIDs)
			break
		}
		j++
	}
	if len(said.Calls) != len(got) {
		report(PropToolCalls, "%d tool calls, the body has %d", len(got), len(said.Calls))
	}
	for i, c := range got {
		if valid := IsJSONObject(c.GetArguments()); valid != c.GetArgumentsValid() && !(cut && !c.GetArgumentsValid()) {
			report(PropToolCalls, "call %d: arguments_valid %v for arguments %q", i, c.GetArgumentsValid(), c.GetArguments())
		}
		if i >= len(said.Calls) {
			continue
		}
		want := said.Calls[i]
		if want.Name != "" && c.GetName() != want.Name {
			report(PropToolCalls, "call %d: name %q, the body's is %q", i, c.GetName(), want.Name)
		}
		switch {
		case want.Partial:
		case want.Deltas:
			if c.GetArguments() != want.Args && !(want.Args == "" && c.GetArguments() == "{}") {
				report(PropToolCalls, "call %d: arguments %q, the deltas joined are %q", i, c.GetArguments(), want.Args)
			}
		case !sameJSON(c.GetArguments(), want.Args):
			report(PropToolCalls, "call %d: arguments %q, the body's are %q", i, c.GetArguments(), want.Args)
		}
	}
}

// sameJSON: a and b are the same JSON value, or the same text.
func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func checkText(said *SaidAnswer, m *llmrelayv1.Message, report func(string, string, ...any)) {
	var text, reasoning strings.Builder
	for _, p := range m.GetParts() {
		switch {
		case p.GetReasoning() != nil:
			reasoning.WriteString(p.GetReasoning().GetText())
		default:
			if _, ok := p.GetKind().(*llmrelayv1.Part_Text); ok {
				text.WriteString(p.GetText())
			}
		}
	}
	saidText, saidReasoning := said.Text, said.Reasoning
	if i := strings.Index(saidReasoning, "__ENCRYPTED_REASONING__"); i >= 0 {
		// Venice's grok models append the encrypted reasoning to the
		// reasoning text; the adapter keeps it as the signature.
		saidReasoning = saidReasoning[:i]
	}
	if t, r, ok := splitThink(saidText); ok {
		// Inline <think> blocks: the adapters' reasoning (think.go).
		saidText, saidReasoning = t, saidReasoning+r
	}
	if text.String() != saidText {
		report(PropText, "text %s, the body's is %s", Shorten(text.String()), Shorten(saidText))
	}
	if (said.ReasoningRead || saidReasoning != "") && noSpace(reasoning.String()) != noSpace(saidReasoning) {
		report(PropText, "reasoning %s, the body's is %s", Shorten(reasoning.String()), Shorten(saidReasoning))
	}
}

// splitThink splits a text that begins with a <think> block into the
// text outside the block and the reasoning inside it.
func splitThink(s string) (text, reasoning string, ok bool) {
	rest := strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(rest, "<think>") {
		// A closing tag alone: the server opened the block in the
		// prompt's template (Together's Qwen3).
		if end := strings.Index(s, "</think>"); end >= 0 && !strings.Contains(s[:end], "<think>") {
			return s[end+len("</think>"):], s[:end], true
		}
		return s, "", false
	}
	rest = rest[len("<think>"):]
	end := strings.Index(rest, "</think>")
	if end < 0 {
		return "", rest, true
	}
	return rest[end+len("</think>"):], rest[:end], true
}

// Shorten quotes s, cut to 200 bytes for a report.
func Shorten(s string) string {
	return fmt.Sprintf("%q (%d bytes)", provider.Shorten(s, 200), len(s))
}

func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// SaidAnswer is what a recording's body says, read from its bytes.
type SaidAnswer struct {
	Stream     bool
	ResponseID string
	// Model: the model the body says answered (last one sent).
	Model     string
	Usage     *SaidUsage // the last usage reported, nil when none
	Calls     []SaidCall
	Text      string
	Reasoning string
	// ReasoningRead: the format's reasoning was read (compare it).
	ReasoningRead bool
	// Terminal: the stream has its format's terminal marker.
	Terminal bool
	// Finish: the last finish reason the body sends.
	Finish string
	// events are the body's JSON objects (stream events, or the one
	// object of a unary body).
	events []map[string]any
}

// SaidUsage are the token counts a body reports, normalized as the
// contract's Usage (nil: not reported).
type SaidUsage struct {
	Input, Output, Cached, Reasoning, CacheCreation *int64
	// Total: the body's own total (nil: none sent).
	Total *int64
}

func (u *SaidUsage) zero() bool {
	for _, n := range []*int64{u.Input, u.Output, u.Cached, u.Reasoning, u.CacheCreation} {
		if n != nil && *n != 0 {
			return false
		}
	}
	return true
}

// SaidCall is a tool call of a body.
type SaidCall struct {
	ID   string
	Name string
	Args string
	// Deltas: Args are argument deltas joined (compared byte for byte),
	// else a JSON value (compared as JSON).
	Deltas bool
	// Partial: the arguments came as Gemini's partialArgs, which this
	// reader does not assemble (not compared).
	Partial bool
}

// Said reads what the body of rec says in format w. ok is false when the
// body is not an answer of that format (an error body, another format).
func Said(w Wire, rec Recording) (*SaidAnswer, bool) {
	ct := strings.ToLower(rec.Header.Get("Content-Type"))
	stream := strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, "application/x-ndjson")
	var events []map[string]any
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		r := sse.NewReader(bytes.NewReader(rec.Body))
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			d := bytes.TrimSpace(ev.Data)
			if string(d) == "[DONE]" {
				events = append(events, map[string]any{"[DONE]": true})
				continue
			}
			var m map[string]any
			if json.Unmarshal(d, &m) == nil {
				events = append(events, m)
			}
		}
	case strings.HasPrefix(ct, "application/x-ndjson") || (w == WireOllama && bytes.Count(bytes.TrimSpace(rec.Body), []byte("\n{")) > 0 && json.Valid(firstLine(rec.Body))):
		stream = true
		for _, line := range bytes.Split(rec.Body, []byte("\n")) {
			var m map[string]any
			if json.Unmarshal(bytes.TrimSpace(line), &m) == nil {
				events = append(events, m)
			}
		}
	case strings.HasPrefix(ct, "application/json"):
		var m map[string]any
		if json.Unmarshal(rec.Body, &m) != nil || m["error"] != nil {
			return nil, false
		}
		events = []map[string]any{m}
	default:
		return nil, false
	}
	if len(events) == 0 {
		return nil, false
	}
	s := &SaidAnswer{Stream: stream, events: events}
	var ok bool
	switch w {
	case WireChat:
		ok = s.chat(events)
	case WireResponses:
		ok = s.responses(events)
	case WireAnthropic:
		ok = s.anthropic(events)
	case WireGemini:
		ok = s.gemini(events)
	case WireOllama:
		ok = s.ollama(events)
	}
	return s, ok
}

func firstLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// JSON accessors: the value at a path of object keys, or nil.
func at(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := at(v, path...).(string)
	return s
}

func num(v any, path ...string) *int64 {
	f, ok := at(v, path...).(float64)
	if !ok {
		return nil
	}
	n := int64(f)
	return &n
}

func list(v any, path ...string) []any {
	l, _ := at(v, path...).([]any)
	return l
}

func add(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	n := *a + *b
	return &n
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *SaidAnswer) chat(events []map[string]any) bool {
	answer := false
	byIndex := map[float64]int{}
	for _, e := range events {
		if e["[DONE]"] != nil {
			s.Terminal = true
			continue
		}
		if e["choices"] == nil && e["usage"] == nil {
			continue
		}
		answer = true
		if s.ResponseID == "" {
			s.ResponseID = str(e, "id")
		}
		if m := str(e, "model"); m != "" {
			s.Model = m
		}
		if u, ok := e["usage"].(map[string]any); ok {
			s.Usage = chatUsage(u)
		}
		for _, c := range list(e, "choices") {
			if idx, _ := at(c, "index").(float64); idx != 0 {
				continue // the first choice is the answer
			}
			if fr := str(c, "finish_reason"); fr != "" {
				s.Finish = fr
				s.Terminal = true
			}
			msg := at(c, "message")
			if s.Stream {
				msg = at(c, "delta")
			}
			s.chatContent(at(msg, "content"))
			for _, k := range []string{"reasoning_content", "reasoning"} {
				if r, ok := at(msg, k).(string); ok {
					s.Reasoning += r
					s.ReasoningRead = true
					break
				}
			}
			if fc := at(msg, "function_call"); fc != nil {
				// The legacy function call: one call, no id.
				if len(s.Calls) == 0 || !s.Stream {
					s.Calls = append(s.Calls, SaidCall{Deltas: true})
				}
				s.Calls[len(s.Calls)-1].Args += str(fc, "arguments")
			}
			tcs := list(msg, "tool_calls")
			if one, ok := at(msg, "tool_calls").(map[string]any); ok {
				tcs = []any{one} // TGI's single call
			}
			for pos, tc := range tcs {
				if !s.Stream {
					s.Calls = append(s.Calls, chatCall(tc))
					continue
				}
				idx, ok := at(tc, "index").(float64)
				if !ok {
					idx = float64(pos) // calls without an index: their place in the list
				}
				i, seen := byIndex[idx]
				if !seen || (str(tc, "id") != "" && s.Calls[i].ID != "" && str(tc, "id") != s.Calls[i].ID) {
					i = len(s.Calls)
					byIndex[idx] = i
					s.Calls = append(s.Calls, SaidCall{Deltas: true})
				}
				if s.Calls[i].ID == "" {
					s.Calls[i].ID = str(tc, "id")
				}
				if s.Calls[i].Name == "" {
					s.Calls[i].Name = str(tc, "function", "name") + str(tc, "custom", "name")
				}
				s.Calls[i].Args += str(tc, "function", "arguments") + str(tc, "custom", "input")
			}
		}
	}
	return answer
}

// chatUsage reads a chat completion's usage. Output includes the
// reasoning: where the body counts it apart from completion_tokens (xAI:
// total_tokens = prompt + completion + reasoning; a top-level
// reasoning_tokens above completion_tokens, Perplexity's, or one the total
// counts beside completion_tokens, GitHub Copilot's Gemini), it is added.
func chatUsage(u any) *SaidUsage {
	su := &SaidUsage{Input: num(u, "prompt_tokens"), Output: num(u, "completion_tokens"),
		Cached: num(u, "prompt_tokens_details", "cached_tokens"), Reasoning: num(u, "completion_tokens_details", "reasoning_tokens")}
	if su.Cached == nil {
		su.Cached = num(u, "prompt_cache_hit_tokens") // DeepSeek's
	}
	prompt, total := num(u, "prompt_tokens"), num(u, "total_tokens")
	if r := su.Reasoning; r != nil && *r > 0 && su.Output != nil && prompt != nil && total != nil && *total == *prompt+*su.Output+*r {
		su.Output = add(su.Output, r)
	}
	if r := num(u, "reasoning_tokens"); r != nil && su.Reasoning == nil && at(u, "completion_tokens_details") == nil {
		su.Reasoning = r
		apart := prompt != nil && total != nil && su.Output != nil && *r > 0 && *total == *prompt+*su.Output+*r // Copilot's Gemini
		if su.Output != nil && (*r > *su.Output || apart) {
			su.Output = add(su.Output, r)
		}
	}
	if r := su.Reasoning; r != nil && su.Output != nil && *r > *su.Output {
		su.Reasoning = su.Output // capped at the output they are part of, with a warning
	}
	su.Total = total
	return su
}

// chatCall reads a whole chat completion's tool call: function arguments
// as text (or a JSON value some servers send), a custom tool's input.
func chatCall(tc any) SaidCall {
	c := SaidCall{ID: str(tc, "id"), Name: str(tc, "function", "name") + str(tc, "custom", "name")}
	switch a := at(tc, "function", "arguments").(type) {
	case string:
		c.Args, c.Deltas = a, true
	case nil:
		if in, ok := at(tc, "custom", "input").(string); ok {
			c.Args, c.Deltas = in, true
		} else if p := at(tc, "function", "parameters"); p != nil {
			c.Args = compact(p) // TGI's
		}
	default:
		c.Args = compact(a)
	}
	return c
}

// chatContent adds a message's content: a string, or a list of parts
// (Mistral's text and thinking chunks).
func (s *SaidAnswer) chatContent(c any) {
	switch c := c.(type) {
	case string:
		s.Text += c
	case []any:
		for _, part := range c {
			switch str(part, "type") {
			case "text":
				s.Text += str(part, "text")
			case "thinking":
				s.ReasoningRead = true
				for _, t := range list(part, "thinking") {
					s.Reasoning += str(t, "text")
				}
			}
		}
	}
}

func (s *SaidAnswer) responses(events []map[string]any) bool {
	answer := false
	s.ReasoningRead = true
	readResponse := func(r any) {
		if id := str(r, "id"); id != "" {
			s.ResponseID = id
		}
		if m := str(r, "model"); m != "" {
			s.Model = m
		}
		if u, ok := at(r, "usage").(map[string]any); ok {
			s.Usage = &SaidUsage{Input: num(u, "input_tokens"), Output: num(u, "output_tokens"),
				Cached: num(u, "input_tokens_details", "cached_tokens"), Reasoning: num(u, "output_tokens_details", "reasoning_tokens"),
				Total: num(u, "total_tokens")}
		}
		if st := str(r, "status"); st == "incomplete" {
			s.Finish = st
		}
	}
	readItems := func(items []any, text, calls bool) {
		for _, it := range items {
			switch str(it, "type") {
			case "message":
				if text {
					for _, c := range list(it, "content") {
						if str(c, "type") == "output_text" {
							s.Text += str(c, "text")
						}
					}
				}
			case "reasoning":
				if text {
					for _, k := range []string{"summary", "content"} {
						for _, c := range list(it, k) {
							s.Reasoning += str(c, "text")
						}
					}
				}
			case "function_call", "custom_tool_call":
				if calls {
					s.Calls = append(s.Calls, SaidCall{ID: str(it, "call_id"), Name: str(it, "name"), Args: str(it, "arguments") + str(it, "input"), Deltas: true})
				}
			}
		}
	}
	if !s.Stream {
		e := events[0]
		if str(e, "object") != "response" {
			return false
		}
		readResponse(e)
		readItems(list(e, "output"), true, true)
		return true
	}
	textDeltas, reasoningDeltas := false, false
	var final any
	callAt := map[string]int{} // item id → call
	for _, e := range events {
		typ := str(e, "type")
		if !strings.HasPrefix(typ, "response.") {
			continue
		}
		answer = true
		switch typ {
		case "response.created", "response.in_progress":
			readResponse(at(e, "response"))
		case "response.completed", "response.incomplete", "response.failed":
			s.Terminal = true
			final = at(e, "response")
			readResponse(final)
		case "response.output_text.delta":
			textDeltas = true
			s.Text += str(e, "delta")
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			reasoningDeltas = true
			s.Reasoning += str(e, "delta")
		case "response.output_item.added":
			if it := at(e, "item"); str(it, "type") == "function_call" || str(it, "type") == "custom_tool_call" {
				callAt[str(it, "id")] = len(s.Calls)
				s.Calls = append(s.Calls, SaidCall{ID: str(it, "call_id"), Name: str(it, "name"), Args: str(it, "arguments") + str(it, "input"), Deltas: true})
			}
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			if i, ok := callAt[str(e, "item_id")]; ok {
				s.Calls[i].Args += str(e, "delta")
			}
		}
	}
	if !textDeltas && !reasoningDeltas && final != nil {
		readItems(list(final, "output"), true, false)
	}
	return answer
}

func (s *SaidAnswer) anthropic(events []map[string]any) bool {
	var input, output, read, creation, thinking *int64
	// The compaction iterations' counts, which the top-level counts leave
	// out and the usage includes (the request's tokens): the last report.
	var comp [4]*int64
	readUsage := func(u any) {
		if u == nil {
			return
		}
		if its := list(u, "iterations"); its != nil {
			comp = [4]*int64{}
			for _, it := range its {
				if str(it, "type") == "compaction" {
					for i, k := range []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
						comp[i] = add(comp[i], num(it, k))
					}
				}
			}
		}
		set := func(dst **int64, v *int64) {
			if v != nil {
				*dst = v
			}
		}
		set(&input, num(u, "input_tokens"))
		set(&output, num(u, "output_tokens"))
		set(&read, num(u, "cache_read_input_tokens"))
		set(&creation, num(u, "cache_creation_input_tokens"))
		set(&thinking, num(u, "output_tokens_details", "thinking_tokens"))
	}
	readBlock := func(b any) {
		switch str(b, "type") {
		case "text":
			s.Text += str(b, "text")
		case "thinking":
			s.Reasoning += str(b, "thinking")
		case "tool_use":
			args := ""
			if !s.Stream {
				args = compact(at(b, "input"))
			}
			s.Calls = append(s.Calls, SaidCall{ID: str(b, "id"), Name: str(b, "name"), Args: args, Deltas: s.Stream})
		}
	}
	s.ReasoningRead = true
	answer := false
	if !s.Stream {
		e := events[0]
		if str(e, "type") != "message" {
			return false
		}
		s.ResponseID = str(e, "id")
		s.Model = str(e, "model")
		s.Finish = str(e, "stop_reason")
		readUsage(at(e, "usage"))
		for _, b := range list(e, "content") {
			readBlock(b)
		}
		answer = true
	}
	blockCall := map[float64]int{}
	blockInput := map[float64]string{}
	for _, e := range events {
		if !s.Stream {
			break
		}
		idx, _ := at(e, "index").(float64)
		switch str(e, "type") {
		case "message_start":
			answer = true
			s.ResponseID = str(e, "message", "id")
			s.Model = str(e, "message", "model")
			readUsage(at(e, "message", "usage"))
			// A message_start that already holds content (a resumed
			// turn): whole blocks, tool inputs as JSON values.
			s.Stream = false
			for _, b := range list(e, "message", "content") {
				readBlock(b)
			}
			s.Stream = true
		case "content_block_start":
			b := at(e, "content_block")
			if str(b, "type") == "tool_use" {
				blockCall[idx] = len(s.Calls)
				blockInput[idx] = compact(at(b, "input"))
			}
			readBlock(b)
		case "content_block_delta":
			d := at(e, "delta")
			switch str(d, "type") {
			case "text_delta":
				s.Text += str(d, "text")
			case "thinking_delta":
				s.Reasoning += str(d, "thinking")
			case "input_json_delta":
				if i, ok := blockCall[idx]; ok {
					s.Calls[i].Args += str(d, "partial_json")
				}
			}
		case "content_block_stop":
			// A tool_use block without argument deltas: its input as
			// content_block_start gave it.
			if i, ok := blockCall[idx]; ok && s.Calls[i].Args == "" && blockInput[idx] != "{}" {
				s.Calls[i].Args, s.Calls[i].Deltas = blockInput[idx], false
			}
		case "message_delta":
			if fr := str(e, "delta", "stop_reason"); fr != "" {
				s.Finish = fr
			}
			readUsage(at(e, "usage"))
		case "message_stop":
			s.Terminal = true
		}
	}
	if input != nil || output != nil || read != nil || creation != nil {
		input, output, read, creation = add(input, comp[0]), add(output, comp[1]), add(read, comp[2]), add(creation, comp[3])
		in := add(add(input, read), creation)
		if thinking != nil && output != nil && *thinking > *output {
			thinking = output // capped at the output they are part of, with a warning
		}
		s.Usage = &SaidUsage{Input: in, Output: output, Cached: read, CacheCreation: creation, Reasoning: thinking}
	}
	return answer
}

func (s *SaidAnswer) gemini(events []map[string]any) bool {
	answer := false
	continuing := false // the last call said willContinue
	s.ReasoningRead = true
	for _, e := range events {
		if e["candidates"] == nil && e["usageMetadata"] == nil {
			continue
		}
		answer = true
		if id := str(e, "responseId"); id != "" && s.ResponseID == "" {
			s.ResponseID = id
		}
		if m := str(e, "modelVersion"); m != "" {
			s.Model = m
		}
		if u, ok := e["usageMetadata"].(map[string]any); ok {
			prompt := num(u, "promptTokenCount")
			var in *int64
			if prompt != nil && *prompt != 0 {
				in = add(prompt, num(u, "toolUsePromptTokenCount"))
			}
			s.Usage = &SaidUsage{Input: in, Output: add(num(u, "candidatesTokenCount"), num(u, "thoughtsTokenCount")),
				Cached: num(u, "cachedContentTokenCount"), Reasoning: num(u, "thoughtsTokenCount"), Total: num(u, "totalTokenCount")}
			if s.Usage.Output == nil && in == nil {
				s.Usage = nil
			}
		}
		for _, c := range list(e, "candidates") {
			if idx, _ := at(c, "index").(float64); idx != 0 {
				continue
			}
			if fr := str(c, "finishReason"); fr != "" {
				s.Finish = fr
				s.Terminal = true
			}
			for _, p := range list(c, "content", "parts") {
				if fc := at(p, "functionCall"); fc != nil {
					more, _ := at(fc, "willContinue").(bool)
					if continuing && str(fc, "name") == "" {
						continuing = more // partialArgs of the call
						continue
					}
					continuing = more
					if more || at(fc, "partialArgs") != nil {
						s.Calls = append(s.Calls, SaidCall{ID: str(fc, "id"), Name: str(fc, "name"), Partial: true})
						continue
					}
					args := "{}"
					if a := at(fc, "args"); a != nil {
						args = compact(a)
					}
					s.Calls = append(s.Calls, SaidCall{ID: str(fc, "id"), Name: str(fc, "name"), Args: args})
					continue
				}
				if t, ok := at(p, "text").(string); ok {
					if th, _ := at(p, "thought").(bool); th {
						s.Reasoning += t
					} else {
						s.Text += t
					}
				}
			}
		}
	}
	return answer
}

func (s *SaidAnswer) ollama(events []map[string]any) bool {
	answer := false
	s.ReasoningRead = true
	for _, e := range events {
		if e["done"] == nil && e["message"] == nil && e["response"] == nil {
			continue
		}
		answer = true
		if m := str(e, "model"); m != "" {
			s.Model = m
		}
		if d, _ := e["done"].(bool); d {
			s.Terminal = true
			s.Finish = str(e, "done_reason")
			in, out := num(e, "prompt_eval_count"), num(e, "eval_count")
			if in != nil || out != nil {
				s.Usage = &SaidUsage{Input: in, Output: out}
			}
		}
		s.Text += str(e, "message", "content") + str(e, "response")
		s.Reasoning += str(e, "message", "thinking") + str(e, "thinking")
		for _, tc := range list(e, "message", "tool_calls") {
			args := compact(at(tc, "function", "arguments"))
			if a, ok := at(tc, "function", "arguments").(string); ok {
				args = a
			}
			s.Calls = append(s.Calls, SaidCall{ID: str(tc, "id"), Name: str(tc, "function", "name"), Args: args})
		}
	}
	return answer
}
