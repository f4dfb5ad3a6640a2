package extract

import (
	"context"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

type service struct {
	llmrelayv1.UnimplementedExtractServiceServer
}

// NewService returns the ExtractService implementation. Its errors are a
// *InputError (no or empty payload) or a *SyntaxError (json that is not
// JSON); the server maps both to INVALID_ARGUMENT.
func NewService() llmrelayv1.ExtractServiceServer { return service{} }

// Extract implements llmrelayv1.ExtractServiceServer.
func (service) Extract(_ context.Context, req *llmrelayv1.ExtractRequest) (*llmrelayv1.ExtractResponse, error) {
	switch p := req.GetPayload().(type) {
	case *llmrelayv1.ExtractRequest_Json:
		if p.Json == "" {
			return nil, &InputError{Field: "json", Msg: "must not be empty; send the payload as JSON text"}
		}
		return Extract([]byte(p.Json))
	case *llmrelayv1.ExtractRequest_Value:
		if p.Value.GetKind() == nil {
			return nil, &InputError{Field: "value", Msg: "must hold a JSON value (no kind is set)"}
		}
		return ExtractValue(p.Value), nil
	default:
		return nil, &InputError{Field: "payload", Msg: "required: set json (JSON text) or value (a JSON value)"}
	}
}
