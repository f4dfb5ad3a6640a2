package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// maxFailedMeta is the bound of a FailedCallMeta status detail (the
// FailedCallMeta comment in meta.proto): with the rest of the status it
// keeps the trailer under grpc-java's default 8 KiB of metadata.
const maxFailedMeta = 3072

// checkTrailer: the status as the trailer carries it (grpc-message, and
// grpc-status-details-bin in base64) fits grpc-java's default 8 KiB with
// room for the other headers.
func checkTrailer(t *testing.T, st *status.Status) {
	t.Helper()
	if n := len(st.Message()) + (proto.Size(st.Proto())+2)/3*4; n > 7<<10 {
		t.Errorf("a trailer of %d bytes", n)
	}
}

func failedDetail(t *testing.T, err error) (*status.Status, *llmrelayv1.FailedCallMeta) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("not a status: %v", err)
	}
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			return st, f
		}
	}
	t.Fatalf("no FailedCallMeta in %v", st.Details())
	return nil, nil
}

// TestStatus19EndEventTooLarge: a grounded Gemini stream of small text
// events whose last chunk carries a large groundingMetadata (60 web
// sources, in meta.extended: only the end event carries it) is over
// limits.max_send_message_bytes at its end event. The status carried that
// same meta as FailedCallMeta, so the trailer held what the limit refused
// to send (base64: a third more), past other clients' metadata limits
// (grpc-java 8 KiB, Envoy 60 KiB), which then lose the status entirely.
// The detail is bounded: extended goes, omitted says so; the ids,
// attempts and usage stay.
func TestStatus19EndEventTooLarge(t *testing.T) {
	t.Parallel()
	f := geminiFormat
	var chunks []string
	for i := range 60 {
		chunks = append(chunks, fmt.Sprintf(`{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/source-%03d-AUZIYQH","title":"example-%03d.com"}}`, i, i))
	}
	grounding := `,"groundingMetadata":{"webSearchQueries":["capital of France"],"groundingChunks":[` + strings.Join(chunks, ",") + `]}`
	body := ""
	for range 20 {
		body += f.text("Paris is the capital. ")
	}
	body += geminiChunk("", `,"finishReason":"STOP"`+grounding, `{"promptTokenCount":14,"candidatesTokenCount":7,"totalTokenCount":21}`)
	up := f13Serve(t, respond(200, hdr("Content-Type", f.streamType), body))
	c := f13Start(t, "limits: {max_send_message_bytes: 4000}\n"+f13Defaults+f.yaml, up.URL, &f13Clock{})
	got := readStream13(t, c)
	if got.end != nil || got.text != strings.Repeat("Paris is the capital. ", 20) {
		t.Fatalf("end %v, text %q", got.end, got.text)
	}
	st, fm := failedDetail(t, got.err)
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "max_send_message_bytes") {
		t.Fatalf("status %v", st)
	}
	checkTrailer(t, st)
	if n := proto.Size(fm); n > maxFailedMeta {
		t.Fatalf("FailedCallMeta of %d bytes in the trailer (bound %d)", n, maxFailedMeta)
	}
	m := fm.GetMeta()
	if m.GetExtended() != nil || !slices.Equal(fm.GetOmitted(), []string{"meta.extended"}) {
		t.Errorf("extended kept: %v, omitted %q", m.GetExtended(), fm.GetOmitted())
	}
	if m.GetUsage().GetTotalTokens() != 21 || m.GetAttempts() != 1 || m.GetResponseId() != "gem_f13" || m.GetRequestId() == "" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("meta %v", m)
	}
}

// TestStatus19UnaryRawBounded: a failed unary call with the raw capture
// on, whose error answer is large (a provider's 400 with a long body):
// the status's FailedCallMeta leaves the raw capture out (it would be in
// the trailer) and the retry reason's copy of the long message is cut,
// and it says so; the status message is cut at 1 KiB; the error's code
// and reason are intact.
func TestStatus19UnaryRawBounded(t *testing.T) {
	t.Parallel()
	f := openaiChat
	errBody := `{"error":{"message":"Invalid 'messages[0].content': string too long.` + strings.Repeat(" details", 1500) + `","type":"invalid_request_error","param":"messages[0].content","code":"string_above_max_length"}}`
	up := f13Serve(t, respond(http.StatusBadRequest, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), errBody))
	c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
	raw := true
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")},
		Call: &llmrelayv1.CallOptions{PreserveRaw: &raw}})
	st, fm := failedDetail(t, err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("status %v", st)
	}
	checkTrailer(t, st)
	if n := proto.Size(fm); n > maxFailedMeta {
		t.Fatalf("FailedCallMeta of %d bytes in the trailer (bound %d)", n, maxFailedMeta)
	}
	if fm.GetMeta().GetRaw() != nil || !slices.Equal(fm.GetOmitted(), []string{"meta.raw", "meta.retry_reasons.message"}) || fm.GetMeta().GetProviderRequestId() != f13ReqID(1) {
		t.Errorf("meta %v, omitted %q", fm.GetMeta(), fm.GetOmitted())
	}
	if _, info, _ := statusDetails(t, err); info.GetMetadata()["upstreamCode"] != "string_above_max_length" {
		t.Errorf("error info %v", info)
	}
}

// TestStatus19SmallRawKept: a failed call whose meta fits the bound keeps
// its raw capture (the error answer as the provider sent it) and omits
// nothing.
func TestStatus19SmallRawKept(t *testing.T) {
	t.Parallel()
	f := openaiChat
	up := f13Serve(t, f.errStep(1, http.StatusBadRequest, nil))
	c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
	raw := true
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")},
		Call: &llmrelayv1.CallOptions{PreserveRaw: &raw}})
	_, fm := failedDetail(t, err)
	if fm.GetMeta().GetRaw().GetResponseStatus() != http.StatusBadRequest || len(fm.GetOmitted()) != 0 {
		t.Errorf("raw %v, omitted %q", fm.GetMeta().GetRaw(), fm.GetOmitted())
	}
}

func f13ReqID(n int) string { return openaiChat.wantReqID(n) }
