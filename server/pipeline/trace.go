package pipeline

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// Tracing is what the Trace interceptor needs to know of its provider.
type Tracing struct {
	Tracer trace.Tracer
	// ProviderType and ProviderName are the configured provider's.
	ProviderType, ProviderName string
	// RecordContent puts the messages sent and received on the spans.
	RecordContent bool
}

// Trace makes a client span per attempt ("chat <model>", GenAI semantic
// conventions) with the request parameters, the attempt number, the
// reason the previous attempt failed, the deployment and whether it is a
// fallback, then the response's model, id, finish reasons, usage and
// provider request id; a failed attempt gets error.type (the retry reason
// class, never the provider's message, which may echo a key). The span is
// in the context the adapter sends with, so the transport propagates it
// upstream as traceparent. Place it inside Retry; a stream's span lasts
// until the stream ends.
func Trace(t Tracing) (Interceptor, StreamInterceptor) {
	unary := func(ctx context.Context, c *Call, next Handler) (*provider.Result, error) {
		ctx, span := t.start(ctx, c)
		res, err := next(ctx, c)
		if err != nil {
			fail(span, err)
		} else {
			s := spanState{}
			s.meta(res.Meta)
			if t.RecordContent && res.Message != nil {
				s.output(res.Message)
			}
			s.set(span)
		}
		span.End()
		return res, err
	}
	stream := func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error) {
		ctx, span := t.start(ctx, c)
		s, err := next(ctx, c)
		if err != nil {
			fail(span, err)
			span.End()
			return nil, err
		}
		return &tracedStream{Stream: s, span: span, content: t.RecordContent}, nil
	}
	return unary, stream
}

func (t Tracing) start(ctx context.Context, c *Call) (context.Context, trace.Span) {
	op, model := "chat", ""
	attrs := make([]attribute.KeyValue, 0, 12)
	switch {
	case c.Request != nil:
		model = c.Request.Model
		o := c.Request.Options
		if o.Temperature != nil {
			attrs = append(attrs, telemetry.RequestTemperature.Float64(o.GetTemperature()))
		}
		if o.TopP != nil {
			attrs = append(attrs, telemetry.RequestTopP.Float64(o.GetTopP()))
		}
		if o.MaxTokens != nil {
			attrs = append(attrs, telemetry.RequestMaxTokens.Int(int(o.GetMaxTokens())))
		}
		if t.RecordContent {
			attrs = append(attrs, telemetry.InputMessages.String(messagesJSON(c.Request.Messages)))
		}
	case c.Embed != nil:
		op, model = "embeddings", c.Embed.Model
	}
	attrs = append(attrs,
		telemetry.OperationName.String(op), telemetry.ProviderNameKey.String(telemetry.ProviderName(t.ProviderType)),
		telemetry.RequestModel.String(model), telemetry.Provider.String(t.ProviderName),
		telemetry.Deployment.String(c.Deployment), telemetry.Attempt.Int(int(c.Record.Attempts)),
		telemetry.FallbackTaken.Bool(c.Fallback))
	if n := len(c.Record.RetryReasons); n > 0 {
		// The attempt before this one failed for this reason.
		attrs = append(attrs, telemetry.RetryReason.String(c.Record.RetryReasons[n-1].GetReason()))
	}
	return t.Tracer.Start(ctx, op+" "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

func fail(span trace.Span, err error) {
	reason, _, _ := ReasonFor(err)
	span.SetAttributes(telemetry.ErrorType.String(reason))
	span.SetStatus(codes.Error, reason)
}

// spanState gathers the response attributes of a span.
type spanState struct {
	responseModel, responseID, requestID string
	finish                               llmrelayv1.FinishReason
	usage                                *llmrelayv1.Usage
	toolCalls                            bool
	out                                  string // the output messages' JSON, with record_content
	text                                 strings.Builder
}

func (s *spanState) meta(m *llmrelayv1.ResponseMeta) {
	if m == nil {
		return
	}
	if v := m.GetResolvedModel(); v != "" {
		s.responseModel = v
	}
	if v := m.GetResponseId(); v != "" {
		s.responseID = v
	}
	if v := m.GetProviderRequestId(); v != "" {
		s.requestID = v
	}
	if v := m.GetFinishReason(); v != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		s.finish = v
	}
	if m.GetUsage() != nil {
		s.usage = m.GetUsage()
	}
}

func (s *spanState) output(msg *llmrelayv1.Message) {
	s.out = messagesJSON([]*llmrelayv1.Message{msg})
}

func (s *spanState) set(span trace.Span) {
	attrs := make([]attribute.KeyValue, 0, 8)
	if s.responseModel != "" {
		attrs = append(attrs, telemetry.ResponseModel.String(s.responseModel))
	}
	if s.responseID != "" {
		attrs = append(attrs, telemetry.ResponseID.String(s.responseID))
	}
	if s.requestID != "" {
		attrs = append(attrs, telemetry.ProviderRequestID.String(s.requestID))
	}
	finish := s.finish
	if s.toolCalls {
		finish = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
	}
	if finish != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		attrs = append(attrs, telemetry.FinishReasons.StringSlice([]string{finishName(finish)}))
	}
	if u := s.usage; u != nil {
		attrs = append(attrs, telemetry.InputTokens.Int(int(u.GetInputTokens())), telemetry.OutputTokens.Int(int(u.GetOutputTokens())))
		if u.GetCachedInputTokens() > 0 {
			attrs = append(attrs, telemetry.CachedInputTokens.Int(int(u.GetCachedInputTokens())))
		}
		if u.GetReasoningTokens() > 0 {
			attrs = append(attrs, telemetry.ReasoningTokensUsed.Int(int(u.GetReasoningTokens())))
		}
	}
	if s.out != "" {
		attrs = append(attrs, telemetry.OutputMessages.String(s.out))
	} else if s.text.Len() > 0 {
		attrs = append(attrs, telemetry.OutputMessages.String(messagesJSON([]*llmrelayv1.Message{{
			Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: s.text.String()}}},
		}})))
	}
	span.SetAttributes(attrs...)
}

// finishName is the finish reason as the conventions write it (stop,
// length, tool_calls, content_filter).
func finishName(f llmrelayv1.FinishReason) string {
	return strings.ToLower(strings.TrimPrefix(f.String(), "FINISH_REASON_"))
}

// messagesJSON is the messages in the contract's JSON form.
func messagesJSON(msgs []*llmrelayv1.Message) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := protojson.Marshal(m)
		if err != nil {
			// Not expected for a message the gateway holds; the span says
			// so instead of carrying half a conversation.
			return `"unrecordable: ` + err.Error() + `"`
		}
		b.Write(raw)
	}
	b.WriteByte(']')
	return b.String()
}

// tracedStream ends the attempt's span when the stream ends: EOF, an
// error (a failed read-ahead Retry moves past included) or Close.
type tracedStream struct {
	provider.Stream
	span    trace.Span
	content bool
	state   spanState
	once    sync.Once
}

func (t *tracedStream) Recv() (*provider.Event, error) {
	ev, err := t.Stream.Recv()
	switch {
	case err != nil:
		t.once.Do(func() { t.end(err) })
	case ev != nil:
		switch ev.Kind {
		case provider.EventMeta:
			t.state.meta(ev.Meta)
		case provider.EventUsage:
			t.state.usage = ev.Usage
		case provider.EventToolCall:
			t.state.toolCalls = true
		case provider.EventText:
			if t.content {
				t.state.text.WriteString(ev.Text)
			}
		}
	}
	return ev, err
}

func (t *tracedStream) Close() error {
	t.once.Do(func() { t.end(nil) })
	return t.Stream.Close()
}

func (t *tracedStream) end(err error) {
	if err != nil && !errors.Is(err, io.EOF) {
		fail(t.span, err)
	} else {
		t.state.set(t.span)
	}
	t.span.End()
}
