package openai

import (
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestInput23ImageTypes: OpenAI's own API and Azure take PNG, JPEG, WEBP
// and non-animated GIF images ("You uploaded an unsupported image. Ensure
// the image is below 20 MB and in one of these formats: png, jpeg, gif,
// webp"): an inline image of another type, as bytes or as a data: URL, is
// an invalid request naming its field in both formats; a compatible server
// is sent it; an image by http(s) URL is the provider's to judge.
func TestInput23ImageTypes(t *testing.T) {
	t.Parallel()
	image := func(img *llmrelayv1.Image) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: img}}
	}
	data := func(mt string) *llmrelayv1.Part {
		return image(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("img")}, MimeType: mt})
	}
	url := func(u string) *llmrelayv1.Part {
		return image(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: u}})
	}
	cases := []struct {
		name  string
		part  *llmrelayv1.Part
		field string // "" when every provider takes it
	}{
		{"bmp bytes", data("image/bmp"), "messages[0].parts[1].image.mime_type"},
		{"heic bytes", data("image/heic"), "messages[0].parts[1].image.mime_type"},
		{"svg data: URL", url("data:image/svg+xml;base64,PHN2Zz4="), "messages[0].parts[1].image.url"},
		{"tiff data: URL in capitals", url("DATA:image/tiff;base64,SUkq"), "messages[0].parts[1].image.url"},
		{"png bytes", data("image/png"), ""},
		{"jpeg bytes with a parameter", data("image/jpeg; q=1"), ""},
		{"jpg bytes", data("image/jpg"), ""},
		{"webp data: URL", url("data:image/webp;base64,UklGRg=="), ""},
		{"gif data: URL", url("data:image/gif;base64,R0lGOA=="), ""},
		{"bmp by http URL", url("https://example.com/in23.bmp"), ""},
	}
	for pname, p := range drop21Providers(t) {
		for _, tc := range cases {
			for _, format := range []string{"chat", "responses"} {
				req := drop21Base()
				req.Protocol = llmrelayv1.Protocol_PROTOCOL_VISION
				req.Messages[0].Parts = append(req.Messages[0].Parts, tc.part)
				var err error
				if format == "chat" {
					_, _, err = p.buildChatRequest(req, false)
				} else {
					_, _, err = p.buildResponsesRequest(req, false)
				}
				var pe *provider.Error
				switch {
				case (pname == "compat" || tc.field == "") && err != nil:
					t.Errorf("%s %s %s: refused: %v", pname, format, tc.name, err)
				case pname != "compat" && tc.field != "" && (!errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != tc.field):
					t.Errorf("%s %s %s: got %v, want an invalid request naming %s", pname, format, tc.name, err, tc.field)
				}
			}
		}
	}
}
