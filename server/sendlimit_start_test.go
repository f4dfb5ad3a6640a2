package server_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestSendLimitOnStreamStart: a stream whose first event (StreamStart,
// sent with the first content) is over limits.max_send_message_bytes ends
// as one refused later does: ResourceExhausted naming the limit, with the
// failed call's meta and its attempt recorded as failed. The start event
// did not go through the relay's send bookkeeping, so the refusal was
// taken for the provider's failure: no FailedCallMeta, no failed attempt.
func TestSendLimitOnStreamStart(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+f.tail))
			c := f13Start(t, "limits: {max_send_message_bytes: 40}\n"+f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.text != "" {
				t.Fatalf("end %v, text %q", got.end, got.text)
			}
			st, info, _ := statusDetails(t, got.err)
			if st.Code() != codes.ResourceExhausted || info.GetMetadata()["limit"] != "limits.max_send_message_bytes" || !strings.Contains(st.Message(), "max_send_message_bytes") {
				t.Fatalf("status %v %v", st, info)
			}
			m := failedMeta(t, got.err)
			if m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "resource_exhausted" ||
				m.GetProviderRequestId() != f.wantReqID(1) {
				t.Errorf("meta %v", m)
			}
		})
	}
}
