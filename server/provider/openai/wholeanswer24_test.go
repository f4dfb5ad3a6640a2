package openai

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24WholeAnswerToStream: a stream request answered with a whole
// JSON answer (a server that ignored "stream": LiteLLM's guardrail
// passthrough, proxies) was a bad response, an answer paid for and lost.
// Now every 2xx JSON recording of this package that a unary call of the
// same format reads as an answer gives the stream request the same
// answer, folded, with a warning.
func TestRound24WholeAnswerToStream(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"openai-chat", formatResponses} {
		req := simpleRequest("gpt-4o-mini")
		req.Format = format
		n := providertest.WholeAnswers(t, td("*.http"), req, func(url string) provider.Provider {
			return newTestProvider(t, kOpenAI, url)
		})
		if min := map[string]int{"openai-chat": 200, formatResponses: 50}[format]; n < min {
			t.Errorf("%s: %d answers checked, want at least %d", format, n, min)
		}
	}
}

// TestRound24WholeAnswerErrorsStay: a chat completion answering a
// Responses stream request is a bad response with the request id, not
// an empty answer (the unary call's answer too).
func TestRound24WholeAnswerErrorsStay(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, td("chat_plain.http"))
	for _, stream := range []bool{false, true} {
		p := newTestProvider(t, kOpenAI, providertest.Replay(t, rec).URL)
		req := simpleRequest("gpt-4o-mini")
		req.Format = formatResponses
		var err error
		if stream {
			_, err = p.Stream(context.Background(), req)
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || pe.RequestID != rec.Header.Get("X-Request-Id") {
			t.Errorf("stream %v: %v", stream, err)
		}
	}
}
