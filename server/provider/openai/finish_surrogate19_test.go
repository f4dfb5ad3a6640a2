package openai

import (
	"errors"
	"io"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// A finish_reason of another JSON type than a string (a proxy's object, a
// number) is kept as its JSON text and maps to OTHER, in the stream and in
// the unary answer, as the anthropic, gemini and ollama adapters keep
// theirs (provider.OddEnumText); it was dropped with a warning.
func TestOddFinishReasonSurrogate19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"type": "stop", "reason": "eos"}`, `{"type":"stop","reason":"eos"}`},
		{`7`, `7`},
		{`true`, `true`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			s := streamFrom(p, `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`+"\n\n"+
				`data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":`+tc.raw+`}]}`+"\n\ndata: [DONE]\n\n")
			defer s.Close()
			var evs []*provider.Event
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, ev)
			}
			f := foldEvents(t, evs)
			if f.Meta.GetProviderFinishReason() != tc.want || f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER {
				t.Errorf("stream finish %q %v, want %q OTHER", f.Meta.GetProviderFinishReason(), f.Meta.GetFinishReason(), tc.want)
			}
			if len(f.Meta.GetWarnings()) > 0 {
				t.Errorf("warnings %q, want none", f.Meta.GetWarnings())
			}
			res, err := p.parseChatResponse([]byte(`{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":` + tc.raw + `}]}`))
			if err != nil {
				t.Fatal(err)
			}
			if m := res.Meta; m.GetProviderFinishReason() != tc.want || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || len(m.GetWarnings()) > 0 {
				t.Errorf("unary meta %v, want finish %q OTHER and no warning", m, tc.want)
			}
		})
	}
}
