package openai

import (
	"context"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24SiliconFlowUnknownModel: SiliconFlow answers a model it does
// not serve with 400 {"code":20012,"message":"Model does not exist. Please
// check it carefully.","data":null}, unary and before a stream alike
// (dialect_siliconflow_err_400_model_does_not_exist, the body
// ErlichLiu/DeepClaude#111 quotes). **Bug:** an invalid request, where
// the same mistake is a not-found error from OpenAI and DashScope (404
// model_not_found) and from Mistral, Perplexity, DeepSeek and OpenRouter
// (refineKind): no fallback to a route that serves the model. Now not
// found, SiliconFlow's number kept as the code.
func TestRound24SiliconFlowUnknownModel(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("dialect_siliconflow_err_400_model_does_not_exist.http"))
		p := newHostProvider(t, "https://api.siliconflow.cn/v1", srv.URL)
		var err error
		if stream {
			_, err = p.Stream(context.Background(), r22Ask("deepseek-ai/deepseek-r1", "hi"))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("deepseek-ai/deepseek-r1", "hi"))
		}
		e := providerError(t, err)
		if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Code != "20012" ||
			e.Message != "Model does not exist. Please check it carefully." {
			t.Errorf("stream %v: %s", stream, renderErr(err))
		}
	}
}

// TestRound24GroqDecommissionedModel: Groq answers a model it has
// retired with 400 invalid_request_error, code model_decommissioned ("The
// model `llama-3.2-11b-vision-preview` has been decommissioned and is no
// longer supported. Please refer to …": dialect_groq_err_400_model_decommissioned,
// the body valentinfrlch/ha-llmvision#332 logs). **Bug:** an invalid
// request, though the model is no longer served anywhere on the route
// (Groq itself later answers such models 404 model_not_found): no
// fallback. Now not found, the code kept.
func TestRound24GroqDecommissionedModel(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("dialect_groq_err_400_model_decommissioned.http"))
		p := newHostProvider(t, "https://api.groq.com/openai/v1", srv.URL)
		var err error
		if stream {
			_, err = p.Stream(context.Background(), r22Ask("llama-3.2-11b-vision-preview", "hi"))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("llama-3.2-11b-vision-preview", "hi"))
		}
		e := providerError(t, err)
		if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Code != "model_decommissioned" ||
			e.RequestID != "req_01llmrelay400d3c0m9s5n1e7d2x" {
			t.Errorf("stream %v: %s", stream, renderErr(err))
		}
	}

	// The same error object in a 200 stream (an in-band error): its code
	// says not found too.
	p, err := New(testKey, WithBaseURL("https://api.groq.com/openai/v1"))
	if err != nil {
		t.Fatal(err)
	}
	s := streamFrom(p, `data: {"error":{"message":"The model `+"`x`"+` has been decommissioned and is no longer supported.","type":"invalid_request_error","code":"model_decommissioned"}}`+"\n\n")
	_, _, err = collect(t, s)
	if e := providerError(t, err); e.Kind != provider.KindNotFound || e.Code != "model_decommissioned" {
		t.Errorf("in-band: %s", renderErr(err))
	}
}

// TestRound24TogetherModelNotAvailable: Together answers a model it does
// not serve serverless with 400 invalid_request_error, code
// model_not_available ("Unable to access non-serverless model … Please
// visit … to create and start a new dedicated endpoint for the model.":
// dialect_together_err_400_model_not_available, the body
// HeyPuter/puter#3168 logs). **Bug:** an invalid request: no fallback to a
// route that serves the model. Now not found; the body's id is the
// request id.
func TestRound24TogetherModelNotAvailable(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("dialect_together_err_400_model_not_available.http"))
		p := newHostProvider(t, "https://api.together.xyz/v1", srv.URL)
		var err error
		if stream {
			_, err = p.Stream(context.Background(), r22Ask("mistralai/Mistral-Small-24B-Instruct-2501", "hi"))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("mistralai/Mistral-Small-24B-Instruct-2501", "hi"))
		}
		e := providerError(t, err)
		if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Code != "model_not_available" ||
			e.RequestID != "okkMWqL-2kFHot-a023f60e9b77ff7e" {
			t.Errorf("stream %v: %s", stream, renderErr(err))
		}
	}
}

// TestRound24HuggingFaceUnknownModel: Hugging Face's router answers a
// model it does not have with 400 invalid_request_error, param model,
// code model_not_found ("The requested model 'bad model' does not
// exist."), unary and for a stream (maruel/genai's recordings,
// real_maruel_hf_bad_model_err and _stream_error). **Bug:** an invalid
// request, its code model_not_found (OpenAI's own code for an unknown
// model, answered 404 there) read only in a 200 body. Now not found
// whatever the status, the request id X-Request-Id.
func TestRound24HuggingFaceUnknownModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reqID string
		stream      bool
	}{
		{"real_maruel_hf_bad_model_err", "fohf8hz3jMMmVCP8", false},
		{"real_maruel_hf_bad_model_stream_error", "hbfkjpsL8nFv2h--", true},
	} {
		srv := providertest.ReplayFile(t, td(tc.name+".http"))
		p := newHostProvider(t, "https://router.huggingface.co/v1", srv.URL)
		var err error
		if tc.stream {
			_, err = p.Stream(context.Background(), r22Ask("bad model", "Tell a short joke."))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("bad model", "Tell a short joke."))
		}
		e := providerError(t, err)
		if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Code != "model_not_found" || e.Param != "model" ||
			e.RequestID != tc.reqID || e.Message != "The requested model 'bad model' does not exist." {
			t.Errorf("%s: %s param %q", tc.name, renderErr(err), e.Param)
		}
	}
}

// TestRound24BasetenBadKey: Baseten's Model APIs refuse a key with 403
// {"error":"please check the api-key you provided"}, unary and for a
// stream alike (maruel/genai's recordings, real_maruel_baseten_bad_key_err).
// **Bug:** read by its status, permission denied, where the server says
// the key is wrong: the caller's credentials, unauthenticated, as a 401
// or Google's API_KEY_INVALID are.
func TestRound24BasetenBadKey(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("real_maruel_baseten_bad_key_err.http"))
		p := newHostProvider(t, "https://inference.baseten.co/v1", srv.URL)
		var err error
		if stream {
			_, err = p.Stream(context.Background(), r22Ask("deepseek-ai/DeepSeek-V3.1", "Tell a short joke."))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("deepseek-ai/DeepSeek-V3.1", "Tell a short joke."))
		}
		e := providerError(t, err)
		if e.Kind != provider.KindUnauthenticated || e.HTTPStatus != 403 || e.Message != "please check the api-key you provided" {
			t.Errorf("stream %v: %s", stream, renderErr(err))
		}
	}
}

// TestRound24HuggingFaceNoProvider: Hugging Face's router answers a model
// none of the account's enabled inference providers serves with 400
// "The requested model '…' is not supported by any provider you have
// enabled." (dialect_hf_err_400_model_not_supported, the status and
// message cline/cline#5098 quotes). **Bug:** an invalid request: no
// fallback to a route that serves the model. Now not found.
func TestRound24HuggingFaceNoProvider(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_hf_err_400_model_not_supported.http"))
	_, err := newHostProvider(t, "https://router.huggingface.co/v1", srv.URL).Generate(context.Background(), r22Ask("moonshotai/Kimi-K2-Instruct", "hi"))
	if e := providerError(t, err); e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Param != "model" || e.RequestID != "Lr24hfNoProv9q2w" {
		t.Errorf("%s", renderErr(err))
	}
}

// TestRound24PromptPastContext: four servers' words for a prompt longer
// than the model's context, each a 400. xAI: {"code":"Client specified an
// invalid argument","error":"This model's maximum prompt length is 131072
// but the request contains 136973 tokens."} (dialect_xai_err_400_prompt_length,
// the message cline/cline#3120 quotes, in xAI's error layout). DashScope:
// invalid_parameter_error "<400> InternalError.Algo.InvalidParameter:
// Range of input length should be [1, 983616]"
// (dialect_dashscope_err_400_input_length, the body
// agentscope-ai/QwenPaw#6255 logs). vLLM: BadRequestError "The decoder
// prompt (length 9000) is longer than the maximum model length of 8192.
// …" (dialect_vllm_err_400_decoder_prompt, the message its
// input_processor.py raises). Anthropic (its OpenAI-compatible
// endpoint): "input length and `max_tokens` exceed context limit: 199759
// + 8192 > 200000, …" (dialect_anthropic_compat_err_400_context_limit,
// the message continuedev/continue#6080 quotes; the anthropic adapter
// reads it so already). **Bug:** invalid requests, where every
// other server's overflow is a context-length error (a route with a
// larger window is tried). Now context-length errors.
func TestRound24PromptPastContext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, base, model, msg string }{
		{"dialect_xai_err_400_prompt_length", "https://api.x.ai/v1", "grok-3",
			"This model's maximum prompt length is 131072 but the request contains 136973 tokens."},
		{"dialect_dashscope_err_400_input_length", "https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3-max",
			"<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]"},
		{"dialect_anthropic_compat_err_400_context_limit", "https://api.anthropic.com/v1", "claude-sonnet-4-5",
			"input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"},
		{"dialect_vllm_err_400_decoder_prompt", "http://localhost:8000/v1", "Qwen/Qwen3-8B",
			"The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens."},
	} {
		srv := providertest.ReplayFile(t, td(tc.name+".http"))
		_, err := newHostProvider(t, tc.base, srv.URL).Generate(context.Background(), r22Ask(tc.model, "hi"))
		if e := providerError(t, err); e.Kind != provider.KindContextLength || e.HTTPStatus != 400 || e.Message != tc.msg {
			t.Errorf("%s: %s", tc.name, renderErr(err))
		}
	}
}

// TestRound24GitHubModelsTokensLimit: GitHub Models refuses an input past
// its per-request token cap with 413, code tokens_limit_reached ("Request
// body too large for gpt-4o model. Max size: 8000 tokens.":
// dialect_github_err_413_tokens_limit_reached, the body
// eslint/tsc-meetings#593 logs). **Bug:** an invalid request; the input
// does not fit this route, another with a larger window may take it: a
// context-length error now, the request id GitHub's.
func TestRound24GitHubModelsTokensLimit(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_github_err_413_tokens_limit_reached.http"))
	_, err := newHostProvider(t, "https://models.github.ai/inference", srv.URL).Generate(context.Background(), r22Ask("openai/gpt-4o", "hi"))
	if e := providerError(t, err); e.Kind != provider.KindContextLength || e.HTTPStatus != 413 || e.Code != "tokens_limit_reached" ||
		e.RequestID != "7C2E:3B91A4:24F1D0:2A8C3B:6866A1F3" || e.Message != "Request body too large for gpt-4o model. Max size: 8000 tokens." {
		t.Errorf("%s", renderErr(err))
	}
}
