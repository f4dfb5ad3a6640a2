package openai

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

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

// TestInput23MistralSeed: api.mistral.ai names the seed random_seed (its
// ChatCompletionRequest, mistralai/client-python
// src/mistralai/models/chatcompletionrequest.py @
// fde481b662f75135339f1bf21b2be81a205fe079, has random_seed and no seed,
// and its validator refuses a field it does not know with a 422
// extra_forbidden, as testdata/dialect_mistral_err_422_extra_forbidden.http
// shows for another field): options.seed goes there as random_seed, and as
// seed everywhere else.
func TestInput23MistralSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, want, not string }{
		{"https://api.mistral.ai/v1", `"random_seed":7`, `"seed":7`},
		{"https://api.openai.com/v1", `"seed":7`, `random_seed`},
		{"http://127.0.0.1:8000/v1", `"seed":7`, `random_seed`},
	} {
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		for _, stream := range []bool{false, true} {
			req := drop21Base()
			req.Options.Seed = proto.Int64(7)
			body, _, err := p.buildChatRequest(req, stream)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(body), tc.want) || strings.Contains(string(body), tc.not) {
				t.Errorf("%s stream %v: %s", tc.base, stream, body)
			}
		}
	}
}
