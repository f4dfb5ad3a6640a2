package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "stream_logprobs_chunks", "real_maruel_gemini25_flash_lite_logprobs")
}

// The logprobs of stream_logprobs_chunks.http, its two chunks' joined:
// three decoding steps ("Hello", " there", "!"), the sums added (-0.05 +
// -0.75), the averages weighted by each chunk's tokens ((-0.05×1 +
// -0.375×2) / 3).
const (
	r22JoinedLogprobs = `{"chosenCandidates":[{"logProbability":-0.05,"token":"Hello","tokenId":9259},{"logProbability":-0.5,"token":" there","tokenId":1517},` +
		`{"logProbability":-0.25,"token":"!","tokenId":235341}],"logProbabilitySum":-0.8,` +
		`"topCandidates":[{"candidates":[{"logProbability":-0.05,"token":"Hello","tokenId":9259},{"logProbability":-3.1,"token":"Hi","tokenId":10979}]},` +
		`{"candidates":[{"logProbability":-0.5,"token":" there","tokenId":1517},{"logProbability":-1.2,"token":"!","tokenId":235341}]},` +
		`{"candidates":[{"logProbability":-0.25,"token":"!","tokenId":235341},{"logProbability":-1.6,"token":".","tokenId":235265}]}]}`
	r22JoinedAverage = "-0.26666666666666666"
	// The first chunk's alone.
	r22FirstLogprobs = `{"chosenCandidates":[{"logProbability":-0.05,"token":"Hello","tokenId":9259}],"logProbabilitySum":-0.05,` +
		`"topCandidates":[{"candidates":[{"logProbability":-0.05,"token":"Hello","tokenId":9259},{"logProbability":-3.1,"token":"Hi","tokenId":10979}]}]}`
)

func r22LogprobsRequest() *provider.Request {
	req := r21User("gemini-2.5-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello.")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseLogprobs":true,"logprobs":2}}`}
	return req
}

// TestRound22StreamLogprobsJoined: a stream whose chunks each carry the
// logprobsResult and avgLogprobs of their own tokens (hand-built in the
// shape of real_maruel_gemini25_flash_logprobs, the API's unary answer;
// the live API refuses logprobs on a stream, so a relay or a later API
// version is what sends them). Every chunk's tokens reach the client, in
// order, as the one object a unary answer with the same tokens has; the
// stream kept only the last chunk's before.
func TestRound22StreamLogprobsJoined(t *testing.T) {
	t.Parallel()
	const name = "stream_logprobs_chunks"
	evs, _ := r20Stream(t, name, r22LogprobsRequest())
	f := foldEvents(evs)
	if f.text != "Hello there!" || len(f.meta.GetWarnings()) != 0 {
		t.Errorf("text %q, warnings %q", f.text, f.meta.GetWarnings())
	}
	if got := r21Ext(t, f.meta, extLogprobsResult); got != r22JoinedLogprobs {
		t.Errorf("logprobs\n got %s\nwant %s", got, r22JoinedLogprobs)
	}
	if got := r21Ext(t, f.meta, extAvgLogprobs); got != r22JoinedAverage {
		t.Errorf("avgLogprobs %s, want %s", got, r22JoinedAverage)
	}

	// The same tokens in one unary answer give the same meta.extended.
	rec := providertest.Load(t, filepath.Join("testdata", name+".http"))
	rec.Header.Set("Content-Type", "application/json; charset=UTF-8")
	rec.Body = []byte(`{"candidates": [{"content": {"parts": [{"text": "Hello there!"}],"role": "model"},"finishReason": "STOP","index": 0,` +
		`"avgLogprobs": ` + r22JoinedAverage + `,"logprobsResult": ` + r22JoinedLogprobs + `}],` +
		`"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 3,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "unary"}`)
	srv := providertest.Replay(t, rec)
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Generate(context.Background(), r22LogprobsRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{extLogprobsResult, extAvgLogprobs} {
		if u, s := r21Ext(t, res.Meta, k), r21Ext(t, f.meta, k); u != s {
			t.Errorf("%s: unary %s, streamed %s", k, u, s)
		}
	}
}

// TestRound22StreamLogprobsCut: the same stream cut after its first chunk
// delivers that chunk's logprobs before the error (the server merges them
// into the failure's meta).
func TestRound22StreamLogprobsCut(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, filepath.Join("testdata", "stream_logprobs_chunks.http"))
	i := bytes.Index(rec.Body, []byte("\r\n\r\n"))
	rec.Body = rec.Body[:i+4]
	srv := providertest.Replay(t, rec)
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), r22LogprobsRequest())
	if err != nil {
		t.Fatal(err)
	}
	evs, end := drain(t, s)
	var pe *provider.Error
	if !errors.As(end, &pe) || errors.Is(end, io.EOF) || !strings.Contains(pe.Message, "before a finish reason") {
		t.Fatalf("end %v", end)
	}
	f := foldEvents(evs)
	if got := r21Ext(t, f.meta, extLogprobsResult); got != r22FirstLogprobs {
		t.Errorf("logprobs\n got %s\nwant %s", got, r22FirstLogprobs)
	}
	if got := r21Ext(t, f.meta, extAvgLogprobs); got != "-0.05" {
		t.Errorf("avgLogprobs %s", got)
	}
}

// TestRound22StreamLogprobsOddShapes: what the joining cannot read is
// said, not dropped unsaid: a logprobsResult that is not an object, an
// average without the chunk's token count, a key the chunks disagree on.
func TestRound22StreamLogprobsOddShapes(t *testing.T) {
	t.Parallel()
	chunk := func(result, avg, finish string) string {
		c := `{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"index":0`
		if result != "" {
			c += `,"logprobsResult":` + result
		}
		if avg != "" {
			c += `,"avgLogprobs":` + avg
		}
		if finish != "" {
			c += `,"finishReason":"` + finish + `"`
		}
		return "data: " + c + `}],"responseId":"odd"}` + "\r\n\r\n"
	}
	body := chunk(`[1]`, "", "") + chunk(`{"chosenCandidates":[],"future":1}`, "-1", "") + chunk(`{"future":2}`, "-2", "STOP")
	srv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)})
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), r22LogprobsRequest())
	if err != nil {
		t.Fatal(err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("end %v", end)
	}
	f := foldEvents(evs)
	w := strings.Join(f.meta.GetWarnings(), "\n")
	for _, want := range []string{"not an object", "logprobsResult.future differs", "avgLogprobs came in more than one chunk"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	if got := r21Ext(t, f.meta, extLogprobsResult); got != `{"chosenCandidates":[],"future":2}` {
		t.Errorf("logprobs %s", got)
	}
	if got := r21Ext(t, f.meta, extAvgLogprobs); got != "-2" {
		t.Errorf("avgLogprobs %s", got)
	}
	var check map[string]any
	if err := json.Unmarshal([]byte(r21Ext(t, f.meta, extLogprobsResult)), &check); err != nil {
		t.Error(err)
	}
}

// TestRound22LiteLogprobsSplit: gemini-2.5-flash-lite's unary answer with
// logprobs (August 2025): "Hi." in two decoding steps whose top candidates
// are empty objects and whose chosen tokens have logProbability 0, as the
// API sent them; kept whole. The same two steps streamed one per chunk
// (their text and logprobs split where the tokens are) join to the same
// object.
func TestRound22LiteLogprobsSplit(t *testing.T) {
	t.Parallel()
	const lp = `{"chosenCandidates":[{"logProbability":0,"token":"Hi","tokenId":10979},{"logProbability":0,"token":".","tokenId":236761}],"topCandidates":[{},{}]}`
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word.")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"],"responseLogprobs":true,"logprobs":2}}`}
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_logprobs", req)
	if gc := r17JSON(t, srv.Last(t).Body)["generationConfig"]; !jsonEqual(gc, r19Decode(t, `{"responseModalities":["TEXT"],"responseLogprobs":true,"logprobs":2}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hi.")); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	r21Meta(t, res.Meta, "edOXaKOrM7TN1MkPp7zCoAw", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 2, TotalTokens: 11})
	if got := r21Ext(t, res.Meta, extLogprobsResult); got != lp || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("logprobs %s, warnings %q", got, res.Meta.GetWarnings())
	}

	body := `data: {"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"},"index": 0,` +
		`"logprobsResult": {"topCandidates": [{}],"chosenCandidates": [{"token": "Hi","logProbability": 0,"tokenId": 10979}]}}],"responseId": "split"}` + "\r\n\r\n" +
		`data: {"candidates": [{"content": {"parts": [{"text": "."}],"role": "model"},"finishReason": "STOP","index": 0,` +
		`"logprobsResult": {"topCandidates": [{}],"chosenCandidates": [{"token": ".","logProbability": 0,"tokenId": 236761}]}}],"responseId": "split"}` + "\r\n\r\n"
	ssrv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)})
	p, err := New(testKey, WithBaseURL(ssrv.URL+"/v1beta"), WithHTTPClient(ssrv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("end %v", end)
	}
	f := foldEvents(evs)
	if got := r21Ext(t, f.meta, extLogprobsResult); f.text != "Hi." || got != lp {
		t.Errorf("streamed %q, logprobs %s, want %s", f.text, got, lp)
	}
}
