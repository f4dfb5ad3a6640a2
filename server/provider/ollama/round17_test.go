package ollama

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound17MagenticLlama31Stream: a local Ollama (November 2024),
// llama3.1 streamed on /api/chat as litellm's ollama_chat asked it
// (jackmpcollins/magentic's cassette): 22 content lines whose words come
// with their leading space, then the done line with empty content and all
// six counters (13 in, 23 out).
func TestRound17MagenticLlama31Stream(t *testing.T) {
	t.Parallel()
	const name = "real_mag_llama31_stream_hello"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "llama3.1",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Say hello!"))},
	}
	st, err := newTestProvider(t, srv).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatalf("stream ended with %v", err)
	}
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, err))
	var texts []string
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			texts = append(texts, ev.Text)
		}
	}
	if len(texts) != 22 || texts[0] != "Hello" || texts[2] != " How" {
		t.Errorf("%d text events: %q", len(texts), texts)
	}
	f := foldEvents(t, evs)
	if parts := f.msg.GetParts(); len(parts) != 1 || parts[0].GetText() != "Hello! How are you today? Is there something I can help you with or would you like to chat?" {
		t.Fatalf("parts %v", parts)
	}
	m := f.meta
	if m.GetResolvedModel() != "llama3.1" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" ||
		m.GetProviderRequestId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	checkUsage(t, m.GetUsage(), 13, 23)
	checkCounters(t, m, map[string]float64{extTotalDuration: 2544046375, extLoadDuration: 36060083, extPromptEvalCount: 13,
		extPromptEvalDuration: 560000000, extEvalCount: 23, extEvalDuration: 1946000000})
	checkCreateTime(t, m, time.Date(2024, 11, 17, 8, 41, 59, 964165000, time.UTC))
	// The recorded request: model, messages, "options": {} and stream true.
	// We send no empty options, and truncate and shift false, which the
	// Ollama of November 2024 ignored.
	sent := sentBody(t, srv)
	if string(sent["model"]) != `"llama3.1"` || string(sent["messages"]) != `[{"role":"user","content":"Say hello!"}]` ||
		string(sent["stream"]) != "true" || string(sent["truncate"]) != "false" || string(sent["shift"]) != "false" || len(sent) != 5 {
		t.Errorf("sent %s", srv.Last(t).Body)
	}
}

// Ollama's answer with logprobs (api.ChatResponse.Logprobs, Ollama 0.12.11
// and later: a list of api.Logprob, {"token", "logprob", "bytes",
// "top_logprobs": [{"token", "logprob", "bytes"}]}), written by hand in
// that shape: unary, one list for the answer; streamed, one list per line.
const (
	logprobsUnary = `{"model":"gemma3","created_at":"2026-11-20T10:02:11.404Z","message":{"role":"assistant","content":"Hi!"},` +
		`"done_reason":"stop","done":true,"prompt_eval_count":12,"eval_count":2,` +
		`"logprobs":[{"token":"Hi","logprob":-0.0213,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.0213,"bytes":[72,105]},{"token":"Hello","logprob":-3.91,"bytes":[72,101,108,108,111]}]},` +
		`{"token":"!","logprob":-0.4,"bytes":[33],"top_logprobs":[{"token":"!","logprob":-0.4,"bytes":[33]},{"token":".","logprob":-1.2,"bytes":[46]}]}]}`
	logprobsStream = `{"model":"gemma3","created_at":"2026-11-20T10:02:11.301Z","message":{"role":"assistant","content":"Hi"},"done":false,"logprobs":[{"token":"Hi","logprob":-0.0213,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.0213,"bytes":[72,105]},{"token":"Hello","logprob":-3.91,"bytes":[72,101,108,108,111]}]}]}
{"model":"gemma3","created_at":"2026-11-20T10:02:11.352Z","message":{"role":"assistant","content":"!"},"done":false,"logprobs":[{"token":"!","logprob":-0.4,"bytes":[33],"top_logprobs":[{"token":"!","logprob":-0.4,"bytes":[33]},{"token":".","logprob":-1.2,"bytes":[46]}]}]}
{"model":"gemma3","created_at":"2026-11-20T10:02:11.404Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":12,"eval_count":2}
`
)

// TestRound17Logprobs: logprobs asked for through extra_body come back in
// meta.extended.logprobs (the OpenAI adapter's key), the answer's list as
// sent; a stream's lines' lists joined in order. They were dropped.
func TestRound17Logprobs(t *testing.T) {
	t.Parallel()
	req := func() *provider.Request {
		return &provider.Request{Model: "gemma3", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("hi! be concise."))},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"logprobs":true,"top_logprobs":2}`}}
	}
	check := func(what string, m *llmrelayv1.ResponseMeta) {
		t.Helper()
		lp, ok := m.GetExtended().AsMap()[extLogprobs].([]any)
		if !ok || len(lp) != 2 {
			t.Fatalf("%s: logprobs %v", what, m.GetExtended().AsMap()[extLogprobs])
		}
		first, _ := lp[0].(map[string]any)
		top, _ := first["top_logprobs"].([]any)
		second, _ := lp[1].(map[string]any)
		if first["token"] != "Hi" || first["logprob"] != -0.0213 || len(top) != 2 || top[1].(map[string]any)["token"] != "Hello" ||
			second["token"] != "!" || second["logprob"] != -0.4 {
			t.Errorf("%s: logprobs %v", what, lp)
		}
		if len(m.GetWarnings()) != 0 {
			t.Errorf("%s: warnings %q", what, m.GetWarnings())
		}
	}
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(logprobsUnary)})
	res, err := newTestProvider(t, srv).Generate(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	check("unary", res.Meta)
	if sent := sentBody(t, srv); string(sent["logprobs"]) != "true" || string(sent["top_logprobs"]) != "2" {
		t.Errorf("sent %s", srv.Last(t).Body)
	}
	ssrv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(logprobsStream)})
	st, err := newTestProvider(t, ssrv).Stream(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if f.msg.GetParts()[0].GetText() != "Hi!" {
		t.Errorf("parts %v", f.msg.GetParts())
	}
	check("stream", f.meta)

	// Not a list: dropped with a warning, the answer kept.
	bad := strings.Replace(logprobsUnary, `"logprobs":[`, `"logprobs":{"content":[`, 1)
	bad = strings.TrimSuffix(bad, "}") + "}}"
	bsrv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(bad)})
	res, err = newTestProvider(t, bsrv).Generate(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Meta.GetExtended().AsMap()[extLogprobs]; ok || len(res.Meta.GetWarnings()) != 1 ||
		!strings.HasPrefix(res.Meta.GetWarnings()[0], "the answer's logprobs is not a list") {
		t.Errorf("extended %v warnings %q", res.Meta.GetExtended().AsMap(), res.Meta.GetWarnings())
	}
}

// TestRound17LoadUnload: Ollama's ChatHandler answers a chat without
// messages with {"message":{"role":"assistant","content":""},"done":true,
// "done_reason":"load"} ("unload" with keep_alive 0): nothing generated.
// An empty answer, OTHER, and now a warning saying why it is empty.
func TestRound17LoadUnload(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"load", "unload"} {
		body := `{"model":"llama3.2","created_at":"2026-11-20T10:05:00.1Z","message":{"role":"assistant","content":""},"done_reason":"` + reason + `","done":true}`
		res, err := parseChatResponse([]byte(body), "salt", window{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"load": `done_reason "load": Ollama loaded the model and generated nothing`,
			"unload": `done_reason "unload": Ollama unloaded the model and generated nothing`}[reason]
		if len(res.Message.GetParts()) != 0 || res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER ||
			len(res.Meta.GetWarnings()) != 1 || res.Meta.GetWarnings()[0] != want {
			t.Errorf("%s: parts %v meta %v", reason, res.Message.GetParts(), res.Meta)
		}
		st := fakeStream(strings.NewReader(body + "\n"))
		evs, err := collect(st)
		if err != nil {
			t.Fatal(err)
		}
		f := foldEvents(t, evs)
		if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || len(f.meta.GetWarnings()) != 1 || f.meta.GetWarnings()[0] != want {
			t.Errorf("%s stream: meta %v", reason, f.meta)
		}
	}
}

// TestRound17RemoteModel: a local alias of a remote model (a ":cloud"
// model proxied to ollama.com) answers with remote_model and remote_host
// (api.ChatResponse); they are kept in extended, unary and streamed. The
// body is written by hand in that shape.
func TestRound17RemoteModel(t *testing.T) {
	t.Parallel()
	const line = `{"model":"gpt-oss:120b-cloud","remote_model":"gpt-oss:120b","remote_host":"https://ollama.com:443","created_at":"2026-11-20T10:09:41.77Z","message":{"role":"assistant","content":"4"},"done_reason":"stop","done":true,"prompt_eval_count":70,"eval_count":12}`
	check := func(what string, m *llmrelayv1.ResponseMeta) {
		t.Helper()
		ext := m.GetExtended().AsMap()
		if m.GetResolvedModel() != "gpt-oss:120b-cloud" || ext[extRemoteModel] != "gpt-oss:120b" || ext[extRemoteHost] != "https://ollama.com:443" {
			t.Errorf("%s: model %q extended %v", what, m.GetResolvedModel(), ext)
		}
	}
	res, err := parseChatResponse([]byte(line), "salt", window{})
	if err != nil {
		t.Fatal(err)
	}
	check("unary", res.Meta)
	evs, err := collect(fakeStream(strings.NewReader(line + "\n")))
	if err != nil {
		t.Fatal(err)
	}
	check("stream", foldEvents(t, evs).meta)
}
