package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "vertex24_error_context_length", "gemma24_developer_instruction_error")
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
	vertexErrorEveryWay(t, "vertex24_error_context_length", check)
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

// TestRound24GemmaSystemAsUserTurn: Gemma 3 on the Gemini API refuses a
// systemInstruction (400 "Developer instruction is not enabled for
// models/gemma-3-27b-it": testdata/gemma24_developer_instruction_error.http,
// the body 0xPlaygrounds/rig#788 quotes), so every request with a system
// message failed. The instructions now go as the first user turn, as
// Google's ADK sends them for Gemma 3 (src/google/adk/models/gemma_llm.py,
// Gemma._preprocess_request), with a warning. The server below answers as
// the API does: the recorded refusal when a systemInstruction comes, an
// answer otherwise. Gemma 4 and Gemini models keep their systemInstruction.
func TestRound24GemmaSystemAsUserTurn(t *testing.T) {
	t.Parallel()
	refusal := providertest.Load(t, "testdata/gemma24_developer_instruction_error.http")
	const answer = `{"candidates":[{"content":{"parts":[{"text":"Bonjour !"}],"role":"model"},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":19,"candidatesTokenCount":4,"totalTokenCount":23},"modelVersion":"gemma-3-27b-it","responseId":"r24gemmaQh7XkPz2Lw9sYb"}`
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sent = body
		if bytes.Contains(body, []byte(`"systemInstruction"`)) {
			for k, vs := range refusal.Header {
				w.Header()[k] = vs
			}
			w.WriteHeader(refusal.Status)
			_, _ = w.Write(refusal.Body)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma-3-27b-it", Messages: []*llmrelayv1.Message{
		msg(llmrelayv1.Role_ROLE_SYSTEM, text("Answer in French.")),
		msg(llmrelayv1.Role_ROLE_USER, text("Hello")),
	}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v (sent %s)", err, sent)
	}
	if got := res.Message.GetParts()[0].GetText(); got != "Bonjour !" {
		t.Errorf("text %q", got)
	}
	if !slices.ContainsFunc(res.Meta.GetWarnings(), func(w string) bool { return strings.Contains(w, "takes no system instruction") }) {
		t.Errorf("warnings %q: want the system message's move named", res.Meta.GetWarnings())
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(sent, &body); err != nil {
		t.Fatal(err)
	}
	if got, want := string(body["contents"]), `[{"role":"user","parts":[{"text":"Answer in French."}]},{"role":"user","parts":[{"text":"Hello"}]}]`; got != want {
		t.Errorf("contents %s, want %s", got, want)
	}
	for _, model := range []string{"gemma-4-26b-a4b-it", "gemini-2.5-flash", "models/gemma-4-31b-it"} {
		out, _, err := buildRequest(&provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Messages: req.Messages})
		if err != nil || out.SystemInstruction == nil || len(out.Contents) != 1 {
			t.Errorf("%s: system instruction %v, %d contents, err %v", model, out.SystemInstruction, len(out.Contents), err)
		}
	}
	for model, want := range map[string]bool{"gemma-3-27b-it": true, "models/gemma-3n-e4b-it": true, "gemma-3-1b-it": true,
		"gemma-4-26b-a4b-it": false, "gemini-3-flash": false, "gemma-10-x": false, "gemma-": false} {
		if got := noSystemInstruction(model); got != want {
			t.Errorf("noSystemInstruction(%q) = %v, want %v", model, got, want)
		}
	}
}

// vertexErrorEveryWay replays a Vertex error answer (testdata/<name>.http,
// a 400) to a unary call and a stream, then sends its Status as a 200
// stream's error event, and checks each error with the HTTP status it
// should carry (400, then 0 inside the stream).
func vertexErrorEveryWay(t *testing.T, name string, check func(t *testing.T, what string, err error, status int)) {
	t.Helper()
	p, _ := replay(t, name)
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	check(t, "unary", err, 400)
	_, err = p.Stream(context.Background(), generateCases(t)["plain"])
	check(t, "stream", err, 400)

	rec := providertest.Load(t, "testdata/"+name+".http")
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
