package ollama

import (
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24WholeAnswerToStream: a stream request answered with a whole
// JSON answer (a proxy or compatible server that ignored "stream") gives
// the answer the unary call reads from the same body, folded, for every
// 2xx JSON recording of this package.
func TestRound24WholeAnswerToStream(t *testing.T) {
	t.Parallel()
	n := providertest.WholeAnswers(t, filepath.Join("testdata", "*.http"), providertest.BenchRequest("llama3.2", "ollama"), func(url string) provider.Provider {
		p, err := New(testKey, WithBaseURL(url))
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	if n < 20 {
		t.Errorf("%d answers checked, want at least 20", n)
	}
}
