package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestSig25InvalidThinkingSignature: Anthropic's 400 "messages.1.content.0:
// Invalid `signature` in `thinking` block" (anthropics/claude-code#10627:
// thinking signed on another platform or account) is flagged
// SignatureRefused, unary and streamed; the same words without the
// backticks, as clients relay them (arojunior/handle-failed-requests-js#8),
// too; other 400s are not.
func TestSig25InvalidThinkingSignature(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, "testdata/sig25_invalid_thinking_signature.http")
		p := newTestProvider(t, srv.URL)
		var err error
		if stream {
			var s provider.Stream
			if s, err = p.Stream(context.Background(), thinkingMultiturnRequest(t)); s != nil {
				t.Fatal("a stream for a 400")
			}
		} else {
			_, err = p.Generate(context.Background(), thinkingMultiturnRequest(t))
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("stream=%v: err %v", stream, err)
		}
		if !pe.SignatureRefused || pe.HTTPStatus != http.StatusBadRequest || pe.Kind != provider.KindInvalidRequest ||
			pe.RequestID != "req_011CZsg25QmTbx7HfWc4LkNo" || pe.Message != "messages.1.content.0: Invalid `signature` in `thinking` block" {
			t.Errorf("stream=%v: refused=%v status=%d kind=%s id=%q msg=%q", stream, pe.SignatureRefused, pe.HTTPStatus, pe.Kind, pe.RequestID, pe.Message)
		}
	}
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"messages.3.content.0: Invalid signature in thinking block", true},
		{"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.", false},
		{"max_tokens: 200000 > 64000", false},
	} {
		e := &provider.Error{HTTPStatus: 400, Kind: provider.KindInvalidRequest, Message: c.msg}
		refineKind(e)
		if e.SignatureRefused != c.want {
			t.Errorf("%q: refused=%v, want %v", c.msg, e.SignatureRefused, c.want)
		}
	}
}

// TestSig25WithoutThinkingBlocks: sent again with DropSignatures, the tool
// loop goes without any thinking or redacted_thinking block (Anthropic
// lets earlier turns' thinking be omitted), and since its turn then
// begins with text, without thinking (the fixed budget requires a thinking
// block there; the API's refusal advises disabling thinking), each with a
// warning.
func TestSig25WithoutThinkingBlocks(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/sig25_invalid_thinking_signature.http")
	p := newTestProvider(t, srv.URL)
	req := thinkingMultiturnRequest(t)
	if _, err := p.Generate(context.Background(), req); err == nil {
		t.Fatal("no error")
	}
	first := string(srv.Last(t).Body)
	if !strings.Contains(first, `"type":"thinking"`) || !strings.Contains(first, `"type":"redacted_thinking"`) || !strings.Contains(first, `"budget_tokens":2048`) {
		t.Fatalf("first request: %s", first)
	}
	again := *req
	again.DropSignatures = true
	if _, err := p.Generate(context.Background(), &again); err == nil {
		t.Fatal("no error")
	}
	providertest.Golden(t, "testdata/sig25_without_thinking.request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
	_, _, warnings, err := p.buildRequest(&again, false)
	if err != nil {
		t.Fatal(err)
	}
	var dropped, noThinking bool
	for _, w := range warnings {
		dropped = dropped || strings.Contains(w, "left out 3 reasoning part(s) and 0 tool call signature(s)")
		noThinking = noThinking || strings.HasPrefix(w, "thinking not enabled: the request continues a tool loop")
	}
	if !dropped || !noThinking {
		t.Errorf("warnings %q", warnings)
	}
	// A conversation that does not continue a tool loop keeps thinking on.
	plain := thinkingMultiturnRequest(t)
	plain.Messages = append(plain.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("18°C and cloudy.")), msgOf(llmrelayv1.Role_ROLE_USER, text("And tomorrow?")))
	plain.DropSignatures = true
	body, _, _, err := p.buildRequest(plain, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(body); strings.Contains(s, `"type":"thinking"`) || !strings.Contains(s, `"budget_tokens":2048`) {
		t.Errorf("plain follow-up: %s", s)
	}
}
