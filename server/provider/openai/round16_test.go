package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
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
