package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// s21 stream generators cut texts as providertest.StringPieces does.
func s21Pieces(s string, n int) []string { return providertest.StringPieces(s, n, nil) }

func s21JSON(v any) string { return providertest.MustJSON(v) }

type s21Part struct {
	thought bool
	text    string
	call    string // a functionCall's name; text is its args object
	id      string // the call's id (Vertex AI / Gemini 3), "" none
	sig     string // thoughtSignature
}

// s21Gemini is a generated answer: the SSE stream (text cut every n
// characters, each call whole in its own chunk) and the unary body.
func s21Gemini(parts []s21Part, finish string, n int) (stream, unary string) {
	var b strings.Builder
	chunk := func(ps []any, fin string, usage bool) {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		if fin != "" {
			c["finishReason"] = fin
		}
		w := map[string]any{"candidates": []any{c}, "modelVersion": "gemini-s21", "responseId": "resp_s21"}
		if usage {
			w["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 20, "totalTokenCount": 30}
		}
		b.WriteString("data: " + s21JSON(w) + "\r\n\r\n")
	}
	var whole []any
	for _, p := range parts {
		if p.call != "" {
			fc := map[string]any{"name": p.call, "args": json.RawMessage(p.text)}
			if p.id != "" {
				fc["id"] = p.id
			}
			part := map[string]any{"functionCall": fc}
			if p.sig != "" {
				part["thoughtSignature"] = p.sig
			}
			chunk([]any{part}, "", false)
			whole = append(whole, part)
			continue
		}
		pieces := s21Pieces(p.text, n)
		for i, d := range pieces {
			part := map[string]any{"text": json.RawMessage(d)}
			if p.thought {
				part["thought"] = true
			}
			if p.sig != "" && i == len(pieces)-1 {
				part["thoughtSignature"] = p.sig
			}
			chunk([]any{part}, "", false)
		}
		part := map[string]any{"text": p.text}
		if p.thought {
			part["thought"] = true
		}
		if p.sig != "" {
			part["thoughtSignature"] = p.sig
		}
		whole = append(whole, part)
	}
	chunk([]any{map[string]any{"text": ""}}, finish, true)
	unary = s21JSON(map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": whole}, "finishReason": finish, "index": 0}},
		"modelVersion": "gemini-s21", "responseId": "resp_s21",
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 20, "totalTokenCount": 30}})
	return b.String(), unary
}

// TestStreamMatchesUnaryStream21: generated Gemini streams (thought text
// with its signature, text cut inside surrogate pairs, parallel calls with
// and without ids, empty args, long args; the body read a byte at a
// time) fold, as the gateway folds them, to the unary answer's message,
// with its finish reason; at MAX_TOKENS the last call is cut in both.
func TestStreamMatchesUnaryStream21(t *testing.T) {
	t.Parallel()
	p, err := New("test-key")
	if err != nil {
		t.Fatal(err)
	}
	long := s21JSON(map[string]any{"content": strings.Repeat("é 😀 \"q\" \\ ", 3000)})
	base := func() []s21Part {
		return []s21Part{
			{thought: true, text: "User wants 😀 weather", sig: "c2lnMQ=="},
			{text: "Checking é 😀 \"both\".\n"},
			{call: "get_weather", text: `{"city":"Zürich 😀","days":[1,2]}`, sig: "c2lnMg=="},
			{call: "now", text: `{}`},
			{call: "get_weather", text: `{"city":"Oslo"}`},
		}
	}
	for _, v := range []struct {
		name   string
		mod    func(ps []s21Part) []s21Part
		finish string
	}{
		{"plain", func(ps []s21Part) []s21Part { return ps }, "STOP"},
		{"with ids", func(ps []s21Part) []s21Part {
			for i := range ps {
				if ps[i].call != "" {
					ps[i].id = fmt.Sprintf("fc_%d", i)
				}
			}
			return ps
		}, "STOP"},
		{"long args", func(ps []s21Part) []s21Part { return append(ps, s21Part{call: "write", text: long}) }, "STOP"},
		{"max tokens after the last call", func(ps []s21Part) []s21Part { return ps }, "MAX_TOKENS"},
		{"text only", func(ps []s21Part) []s21Part { return ps[:2] }, "STOP"},
	} {
		for _, n := range []int{1, 3, 8} {
			for _, oneByte := range []bool{false, true} {
				if oneByte && n != 3 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d/onebyte=%v", v.name, n, oneByte), func(t *testing.T) {
					t.Parallel()
					body, unary := s21Gemini(v.mod(base()), v.finish, n)
					var r io.Reader = strings.NewReader(body)
					if oneByte {
						r = iotest.OneByteReader(r)
					}
					s := p.newStream(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(r)})
					var evs []*provider.Event
					for {
						ev, err := s.Recv()
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							t.Fatalf("stream: %v", err)
						}
						evs = append(evs, ev)
					}
					var w generateContentResponse
					if err := json.Unmarshal([]byte(unary), &w); err != nil {
						t.Fatal(err)
					}
					res, err := p.toResult(&w)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := providertest.Answer(foldMessage(t, evs)), providertest.Answer(res.Message); got != want {
						t.Errorf("stream folds to\n%s\nunary\n%s", got, want)
					}
					f := foldEvents(evs)
					if f.meta.GetFinishReason() != res.Meta.GetFinishReason() {
						t.Errorf("finish %v, unary %v", f.meta.GetFinishReason(), res.Meta.GetFinishReason())
					}
				})
			}
		}
	}
}

// TestGatheredKeptOnErrorStream21: what a Gemini stream's chunks said
// that is reported with the finish (safety ratings, citations, logprobs)
// is relayed before the error of a stream that fails without one (a body
// cut short, an error chunk): the server merges a stream's meta events
// into the failure's meta. It was dropped with the error.
func TestGatheredKeptOnErrorStream21(t *testing.T) {
	t.Parallel()
	p, err := New("test-key")
	if err != nil {
		t.Fatal(err)
	}
	chunk := `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"index":0,` +
		`"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE"}],` +
		`"citationMetadata":{"citations":[{"startIndex":0,"endIndex":2,"uri":"https://example.com"}]},` +
		`"avgLogprobs":-0.25,"logprobsResult":{"chosenCandidates":[{"token":"Hi","logProbability":-0.25}]}}],"modelVersion":"gemini-s21"}` + "\r\n\r\n"
	for _, tc := range []struct{ name, body string }{
		{"body cut", chunk},
		{"error chunk", chunk + `data: {"error":{"code":500,"message":"internal","status":"INTERNAL"}}` + "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := p.newStream(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))})
			var evs []*provider.Event
			var err error
			for {
				var ev *provider.Event
				if ev, err = s.Recv(); err != nil {
					break
				}
				evs = append(evs, ev)
			}
			if errors.Is(err, io.EOF) {
				t.Fatal("no error")
			}
			ext := foldEvents(evs).meta.GetExtended().AsMap()
			for _, k := range []string{extSafetyRatings, extCitationMetadata, extAvgLogprobs, extLogprobsResult} {
				if _, ok := ext[k]; !ok {
					t.Errorf("no %s in %v", k, ext)
				}
			}
		})
	}
}
