package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// r24ImageBody is the body of the Vercel AI SDK's live
// gemini-3.1-flash-image capture (provider/gemini/testdata/
// real_image_gemini_3_1_flash_image.http): one generated image, an
// inlineData part carrying its thoughtSignature, and nothing else, STOP,
// 1392 candidate tokens.
func r24ImageBody(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("provider/gemini/testdata/real_image_gemini_3_1_flash_image.http")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok || !bytes.Contains(body, []byte(`"inlineData"`)) || bytes.Contains(body, []byte(`"text"`)) {
		t.Fatal("the recording is not the one image without text it was")
	}
	return string(body)
}

// TestEmptyAnswerNotWarnedForProviderItems: an answer whose content is a
// provider item (a Gemini image model's generated image, an inlineData
// part) is not empty: the item is what the model answered, and it goes to
// the caller and back to the next turn. **Bug:** the gateway counted only
// text, refusals and tool calls, so every generated image, unary and
// streamed, carried "the provider ended the answer normally but it is
// empty (no text, refusal or tool call); the provider counted 1392 output
// tokens besides reasoning". The stream is the unary body as one SSE event
// (its JSON compacted), as the API streams a one-part answer.
func TestEmptyAnswerNotWarnedForProviderItems(t *testing.T) {
	t.Parallel()
	body := r24ImageBody(t)
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(body)); err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		var step f13Step
		if stream {
			step = respond(200, hdr("Content-Type", "text/event-stream"), "data: "+compact.String()+"\r\n\r\n")
		} else {
			step = respond(200, hdr("Content-Type", "application/json; charset=UTF-8"), body)
		}
		up := f13Serve(t, step)
		c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+geminiFormat.yaml, up.URL, &f13Clock{})
		var (
			m     *llmrelayv1.ResponseMeta
			items int
		)
		if stream {
			s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: chatReq13().GetMessages()})
			if err != nil {
				t.Fatal(err)
			}
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				if ev.GetProviderItem().GetType() == "inlineData" {
					items++
				}
				if end := ev.GetEnd(); end != nil {
					m = end.GetMeta()
				}
			}
		} else {
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m = resp.GetMeta()
			for _, p := range resp.GetMessage().GetParts() {
				if p.GetProviderItem().GetType() == "inlineData" {
					items++
				}
			}
		}
		if items != 1 || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
			t.Fatalf("stream %v: %d image items, finish %v", stream, items, m.GetFinishReason())
		}
		if w := emptyWarning(m); w != "" || strings.Contains(strings.Join(m.GetWarnings(), "\n"), emptyWords) {
			t.Errorf("stream %v: warnings %q: an image is an answer", stream, m.GetWarnings())
		}
	}
}
