package openai

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/llmrelay/llmrelay/server/provider"
)

// dimensionsRefusedRE matches a server's refusal of "dimensions" for a
// model that cannot shorten its vectors, whatever size was asked, its
// own size included: OpenAI's and Azure OpenAI's "This model does not
// support specifying dimensions." (text-embedding-ada-002; 400
// invalid_request_error, no param: SciPhi-AI/R2R#768 quotes OpenAI's,
// Canner/WrenAI#583 Azure's), vLLM's 'Model "bge-m3" does not support
// matryoshka representation, changing output dimensions will lead to poor
// results.' (400 BadRequestError: mem0ai/mem0#3101, coze-dev/coze-studio#484)
// and its earlier "dimensions is currently not supported"
// (vllm-project/vllm#15465).
var dimensionsRefusedRE = regexp.MustCompile(`(?i)\bdoes not support specifying dimensions\b|\bdoes not support matryoshka representation\b|^dimensions is currently not supported\b`)

// dimensionsRefused reports whether err is that refusal.
func dimensionsRefused(err error) bool {
	var pe *provider.Error
	return errors.As(err, &pe) && pe.Kind == provider.KindInvalidRequest && dimensionsRefusedRE.MatchString(pe.Message)
}

// embedWithoutDimensions answers a request whose "dimensions" the server
// refused (refused, dimensionsRefused) for a model that takes none: a
// caller (or a catalog's default) that names the model's own size, 1536
// for text-embedding-ada-002, 1024 for bge-m3, asks what the model gives
// unasked. The request is sent again without dimensions: vectors of the
// size asked for are the answer, with a warning; vectors of another size
// are no answer to the call, which fails as the refusal did, naming
// dimensions and the model's size, with the usage the second request
// spent (it was billed).
func (p *Provider) embedWithoutDimensions(ctx context.Context, req *provider.EmbedRequest, refused error) (*provider.Result, error) {
	var pe *provider.Error
	errors.As(refused, &pe)
	want := int(*req.Dimensions)
	again := *req
	again.Dimensions = nil
	res, err := p.Embed(ctx, &again)
	if err != nil {
		return nil, err
	}
	if len(res.Embeddings) == 0 {
		return res, nil
	}
	got := len(res.Embeddings[0].Values)
	if got != want {
		pe.Param = "dimensions"
		pe.Message += fmt.Sprintf(" (sent again without dimensions, the model's vectors have %d values, not the %d asked for: ask for %d or none)", got, want, got)
		pe.Meta = res.Meta
		return nil, pe
	}
	res.Meta.Warnings = append(res.Meta.Warnings, fmt.Sprintf("the server refused dimensions for this model (%q): sent again without them, its vectors have the %d values asked for", pe.Message, want))
	return res, nil
}
