package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The enum and usage audit (enums19): every FinishReason and BlockedReason
// of python-genai's google/genai/types.py (with the values only js-genai or
// the API reference list: MISSING_THOUGHT_SIGNATURE, MALFORMED_RESPONSE),
// and every UsageMetadata field (ModalityTokenCount lists, trafficType)
// is sent through the adapter, unary and streamed, and its place in the
// contract checked.

type e19Answer struct {
	msg  *llmrelayv1.Message
	meta *llmrelayv1.ResponseMeta
	err  error
}

// e19Both answers unary through Generate and stream (SSE) through Stream;
// the stream's metas are merged and its last usage kept, as the gateway
// does.
func e19Both(t *testing.T, unary, stream string) (u, s e19Answer) {
	t.Helper()
	srv := providertest.Replay(t,
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(unary)},
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(stream)})
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("hi"))}}
	res, err := p.Generate(context.Background(), req)
	u.err = err
	if res != nil {
		u.msg, u.meta = res.Message, res.Meta
	}
	st, err := p.Stream(context.Background(), req)
	if err != nil {
		s.err = err
		return u, s
	}
	defer st.Close()
	evs, err := drain(t, st)
	if !errors.Is(err, io.EOF) {
		s.err = err
	}
	f := foldEvents(evs)
	f.meta.Usage = f.usage
	s.msg, s.meta = foldMessage(t, evs), f.meta
	return u, s
}

func e19Check(t *testing.T, what string, a e19Answer, raw string, want llmrelayv1.FinishReason) {
	t.Helper()
	if a.err != nil {
		t.Errorf("%s: %v", what, a.err)
		return
	}
	if got := a.meta.GetProviderFinishReason(); got != raw {
		t.Errorf("%s: provider_finish_reason %q, want %q", what, got, raw)
	}
	if got := a.meta.GetFinishReason(); got != want {
		t.Errorf("%s: finish_reason %v, want %v", what, got, want)
	}
}

const e19Usage = `{"promptTokenCount":1000,"candidatesTokenCount":200,"totalTokenCount":1370,"cachedContentTokenCount":600,` +
	`"toolUsePromptTokenCount":50,"thoughtsTokenCount":120,` +
	`"promptTokensDetails":[{"modality":"TEXT","tokenCount":700},{"modality":"IMAGE","tokenCount":300}],` +
	`"cacheTokensDetails":[{"modality":"TEXT","tokenCount":600}],"candidatesTokensDetails":[{"modality":"TEXT","tokenCount":200}],` +
	`"toolUsePromptTokensDetails":[{"modality":"TEXT","tokenCount":50}],"trafficType":"ON_DEMAND"}`

func e19Unary(id, finish, content, usage string) string {
	c := `{"index":0` + content
	if finish != "" {
		c += `,"finishReason":` + finish
	}
	return `{"candidates":[` + c + `}],"usageMetadata":` + usage + `,"modelVersion":"gemini-2.5-flash","responseId":"e19` + id + `"}`
}

// e19Stream: a first chunk with the content (when any), then the finish
// with the usage.
func e19Stream(id, finish, content, usage string) string {
	var b strings.Builder
	if content != "" {
		b.WriteString(`data: {"candidates":[{"index":0` + content + `}],"modelVersion":"gemini-2.5-flash","responseId":"e19s` + id + `"}` + "\r\n\r\n")
	}
	b.WriteString(`data: {"candidates":[{"index":0,"finishReason":` + finish + `}],"usageMetadata":` + usage +
		`,"modelVersion":"gemini-2.5-flash","responseId":"e19s` + id + `"}` + "\r\n\r\n")
	return b.String()
}

const (
	e19Text = `,"content":{"role":"model","parts":[{"text":"hi"}]}`
	e19Call = `,"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]}`
)

// TestEnums19FinishReasons: every finishReason, unary and streamed: the raw
// value in provider_finish_reason; SAFETY and every other filter (the
// image ones, SPII, BLOCKLIST, PROHIBITED_CONTENT, RECITATION, Vertex AI's
// MODEL_ARMOR) CONTENT_FILTER; MAX_TOKENS LENGTH; the failures of
// generation (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL,
// TOO_MANY_TOOL_CALLS, MISSING_THOUGHT_SIGNATURE, MALFORMED_RESPONSE,
// NO_IMAGE, IMAGE_OTHER, LANGUAGE, OTHER) and future values OTHER: never
// STOP, with or without content; a number (enum-encoding=int) is read as
// its name.
func TestEnums19FinishReasons(t *testing.T) {
	t.Parallel()
	filter := llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	other := llmrelayv1.FinishReason_FINISH_REASON_OTHER
	for _, c := range []struct {
		finish, raw, content string
		want                 llmrelayv1.FinishReason
	}{
		{`"STOP"`, "STOP", e19Text, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{`"STOP"`, "STOP", e19Call, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS},
		{`"MAX_TOKENS"`, "MAX_TOKENS", e19Text, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
		{`"MAX_TOKENS"`, "MAX_TOKENS", e19Call, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
		{`"SAFETY"`, "SAFETY", "", filter},
		{`"SAFETY"`, "SAFETY", e19Text, filter},
		{`"RECITATION"`, "RECITATION", e19Text, filter},
		{`"BLOCKLIST"`, "BLOCKLIST", "", filter},
		{`"PROHIBITED_CONTENT"`, "PROHIBITED_CONTENT", "", filter},
		{`"SPII"`, "SPII", e19Text, filter},
		{`"IMAGE_SAFETY"`, "IMAGE_SAFETY", "", filter},
		{`"IMAGE_PROHIBITED_CONTENT"`, "IMAGE_PROHIBITED_CONTENT", "", filter},
		{`"IMAGE_RECITATION"`, "IMAGE_RECITATION", "", filter},
		{`"MODEL_ARMOR"`, "MODEL_ARMOR", "", filter},
		{`"LANGUAGE"`, "LANGUAGE", "", other},
		{`"OTHER"`, "OTHER", "", other},
		{`"MALFORMED_FUNCTION_CALL"`, "MALFORMED_FUNCTION_CALL", "", other},
		{`"UNEXPECTED_TOOL_CALL"`, "UNEXPECTED_TOOL_CALL", "", other},
		{`"TOO_MANY_TOOL_CALLS"`, "TOO_MANY_TOOL_CALLS", e19Call, other},
		{`"MISSING_THOUGHT_SIGNATURE"`, "MISSING_THOUGHT_SIGNATURE", "", other},
		{`"MALFORMED_RESPONSE"`, "MALFORMED_RESPONSE", "", other},
		{`"NO_IMAGE"`, "NO_IMAGE", e19Text, other},
		{`"IMAGE_OTHER"`, "IMAGE_OTHER", "", other},
		{`"FINISH_REASON_UNSPECIFIED"`, "FINISH_REASON_UNSPECIFIED", e19Text, other},
		{`"A_REASON_ADDED_LATER"`, "A_REASON_ADDED_LATER", e19Text, other},
		{`3`, "SAFETY", "", filter},
		{`99`, "99", e19Text, other},
	} {
		id := strings.ToLower(strings.NewReplacer("_", "", `"`, "").Replace(c.finish))
		u, s := e19Both(t, e19Unary(id, c.finish, c.content, e19Usage), e19Stream(id, c.finish, c.content, e19Usage))
		what := c.raw
		if c.content == e19Call {
			what += " (call)"
		}
		e19Check(t, what+" unary", u, c.raw, c.want)
		e19Check(t, what+" stream", s, c.raw, c.want)
	}
}

// TestEnums19Usage: every UsageMetadata field lands, unary and streamed:
// input = promptTokenCount (with the cached part) + toolUsePromptTokenCount,
// output = candidates + thoughts, cachedContentTokenCount in
// cached_input_tokens, thoughtsTokenCount in reasoning_tokens; the
// per-modality lists one usage_details entry per modality, trafficType
// as sent, toolUsePromptTokenCount also as gemini.tool_use_prompt_tokens.
func TestEnums19Usage(t *testing.T) {
	t.Parallel()
	u, s := e19Both(t, e19Unary("usage", `"STOP"`, e19Text, e19Usage), e19Stream("usage", `"STOP"`, e19Text, e19Usage))
	want := &llmrelayv1.Usage{InputTokens: 1050, OutputTokens: 320, TotalTokens: 1370, CachedInputTokens: 600, ReasoningTokens: 120}
	const details = `{"cacheTokensDetails.TEXT":600,"candidatesTokensDetails.TEXT":200,"promptTokensDetails.IMAGE":300,` +
		`"promptTokensDetails.TEXT":700,"toolUsePromptTokensDetails.TEXT":50,"trafficType":"ON_DEMAND"}`
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if !proto.Equal(a.meta.GetUsage(), want) {
			t.Errorf("%s usage %v, want %v", what, a.meta.GetUsage(), want)
		}
		if got := compactProto(t, a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != details {
			t.Errorf("%s usage_details %s, want %s", what, got, details)
		}
		if got := a.meta.GetExtended().GetFields()[extToolUsePromptTokens].GetNumberValue(); got != 50 {
			t.Errorf("%s %s %v", what, extToolUsePromptTokens, got)
		}
	}
}

// TestEnums19BlockReasons: promptFeedback.blockReason without candidates,
// every BlockedReason and a future one, unary and streamed: a content
// filter error whose code and extended.gemini.block_reason are the reason
// as sent, its meta keeping the prompt's usage.
func TestEnums19BlockReasons(t *testing.T) {
	t.Parallel()
	const usage = `{"promptTokenCount":9,"totalTokenCount":9,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}]}`
	for _, r := range []string{"SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY", "MODEL_ARMOR", "JAILBREAK",
		"BLOCKED_REASON_UNSPECIFIED", "A_REASON_ADDED_LATER"} {
		body := `{"promptFeedback":{"blockReason":"` + r + `","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]},` +
			`"usageMetadata":` + usage + `,"modelVersion":"gemini-2.5-flash","responseId":"e19block` + strings.ToLower(r) + `"}`
		u, s := e19Both(t, body, "data: "+body+"\r\n\r\n")
		for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
			var pe *provider.Error
			if !errors.As(a.err, &pe) {
				t.Errorf("%s %s: error %v, want a provider error", r, what, a.err)
				continue
			}
			if pe.Kind != provider.KindContentFilter || pe.Code != r || pe.Extended[extBlockReason] != r {
				t.Errorf("%s %s: kind %v code %q extended %v", r, what, pe.Kind, pe.Code, pe.Extended)
			}
		}
		if got := u.err.(*provider.Error).Meta.GetUsage().GetInputTokens(); got != 9 {
			t.Errorf("%s unary: error meta input tokens %d", r, got)
		}
		if got := s.meta.GetUsage().GetInputTokens(); got != 9 {
			t.Errorf("%s stream: usage before the error %v", r, s.meta.GetUsage())
		}
	}
}

// TestEnums19ToolUsePromptAfterFinish: a stream whose usage comes in a
// chunk after the finish chunk (as the usage-only chunk of
// testdata/real_stream_usage_only_chunk.http) keeps
// toolUsePromptTokenCount as gemini.tool_use_prompt_tokens, as the unary
// answer does; it was only read from the finish chunk's usage.
func TestEnums19ToolUsePromptAfterFinish(t *testing.T) {
	t.Parallel()
	stream := `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],` +
		`"modelVersion":"gemini-2.5-flash","responseId":"e19late"}` + "\r\n\r\n" +
		`data: {"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":200,"toolUsePromptTokenCount":40,"totalTokenCount":1240},` +
		`"modelVersion":"gemini-2.5-flash","responseId":"e19late"}` + "\r\n\r\n" +
		`data: {"usageMetadata":` + e19Usage + `,"modelVersion":"gemini-2.5-flash","responseId":"e19late"}` + "\r\n\r\n"
	u, s := e19Both(t, e19Unary("late", `"STOP"`, e19Text, e19Usage), stream)
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if got := a.meta.GetExtended().GetFields()[extToolUsePromptTokens].GetNumberValue(); got != 50 {
			t.Errorf("%s %s %v, want 50", what, extToolUsePromptTokens, got)
		}
		if got := a.meta.GetUsage().GetInputTokens(); got != 1050 {
			t.Errorf("%s input tokens %d", what, got)
		}
	}
}

// TestEnums19OddShapes: a finishReason or a usage count of another JSON
// type fails no answer, unary or streamed. A count re-encoded by a proxy
// ("1000", 200.0) is read; one that is no count is left out of Usage,
// kept in usage_details as sent and said in a warning; a finishReason of
// another kind is kept as its JSON text, a finish of OTHER. Both failed
// the whole answer (bad_response) before.
func TestEnums19OddShapes(t *testing.T) {
	t.Parallel()
	const usage = `{"promptTokenCount":"1000","candidatesTokenCount":200.0,"thoughtsTokenCount":{"n":1},"totalTokenCount":1200}`
	const finish = `{"reason": "STOP"}`
	u, s := e19Both(t, e19Unary("odd", finish, e19Text, usage), e19Stream("odd", finish, e19Text, usage))
	want := &llmrelayv1.Usage{InputTokens: 1000, OutputTokens: 200, TotalTokens: 1200}
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		e19Check(t, what, a, `{"reason":"STOP"}`, llmrelayv1.FinishReason_FINISH_REASON_OTHER)
		if a.err != nil {
			continue
		}
		if !proto.Equal(a.meta.GetUsage(), want) {
			t.Errorf("%s usage %v, want %v", what, a.meta.GetUsage(), want)
		}
		if got := compactProto(t, a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != `{"thoughtsTokenCount.n":1}` {
			t.Errorf("%s usage_details %s", what, got)
		}
		if w := a.meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], `"usageMetadata.thoughtsTokenCount" holds a value of an unexpected type`) {
			t.Errorf("%s warnings %q", what, w)
		}
	}
}
