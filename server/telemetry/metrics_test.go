package telemetry

import (
	"strconv"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// The series of a call's labels are kept (up to maxCachedSeries) and
// record what the vectors would: a series appears only once something is
// recorded in it (no output tokens for embeddings, no tokens without
// usage), and past the bound calls still count.
func TestObserveCallSeries(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	usage := &llmrelayv1.ResponseMeta{
		Usage: &llmrelayv1.Usage{InputTokens: 3, OutputTokens: 5}, TimeToFirstToken: durationpb.New(time.Second),
		Cost: &llmrelayv1.Cost{Currency: "USD", AmountNanos: 7},
	}
	for range 2 {
		m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "m", Meta: usage, Duration: time.Second})
	}
	m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "m", Meta: &llmrelayv1.ResponseMeta{Cost: &llmrelayv1.Cost{Currency: "EUR", AmountNanos: 1}}})
	m.ObserveCall(Call{Operation: "embeddings", Provider: "p", Model: "e", Meta: &llmrelayv1.ResponseMeta{Usage: &llmrelayv1.Usage{InputTokens: 2}}})
	m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "failed", ErrorType: "Unavailable"})

	if got := len(gather(t, m)["gen_ai_client_operation_duration_seconds"]); got != 3 {
		t.Errorf("%d duration series, want 3 (chat m, embeddings e, failed)", got)
	}
	if got := len(gather(t, m)["gen_ai_client_token_usage"]); got != 3 {
		t.Errorf("%d token series, want 3 (chat m input and output, embeddings e input)", got)
	}
	if got := len(gather(t, m)["llmrelay_time_to_first_token_seconds"]); got != 1 {
		t.Errorf("%d ttft series, want 1", got)
	}
	cost := map[string]float64{}
	for _, mt := range gather(t, m)["llmrelay_cost_nanos_total"] {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "currency" {
				cost[l.GetValue()] = mt.GetCounter().GetValue()
			}
		}
	}
	if cost["USD"] != 14 || cost["EUR"] != 1 {
		t.Errorf("cost = %v, want USD 14 and EUR 1 (another currency than the kept one)", cost)
	}

	for i := range maxCachedSeries + 3 {
		m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "x" + strconv.Itoa(i), Duration: time.Millisecond})
	}
	if len(m.calls) != maxCachedSeries {
		t.Errorf("%d kept, want at most %d", len(m.calls), maxCachedSeries)
	}
	if got := len(gather(t, m)["gen_ai_client_operation_duration_seconds"]); got != 3+maxCachedSeries+3 {
		t.Errorf("%d duration series, want every call's", got)
	}
}

// gather is the registry's metrics by family name.
func gather(t *testing.T, m *Metrics) map[string][]*dto.Metric {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*dto.Metric{}
	for _, f := range fams {
		out[f.GetName()] = f.GetMetric()
	}
	return out
}

// A model's in-flight gauge counts the streams started and not done, from
// the kept gauge as from a new one.
func TestStreamStarted(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	inFlight := func() float64 {
		for _, mt := range gather(t, m)["llmrelay_streams_in_flight"] {
			return mt.GetGauge().GetValue()
		}
		return -1
	}
	a, b := m.StreamStarted("m"), m.StreamStarted("m")
	if got := inFlight(); got != 2 {
		t.Fatalf("in flight = %v, want 2", got)
	}
	a()
	b()
	if got := inFlight(); got != 0 || len(m.streaming) != 1 {
		t.Errorf("in flight = %v (%d gauges kept), want 0 (1)", got, len(m.streaming))
	}
}

// Calls recorded concurrently into the same kept series all count.
func TestObserveCallConcurrent(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	meta := &llmrelayv1.ResponseMeta{Usage: &llmrelayv1.Usage{InputTokens: 1, OutputTokens: 1}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "m", Meta: meta, Duration: time.Millisecond})
			}
		})
	}
	wg.Wait()
	for _, mt := range gather(t, m)["gen_ai_client_token_usage"] {
		if n := mt.GetHistogram().GetSampleCount(); n != 800 {
			t.Errorf("%v: %d samples, want 800", mt.GetLabel(), n)
		}
	}
}

// TestUpstreamErrorsInsideAnswer: a failed attempt whose upstream_status
// is the 2xx it received (a cut, output that did not parse, an error
// event inside the answer: round 26) is labelled by its reason, never
// status="200", which reads as a success; an error answer by its status.
func TestUpstreamErrorsInsideAnswer(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "m", ErrorType: "Unavailable", Meta: &llmrelayv1.ResponseMeta{RetryReasons: []*llmrelayv1.RetryReason{
		{Reason: "bad_response", UpstreamStatus: 200}, {Reason: "unavailable", UpstreamStatus: 200}, {Reason: "http_503", UpstreamStatus: 503},
	}}})
	got := map[string]float64{}
	for _, mt := range gather(t, m)["llmrelay_upstream_errors_total"] {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "status" {
				got[l.GetValue()] = mt.GetCounter().GetValue()
			}
		}
	}
	if len(got) != 3 || got["bad_response"] != 1 || got["unavailable"] != 1 || got["503"] != 1 {
		t.Errorf("upstream errors by status %v", got)
	}
}
