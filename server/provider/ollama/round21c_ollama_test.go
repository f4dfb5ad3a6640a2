package ollama

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound21cMemoryLoadError: Ollama's 500 when the model does not fit
// the free memory (testdata/error_500_memory.http, hand-built from the
// body users quote: "model requires more system memory (3.7 GiB) than is
// available (3.6 GiB)"). It stays unavailable, with the message, but is
// not retried on the same server: the same call fails until memory is
// freed. The runner's crash (error_500) is still retried.
func TestRound21cMemoryLoadError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file   string
		advice provider.RetryAdvice
		msg    string
	}{
		{"error_500_memory", provider.RetryDiscouraged, "model requires more system memory (3.7 GiB) than is available (3.6 GiB)"},
		{"error_500", provider.RetryUnsaid, "llama runner process has terminated: exit status 2"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.file+".http"))
			_, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v", err)
			}
			if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 500 || pe.Message != tc.msg || pe.ShouldRetry != tc.advice {
				t.Errorf("error %+v", pe)
			}
		})
	}
}
