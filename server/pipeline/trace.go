package pipeline

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
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
	tr := &tracer{Tracing: t}
	unary := func(ctx context.Context, c *Call, next Handler) (*provider.Result, error) {
		ctx, span, buf := tr.start(ctx, c)
		if buf == nil { // not recorded: the span only carries the trace context upstream
			res, err := next(ctx, c)
			span.End()
			return res, err
		}
		attrs := *buf
		res, err := next(ctx, c)
		if err != nil {
			attrs = fail(span, attrs, err)
		} else {
			s := spanState{}
			s.meta(res.Meta)
			if t.RecordContent && res.Message != nil {
				s.output(res.Message)
			}
			attrs = s.append(attrs)
		}
		span.SetAttributes(attrs...)
		putAttrs(buf, attrs)
		span.End()
		return res, err
	}
	stream := func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error) {
		ctx, span, buf := tr.start(ctx, c)
		if buf == nil { // not recorded: nothing to end with the stream
			span.End()
			return next(ctx, c)
		}
		s, err := next(ctx, c)
		if err != nil {
			attrs := fail(span, *buf, err)
			span.SetAttributes(attrs...)
			putAttrs(buf, attrs)
			span.End()
			return nil, err
		}
		return &tracedStream{Stream: s, span: span, buf: buf, content: t.RecordContent}, nil
	}
	return unary, stream
}

// tracer is a Trace interceptor's state: its span names.
type tracer struct {
	Tracing
	names spanNames
}

// clientStart is the options of a client span's start, made once: a
// variadic argument to an interface method is a new slice each call.
var clientStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

// clientSpanAttrs is the capacity of a client span's attributes: up to
// 12 of the request, then up to 9 of the response or 1 of an error.
const clientSpanAttrs = 21

// attrsPool holds the slices client span attributes are gathered in: the
// SDK copies what SetAttributes is given, so the slice is free again once
// the attributes are set (a 21-attribute slice is 1.3 KB a call).
var attrsPool = sync.Pool{New: func() any {
	s := make([]attribute.KeyValue, 0, clientSpanAttrs)
	return &s
}}

// getAttrs is an empty slice from attrsPool, behind the pointer the pool
// keeps (putting a new pointer back would allocate one per call).
func getAttrs() *[]attribute.KeyValue {
	buf := attrsPool.Get().(*[]attribute.KeyValue)
	*buf = (*buf)[:0]
	return buf
}

// putAttrs gives buf back to attrsPool once SetAttributes has copied
// attrs (buf's slice, appended to), cleared so that the pool holds no
// message contents.
func putAttrs(buf *[]attribute.KeyValue, attrs []attribute.KeyValue) {
	if cap(attrs) != clientSpanAttrs { // grown past the capacity: not the pool's slice any more
		return
	}
	clear(attrs)
	*buf = attrs[:0]
	attrsPool.Put(buf)
}

// start starts an attempt's span and returns the request's attributes,
// which are set with the response's when the span ends: one
// SetAttributes call makes the span's attribute slice once, at its size
// (two calls grew it twice), and no sampler of ours reads attributes.
// The slice is attrsPool's (*buf): putAttrs it once set. buf is nil when
// the span is not recording (a trace sampled out): the span then only
// carries the trace context to the provider, and no attribute is made.
func (t *tracer) start(ctx context.Context, c *Call) (_ context.Context, _ trace.Span, buf *[]attribute.KeyValue) {
	op, model := "chat", ""
	switch {
	case c.Request != nil:
		model = c.Request.Model
	case c.Embed != nil:
		op, model = "embeddings", c.Embed.Model
	}
	ctx, span := t.Tracer.Start(ctx, t.names.name(op, model), clientStart...)
	if !span.IsRecording() {
		return ctx, span, nil
	}
	buf = getAttrs()
	attrs := *buf
	if c.Request != nil {
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
	*buf = attrs
	return ctx, span, buf
}

// spanNames keeps the span names ("chat <model>") made so far, so that a
// call does not build its name anew; it stops growing at maxSpanNames
// (the models a provider is called with are configured, but a model
// name can come from the caller).
type spanNames struct {
	mu   sync.RWMutex
	byOp map[string]map[string]string
	n    int
}

const maxSpanNames = 256

func (s *spanNames) name(op, model string) string {
	s.mu.RLock()
	name, ok := s.byOp[op][model]
	s.mu.RUnlock()
	if ok {
		return name
	}
	name = op + " " + model
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n < maxSpanNames {
		if s.byOp == nil {
			s.byOp = map[string]map[string]string{}
		}
		if s.byOp[op] == nil {
			s.byOp[op] = map[string]string{}
		}
		if _, ok := s.byOp[op][model]; !ok {
			s.byOp[op][model] = name
			s.n++
		}
	}
	return name
}

// fail marks the span failed with the error's class and returns attrs
// with error.type.
func fail(span trace.Span, attrs []attribute.KeyValue, err error) []attribute.KeyValue {
	reason, _, _ := ReasonFor(err)
	span.SetStatus(codes.Error, reason)
	return append(attrs, telemetry.ErrorType.String(reason))
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

// append returns attrs with the response attributes.
func (s *spanState) append(attrs []attribute.KeyValue) []attribute.KeyValue {
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
		attrs = append(attrs, finishAttr(finish))
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
	return attrs
}

// finishName is the finish reason as the conventions write it (stop,
// length, tool_calls, content_filter).
func finishName(f llmrelayv1.FinishReason) string {
	return strings.ToLower(strings.TrimPrefix(f.String(), "FINISH_REASON_"))
}

// finishAttrs is gen_ai.response.finish_reasons of each finish reason,
// made once.
var finishAttrs = func() map[llmrelayv1.FinishReason]attribute.KeyValue {
	m := make(map[llmrelayv1.FinishReason]attribute.KeyValue, len(llmrelayv1.FinishReason_name))
	for v := range llmrelayv1.FinishReason_name {
		f := llmrelayv1.FinishReason(v)
		m[f] = telemetry.FinishReasons.StringSlice([]string{finishName(f)})
	}
	return m
}()

// finishAttr is gen_ai.response.finish_reasons of f.
func finishAttr(f llmrelayv1.FinishReason) attribute.KeyValue {
	if kv, ok := finishAttrs[f]; ok {
		return kv
	}
	return telemetry.FinishReasons.StringSlice([]string{finishName(f)}) // a value newer than this build
}

// messagesJSON is the messages in the contract's JSON form.
func messagesJSON(msgs []*llmrelayv1.Message) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := protojson.Marshal(withoutFileBytes(m))
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

// withoutFileBytes is m with the bytes of its inline files and images left
// out (a span carries the conversation, never a document, a recording or
// megabytes of base64): each such file keeps its mime type and name, and
// its filename says how many bytes it had; each inline image (bytes or a
// data: URL) keeps its mime type and detail, and its url says how many
// bytes it had. Images by http(s) URL stay as they are. m itself is not
// changed.
func withoutFileBytes(m *llmrelayv1.Message) *llmrelayv1.Message {
	var out *llmrelayv1.Message
	replace := func(i int, p *llmrelayv1.Part) {
		if out == nil {
			out = &llmrelayv1.Message{Role: m.GetRole(), Name: m.GetName(), Parts: slices.Clone(m.GetParts())}
		}
		out.Parts[i] = p
	}
	for i, p := range m.GetParts() {
		if img := p.GetImage(); img != nil {
			if n, mime, inline := inlineImage(img); inline {
				replace(i, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source:   &llmrelayv1.Image_Url{Url: notRecorded(n)},
					MimeType: mime, Detail: img.GetDetail()}}})
			}
			continue
		}
		f := p.GetFile()
		if len(f.GetData()) == 0 {
			continue
		}
		name := f.GetFilename()
		if name != "" {
			name += " "
		}
		replace(i, &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{
			MimeType: f.GetMimeType(), Filename: name + notRecorded(len(f.GetData()))}}})
	}
	if out == nil {
		return m
	}
	return out
}

// notRecorded stands for n bytes left off a span.
func notRecorded(n int) string { return "(" + strconv.Itoa(n) + " bytes, not recorded)" }

// inlineImage reports whether img carries its bytes (data, or a data: URL)
// and then their size and the mime type (the image's, else the data URL's
// media type). A data URL's size is its base64's decoded length.
func inlineImage(img *llmrelayv1.Image) (n int, mime string, inline bool) {
	mime = img.GetMimeType()
	if d := img.GetData(); len(d) > 0 {
		return len(d), mime, true
	}
	u := img.GetUrl()
	if len(u) < 5 || !strings.EqualFold(u[:5], "data:") {
		return 0, mime, false
	}
	meta, payload, ok := strings.Cut(u[5:], ",")
	if !ok {
		return len(u), mime, true // not a well-formed data URL: still not recorded
	}
	media, _, _ := strings.Cut(meta, ";")
	if mime == "" {
		mime = media
	}
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		payload = strings.TrimRight(payload, "=")
		return len(payload) * 3 / 4, mime, true
	}
	return len(payload), mime, true
}

// tracedStream ends the attempt's span when the stream ends: EOF, an
// error (a failed read-ahead Retry moves past included) or Close.
type tracedStream struct {
	provider.Stream
	span    trace.Span
	buf     *[]attribute.KeyValue // the request's attributes (attrsPool's), until the end
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
	attrs := *t.buf
	if err != nil && !errors.Is(err, io.EOF) {
		attrs = fail(t.span, attrs, err)
	} else {
		attrs = t.state.append(attrs)
	}
	t.span.SetAttributes(attrs...)
	putAttrs(t.buf, attrs)
	t.buf = nil
	t.span.End()
}
