package pipeline

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// imageAnswer answers Generate with an inline image (a generated one).
type imageAnswer struct{ data []byte }

func (g imageAnswer) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return &provider.Result{Meta: &llmrelayv1.ResponseMeta{}, Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_Text{Text: "here it is"}},
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: g.data}, MimeType: "image/png"}}},
	}}}, nil
}

func (g imageAnswer) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, errors.New("unused")
}

// With record_content, an inline image (bytes, or a data: URL) goes onto
// the span as its mime type, detail and size, as a file does, not as
// base64 (which is what it was: megabytes a call); an image by URL stays
// a URL; the request's and the answer's messages are left as they were.
func TestTraceContentLeavesImageBytesOut(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	png := []byte("\x89PNG\r\n\x1a\n private pixels of the user's photo")
	jpeg := []byte("\xff\xd8\xff\xe0 another private picture!!")
	dataURL := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(jpeg)
	if len(png) != 43 || len(jpeg) != 30 {
		t.Fatalf("images of %d and %d bytes", len(png), len(jpeg))
	}
	c := streamCall(imageAnswer{data: png})
	parts := []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: png}, MimeType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH}}},
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: dataURL}}}},
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/cat.png"}}}},
	}
	c.Request.Messages[0].Parts = append(c.Request.Messages[0].Parts, parts...)
	res, err := tracedPipeline(rec, true).Unary(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	attrs := spanAttrs(rec.Ended()[0])
	// protojson varies its whitespace on purpose: compare compacted.
	in, out := compactJSON(t, attrs[telemetry.InputMessages]), compactJSON(t, attrs[telemetry.OutputMessages])
	for name, s := range map[string]string{"input": in, "output": out} {
		for _, leak := range []string{base64.StdEncoding.EncodeToString(png)[:12], base64.StdEncoding.EncodeToString(jpeg)[:12], "private"} {
			if strings.Contains(s, leak) {
				t.Errorf("%s messages carry image bytes (%q): %s", name, leak, s)
			}
		}
	}
	for _, want := range []string{
		`"url":"(43 bytes, not recorded)","mimeType":"image/png","detail":"IMAGE_DETAIL_HIGH"`,
		`"url":"(30 bytes, not recorded)","mimeType":"image/jpeg"`,
		`"url":"https://example.com/cat.png"`,
		"secret question",
	} {
		if !strings.Contains(in, want) {
			t.Errorf("input messages lack %s: %s", want, in)
		}
	}
	if !strings.Contains(out, `"url":"(43 bytes, not recorded)","mimeType":"image/png"`) || !strings.Contains(out, "here it is") {
		t.Errorf("output messages = %s", out)
	}
	if string(c.Request.Messages[0].Parts[1].GetImage().GetData()) != string(png) || c.Request.Messages[0].Parts[2].GetImage().GetUrl() != dataURL {
		t.Error("the request's images were changed")
	}
	if string(res.Message.GetParts()[1].GetImage().GetData()) != string(png) {
		t.Error("the answer's image was changed")
	}
}

// compactJSON is s without the whitespace between its tokens.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return b.String()
}
