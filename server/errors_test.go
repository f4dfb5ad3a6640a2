package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestToStatusCleansProviderText: whatever text a provider put in its
// error (a key echoed back, bytes that are not UTF-8) reaches the client
// redacted and valid in the message and in every detail, and the details
// are not lost.
func TestToStatusCleansProviderText(t *testing.T) {
	t.Parallel()
	const key = "sk-secret-key-123456"
	pe := &provider.Error{Provider: "oai", Kind: provider.KindInvalidRequest, HTTPStatus: 400,
		Message: "bad key " + key + " near \xff\xfe", Param: "messages[0]\xff", Code: "bad_\xffcode", RequestID: "req_\xff1"}
	err := toStatus(context.Background(), pe, nil, pipeline.NewRedactor(key), slog.New(slog.NewTextHandler(io.Discard, nil)))
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code %v", st.Code())
	}
	texts := []string{st.Message()}
	var info *errdetails.ErrorInfo
	var br *errdetails.BadRequest
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
			for k, v := range d.Metadata {
				texts = append(texts, k, v)
			}
		case *errdetails.BadRequest:
			br = d
			for _, v := range d.FieldViolations {
				texts = append(texts, v.Field, v.Description)
			}
		}
	}
	if info == nil || br == nil {
		t.Fatalf("details lost: %v", st.Details())
	}
	for _, s := range texts {
		if strings.Contains(s, key) || !utf8.ValidString(s) {
			t.Errorf("unclean text %q", s)
		}
	}
	if info.Metadata["upstreamRequestId"] != "req_\uFFFD1" || !strings.Contains(br.FieldViolations[0].Description, "[REDACTED]") {
		t.Errorf("info %v, bad request %v", info.Metadata, br)
	}
}
