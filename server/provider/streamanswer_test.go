package provider_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestReadBodyStreamAnswer: which success bodies ReadBody hands to the
// stream reader (provider.StreamAnswer), which it reads as JSON, and the
// JSON answer an event stream's terminator was glued after.
func TestReadBodyStreamAnswer(t *testing.T) {
	t.Parallel()
	const obj = `{"id":"chatcmpl-r23","object":"chat.completion","choices":[]}`
	for _, tc := range []struct {
		name, ct, body string
		stream         string // the StreamAnswer's media type, "" for none
		json           string // the body returned, when no error
		warning        string
	}{
		{name: "JSON", ct: "application/json", body: obj, json: obj},
		{name: "JSON labelled event-stream", ct: "text/event-stream", body: obj, json: obj},
		{name: "events", ct: "text/event-stream; charset=utf-8", body: "data: " + obj + "\n\ndata: [DONE]\n\n", stream: "text/event-stream"},
		{name: "events labelled JSON", ct: "application/json", body: "\r\nevent: message_start\ndata: {}\n\n", stream: "text/event-stream"},
		{name: "events after a comment", ct: "", body: ": OPENROUTER PROCESSING\n\ndata: {}\n\n", stream: "text/event-stream"},
		{name: "NDJSON", ct: "application/x-ndjson", body: `{"done":false}` + "\n" + `{"done":true}` + "\n", stream: "application/x-ndjson"},
		{name: "one NDJSON line", ct: "application/x-ndjson", body: `{"done":false}` + "\n", stream: "application/x-ndjson"},
		{name: "JSON then [DONE]", ct: "text/event-stream", body: obj + "\n\ndata: [DONE]\n\n", json: obj, warning: provider.JSONThenDoneWarning},
		{name: "JSON then [DONE] labelled JSON", ct: "application/json", body: obj + "\n\ndata: [DONE]\n\n", json: obj + "\n\ndata: [DONE]\n\n"},
		{name: "JSON then more", ct: "text/event-stream", body: obj + "\ndata: {}\n\ndata: [DONE]", json: obj + "\ndata: {}\n\ndata: [DONE]"},
		{name: "text", ct: "text/plain", body: "upstream connect error", json: "upstream connect error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body)), ContentLength: -1}
			if tc.ct != "" {
				resp.Header.Set("Content-Type", tc.ct)
			}
			body, warning, e := provider.ReadBody("openai", resp, 1<<20)
			var a *provider.StreamAnswer
			if e != nil {
				a = provider.StreamAnswerOf(e)
			}
			if tc.stream != "" {
				if a == nil || a.ContentType != tc.stream || e.Kind != provider.KindBadResponse || body != nil {
					t.Fatalf("err %v (answer %v), body %q: want the stream answer %s", e, a, body, tc.stream)
				}
				return
			}
			if e != nil || string(body) != tc.json || warning != tc.warning {
				t.Fatalf("err %v, body %q, warning %q", e, body, warning)
			}
		})
	}
}

// FuzzReadBodyStreamAnswer: whatever the body and its label, ReadBody
// returns the body as it came, the JSON a stream terminator was glued
// after (valid JSON, the body's start), or a StreamAnswer with a media
// type; never anything else.
func FuzzReadBodyStreamAnswer(f *testing.F) {
	f.Add("text/event-stream", `{"a":1}`+"\n\ndata: [DONE]\n\n")
	f.Add("text/event-stream", "data: {}\n\n")
	f.Add("application/x-ndjson", `{"done":true}`)
	f.Add("application/json", ` {"a":"data: [DONE]"}`)
	f.Fuzz(func(t *testing.T, ct, body string) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: -1}
		got, warning, e := provider.ReadBody("openai", resp, 1<<20)
		switch {
		case e != nil:
			if a := provider.StreamAnswerOf(e); a != nil && a.ContentType == "" {
				t.Fatalf("stream answer without a media type: %v", e)
			}
		case warning == provider.JSONThenDoneWarning:
			if !json.Valid(got) || !strings.HasPrefix(strings.TrimSpace(body), string(got)) || !strings.HasSuffix(strings.TrimSpace(body), "[DONE]") {
				t.Fatalf("body %q answered %q", body, got)
			}
		case string(got) != body:
			t.Fatalf("body %q returned as %q (warning %q)", body, got, warning)
		}
	})
}
