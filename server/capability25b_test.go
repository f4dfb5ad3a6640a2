package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// capStep serves the recording at path (a provider package's fixture) as
// attempt 1 of format f: its status, headers and body, the request id
// header the harness expects in place of the fixture's own.
func capStep(t *testing.T, f f13Format, path string) f13Step {
	t.Helper()
	rec := providertest.Load(t, path)
	h := rec.Header.Clone()
	h.Del("Content-Length")
	if f.reqID != "" {
		h.Del(f.reqID)
	}
	return respond(rec.Status, merged(h, f.reqIDHeader(1)), string(rec.Body))
}

// TestRound25bCapabilityRefusals: the providers' refusals of a capability
// the deployment's model lacks (DeepSeek's "deepseek-reasoner does not
// support Function Calling", vLLM without a tool parser, OpenAI's "Invalid
// content type. image_url is only supported by certain models.", xAI's tool
// refusal, Anthropic's "'claude-3-5-sonnet-20241022' does not support
// thinking.", ollama.com's "this model does not support image input"
// through Ollama's Anthropic route, Gemini's "Function calling is not
// enabled for models/gemma-3-12b-it", Ollama's runner's "this model is
// missing data required for image input"; the provider packages' fixtures,
// cited in their testdata READMEs) reach the client as the gateway's own
// capability check answers: FailedPrecondition CAPABILITY_NOT_SUPPORTED
// with the provider's words and status, after one attempt (never
// retried); a routed model falls back to its next deployment, which
// serves the same request. They were InvalidArgument INVALID_REQUEST (the
// Ollama 500 too), which never falls back. A 400 in other words ("Thinking
// mode does not support this tool_choice") stays an invalid request and
// does not fall back.
func TestRound25bCapabilityRefusals(t *testing.T) {
	t.Parallel()
	ollamaNoVision := respond(500, hdr("Content-Type", "application/json; charset=utf-8", "x-request-id", "req-f13-1"),
		`{"error":"Failed to create new sequence: failed to process inputs: this model is missing data required for image input"}`)
	for _, tc := range []struct {
		name   string
		f      f13Format
		step   func(t *testing.T) f13Step
		status int
		words  string
	}{
		{"deepseek function calling", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/dialect_deepseek_err_400_function_calling.http")
		}, 400, "deepseek-reasoner does not support Function Calling"},
		{"vllm no tool parser", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/dialect_vllm_err_400_auto_tool_choice.http")
		}, 400, "--enable-auto-tool-choice and --tool-call-parser"},
		{"vllm not multimodal", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/dialect_vllm_err_400_not_multimodal.http")
		}, 400, "is not a multimodal model"},
		{"openai image_url", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/err_400_image_url_unsupported.http")
		}, 400, "image_url is only supported by certain models"},
		{"dashscope tool call", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/dialect_dashscope_err_400_tool_call_unsupported.http")
		}, 400, "The tool call is not supported"},
		{"openai reasoning_effort", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/err_400_reasoning_effort_unsupported.http")
		}, 400, "'reasoning_effort' is not supported with this model"},
		{"xai tools", openaiChat, func(t *testing.T) f13Step {
			return capStep(t, openaiChat, "provider/openai/testdata/dialect_xai_err_400_tools_unsupported.http")
		}, 400, "The model does not support tool use"},
		{"anthropic thinking", anthropicFormat, func(t *testing.T) f13Step {
			return capStep(t, anthropicFormat, "provider/anthropic/testdata/error_400_thinking_unsupported.http")
		}, 400, "does not support thinking"},
		{"ollama anthropic route image", anthropicFormat, func(t *testing.T) f13Step {
			return capStep(t, anthropicFormat, "provider/anthropic/testdata/ollama_400_image_unsupported.http")
		}, 400, "this model does not support image input"},
		{"gemini function calling", geminiFormat, func(t *testing.T) f13Step {
			return capStep(t, geminiFormat, "provider/gemini/testdata/error_400_function_calling_not_enabled.http")
		}, 400, "Function calling is not enabled for models/gemma-3-12b-it"},
		{"ollama no vision", ollamaFormat, func(*testing.T) f13Step { return ollamaNoVision }, 500, "missing data required for image input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, tc.step(t), tc.f.okStep(2))
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, clock)
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, tc.f, err, codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", 1, tc.status)
			if !strings.Contains(st.Message(), tc.words) {
				t.Errorf("message %q lost the provider's words", st.Message())
			}
			if up.requests() != 1 || len(clock.slept()) != 0 {
				t.Errorf("upstream %d, sleeps %v: a capability refusal is not retried", up.requests(), clock.slept())
			}

			first := f13Serve(t, tc.step(t))
			second := f13Serve(t, tc.f.okStep(2))
			c = f13StartRouted(t, tc.f, 3, first, second, clock)
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatalf("routed: %v", err)
			}
			if m := resp.GetMeta(); m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || second.requests() != 1 {
				t.Errorf("routed: meta %v, first %d, second %d", m, first.requests(), second.requests())
			}
		})
	}
	t.Run("other 400 words", func(t *testing.T) {
		t.Parallel()
		f := openaiChat
		body := `{"error":{"message":"Thinking mode does not support this tool_choice","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`
		first := f13Serve(t, respond(400, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), body))
		second := f13Serve(t, f.okStep(2))
		c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		st, info, _ := statusDetails(t, err)
		if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" || second.requests() != 0 {
			t.Errorf("got %v %s, second %d: an invalid request does not fall back", st.Code(), info.GetReason(), second.requests())
		}
	})
}

// TestRound25bBillingCode: OpenAI's 429 insufficient_quota whose code names
// the spent credit or limit (project_spend_limit_exceeded: the openai
// package's err_429_project_spend_limit, after help.openai.com's
// "Troubleshooting API usage and spend limits") reaches the caller with that
// code in the ErrorInfo's upstreamCode and as the QuotaFailure's quota id
// (it was insufficient_quota), ResourceExhausted after one attempt (a spent
// quota is not retried); a routed model falls back.
func TestRound25bBillingCode(t *testing.T) {
	t.Parallel()
	f := openaiChat
	step := func(t *testing.T) f13Step {
		return capStep(t, f, "provider/openai/testdata/err_429_project_spend_limit.http")
	}
	up := f13Serve(t, step(t), f.okStep(2))
	clock := &f13Clock{}
	c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
	_, err := c.Chat(context.Background(), chatReq13())
	st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
	_, info, _ := statusDetails(t, err)
	if got := info.GetMetadata()["upstreamCode"]; got != "project_spend_limit_exceeded" {
		t.Errorf("upstreamCode %q", got)
	}
	q := quotaFailure(st)
	if len(q.GetViolations()) != 1 || q.GetViolations()[0].GetQuotaId() != "project_spend_limit_exceeded" {
		t.Errorf("QuotaFailure %v", q)
	}
	if up.requests() != 1 || len(clock.slept()) != 0 || retryInfo(st) != nil {
		t.Errorf("upstream %d, sleeps %v, RetryInfo %v: a spent quota is not waited for", up.requests(), clock.slept(), retryInfo(st))
	}
	first := f13Serve(t, step(t))
	second := f13Serve(t, f.okStep(2))
	c = f13StartRouted(t, f, 3, first, second, clock)
	resp, err := c.Chat(context.Background(), chatReq13())
	if err != nil {
		t.Fatalf("routed: %v", err)
	}
	if m := resp.GetMeta(); m.GetProvider() != "second" || first.requests() != 1 {
		t.Errorf("routed: meta %v, first %d", m, first.requests())
	}
}
