package gemini

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "real_maruel_gemini31_flash_lite_video_url_no_prompt_count", "real_maruel_gemini31_flash_lite_audio_url")
}

// TestRound22VideoURLNoPromptCount: gemini-flash-lite-latest (modelVersion
// gemini-3.1-flash-lite, May 2026) reading a video by URL (fileData): the
// answer "Banana" carries a thoughtSignature, and its usageMetadata has no
// promptTokenCount and no promptTokensDetails, only candidatesTokenCount
// 1, totalTokenCount 297 and serviceTier. **Bug:** the input was read as 0
// tokens, as if the prompt (the video) had cost nothing; it is now the
// rest of the API's own total, 296, with a warning that says so. Streamed,
// the same usage gives the same count and the warning once.
func TestRound22VideoURLNoPromptCount(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemini31_flash_lite_video_url_no_prompt_count"
	const uri = "https://raw.githubusercontent.com/maruel/genai/refs/heads/main/scoreboard/testdata/video.mp4"
	user := msg(llmrelayv1.Role_ROLE_USER, text("What is the word said? Reply with only the word."),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{MimeType: "video/mp4", Source: &llmrelayv1.File_Url{Url: uri}}}})
	req := r21User("gemini-flash-lite-latest", "", user)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_DOCUMENTS
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	r21SameRequest(t, srv, "/v1beta/models/gemini-flash-lite-latest:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"What is the word said? Reply with only the word."},{"fileData":{"mimeType":"video/mp4","fileUri":"`+uri+`"}}]}],"generationConfig":{"responseModalities":["TEXT"]}}`)
	const sig = "EjQKMgEMOdbHo0NIAoCg0EVrp+IcSra8a2QgjpDdZUvKdfb/r5bGwjVvf5a0ixJZ0341T/K/"
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Banana"), &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig}}}); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	r21Meta(t, m, "xdYZarr3NL-MjrEPsObW2QQ", "gemini-3.1-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 296, OutputTokens: 1, TotalTokens: 297})
	if w := m.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "no promptTokenCount") || !strings.Contains(w[0], "(296)") || m.GetServiceTier() != "standard" {
		t.Errorf("warnings %q, meta %v", w, m)
	}

	// The same usage in a stream's last chunk.
	rec := providertest.Load(t, "testdata/"+name+".http")
	body := []byte("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Banana\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}]," +
		"\"usageMetadata\": {\"candidatesTokenCount\": 1,\"totalTokenCount\": 297,\"serviceTier\": \"standard\"},\"responseId\": \"s\"}\r\n\r\n")
	if !bytes.Contains(rec.Body, []byte(`"candidatesTokenCount": 1,`)) {
		t.Fatal("the recording's usage changed")
	}
	ssrv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body})
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
	if want := (&llmrelayv1.Usage{InputTokens: 296, OutputTokens: 1, TotalTokens: 297}); !proto.Equal(f.usage, want) {
		t.Errorf("streamed usage %v, want %v", f.usage, want)
	}
	if w := f.meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "no promptTokenCount") {
		t.Errorf("streamed warnings %q", w)
	}
}

// TestRound22AudioURL: the same model hearing an MP3 by URL: "orange"
// with its signature, and here the usage has promptTokenCount 32 split by
// modality (AUDIO 19, TEXT 13): the count as sent, no warning, the
// modalities in usage_details.
func TestRound22AudioURL(t *testing.T) {
	t.Parallel()
	const uri = "https://raw.githubusercontent.com/maruel/genai/refs/heads/main/scoreboard/testdata/audio.mp3"
	user := msg(llmrelayv1.Role_ROLE_USER, text("What is the word said? Reply with only the word."),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{MimeType: "audio/mpeg", Source: &llmrelayv1.File_Url{Url: uri}}}})
	req := r21User("gemini-flash-lite-latest", "", user)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_AUDIO
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, "real_maruel_gemini31_flash_lite_audio_url", req)
	r21SameRequest(t, srv, "/v1beta/models/gemini-flash-lite-latest:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"What is the word said? Reply with only the word."},{"fileData":{"mimeType":"audio/mpeg","fileUri":"`+uri+`"}}]}],"generationConfig":{"responseModalities":["TEXT"]}}`)
	const sig = "EjQKMgEMOdbH3TCbO2kDXEPGRTQ5qtDqqf02HUrsz8si7CtKeF7LRcD3kmd2N93EcciVqzWo"
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("orange"), &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig}}}); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	r21Meta(t, m, "n9YZauPVOJvOjrEPivujWQ", "gemini-3.1-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 32, OutputTokens: 1, TotalTokens: 33})
	if got, want := r17Ext(m)["usage_details"], map[string]any{"promptTokensDetails.AUDIO": 19.0, "promptTokensDetails.TEXT": 13.0, "serviceTier": "standard"}; !jsonEqual(got, want) || len(m.GetWarnings()) != 0 {
		t.Errorf("usage details %v, warnings %q", got, m.GetWarnings())
	}
}
