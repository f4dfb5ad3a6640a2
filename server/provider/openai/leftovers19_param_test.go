package openai

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestLeftovers19ParamWithoutParam: a refusal whose "param" is null still
// names the field it blames where the body says which, the BadRequest
// field violation the server's status carries (as "param" gives it for
// OpenAI's own 400s): FastAPI's first location in the body (Mistral's
// 422 inside "message", a FastAPI server's {"detail": […]}), the field
// OpenAI's message quotes ("Invalid 'input[0]': …"). Bodies that name no
// field leave it empty. The three were sent without one.
func TestLeftovers19ParamWithoutParam(t *testing.T) {
	t.Parallel()
	embed := func(t *testing.T, url string) error {
		_, err := newTestProvider(t, kOpenAI, url).Embed(context.Background(), &provider.EmbedRequest{Model: "m", Inputs: []string{"Hello, world!"}})
		return err
	}
	chat := func(t *testing.T, url string) error {
		_, err := newHostProvider(t, "https://api.mistral.ai/v1", url).Generate(context.Background(), chatRequests(t)["chat_plain"])
		return err
	}
	cases := []struct {
		name  string
		call  func(*testing.T, string) error
		param string
	}{
		{"embed_error_openai_400_input_length", embed, "input[0]"},
		{"embed_error_422_detail", embed, "input"},
		{"dialect_mistral_err_422_extra_forbidden", chat, "max_completion_tokens"},
		// No field named: none made up.
		{"dialect_mistral_err_400_tool_call_id", chat, ""},
		{"embed_error_vllm_400_context", embed, ""},
		{"dialect_deepseek_err_content_risk", chat, ""},
		{"real_pyd_embed_voyage_model_not_supported", embed, ""},
		// A "param" the body gives is kept as it is.
		{"real_mira_azure_v1_chat_audio_rejected", chat, "messages[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			if e := providerError(t, tc.call(t, srv.URL)); e.Param != tc.param {
				t.Errorf("param %q, want %q (%s)", e.Param, tc.param, renderErr(e))
			}
		})
	}
	for msg, want := range map[string]string{
		"Invalid 'messages[0]'. Content blocks are expected to be either text or image_url type.":                          "messages[0]",
		"Invalid type for 'messages[1].content': expected one of a string or array of objects, but got an object instead.": "messages[1].content",
		"Missing required parameter: 'tools[0].function'.":                                                                 "tools[0].function",
		"Invalid value: 'tool'. Supported values are: 'system', 'assistant'.":                                              "",
		"This model's maximum context length is 512 tokens.":                                                               "",
	} {
		if got := paramFromMessage(msg); got != want {
			t.Errorf("paramFromMessage(%q) = %q, want %q", msg, got, want)
		}
	}
}

// TestLeftovers19ContextOverflowAnyStatus: an input too long for the
// context is one answer whatever the status a server gives it: Ollama's
// words behind its OpenAI-compatible endpoint (400 or, from older
// versions, 500), llama.cpp's typed 400 (exceed_context_size_error, as
// its stream's error event is read) and its 500 for an embedding input
// over the batch (embed_error_llamacpp_500_too_large): a context-length
// error, and a 500 of one is not retried.
func TestLeftovers19ContextOverflowAnyStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
	}{
		{400, `{"error":{"message":"the input length exceeds the context length","type":"invalid_request_error","param":null,"code":null}}`},
		{500, `{"error":{"message":"the input length exceeds the context length","type":"api_error","param":null,"code":null}}`},
		{500, `{"error":{"message":"input after truncation exceeds maximum context length","type":"api_error","param":null,"code":null}}`},
		{500, `{"error":{"message":"entire prompt removed by truncation","type":"api_error","param":null,"code":null}}`},
		{400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4391,"n_ctx":4096}}`},
		{500, string(providertest.Load(t, td("embed_error_llamacpp_500_too_large.http")).Body)},
	}
	for _, tc := range cases {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(tc.body))}
		e := newTestProvider(t, kOpenAI, "http://127.0.0.1:1").httpError(resp, "m", secrets{})
		if e.Kind != provider.KindContextLength || pipeline.Retryable(e) {
			t.Errorf("%d %s: kind %v, retryable %v", tc.status, tc.body, e.Kind, pipeline.Retryable(e))
		}
	}
}

// TestLeftovers19ExtraBodyReplacedWarned: extra_body replacing a value the
// request gave (Chat's and Responses' temperature) with another is done as
// asked, with a warning naming the field; the same value, a new field and
// the adapter's own encoding_format (embeddings) are not warned. The
// replacement was silent.
func TestLeftovers19ExtraBodyReplacedWarned(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "https://api.openai.com/v1")
	warned := provider.ReplacedWarning("temperature")
	for _, tc := range []struct {
		extra string
		warn  bool
	}{
		{`{"temperature": 0.9}`, true},
		{`{"temperature": 0.2, "prediction": {"type": "content", "content": "Paris"}}`, false},
	} {
		req := simpleRequest("gpt-4o-mini")
		req.Options = &llmrelayv1.GenerationOptions{Temperature: proto.Float64(0.2)}
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}
		_, chat, err := p.buildChatRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		req.Format = formatResponses
		_, resp, err := p.buildResponsesRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(chat, warned) != tc.warn || slices.Contains(resp, warned) != tc.warn {
			t.Errorf("%s: chat warnings %q, responses %q; want warned %v", tc.extra, chat, resp, tc.warn)
		}
	}
	_, warnings, err := p.buildEmbedRequest(&provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"a"},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"encoding_format": "float", "model": "text-embedding-3-large"}`}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{provider.ReplacedWarning("model")}; !slices.Equal(warnings, want) {
		t.Errorf("embeddings warnings %q, want %q", warnings, want)
	}
}
