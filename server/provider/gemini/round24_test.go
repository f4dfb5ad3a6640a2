package gemini

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "vertex24_error_context_length")
}

// TestRound24VertexContextLength: Vertex AI refuses a prompt longer than
// the model's window with its own words, "Unable to submit request because
// the input token count is 1251952 but model only supports up to 1048576.
// …" (400 INVALID_ARGUMENT; testdata/vertex24_error_context_length.http,
// hand-built from the message gemini-cli#19727 and google-api-core's
// InvalidArgument quote). **Bug:** only the Gemini API's wording ("The
// input token count (N) exceeds the maximum number of tokens allowed (M)")
// was known, so Vertex AI's refusal was a plain invalid request, not a
// context-length error (which the gateway reports as such and may fall
// back on a model with a longer window). Unary, streamed, and as an error
// event inside a 200 stream alike.
func TestRound24VertexContextLength(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, what string, err error, status int) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want *provider.Error", what, err)
		}
		if pe.Kind != provider.KindContextLength || pe.HTTPStatus != status || pe.Code != "INVALID_ARGUMENT" ||
			!strings.HasPrefix(pe.Message, "Unable to submit request because the input token count is 1251952 but model only supports up to 1048576.") {
			t.Errorf("%s: got kind %v, status %d, code %q, message %q", what, pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
		}
	}
	p, _ := replay(t, "vertex24_error_context_length")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	check(t, "unary", err, 400)
	_, err = p.Stream(context.Background(), generateCases(t)["plain"])
	check(t, "stream", err, 400)

	// The same status as a stream's error event (a 200 answer).
	rec := providertest.Load(t, "testdata/vertex24_error_context_length.http")
	_, body, _ := strings.Cut(string(rec.Body), "\n")
	event := "data: {" + strings.Join(strings.Fields(strings.TrimSpace(body)), " ") + "\r\n\r\n"
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(event)})
	p2, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p2.Stream(context.Background(), generateCases(t)["plain"])
	if err != nil {
		t.Fatal(err)
	}
	_, end := drain(t, s)
	check(t, "stream event", end, 0)
}

// TestRound24ContextLengthWordings: the refusals of a prompt over the
// window, in each wording the APIs use, are context-length errors; other
// token-count messages are not.
func TestRound24ContextLengthWordings(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		"The input token count (1234567) exceeds the maximum number of tokens allowed (1048576).":                                                              true,
		"The input token count exceeds the maximum number of tokens allowed (1048576).":                                                                        true,
		"Unable to submit request because the input token count is 3601938 but model only supports up to 1000000. Reduce the input token count and try again.": true,
		"Unable to submit request because the input token count is 32825 but model only supports up to 32768":                                                  true,
		"Request contains an invalid argument.": false,
		"Unable to submit request because it has a maxOutputTokens value of 70000 but the supported range is from 1 (inclusive) to 65537 (exclusive).": false,
	} {
		if got := isContextLength(msg); got != want {
			t.Errorf("isContextLength(%q) = %v, want %v", msg, got, want)
		}
	}
}
