package ollama

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23SigninURL: a local Ollama asked for a cloud model while not
// signed in to ollama.com answers 401 {"error": "unauthorized",
// "signin_url": …} (ollama/ollama server/routes.go, ChatHandler and
// GenerateHandler; testdata/error_401_signin.http, hand-built, the URL's
// key made up). "unauthorized" alone left the caller guessing (users asked:
// continuedev/continue#11404, ollama/ollama#13776); the message now says to
// sign the server in, with the URL, which extended.signin_url keeps, unary
// and streamed. A 401 without it (a proxy's, error_401) keeps its word, and
// a signin_url off ollama.com is not passed on.
func TestRound23SigninURL(t *testing.T) {
	t.Parallel()
	const u = "https://ollama.com/connect?name=gpu-box&key=c3NoLWVkMjU1MTkgQUFBQUMzTnphQzFsWkRJMU5URTVBQUFBSUZha2VSb3VuZDIzVGVzdEtleU5vdEFSZWFsT25lMDAwMDAwMDAwMA"
	const want = "unauthorized (this Ollama server is not signed in to ollama.com, which its cloud models need: run `ollama signin` on it, or open " + u + ")"
	check := func(t *testing.T, err error, msg string, url string) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v", err)
		}
		if pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 401 || pe.Message != msg {
			t.Errorf("error %+v", pe)
		}
		if got, _ := pe.Extended[extSigninURL].(string); got != url {
			t.Errorf("extended %v", pe.Extended)
		}
	}
	srv := providertest.ReplayFile(t, td("error_401_signin.http"))
	_, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
	check(t, err, want, u)
	srv = providertest.ReplayFile(t, td("error_401_signin.http"))
	_, err = newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
	check(t, err, want, u)

	srv = providertest.ReplayFile(t, td("error_401.http"))
	_, err = newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
	check(t, err, "unauthorized", "")
	srv = providertest.Replay(t, providertest.Recording{Status: 401, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"error":"unauthorized","signin_url":"https://ollama.example.com/connect?name=x"}`)})
	_, err = newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
	check(t, err, "unauthorized", "")
}
