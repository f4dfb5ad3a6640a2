package server

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// account reports a call that reached the provider pipeline, once, when
// it ends: the metrics, and on the RPC's server span the configured model
// and the cost (an agent round's span: its summary). err is
// the status the RPC returns (nil on success), and is returned as is.
func (g *gateway) account(ctx context.Context, p *prepared, meta *llmrelayv1.ResponseMeta, err error) error {
	if g.tel == nil {
		return err
	}
	op := "chat"
	if p.call.Op == pipeline.OpEmbed {
		op = "embeddings"
	}
	errType := ""
	if err != nil {
		errType = status.Code(err).String()
	}
	provider := meta.GetProvider()
	if m := g.tel.Metrics(); m != nil {
		caller := ""
		if p.caller != nil {
			caller = p.caller.Name
		}
		m.ObserveCall(telemetry.Call{
			Operation: op, Provider: provider, Model: p.model.Name, Caller: caller, Meta: meta,
			Duration: g.now().Sub(p.start), ErrorType: errType, RetryProviders: retryProviders(p.model, meta),
		})
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return err
	}
	// The client spans carry the GenAI attributes of each attempt. The
	// RPC's server span adds what they do not: the configured model the
	// caller named and the cost. It stays within 8 attributes (with its
	// 5 rpc.* ones), where the SDK de-duplicates them at the span's end
	// without allocating a map: a summary repeating the attempts'
	// attributes there cost 1.4 µs and 1.7 KB per call (docs/decisions.md,
	// "The server span names the model and the cost"). An agent round's
	// span, which has no attempt span of its own level, sums the round up.
	var buf [9]attribute.KeyValue // on the stack: the server span's attributes copy them
	attrs := append(buf[:0], telemetry.Model.String(p.model.Name))
	if p.agentRound { // a round's span keeps its invoke_agent operation
		attrs = append(attrs, telemetry.Provider.String(provider),
			telemetry.ProviderNameKey.String(telemetry.ProviderName(p.providerType)), telemetry.FallbackTaken.Bool(len(p.tried) > 0))
		if u := meta.GetUsage(); u != nil {
			attrs = append(attrs, telemetry.InputTokens.Int(int(u.GetInputTokens())), telemetry.OutputTokens.Int(int(u.GetOutputTokens())))
		}
	}
	if c := meta.GetCost(); c != nil {
		attrs = append(attrs, telemetry.CostNanos.Int64(c.GetAmountNanos()), telemetry.CostCurrency.String(c.GetCurrency()))
	}
	if !telemetry.AddServerSpanAttributes(ctx, span, attrs...) {
		span.SetAttributes(slices.Clone(attrs)...) // another span (an agent round's): set now
	}
	return err
}

// retryProviders names the provider of each retry reason's deployment;
// nil when the call had no failed attempt.
func retryProviders(m *catalog.Model, meta *llmrelayv1.ResponseMeta) []string {
	reasons := meta.GetRetryReasons()
	if len(reasons) == 0 {
		return nil
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = meta.GetProvider()
		for _, d := range m.Deployments {
			if d.Name == r.GetDeployment() {
				out[i] = d.Provider.Name
				break
			}
		}
	}
	return out
}

// serveTelemetry starts the metrics endpoint (when on); the returned func
// stops it and flushes the spans not exported yet.
func (s *Server) serveTelemetry() (stop func(), err error) {
	srv, lis, err := s.tel.ListenMetrics(s.log)
	if err != nil {
		return nil, err
	}
	if srv != nil {
		go telemetry.ServeHTTP(srv, lis, s.log)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv != nil {
			if err := srv.Shutdown(ctx); err != nil {
				s.log.Warn("metrics endpoint shutdown", slog.String("error", err.Error()))
			}
		}
		s.tel.Shutdown(ctx, s.log)
	}, nil
}
