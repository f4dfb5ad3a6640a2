package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/internal/sse"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24WholeAnswerToStream: a stream request answered with a whole
// JSON answer (a proxy or compatible server that ignored "stream") gives
// the answer the unary call reads from the same body, folded, for every
// 2xx JSON recording of this package.
func TestRound24WholeAnswerToStream(t *testing.T) {
	t.Parallel()
	n := providertest.WholeAnswers(t, filepath.Join("testdata", "*.http"), providertest.BenchRequest("gemini-2.5-flash", "gemini"), func(url string) provider.Provider {
		p, err := New(testKey, WithBaseURL(url+"/v1beta"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	if n < 40 {
		t.Errorf("%d answers checked, want at least 40", n)
	}
}

// TestRound24ArrayStream: streamGenerateContent without alt=sse answers
// a JSON array of the chunks (application/json). The SSE reader found no
// event in it: a cut stream, its content and any error in it lost. Every
// SSE recording of this package, re-framed as that array, folds as the
// SSE stream does (the same answer, or the same error).
func TestRound24ArrayStream(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.http"))
	if err != nil {
		t.Fatal(err)
	}
	fold := func(rec providertest.Recording) (*provider.Result, error) {
		p, err := New(testKey, WithBaseURL(providertest.Replay(t, rec).URL+"/v1beta"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Stream(context.Background(), providertest.BenchRequest("gemini-2.5-flash", "gemini"))
		if err != nil {
			return nil, err
		}
		return provider.FoldStream(s)
	}
	n := 0
	for _, f := range files {
		rec := providertest.Load(t, f)
		if rec.Status != http.StatusOK || !strings.HasPrefix(rec.Header.Get("Content-Type"), "text/event-stream") {
			continue
		}
		var chunks []json.RawMessage
		events := sse.NewReader(bytes.NewReader(rec.Body))
		for {
			ev, err := events.Next()
			if err != nil {
				break
			}
			if d := bytes.TrimSpace(ev.Data); len(d) > 0 && json.Valid(d) {
				chunks = append(chunks, bytes.Clone(d))
			}
		}
		if len(chunks) == 0 {
			continue
		}
		array, err := json.MarshalIndent(chunks, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		arrayRec := providertest.Recording{Status: rec.Status, Header: rec.Header.Clone(), Body: array}
		arrayRec.Header.Set("Content-Type", "application/json; charset=UTF-8")
		arrayRec.Header.Del("Content-Length")
		want, wantErr := fold(rec)
		got, gotErr := fold(arrayRec)
		name := filepath.Base(f)
		switch {
		case (wantErr == nil) != (gotErr == nil):
			t.Errorf("%s: SSE error %v, array error %v", name, wantErr, gotErr)
		case wantErr != nil:
			if wantErr.Error() != gotErr.Error() {
				t.Errorf("%s: SSE error %v, array error %v", name, wantErr, gotErr)
			}
		default:
			if !proto.Equal(want.Message, got.Message) || !proto.Equal(want.Meta, got.Meta) {
				t.Errorf("%s: differs:\nSSE   %s %s\narray %s %s", name, providertest.ProtoJSON(t, want.Message), providertest.ProtoJSON(t, want.Meta),
					providertest.ProtoJSON(t, got.Message), providertest.ProtoJSON(t, got.Meta))
			}
		}
		n++
	}
	if n < 40 {
		t.Errorf("%d streams checked, want at least 40", n)
	}
}
