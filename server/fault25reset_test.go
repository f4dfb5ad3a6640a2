package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// brokeMidAnswer is what a failed attempt's reason and the status say of
// a connection that broke after the provider's 200 headers.
const brokeMidAnswer = "the provider answered, then the connection broke in the middle of its answer (the call may have been billed)"

// TestFault25ResetAfterHeaders: a provider that answers 200, its headers
// (request id, rate limits) and part of its body, then resets the
// connection (TCP RST), had answered: the attempt is not a
// connection_error ("before any response byte") but an answer cut in the
// middle, reason unavailable (as a body closed short is), its message
// saying the provider answered and may have billed the call, the
// attempt's provider request id kept. A non-streaming answer cut so never
// reached the caller: it is retried, as a 5xx is, and as a stream reset
// before its first content (the same reason) is; on the last attempt the
// status (Unavailable, UPSTREAM_UNAVAILABLE) says it, with the attempt's
// request id and rate limits in the failure's meta. A reset before the
// headers stays connection_error. It was connection_error in both cases.
// The attempt's upstream_status is the 200 the provider answered (0 means
// none was received, as for the reset before the headers); it was 0.
func TestFault25ResetAfterHeaders(t *testing.T) {
	t.Parallel()
	const yaml = "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"
	for _, f := range f13Formats() {
		unaryHead := func(n int) f13Step {
			return thenReset(merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), f.okBody[:len(f.okBody)/2])
		}
		t.Run(f.name+"/unary then success", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, unaryHead(1), f.okStep(2))
			resp, err := f13Start(t, yaml+f.yaml, up.URL, &f13Clock{}).Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			rr := m.GetRetryReasons()
			if resp.GetMessage().GetParts()[0].GetText() != okText || m.GetAttempts() != 2 || up.requests() != 2 || len(rr) != 1 {
				t.Fatalf("answer %v, meta %v, upstream %d", resp.GetMessage(), m, up.requests())
			}
			if rr[0].GetReason() != "unavailable" || !strings.HasPrefix(rr[0].GetMessage(), brokeMidAnswer) || rr[0].GetUpstreamStatus() != 200 ||
				rr[0].GetProviderRequestId() != f.wantReqID(1) || m.GetProviderRequestId() != f.wantReqID(2) {
				t.Errorf("retry reason %v, meta request id %q", rr[0], m.GetProviderRequestId())
			}
		})
		t.Run(f.name+"/unary every attempt", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, unaryHead(1), unaryHead(2))
			_, err := f13Start(t, yaml+f.yaml, up.URL, &f13Clock{}).Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_UNAVAILABLE" || !strings.Contains(st.Message(), brokeMidAnswer) {
				t.Fatalf("status %v %s %q", st.Code(), info.GetReason(), st.Message())
			}
			m := failedMeta(t, err)
			rr := m.GetRetryReasons()
			if m.GetAttempts() != 2 || up.requests() != 2 || len(rr) != 2 || m.GetProviderRequestId() != f.wantReqID(2) {
				t.Fatalf("meta %v, upstream %d", m, up.requests())
			}
			for i, r := range rr {
				if r.GetReason() != "unavailable" || !strings.HasPrefix(r.GetMessage(), brokeMidAnswer) || r.GetUpstreamStatus() != 200 || r.GetProviderRequestId() != f.wantReqID(i+1) {
					t.Errorf("retry reason %d = %v", i, r)
				}
			}
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(2) {
				t.Errorf("rate_limit %v: want the last attempt's headers' (remaining %d)", m.GetRateLimit(), f.wantRL(2))
			}
		})
		t.Run(f.name+"/stream before content then success", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, thenReset(f.streamHead(1), f.head), respond(200, f.streamHead(2), f.complete()))
			got := readStream13(t, f13Start(t, yaml+f.yaml, up.URL, &f13Clock{}))
			if got.err != nil || got.text != okText || up.requests() != 2 {
				t.Fatalf("stream %+v, upstream %d", got, up.requests())
			}
			m := got.end.GetMeta()
			if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != "unavailable" || !strings.HasPrefix(rr[0].GetMessage(), brokeMidAnswer) ||
				rr[0].GetUpstreamStatus() != 200 || rr[0].GetProviderRequestId() != f.wantReqID(1) {
				t.Errorf("retry reasons %v", rr)
			}
		})
		t.Run(f.name+"/reset before headers", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, resetConn, f.okStep(2))
			resp, err := f13Start(t, yaml+f.yaml, up.URL, &f13Clock{}).Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			rr := resp.GetMeta().GetRetryReasons()
			if len(rr) != 1 || rr[0].GetReason() != "connection_error" || strings.Contains(rr[0].GetMessage(), "answered") || rr[0].GetUpstreamStatus() != 0 || rr[0].GetProviderRequestId() != "" {
				t.Errorf("retry reasons %v", rr)
			}
		})
	}
}
