package providertest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// WholeAnswers checks, for every 2xx application/json recording matching
// glob that a unary call of req reads as an answer, that the stream
// request of req answered with the same body (a server that ignored
// "stream") gives the same answer: folded (provider.FoldStream), the same
// message part for part and the same meta, with
// provider.WholeAnswerWarning added. newProvider
// makes the adapter for a replay server's URL. It returns how many
// recordings were answers.
func WholeAnswers(t *testing.T, glob string, req *provider.Request, newProvider func(url string) provider.Provider) int {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		rec := Load(t, f)
		if rec.Status/100 != 2 || !strings.HasPrefix(strings.ToLower(rec.Header.Get("Content-Type")), "application/json") {
			continue
		}
		name := filepath.Base(f)
		want, err := newProvider(Replay(t, rec).URL).Generate(context.Background(), req)
		if err != nil {
			continue // not an answer: the stream request fails as the unary one does
		}
		s, err := newProvider(Replay(t, rec).URL).Stream(context.Background(), req)
		if err != nil {
			t.Errorf("%s: stream request: %v", name, err)
			continue
		}
		got, err := provider.FoldStream(s)
		if err != nil {
			t.Errorf("%s: fold: %v", name, err)
			continue
		}
		n++
		want.Meta.Warnings = append(want.Meta.Warnings, provider.WholeAnswerWarning)
		if !proto.Equal(want.Message, got.Message) {
			t.Errorf("%s: message differs:\nunary  %s\nstream %s", name, ProtoJSON(t, want.Message), ProtoJSON(t, got.Message))
		}
		clearResets(want.Meta)
		clearResets(got.Meta)
		if !proto.Equal(want.Meta, got.Meta) {
			t.Errorf("%s: meta differs:\nunary  %s\nstream %s", name, ProtoJSON(t, want.Meta), ProtoJSON(t, got.Meta))
		}
	}
	return n
}

// clearResets clears the rate limit's reset times, read from the headers
// relative to the clock at the moment of reading.
func clearResets(m *llmrelayv1.ResponseMeta) {
	rl := m.GetRateLimit().ProtoReflect()
	if !rl.IsValid() {
		return
	}
	fields := rl.Descriptor().Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); strings.HasSuffix(string(f.Name()), "_reset_time") {
			rl.Clear(f)
		}
	}
	for _, w := range m.GetRateLimit().GetWindows() {
		w.ResetTime = nil
	}
}
