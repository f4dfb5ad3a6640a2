package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r26AllEfforts is every effort the contract names.
var r26AllEfforts = []llmrelayv1.ReasoningEffort{
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX,
}

// r26Effort builds a request of effort to base, Chat Completions or
// Responses, and returns the effort it sends ("" for none) and the
// warnings.
func r26Effort(t *testing.T, base string, e llmrelayv1.ReasoningEffort, responses bool) (string, []string) {
	t.Helper()
	return r26EffortModel(t, base, "qwen3", e, responses)
}

// r26EffortModel is r26Effort for a request to model.
func r26EffortModel(t *testing.T, base, model string, e llmrelayv1.ReasoningEffort, responses bool) (string, []string) {
	t.Helper()
	req := r22Ask(model, "q")
	req.Options.ReasoningEffort = e
	p := newHostProvider(t, base, "http://unused")
	var body []byte
	var warnings []string
	var err error
	if responses {
		body, warnings, err = p.buildResponsesRequest(req, false)
	} else {
		body, warnings, err = p.buildChatRequest(req, false)
	}
	if err != nil {
		t.Fatalf("%s %v: %v", base, e, err)
	}
	var m struct {
		ReasoningEffort string `json:"reasoning_effort"`
		Reasoning       struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if responses {
		return m.Reasoning.Effort, warnings
	}
	return m.ReasoningEffort, warnings
}

// TestRound26OllamaEffortAccepted: Ollama's OpenAI-compatible routes take
// reasoning_effort (and /v1/responses reasoning.effort) "high", "medium",
// "low" or "none", newer versions "max" too, and answer any other value
// with a 400 (ollama/ollama openai/openai.go FromChatRequest: "invalid
// reasoning value: '%s' (must be \"high\", \"medium\", \"low\", or
// \"none\")"; responses.go the same). **Bug:** XHIGH and MAX went as
// "xhigh" and MINIMAL as "minimal" to an Ollama host: refused every time.
// Now every effort sent to a local Ollama (its port) is one every version
// takes, XHIGH and MAX as high with a warning that says so (and how to
// ask a newer Ollama for max); ollama.com, which names max, gets max.
func TestRound26OllamaEffortAccepted(t *testing.T) {
	t.Parallel()
	every := []string{"", "high", "medium", "low", "none"}
	for _, responses := range []bool{false, true} {
		for _, e := range r26AllEfforts {
			got, warnings := r26Effort(t, "http://localhost:11434/v1", e, responses)
			if !slices.Contains(every, got) {
				t.Errorf("responses %v %v: sent %q, which an Ollama refuses", responses, e, got)
			}
			lowered := e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH || e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX || e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL
			if lowered != (len(warnings) == 1) || len(warnings) > 1 {
				t.Errorf("responses %v %v: warnings %q", responses, e, warnings)
			}
			if lowered && !strings.Contains(warnings[0], effortName(e)) {
				t.Errorf("responses %v %v: warning %q names not the effort asked for", responses, e, warnings[0])
			}
		}
		for _, tc := range []struct {
			e    llmrelayv1.ReasoningEffort
			want string
		}{
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL, "low"},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, "high"},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, "high"},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, "none"},
		} {
			if got, _ := r26Effort(t, "http://127.0.0.1:11434/v1", tc.e, responses); got != tc.want {
				t.Errorf("responses %v %v: %q, want %q", responses, tc.e, got, tc.want)
			}
		}
		for _, e := range []llmrelayv1.ReasoningEffort{llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX} {
			if got, warnings := r26Effort(t, "https://ollama.com/v1", e, responses); got != "max" || len(warnings) != 0 {
				t.Errorf("ollama.com responses %v %v: %q %q, want max", responses, e, got, warnings)
			}
		}
	}
	// A server on another port is not taken for Ollama: OpenAI's levels.
	if got, _ := r26Effort(t, "http://localhost:8000/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, false); got != "xhigh" {
		t.Errorf("vLLM xhigh: %q", got)
	}
}

// TestRound26OllamaEffortRefusal: the 400 an Ollama answers a level it
// does not take (its /v1 error object: openai.NewError, type
// invalid_request_error for a 400, param and code null; the message
// FromChatRequest's) is an invalid request, not retried.
func TestRound26OllamaEffortRefusal(t *testing.T) {
	t.Parallel()
	body := `{"error":{"message":"invalid reasoning value: 'xhigh' (must be \"high\", \"medium\", \"low\", or \"none\")","type":"invalid_request_error","param":null,"code":null}}` + "\n"
	resp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
	e := newTestProvider(t, kOpenAI, "http://127.0.0.1:1").httpError(resp, "qwen3", secrets{})
	if e.Kind != provider.KindInvalidRequest || pipeline.Retryable(e) || !strings.Contains(e.Message, "invalid reasoning value") {
		t.Errorf("kind %v, retryable %v, %q", e.Kind, pipeline.Retryable(e), e.Message)
	}
}

// TestRound26MoonshotEffort: Moonshot's reasoning_effort names low, high
// and max (kimi-k3 and K3.1; platform.kimi.ai use-reasoning-effort) and
// ignores a value it does not name. **Bug:** XHIGH and MAX went as
// "xhigh", ignored (with a warning that called xhigh the top level);
// MINIMAL as "minimal", ignored. Now XHIGH and MAX go as max, MINIMAL as
// low with a warning; the thinking switch as before.
func TestRound26MoonshotEffort(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"https://api.moonshot.ai/v1", "https://api.moonshot.cn/v1", "https://api.kimi.com/coding/v1"} {
		for _, tc := range []struct {
			e    llmrelayv1.ReasoningEffort
			want string
			warn bool
		}{
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL, "low", true},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, "low", false},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, "high", false},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, "max", false},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, "max", false},
			{llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, "", false},
		} {
			got, warnings := r26Effort(t, base, tc.e, false)
			if got != tc.want || (len(warnings) == 1) != tc.warn || len(warnings) > 1 {
				t.Errorf("%s %v: %q %q, want %q (warning %v)", base, tc.e, got, warnings, tc.want, tc.warn)
			}
		}
		fields, _ := r25thinkWire(t, base, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX)
		if fields != `{"reasoning_effort":"max","thinking":{"type":"enabled"}}` {
			t.Errorf("%s MAX: %s", base, fields)
		}
	}
}

// TestRound26OllamaV1EmbedCutWarned: Ollama's /v1/embeddings cuts an input
// longer than the model's context without a word (its middleware leaves
// /api/embed's truncate unset, true; the route takes no switch), so an
// answer through it may hold the vector of part of a text. **Bug:** such
// an answer was relayed with no warning. maruel/genai's recorded answer
// (real_maruel_ollama_v1_embed_dims32_kitten) from an Ollama host (its
// port): short inputs, which no model's context cuts, get no warning; a
// request whose third input is longer than any input that surely fits
// gets one naming it; a host that is not Ollama's gets none.
func TestRound26OllamaV1EmbedCutWarned(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Quantum field theory predicts particle interactions. ", 6)
	d := int32(32)
	for _, tc := range []struct {
		base   string
		inputs []string
		warn   string
	}{
		{"http://localhost:11434/v1", []string{"A kitten plays with yarn.", "A cat plays with string.", "Quantum field theory predicts particle interactions."}, ""},
		{"http://localhost:11434/v1", []string{"A kitten plays with yarn.", "A cat plays with string.", long}, "input 2 may be embedded from its beginning only"},
		{"", []string{"A kitten plays with yarn.", "A cat plays with string.", long}, ""},
	} {
		srv := providertest.Replay(t, providertest.Load(t, td("real_maruel_ollama_v1_embed_dims32_kitten.http")))
		p := newTestProvider(t, kOpenAI, srv.URL)
		if tc.base != "" {
			p = newHostProvider(t, tc.base, srv.URL)
		}
		res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "all-minilm", Inputs: tc.inputs, Dimensions: &d})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Embeddings) != 3 {
			t.Fatalf("%d embeddings", len(res.Embeddings))
		}
		w := res.Meta.GetWarnings()
		if (tc.warn == "") != (len(w) == 0) || len(w) > 1 || (tc.warn != "" && !strings.Contains(w[0], tc.warn)) {
			t.Errorf("%s %d bytes: warnings %q, want %q", tc.base, len(tc.inputs[2]), w, tc.warn)
		}
	}
}

// TestRound26OllamaEmbedCutBound: the warning's bound: an input of
// ollamaEmbedSafeBytes bytes fits any Ollama embedding model's context, one
// byte more may not; several long inputs are counted, the first named.
func TestRound26OllamaEmbedCutBound(t *testing.T) {
	t.Parallel()
	fits, over := strings.Repeat("é", ollamaEmbedSafeBytes/2), strings.Repeat("a", ollamaEmbedSafeBytes+1)
	if w := ollamaEmbedCutWarning([]string{fits, "", fits}); w != "" {
		t.Errorf("fits: %q", w)
	}
	if w := ollamaEmbedCutWarning([]string{fits, over}); !strings.Contains(w, ": input 1 may be") {
		t.Errorf("one over: %q", w)
	}
	if w := ollamaEmbedCutWarning([]string{fits, over, fits, over}); !strings.Contains(w, "2 inputs (the first: input 1) may be") {
		t.Errorf("two over: %q", w)
	}
}

// TestRound26OllamaGptOssNone: Ollama reads reasoning_effort "none" as
// think false, which gpt-oss ignores ("Passing true/false is ignored for
// that model": docs.ollama.com, capabilities/thinking), so it thought at
// its default while the caller asked for none, and nothing said so. Now
// gpt-oss gets its least level, low, with a warning, on Chat Completions
// and Responses, as the ollama adapter sends its think; other models keep
// none, which turns their thinking off.
func TestRound26OllamaGptOssNone(t *testing.T) {
	t.Parallel()
	for _, responses := range []bool{false, true} {
		got, warnings := r26EffortModel(t, "http://localhost:11434/v1", "gpt-oss:20b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, responses)
		if got != "low" || len(warnings) != 1 || !strings.Contains(warnings[0], "gpt-oss cannot turn thinking off") {
			t.Errorf("responses %v: %q %q, want low with a warning", responses, got, warnings)
		}
		if got, warnings := r26EffortModel(t, "https://ollama.com/v1", "gpt-oss:120b-cloud", llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, responses); got != "high" || len(warnings) != 0 {
			t.Errorf("responses %v high: %q %q", responses, got, warnings)
		}
		// gpt-oss's top level is high, on ollama.com too.
		if got, warnings := r26EffortModel(t, "https://ollama.com/v1", "gpt-oss:120b-cloud", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, responses); got != "high" || len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning_effort MAX: gpt-oss's highest") {
			t.Errorf("responses %v gpt-oss max on ollama.com: %q %q", responses, got, warnings)
		}
		if got, warnings := r26EffortModel(t, "http://localhost:11434/v1", "qwen3:8b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, responses); got != "none" || len(warnings) != 0 {
			t.Errorf("responses %v qwen3 none: %q %q", responses, got, warnings)
		}
		// Not Ollama: none as asked.
		if got, _ := r26EffortModel(t, "http://localhost:8000/v1", "openai/gpt-oss-20b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, responses); got != "none" {
			t.Errorf("responses %v vLLM gpt-oss none: %q", responses, got)
		}
	}
}

// TestRound26OllamaV1UsageLimit: ollama.com's 429 for a spent plan (the
// ollama package's error_429_usage_hourly and _session, the words users
// quote in continuedev/continue#9233 and #11444) through Ollama's /v1
// routes, in the error object its OpenAI middleware writes (type
// api_error, null param and code; hand-built:
// testdata/dialect_ollama_v1_err_429_usage_*.http). **Bug:** it was a rate
// limit retried seconds later, to meet the same limit, coded api_error;
// the native route's same words are insufficient_quota. Now the same here:
// not retried, a reason to fall back, unary and streamed. Another 429
// stays a rate limit to retry.
func TestRound26OllamaV1UsageLimit(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"dialect_ollama_v1_err_429_usage_hourly", "dialect_ollama_v1_err_429_usage_session"} {
		for _, stream := range []bool{false, true} {
			srv := providertest.Replay(t, providertest.Load(t, td(name+".http")))
			p := newTestProvider(t, kOpenAI, srv.URL)
			var err error
			if stream {
				_, err = p.Stream(context.Background(), simpleRequest("gpt-oss:120b-cloud"))
			} else {
				_, err = p.Generate(context.Background(), simpleRequest("gpt-oss:120b-cloud"))
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s stream %v: %v", name, stream, err)
			}
			if pe.Kind != provider.KindRateLimited || pe.Code != "insufficient_quota" || pe.HTTPStatus != 429 || !strings.Contains(pe.Message, "usage limit") {
				t.Errorf("%s stream %v: %+v", name, stream, pe)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream %v: retryable %v, fallback-worthy %v", name, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
	body := `{"error":{"message":"too many requests","type":"api_error","param":null,"code":null}}` + "\n"
	srv := providertest.Replay(t, providertest.Recording{Status: 429, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gpt-oss:120b-cloud"))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindRateLimited || pe.Code == "insufficient_quota" || !pipeline.Retryable(err) {
		t.Errorf("another 429: %+v", pe)
	}
}
