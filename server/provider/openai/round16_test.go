package openai

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound16ZaiNetworkError: Z.ai's finish_reason "network_error" (the
// model's inference failed on the server, Zhipu's docs). It was a finish
// OTHER with the partial text, no word said; now, like DeepSeek's
// insufficient_system_resource, an error of kind unavailable (retried
// while nothing has been relayed) with the answer's id, model, usage and
// the request id Z.ai gives in the body. The stream relays what came
// before, its usage, then the error.
func TestRound16ZaiNetworkError(t *testing.T) {
	t.Parallel()
	const msg = "the provider interrupted the answer: its model inference failed (finish_reason network_error)"
	check := func(t *testing.T, err error, reqID string) *provider.Error {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		e := providerError(t, err)
		if e.Kind != provider.KindUnavailable || e.HTTPStatus != http.StatusOK || e.Code != "network_error" ||
			e.Message != msg || e.RequestID != reqID {
			t.Errorf("error %+v", e)
		}
		return e
	}
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		srv := providertest.ReplayFile(t, td("dialect_zai_network_error.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
		providertest.Golden(t, td("dialect_zai_network_error.golden"), []byte(renderErr(err)+"\n"))
		e := check(t, err, "20251117173015a4c2e9b1d07f3658")
		m := e.Meta
		if m.GetResponseId() != "20251117173015a4c2e9b1d07f3658" || m.GetResolvedModel() != "glm-4.5-air" ||
			m.GetProviderFinishReason() != "network_error" || m.GetProviderRequestId() != "20251117173015a4c2e9b1d07f3658" {
			t.Errorf("meta %v", m)
		}
		if u := m.GetUsage(); u.GetInputTokens() != 21 || u.GetOutputTokens() != 9 {
			t.Errorf("usage %v", u)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		srv := providertest.ReplayFile(t, td("dialect_zai_network_error_stream.http"))
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		evs, rendered, err := collect(t, s)
		providertest.Golden(t, td("dialect_zai_network_error_stream.golden"), rendered)
		// Z.ai's chunks carry no request_id and the answer no request-id
		// header: the error has none.
		check(t, err, "")
		var txt strings.Builder
		var usage *llmrelayv1.Usage
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventText:
				txt.WriteString(ev.Text)
			case provider.EventUsage:
				usage = ev.Usage
			case provider.EventMeta:
				if fr := ev.Meta.GetFinishReason(); fr != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
					t.Errorf("a finish %v was reported", fr)
				}
			}
		}
		if txt.String() != "The three primary colours" {
			t.Errorf("text %q", txt.String())
		}
		if usage.GetInputTokens() != 21 || usage.GetOutputTokens() != 4 {
			t.Errorf("usage %v", usage)
		}
	})
}

// TestRound16PaymentRequired: a 402 says the account's credits are spent
// (OpenRouter's documented "insufficient credits"; NVIDIA's expired cloud
// credits). It was an invalid request (the client saw InvalidArgument);
// now an exhausted quota, kind rate_limited with code
// insufficient_quota, as OpenAI's quota 429: not retried, given up for the
// next deployment.
func TestRound16PaymentRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, msg, reqID string }{
		{"dialect_openrouter_err_402", "Insufficient credits. Add more using https://openrouter.ai/credits", ""},
		{"dialect_nvidia_err_402", "Account 'Qm9vA1tx7cPZ': Cloud credits expired - Please contact NVIDIA representatives", "8c97e780-e881-42b8-a44c-ece2502c2bdd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
			if tc.name == "dialect_openrouter_err_402" { // the NVIDIA golden is TestRound14DialectFailures'
				providertest.Golden(t, td(tc.name+".golden"), []byte(renderErr(err)+"\n"))
			}
			if err == nil {
				t.Fatal("no error")
			}
			e := providerError(t, err)
			if e.Kind != provider.KindRateLimited || e.HTTPStatus != http.StatusPaymentRequired || e.Code != "insufficient_quota" ||
				e.Message != tc.msg || e.RequestID != tc.reqID {
				t.Errorf("error %+v", e)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("retryable %v, fallback-worthy %v: want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		})
	}
}

// TestRound16PaymentRequiredKeepsOwnCode: a 402 is a quota by its status
// (provider.KindForStatus); only a 402 read so is coded, and a code of the
// provider's own is kept.
func TestRound16PaymentRequiredKeepsOwnCode(t *testing.T) {
	t.Parallel()
	if k := provider.KindForStatus(http.StatusPaymentRequired); k != provider.KindRateLimited {
		t.Fatalf("KindForStatus(402) = %v", k)
	}
	e := &provider.Error{Kind: provider.KindRateLimited, HTTPStatus: http.StatusPaymentRequired, Code: "credits_expired"}
	paymentRequired(e)
	if e.Kind != provider.KindRateLimited || e.Code != "credits_expired" {
		t.Errorf("402 with a code: %+v", e)
	}
	e = &provider.Error{Kind: provider.KindRateLimited, HTTPStatus: http.StatusPaymentRequired, Code: "402"}
	paymentRequired(e)
	if e.Code != "insufficient_quota" {
		t.Errorf("402 coded with its status: %+v", e)
	}
	e = &provider.Error{Kind: provider.KindInvalidRequest, HTTPStatus: http.StatusBadRequest}
	paymentRequired(e)
	if e.Kind != provider.KindInvalidRequest || e.Code != "" {
		t.Errorf("400: %+v", e)
	}
	e = &provider.Error{Kind: provider.KindContentFilter, HTTPStatus: http.StatusPaymentRequired, Code: "402"}
	paymentRequired(e)
	if e.Kind != provider.KindContentFilter || e.Code != "402" {
		t.Errorf("402 refined otherwise: %+v", e)
	}
}

// upstreamOf is the upstream provider a meta reports ("" when none).
func upstreamOf(m *llmrelayv1.ResponseMeta) string {
	return m.GetExtended().GetFields()[extUpstreamProvider].GetStringValue()
}

// TestRound16UpstreamProvider: which upstream served a routed call, in
// meta.extended upstream_provider: OpenRouter's "provider" body field (on
// the answer and on every chunk: a stream reports it once) and Hugging
// Face's router's x-inference-provider header. It was dropped.
func TestRound16UpstreamProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, want string
		chunks     int // chunks naming the upstream (streams)
	}{
		{"real_fantasy_openrouter_gpt_5_thinking", "OpenAI", 0},
		{"real_pyd_openrouter_kimi_k2_5", "Moonshot AI", 0},
		{"dialect_hf_router_provider", "cerebras", 0},
		{"real_fantasy_openrouter_gpt_5_thinking_stream", "OpenAI", 109},
		{"real_fantasy_openrouter_glm_4_6_thinking_stream", "Z.AI", 67},
		{"dialect_hf_router_provider_stream", "cerebras", 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(td(tc.file + ".http"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(raw), `"provider":"`+tc.want+`"`); n != tc.chunks && tc.chunks > 0 {
				t.Fatalf("the recording names %q %d times, want %d", tc.want, n, tc.chunks)
			}
			srv := providertest.ReplayFile(t, td(tc.file+".http"))
			p := newTestProvider(t, kOpenAI, srv.URL)
			if !strings.HasSuffix(tc.file, "_stream") {
				res, err := p.Generate(context.Background(), chatRequests(t)["chat_plain"])
				if err != nil {
					t.Fatal(err)
				}
				if got := upstreamOf(res.Meta); got != tc.want {
					t.Errorf("upstream_provider %q, want %q", got, tc.want)
				}
				if tc.file == "dialect_hf_router_provider" {
					providertest.Golden(t, td(tc.file+".golden"), []byte(protoCompact(t, res.Meta)+"\n"))
				}
				return
			}
			s, err := p.Stream(context.Background(), chatRequests(t)["chat_plain"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if tc.file == "dialect_hf_router_provider_stream" {
				providertest.Golden(t, td(tc.file+".golden"), rendered)
			}
			var said []string
			for _, ev := range evs {
				if ev.Kind == provider.EventMeta {
					if u := upstreamOf(ev.Meta); u != "" {
						said = append(said, u)
					}
				}
			}
			if len(said) != 1 || said[0] != tc.want {
				t.Errorf("upstream_provider reported %q, want once %q", said, tc.want)
			}
		})
	}
}

// TestRound16UpstreamNotAString: a "provider" that is not a string (not
// OpenRouter's name) is none, with no warning, on both decoding paths.
func TestRound16UpstreamNotAString(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse([]byte(`{"id":"c1","object":"chat.completion","model":"m","provider":{"name":"x"},"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if u := upstreamOf(res.Meta); u != "" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("upstream %q, warnings %q", u, res.Meta.GetWarnings())
	}
}
