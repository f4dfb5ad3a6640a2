package pipeline

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

func tracedPipeline(rec *tracetest.SpanRecorder, content bool) *Pipeline {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tu, ts := Trace(Tracing{Tracer: tp.Tracer("t"), ProviderType: "anthropic", ProviderName: "claude", RecordContent: content})
	return New([]Interceptor{tu}, []StreamInterceptor{ts})
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.String()
	}
	return m
}

func streamCall(p provider.Provider) *Call {
	return &Call{Op: OpGenerate, Provider: p, Deployment: "d2", Fallback: true, Request: &provider.Request{
		Model: "claude-x", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "secret question"}}}}},
	}}
}

type singleStream struct{ s provider.Stream }

func (o singleStream) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, errors.New("unused")
}
func (o singleStream) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return o.s, nil
}

// A stream's span ends when the stream does, with what its events said;
// the text goes on the span only with RecordContent.
func TestTraceStream(t *testing.T) {
	t.Parallel()
	for _, content := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		events := []*provider.Event{
			{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{ResponseId: "msg_1", ResolvedModel: "claude-x-2025", ProviderRequestId: "req_9"}},
			{Kind: provider.EventText, Text: "Hello "}, {Kind: provider.EventText, Text: "there"},
			{Kind: provider.EventUsage, Usage: &llmrelayv1.Usage{InputTokens: 5, OutputTokens: 2}},
			{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_LENGTH}},
		}
		s, err := tracedPipeline(rec, content).Stream(context.Background(), streamCall(singleStream{&listStream{events: events}}))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := s.Recv(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			if len(rec.Ended()) != 0 {
				t.Fatal("span ended before the stream")
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if len(rec.Ended()) != 1 {
			t.Fatalf("%d spans, want one (ended once)", len(rec.Ended()))
		}
		sp := rec.Ended()[0]
		a := spanAttrs(sp)
		for k, v := range map[attribute.Key]string{
			telemetry.ProviderNameKey: "anthropic", telemetry.Provider: "claude", telemetry.RequestModel: "claude-x",
			telemetry.ResponseModel: "claude-x-2025", telemetry.ResponseID: "msg_1", telemetry.ProviderRequestID: "req_9",
			telemetry.FinishReasons: `["length"]`, telemetry.InputTokens: "5", telemetry.OutputTokens: "2",
			telemetry.Deployment: "d2", telemetry.FallbackTaken: "true",
		} {
			if a[k] != v {
				t.Errorf("content %v: %s = %q, want %q", content, k, a[k], v)
			}
		}
		_, hasIn := a[telemetry.InputMessages]
		out, hasOut := a[telemetry.OutputMessages]
		if hasIn != content || hasOut != content || (content && (!strings.Contains(out, "Hello there") || !strings.Contains(a[telemetry.InputMessages], "secret question"))) {
			t.Errorf("content %v: input %v, output %q", content, hasIn, out)
		}
	}
}

// A stream that fails mid-way marks its span with the error class only.
func TestTraceStreamError(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	boom := &provider.Error{Kind: provider.KindUnavailable, HTTPStatus: 200, Message: "overloaded, key sk-123"}
	s, err := tracedPipeline(rec, false).Stream(context.Background(), streamCall(singleStream{&listStream{errAt: boom}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, boom) {
		t.Fatalf("Recv = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sp := rec.Ended()[0]
	if sp.Status().Code != codes.Error || sp.Status().Description != "unavailable" || spanAttrs(sp)[telemetry.ErrorType] != "unavailable" {
		t.Errorf("status %v, error.type %q", sp.Status(), spanAttrs(sp)[telemetry.ErrorType])
	}
	for _, kv := range sp.Attributes() {
		if strings.Contains(kv.Value.String(), "sk-123") {
			t.Errorf("%s carries the provider's message", kv.Key)
		}
	}
}

// withTraceContext adds traceparent to a copy; the caller's request keeps
// its headers.
func TestWithTraceContext(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("t").Start(context.Background(), "x")
	defer span.End()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", "k")
	out := withTraceContext(req, propagation.TraceContext{})
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	if out.Header.Get("traceparent") != want || out.Header.Get("X-Api-Key") != "k" {
		t.Errorf("copy headers = %v, want traceparent %s", out.Header, want)
	}
	if req.Header.Get("traceparent") != "" || len(req.Header) != 1 {
		t.Errorf("the caller's request was modified: %v", req.Header)
	}
}

// A request whose adapter reserved the trace context gets traceparent in
// its own headers, not in a copy; the mark never stays on a request
// sent without a trace context (nothing traced, tracing off, a
// propagator without traceparent), and a configured traceparent is not
// the mark: that request is copied as before.
func TestPropagateReserved(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	traced, span := tp.Tracer("t").Start(context.Background(), "x")
	defer span.End()
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	newReq := func(ctx context.Context, traceparent []string) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream/v1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", "k")
		if traceparent != nil {
			req.Header[provider.TraceContextKey] = traceparent
		}
		provider.ReserveTraceContext(req.Header)
		return req
	}
	tc := propagation.TraceContext{}

	req := newReq(traced, nil)
	if !provider.TraceContextReserved(req.Header) {
		t.Fatal("ReserveTraceContext did not mark the headers")
	}
	out := (&roundTripper{prop: tc}).propagate(req)
	if out != req || req.Header.Get("traceparent") != want || req.Header.Get("X-Api-Key") != "k" || len(req.Header) != 2 {
		t.Errorf("reserved: copied %v, headers %v, want traceparent %s in place", out != req, req.Header, want)
	}

	for name, c := range map[string]struct {
		ctx  context.Context
		prop propagation.TextMapPropagator
	}{
		"no span":     {context.Background(), tc},
		"tracing off": {traced, nil},
		"baggage":     {traced, propagation.Baggage{}},
	} {
		req := newReq(c.ctx, nil)
		if c.prop == nil && !provider.TraceContextReserved(req.Header) {
			t.Fatalf("%s: not reserved", name)
		}
		out := (&roundTripper{prop: c.prop}).propagate(req)
		if _, ok := out.Header[provider.TraceContextKey]; ok || len(out.Header) != 1 {
			t.Errorf("%s: headers %v, want the mark removed", name, out.Header)
		}
	}

	req = newReq(traced, []string{"configured"})
	if provider.TraceContextReserved(req.Header) {
		t.Fatal("a configured traceparent was taken for the mark")
	}
	out = (&roundTripper{prop: tc}).propagate(req)
	if out == req || out.Header.Get("traceparent") != want || req.Header.Get("traceparent") != "configured" {
		t.Errorf("configured: copied %v, copy %v, request %v", out != req, out.Header, req.Header)
	}
}

// The carrier stores each header under its canonical name, as
// http.Header.Set would, and reads them back.
func TestHeaderCarrier(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	c := headerCarrier(h)
	for _, k := range []string{"traceparent", "tracestate", "baggage", "x-b3-traceid"} {
		c.Set(k, k+"-v")
	}
	for _, k := range []string{"Traceparent", "Tracestate", "Baggage", "X-B3-Traceid"} {
		if v := h[k]; len(v) != 1 || v[0] != strings.ToLower(k)+"-v" {
			t.Errorf("%s = %v", k, v)
		}
	}
	if c.Get("tracestate") != "tracestate-v" || len(c.Keys()) != 4 {
		t.Errorf("Get = %q, Keys = %v", c.Get("tracestate"), c.Keys())
	}
}

// Span names are kept per operation and model, up to maxSpanNames; past
// that they are still right, only made per call.
func TestSpanNamesBounded(t *testing.T) {
	t.Parallel()
	var s spanNames
	for i := range maxSpanNames + 10 {
		model := "m" + strconv.Itoa(i)
		if got := s.name("chat", model); got != "chat "+model {
			t.Fatalf("name = %q", got)
		}
	}
	if got := s.name("embeddings", "m1"); got != "embeddings m1" {
		t.Errorf("name = %q, want the operation's", got)
	}
	if s.n != maxSpanNames {
		t.Errorf("%d names kept, want at most %d", s.n, maxSpanNames)
	}
}

// Each finish reason's attribute is made once, in the conventions' words.
func TestFinishAttr(t *testing.T) {
	t.Parallel()
	for f, want := range map[llmrelayv1.FinishReason]string{
		llmrelayv1.FinishReason_FINISH_REASON_STOP: `["stop"]`, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS: `["tool_calls"]`,
		llmrelayv1.FinishReason(999): `["999"]`,
	} {
		if got := finishAttr(f); got.Key != telemetry.FinishReasons || got.Value.String() != want {
			t.Errorf("finishAttr(%v) = %s %s, want %s", f, got.Key, got.Value.String(), want)
		}
	}
}

// metaGen answers Generate with its meta, or fails with err.
type metaGen struct {
	meta *llmrelayv1.ResponseMeta
	err  error
}

func (g metaGen) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	if g.err != nil {
		return nil, g.err
	}
	return &provider.Result{Meta: g.meta, Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}}, nil
}

func (g metaGen) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, errors.New("unused")
}

// The attribute slices come from a pool: each span keeps its own
// attributes after its slice served the next calls (the SDK copies them),
// and a slice goes back cleared, holding no message contents.
func TestTraceAttrsPooled(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	p := tracedPipeline(rec, true)
	calls := []struct {
		model, id string
		err       error
	}{{"m1", "r1", nil}, {"m2", "", &provider.Error{Kind: provider.KindUnavailable, HTTPStatus: 503}}, {"m3", "r3", nil}}
	for _, c := range calls {
		call := streamCall(metaGen{meta: &llmrelayv1.ResponseMeta{ResponseId: c.id}, err: c.err})
		call.Request.Model = c.model
		_, _ = p.Unary(context.Background(), call)
	}
	s, err := p.Stream(context.Background(), streamCall(singleStream{&listStream{events: []*provider.Event{
		{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{ResponseId: "r4"}}}}}))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = s.Recv()
	}
	ended := rec.Ended()
	if len(ended) != 4 {
		t.Fatalf("%d spans", len(ended))
	}
	for i, want := range []map[attribute.Key]string{
		{telemetry.RequestModel: "m1", telemetry.ResponseID: "r1"},
		{telemetry.RequestModel: "m2", telemetry.ErrorType: "http_503"},
		{telemetry.RequestModel: "m3", telemetry.ResponseID: "r3"},
		{telemetry.RequestModel: "claude-x", telemetry.ResponseID: "r4"},
	} {
		a := spanAttrs(ended[i])
		for k, v := range want {
			if a[k] != v {
				t.Errorf("span %d: %s = %q, want %q", i, k, a[k], v)
			}
		}
		_, hasErr := a[telemetry.ErrorType]
		_, hasID := a[telemetry.ResponseID]
		if hasErr == hasID || len(a) != len(ended[i].Attributes()) {
			t.Errorf("span %d: attributes of another call or repeated: %v", i, ended[i].Attributes())
		}
	}

	buf := getAttrs()
	attrs := append(*buf, telemetry.InputMessages.String("secret"))
	full := attrs[:cap(attrs)]
	putAttrs(buf, attrs)
	for _, kv := range full {
		if kv.Key != "" {
			t.Fatalf("a pooled slice keeps %s", kv.Key)
		}
	}
}

// ctxProvider answers with what it is given, remembering the span context
// it was called with.
type ctxProvider struct{ got []trace.SpanContext }

func (p *ctxProvider) Generate(ctx context.Context, _ *provider.Request) (*provider.Result, error) {
	p.got = append(p.got, trace.SpanContextFromContext(ctx))
	return &provider.Result{Meta: &llmrelayv1.ResponseMeta{ResponseId: "resp_unsampled_1"}}, nil
}

func (p *ctxProvider) Stream(ctx context.Context, _ *provider.Request) (provider.Stream, error) {
	p.got = append(p.got, trace.SpanContextFromContext(ctx))
	return &listStream{events: []*provider.Event{{Kind: provider.EventText, Text: "hi"}}}, nil
}

// An attempt in a trace sampled out records no span, yet its context
// still carries a span of the caller's trace for traceparent, unary and
// streamed.
func TestTraceSampledOut(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	tu, ts := Trace(Tracing{Tracer: tp.Tracer("t"), ProviderType: "openai", ProviderName: "oai"})
	pl := New([]Interceptor{tu}, []StreamInterceptor{ts})
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x4b, 0xf9, 1}, SpanID: trace.SpanID{0x00, 0xf0, 2}, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	p := &ctxProvider{}
	res, err := pl.Unary(ctx, streamCall(p))
	if err != nil || res.Meta.GetResponseId() != "resp_unsampled_1" {
		t.Fatalf("unary: %v, %v", res, err)
	}
	s, err := pl.Stream(ctx, streamCall(p))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Recv(); err != nil || ev.Text != "hi" {
		t.Fatalf("stream: %v, %v", ev, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Started()) + len(rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded in a trace sampled out", n)
	}
	if len(p.got) != 2 {
		t.Fatalf("provider called %d times", len(p.got))
	}
	for i, sc := range p.got {
		if sc.TraceID() != parent.TraceID() || !sc.SpanID().IsValid() || sc.SpanID() == parent.SpanID() || sc.IsSampled() {
			t.Errorf("call %d: span context %v, want a new unsampled span of trace %s", i, sc, parent.TraceID())
		}
	}
}

// A recorded span carries a file's mime type and size, never its bytes,
// and the request's own message is left as it was.
func TestTraceContentLeavesFileBytesOut(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	c := streamCall(singleStream{&listStream{events: []*provider.Event{{Kind: provider.EventText, Text: "ok"}}}})
	secret := []byte("%PDF-1.4 confidential contract text")
	file := &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: secret}, MimeType: "application/pdf", Filename: "c.pdf"}
	c.Request.Messages[0].Parts = append(c.Request.Messages[0].Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: file}})
	s, err := tracedPipeline(rec, true).Stream(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	in := spanAttrs(rec.Ended()[0])[telemetry.InputMessages]
	if strings.Contains(in, "confidential") || strings.Contains(in, "JVBERi") {
		t.Errorf("file bytes on the span: %s", in)
	}
	if !strings.Contains(in, "application/pdf") || !strings.Contains(in, "c.pdf (35 bytes, not recorded)") || !strings.Contains(in, "secret question") {
		t.Errorf("input messages = %s", in)
	}
	if string(file.GetData()) != string(secret) {
		t.Error("the request's file was changed")
	}
}
