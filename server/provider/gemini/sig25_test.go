package gemini

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "sig25_corrupted_thought_signature")
}

// sig25Conversation is a Gemini 3 tool loop whose thought, signed text and
// signed function call came from another deployment (another API key's
// project): the signatures are that project's.
func sig25Conversation() *provider.Request {
	sigPart := func(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
		r.Provider = "gemini"
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
	}
	call := toolCallPart("call_sig25_paris", "get_weather", `{"city":"Paris"}`)
	call.GetToolCall().Signature = "CsEBAY89a1+sig25OtherProjectCallSig=="
	return r21User("gemini-3-flash-preview", "",
		msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris?")),
		msg(llmrelayv1.Role_ROLE_ASSISTANT,
			sigPart(&llmrelayv1.Reasoning{Text: "The user wants the weather.", Signature: "EqQBsig25OtherProjectThoughtSig=="}),
			text("Let me look it up."),
			sigPart(&llmrelayv1.Reasoning{Signature: "Ep0Bsig25OtherProjectTextSig=="}),
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Provider: "gemini", Type: "toolCall",
				Json: `{"toolCall":{"toolType":"URL_CONTEXT","id":"sig25u1","args":{"urls":["https://example.com/oslo"]}},"thoughtSignature":"Ck0Bsig25OtherProjectToolSig=="}`}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Provider: "gemini", Type: "toolResponse",
				Json: `{"toolResponse":{"toolType":"URL_CONTEXT","id":"sig25u1"}}`}}},
			call),
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_sig25_paris", `{"temp":"18C"}`)))
}

// TestSig25CorruptedThoughtSignature: Gemini's 400 INVALID_ARGUMENT
// "Corrupted thought signature." (google-gemini/gemini-cli#13467,
// charmbracelet/crush#1698: a conversation moved to another account) is
// flagged SignatureRefused, unary and streamed, so that the retry policy
// resends the conversation without the foreign signatures; the refusal of
// a missing one and other 400s are not.
func TestSig25CorruptedThoughtSignature(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		p, _ := replay(t, "sig25_corrupted_thought_signature")
		var err error
		if stream {
			var s provider.Stream
			if s, err = p.Stream(context.Background(), sig25Conversation()); s != nil {
				t.Fatal("a stream for a 400")
			}
		} else {
			_, err = p.Generate(context.Background(), sig25Conversation())
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("stream=%v: err %v", stream, err)
		}
		if !pe.SignatureRefused || pe.HTTPStatus != http.StatusBadRequest || pe.Kind != provider.KindInvalidRequest ||
			pe.Code != "INVALID_ARGUMENT" || pe.Message != "Corrupted thought signature." {
			t.Errorf("stream=%v: refused=%v status=%d kind=%s code=%q msg=%q", stream, pe.SignatureRefused, pe.HTTPStatus, pe.Kind, pe.Code, pe.Message)
		}
	}
	for _, c := range []struct {
		status, msg string
		want        bool
	}{
		{"INVALID_ARGUMENT", "Invalid thought signature.", true},
		{"INVALID_ARGUMENT", "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance.", false},
		{"INVALID_ARGUMENT", "Request contains an invalid argument.", false},
		{"INTERNAL", "Corrupted thought signature.", false},
	} {
		if got := provider.GoogleSignatureRefused(c.status, c.msg); got != c.want {
			t.Errorf("%s %q: refused=%v, want %v", c.status, c.msg, got, c.want)
		}
	}
}

// TestSig25PlaceholderSignatures: the conversation sent again with
// DropSignatures carries Google's documented placeholder
// (skip_thought_signature_validator) on the function call and the
// built-in tool's call instead of the other project's signatures, no signature on the thought and the text
// part, and a warning that says so; without DropSignatures the
// signatures go as they came.
func TestSig25PlaceholderSignatures(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "sig25_corrupted_thought_signature")
	req := sig25Conversation()
	if _, err := p.Generate(context.Background(), req); err == nil {
		t.Fatal("no error")
	}
	first := string(srv.Last(t).Body)
	for _, sig := range []string{"CsEBAY89a1+sig25OtherProjectCallSig==", "EqQBsig25OtherProjectThoughtSig==", "Ep0Bsig25OtherProjectTextSig==", "Ck0Bsig25OtherProjectToolSig=="} {
		if !strings.Contains(first, sig) {
			t.Errorf("first request lacks %s: %s", sig, first)
		}
	}
	again := *req
	again.DropSignatures = true
	if _, err := p.Generate(context.Background(), &again); err == nil {
		t.Fatal("no error")
	}
	providertest.Golden(t, filepath.Join("testdata", "sig25_placeholder.request.golden"), providertest.RequestGolden(srv.Last(t)))
	_, warnings, err := buildRequest(&again)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warnings {
		if strings.Contains(w, "2 function call(s) with Google's placeholder signature") && strings.Contains(w, "left out 2 other signature(s)") {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings %q", warnings)
	}
	if _, warnings, _ := buildRequest(req); len(warnings) != 0 {
		t.Errorf("warnings without DropSignatures: %q", warnings)
	}
}
