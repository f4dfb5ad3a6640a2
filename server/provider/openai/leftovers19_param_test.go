package openai

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

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
