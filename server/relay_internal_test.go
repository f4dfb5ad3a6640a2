package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/cost"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// eventsStream is a provider stream that returns its events, then io.EOF.
type eventsStream struct{ events []*provider.Event }

func (s *eventsStream) Recv() (*provider.Event, error) {
	if len(s.events) == 0 {
		return nil, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *eventsStream) Close() error { return nil }

// goneSink is a chat stream's sink whose client goes away at a given send:
// that send and every later one fail as grpc-go's do then.
type goneSink struct {
	failAt string // the event kind whose send fails: "text", "usage", "end"
	gone   bool
	sent   []string
}

func (s *goneSink) send(kind string) error {
	if kind == s.failAt {
		s.gone = true
	}
	if s.gone {
		return status.Error(codes.Canceled, "context canceled")
	}
	s.sent = append(s.sent, kind)
	return nil
}

func (s *goneSink) start(*llmrelayv1.StreamStart) error         { return s.send("start") }
func (s *goneSink) text(string, string, string, bool) error     { return s.send("text") }
func (s *goneSink) refusal(string, string) error                { return s.send("refusal") }
func (s *goneSink) reasoning(*llmrelayv1.ReasoningDelta) error  { return s.send("reasoning") }
func (s *goneSink) providerItem(*llmrelayv1.ProviderItem) error { return s.send("provider_item") }
func (s *goneSink) toolDelta(*llmrelayv1.ToolCallDelta) error   { return s.send("tool_delta") }
func (s *goneSink) toolDone(*llmrelayv1.ToolCallDone) error     { return s.send("tool_done") }
func (s *goneSink) usage(*llmrelayv1.Usage) error               { return s.send("usage") }
func (s *goneSink) end(*llmrelayv1.StreamEnd) error             { return s.send("end") }
func (s *goneSink) tools() bool                                 { return false }

// relayFixture is the minimum a relay needs: a gateway with metrics, a
// priced model and a caller with a tokens-per-minute budget.
func relayFixture(t *testing.T) (*gateway, *prepared, *auth.Caller) {
	t.Helper()
	tel, err := telemetry.New(context.Background(), config.Telemetry{Metrics: config.Metrics{Enabled: true}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	const token = "relay-token-0123456789abcdef"
	sum := sha256.Sum256([]byte(token))
	store, err := auth.New(config.Auth{Tokens: []config.Token{{Name: "relayer", SHA256: hex.EncodeToString(sum[:]), TokensPerMinute: 100}}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	caller, err := store.Authenticate(metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+token)))
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{log: slog.New(slog.DiscardHandler), now: time.Now, tel: tel}
	p := &prepared{
		st:    &state{},
		model: &catalog.Model{Name: "m", Prices: &cost.Table{Currency: "USD", Input: 1e9, CachedInput: 1e9, CacheWrite: 1e9, Output: 1e9, Reasoning: 1e9}},
		meta:  &llmrelayv1.ResponseMeta{RequestId: "req-1", Provider: "up", RequestedModel: "m"},
		start: time.Now(), providerType: "openai", caller: caller,
	}
	p.call = &p.callStore
	p.call.Record = &p.recordStore
	p.call.Request = &provider.Request{Model: "up-model"}
	p.call.Record.Attempts = 1
	return g, p, caller
}

// histogram returns the sample count and sum of a metric family's series
// whose labels include want.
func histogram(t *testing.T, g *gateway, family string, want map[string]string) (uint64, float64) {
	t.Helper()
	mfs, err := g.tel.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, want) {
				n += m.GetHistogram().GetSampleCount()
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return n, sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestRelayClientGoneAccounts: a stream whose client goes away (a send
// fails, not for the send limit) is still accounted: its duration under
// the send's code, the usage the provider reported so far (tokens it
// produced and will bill), its cost and the caller's token budget. The
// relay returned the send error without any of it, so a client that hung
// up before the end event spent nothing.
func TestRelayClientGoneAccounts(t *testing.T) {
	usage := &llmrelayv1.Usage{InputTokens: 40, OutputTokens: 80, TotalTokens: 120}
	for _, failAt := range []string{"text", "usage", "end"} {
		t.Run(failAt, func(t *testing.T) {
			g, p, caller := relayFixture(t)
			s := &eventsStream{events: []*provider.Event{
				{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{ResponseId: "resp-1", ProviderRequestId: "preq-1"}},
				{Kind: provider.EventText, Text: "Hello"},
				{Kind: provider.EventUsage, Usage: usage},
				{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_STOP}},
			}}
			if failAt == "text" {
				// The provider's usage so far came before the text
				// (Anthropic's message_start, say).
				s.events[1], s.events[2] = s.events[2], s.events[1]
			}
			sink := &goneSink{failAt: failAt}
			err := g.relayStream(context.Background(), p, sink, s)
			if status.Code(err) != codes.Canceled {
				t.Fatalf("err %v: want the send's error", err)
			}
			n, _ := histogram(t, g, "gen_ai_client_operation_duration_seconds", map[string]string{"error_type": "Canceled"})
			if ok, _ := histogram(t, g, "gen_ai_client_operation_duration_seconds", map[string]string{"error_type": ""}); n+ok != 1 {
				t.Errorf("%d calls observed as canceled, %d as a success: want the one call", n, ok)
			}
			if failAt != "end" && n != 1 {
				t.Errorf("%d calls observed as canceled", n)
			}
			if n, sum := histogram(t, g, "gen_ai_client_token_usage", map[string]string{"token_type": "output"}); n != 1 || sum != 80 {
				t.Errorf("output tokens: %d observations, sum %v; want 80", n, sum)
			}
			if err := caller.AdmitTokens(time.Now()); err == nil {
				t.Error("the caller's 100 tokens a minute are not charged with the call's 120")
			}
		})
	}
}
