package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

const observedYAML = geminiYAML + `    prices: {input: 0.30, output: 2.50}
telemetry:
  metrics: {enabled: true, listen: "127.0.0.1:0"}
`

// startObserved runs a server with an in-memory span recorder and metrics.
func startObserved(t *testing.T, yaml, url string) (llmrelayv1.GatewayServiceClient, *tracetest.SpanRecorder, *server.Server) {
	t.Helper()
	cfg, err := config.Parse([]byte(strings.ReplaceAll(yaml, "{{URL}}", url)), "test")
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), server.WithTelemetryOptions(telemetry.WithSpanProcessor(rec)))
	if err != nil {
		t.Fatal(err)
	}
	return llmrelayv1.NewGatewayServiceClient(serveBufconn(t, srv)), rec, srv
}

const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerParent = "00f067aa0ba902b7"
)

// withTraceparent is a caller that sends its own trace context.
func withTraceparent() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+callerTrace+"-"+callerParent+"-01")
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// spansOf returns the recorded spans of one trace: the server span and the
// client spans, in start order.
func spansOf(t *testing.T, rec *tracetest.SpanRecorder, traceID string) (srv sdktrace.ReadOnlySpan, clients []sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() != traceID {
			continue
		}
		switch s.SpanKind() {
		case trace.SpanKindServer:
			srv = s
		case trace.SpanKindClient:
			clients = append(clients, s)
		}
	}
	if srv == nil {
		t.Fatalf("no server span in trace %s (%d spans recorded)", traceID, len(rec.Ended()))
	}
	return srv, clients
}

// checkAttrs compares the wanted attributes (by their emitted string form).
func checkAttrs(t *testing.T, what string, s sdktrace.ReadOnlySpan, want map[attribute.Key]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if g, ok := got[k]; !ok || g.String() != v {
			t.Errorf("%s: %s = %q, want %q", what, k, g.String(), v)
		}
	}
}

// assertNoSecretInSpans: no attribute, event or status carries the key.
func assertNoSecretInSpans(t *testing.T, rec *tracetest.SpanRecorder) {
	t.Helper()
	for _, s := range rec.Ended() {
		texts := []string{s.Name(), s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, kv.Value.String())
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				texts = append(texts, kv.Value.String())
			}
		}
		assertNoSecret(t, texts...)
	}
}

// TestTracingChat: the caller's trace is continued; a client span per
// attempt carries the GenAI attributes, the server span its rpc.* ones,
// the configured model and the cost; the failed attempt
// is marked with its class; traceparent reaches the provider; the trace id
// and the cost are in the meta; no message content, no key on any span.
func TestTracingChat(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, rec(t, "error_503"), rec(t, "plain"))
	c, spans, _ := startObserved(t, observedYAML, up.URL)
	temp, maxTokens := 0.2, int32(256)
	req := chatReq()
	req.Options = &llmrelayv1.GenerationOptions{Temperature: &temp, MaxTokens: &maxTokens}
	resp, err := c.Chat(withTraceparent(), req)
	if err != nil {
		t.Fatal(err)
	}
	m := resp.GetMeta()
	if m.GetTraceId() != callerTrace {
		t.Errorf("meta.trace_id = %q, want the caller's %s", m.GetTraceId(), callerTrace)
	}
	// 14 input tokens at 0.30/M, 34 output tokens (27 of them reasoning,
	// priced as output) at 2.50/M: 4200 + 85000 nanos.
	if m.GetCost().GetCurrency() != "USD" || m.GetCost().GetAmountNanos() != 89_200 {
		t.Errorf("cost = %v (usage %v), want 89200 nanos USD", m.GetCost(), m.GetUsage())
	}
	srv, clients := spansOf(t, spans, callerTrace)
	if srv.Parent().SpanID().String() != callerParent || srv.Name() != "llmrelay.v1.GatewayService/Chat" {
		t.Errorf("server span %q has parent %s, want the caller's %s", srv.Name(), srv.Parent().SpanID(), callerParent)
	}
	checkAttrs(t, "server span", srv, map[attribute.Key]string{
		"rpc.system.name": "grpc", "rpc.method": "llmrelay.v1.GatewayService/Chat", "rpc.response.status_code": "OK",
		telemetry.Model: "flash", telemetry.CostNanos: "89200", telemetry.CostCurrency: "USD",
	})
	// The attempts' GenAI attributes are on their spans, not repeated on
	// the server span: at most 8 attributes, which the SDK de-duplicates
	// without allocating a map.
	if n := len(srv.Attributes()); n > 8 {
		t.Errorf("server span has %d attributes, want at most 8: %v", n, srv.Attributes())
	}
	if len(clients) != 2 {
		t.Fatalf("%d client spans, want one per attempt (2)", len(clients))
	}
	common := map[attribute.Key]string{
		telemetry.OperationName: "chat", telemetry.ProviderNameKey: "gcp.gemini", telemetry.RequestModel: "gemini-2.5-flash",
		telemetry.RequestTemperature: "0.2", telemetry.RequestMaxTokens: "256", telemetry.Deployment: "google",
		telemetry.Provider: "google", telemetry.FallbackTaken: "false",
	}
	for i, s := range clients {
		if s.Parent().SpanID() != srv.SpanContext().SpanID() || s.Name() != "chat gemini-2.5-flash" {
			t.Errorf("client span %d %q: parent %s, want the server span", i, s.Name(), s.Parent().SpanID())
		}
		checkAttrs(t, "client span", s, common)
	}
	failed, ok := clients[0], clients[1]
	checkAttrs(t, "failed attempt", failed, map[attribute.Key]string{telemetry.Attempt: "1", telemetry.ErrorType: "http_503"})
	if failed.Status().Code != codes.Error {
		t.Errorf("failed attempt status = %v", failed.Status())
	}
	checkAttrs(t, "second attempt", ok, map[attribute.Key]string{
		telemetry.Attempt: "2", telemetry.RetryReason: "http_503", telemetry.ResponseModel: "gemini-2.5-flash",
		telemetry.ResponseID: "a3RkkEBaRksg8QxJ_KDc8ZB", telemetry.FinishReasons: `["stop"]`,
		telemetry.InputTokens: "14", telemetry.OutputTokens: "34", telemetry.ReasoningTokensUsed: "27",
	})
	if ok.Status().Code == codes.Error {
		t.Errorf("answered attempt status = %v", ok.Status())
	}
	for _, s := range clients {
		if _, found := attrs(s)[telemetry.InputMessages]; found {
			t.Error("message contents recorded without record_content")
		}
	}
	// Each attempt sent its own span as the parent upstream.
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	for i, r := range reqs {
		want := "00-" + callerTrace + "-" + clients[i].SpanContext().SpanID().String() + "-01"
		if got := r.Header.Get("traceparent"); got != want {
			t.Errorf("request %d traceparent = %q, want %q", i, got, want)
		}
	}
	assertNoSecretInSpans(t, spans)
}

// TestTracingStreamToolsRetry: a streamed tools call retried once: one
// client span per attempt, the second with the stream's response
// attributes (finish reason tool_calls, usage), ended when the stream
// ended; a trace id of our own when the caller sends none.
func TestTracingStreamToolsRetry(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, rec(t, "error_503"), rec(t, "stream_tools"))
	c, spans, _ := startObserved(t, observedYAML, up.URL)
	s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{
		Model: "flash", Messages: []*llmrelayv1.Message{user("Weather and time in Paris?")}, Tools: weatherTools(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	var meta *llmrelayv1.ResponseMeta
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEnd(); e != nil {
			meta = e.GetMeta()
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(meta.GetTraceId()) || meta.GetAttempts() != 2 {
		t.Fatalf("meta: trace id %q, attempts %d", meta.GetTraceId(), meta.GetAttempts())
	}
	u := meta.GetUsage()
	wantCost := (int64(u.GetInputTokens())*300_000_000 + int64(u.GetOutputTokens())*2_500_000_000 + 500_000) / 1_000_000
	if u.GetInputTokens() != 61 || meta.GetCost().GetAmountNanos() != wantCost {
		t.Errorf("cost = %v for usage %v, want %d", meta.GetCost(), u, wantCost)
	}
	srv, clients := spansOf(t, spans, meta.GetTraceId())
	if srv.Name() != "llmrelay.v1.GatewayService/StreamTools" || srv.Parent().IsValid() {
		t.Errorf("server span %q, parent %v", srv.Name(), srv.Parent())
	}
	if len(clients) != 2 {
		t.Fatalf("%d client spans, want 2", len(clients))
	}
	checkAttrs(t, "failed attempt", clients[0], map[attribute.Key]string{telemetry.Attempt: "1", telemetry.ErrorType: "http_503"})
	checkAttrs(t, "streamed attempt", clients[1], map[attribute.Key]string{
		telemetry.OperationName: "chat", telemetry.ProviderNameKey: "gcp.gemini", telemetry.RequestModel: "gemini-2.5-flash",
		telemetry.Attempt: "2", telemetry.RetryReason: "http_503", telemetry.ResponseID: "jwJrqN2xBcv_wu6Fi2dqbBh",
		telemetry.FinishReasons: `["tool_calls"]`, telemetry.InputTokens: "61", telemetry.OutputTokens: "83",
		telemetry.ResponseModel: meta.GetResolvedModel(),
	})
	if d := clients[1].EndTime().Sub(clients[1].StartTime()); d <= 0 || clients[1].EndTime().After(srv.EndTime()) {
		t.Errorf("stream span lasted %v, ended after the RPC: %v", d, clients[1].EndTime().After(srv.EndTime()))
	}
	assertNoSecretInSpans(t, spans)
}

// TestTracingRecordsContentWhenAsked: with record_content the client span
// has the messages sent and the answer.
func TestTracingRecordsContentWhenAsked(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, rec(t, "plain"))
	c, spans, _ := startObserved(t, observedYAML+"  tracing: {record_content: true}\n", up.URL)
	resp, err := c.Chat(context.Background(), chatReq())
	if err != nil {
		t.Fatal(err)
	}
	_, clients := spansOf(t, spans, resp.GetMeta().GetTraceId())
	if len(clients) != 1 {
		t.Fatalf("%d client spans", len(clients))
	}
	a := attrs(clients[0])
	if in := a[telemetry.InputMessages].AsString(); !strings.Contains(in, "What is the capital of France?") {
		t.Errorf("input messages = %s", in)
	}
	if out := a[telemetry.OutputMessages].AsString(); !strings.Contains(out, "The capital of France is Paris.") {
		t.Errorf("output messages = %s", out)
	}
}

// TestTracingOff: the default configuration makes no telemetry and the
// meta has no trace id, whatever the caller sends.
func TestTracingOff(t *testing.T) {
	t.Parallel()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Telemetry() != nil {
		t.Fatal("telemetry on by default")
	}
	c := llmrelayv1.NewGatewayServiceClient(serveBufconn(t, srv))
	resp, err := c.Chat(withTraceparent(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetMeta().GetTraceId() != "" || resp.GetMeta().GetCost() != nil {
		t.Errorf("trace id %q, cost %v with telemetry off and no prices", resp.GetMeta().GetTraceId(), resp.GetMeta().GetCost())
	}
}

// scrape reads the metrics endpoint's text.
func scrape(t *testing.T, srv *server.Server) string {
	t.Helper()
	hs := httptest.NewServer(srv.Telemetry().Metrics().Handler(false))
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestMetricsAfterCalls: after a retried call, a stream and a fallback,
// the endpoint shows the token and duration histograms, retries, upstream
// errors, fallbacks, cost and the gRPC server metrics, with the documented
// labels.
func TestMetricsAfterCalls(t *testing.T) {
	t.Parallel()
	bad := providertest.Replay(t, rec(t, "error_503"))
	good := providertest.Replay(t, rec(t, "error_503"), rec(t, "plain"), rec(t, "stream_text"), rec(t, "plain"), rec(t, "error_400"))
	yaml := strings.ReplaceAll(`
defaults:
  retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: east, type: gemini, base_url: BAD, api_key: k-east-0000}
  - {name: west, type: gemini, base_url: {{URL}}, api_key: k-west-0000}
models:
  - name: flash
    provider: west
    upstream_model: gemini-2.5-flash
    capabilities: {chat: {format: gemini}}
    prices: {input: 0.30, output: 2.50}
  - name: routed
    deployments:
      - {provider: east, upstream_model: gemini-2.5-flash}
      - {provider: west, upstream_model: gemini-2.5-flash}
    capabilities: {chat: {format: gemini}}
telemetry:
  metrics: {enabled: true, listen: "127.0.0.1:0"}
`, "BAD", bad.URL)
	c, _, srv := startObserved(t, yaml, good.URL)
	ctx := context.Background()
	if _, err := c.Chat(ctx, chatReq()); err != nil { // 503, then plain
		t.Fatal(err)
	}
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "flash", Messages: chatReq().GetMessages()})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "routed", Messages: chatReq().GetMessages()}); err != nil {
		t.Fatal(err) // east: 503 twice; west answers
	}
	_, err = c.Chat(ctx, chatReq())
	if status.Code(err) != grpccodes.InvalidArgument { // a 400: not retried
		t.Fatalf("400 upstream: %v", err)
	}
	// A failed call's meta (FailedCallMeta) names its trace too.
	var failed *llmrelayv1.FailedCallMeta
	for _, d := range status.Convert(err).Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			failed = f
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(failed.GetMeta().GetTraceId()) {
		t.Errorf("failed call meta: trace id %q", failed.GetMeta().GetTraceId())
	}
	text := scrape(t, srv)
	for _, want := range []string{
		`gen_ai_client_token_usage_count{caller="",model="flash",operation="chat",provider="west",token_type="input"} 2`,
		`gen_ai_client_token_usage_sum{caller="",model="flash",operation="chat",provider="west",token_type="output"}`,
		`gen_ai_client_token_usage_bucket{caller="",model="flash",operation="chat",provider="west",token_type="input",le="4"} 0`,
		`gen_ai_client_token_usage_bucket{caller="",model="flash",operation="chat",provider="west",token_type="input",le="16"} 2`,
		`gen_ai_client_operation_duration_seconds_count{caller="",error_type="",model="flash",operation="chat",provider="west"} 2`,
		`gen_ai_client_operation_duration_seconds_count{caller="",error_type="",model="routed",operation="chat",provider="west"} 1`,
		`gen_ai_client_operation_duration_seconds_count{caller="",error_type="InvalidArgument",model="flash",operation="chat",provider="west"} 1`,
		`llmrelay_upstream_errors_total{provider="west",status="400"} 1`,
		`llmrelay_time_to_first_token_seconds_count{model="flash",provider="west"} 1`,
		`llmrelay_retries_total{provider="west",reason="http_503"} 1`,
		`llmrelay_retries_total{provider="east",reason="http_503"} 2`,
		`llmrelay_upstream_errors_total{provider="east",status="503"} 2`,
		`llmrelay_upstream_errors_total{provider="west",status="503"} 1`,
		`llmrelay_fallbacks_total{from="east",model="routed"} 1`,
		`llmrelay_streams_in_flight{model="flash"} 0`,
		`llmrelay_cost_nanos_total{caller="",currency="USD",model="flash",provider="west"}`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Chat",grpc_service="llmrelay.v1.GatewayService",grpc_type="unary"} 2`,
		`grpc_server_handled_total{grpc_code="InvalidArgument",grpc_method="Chat",grpc_service="llmrelay.v1.GatewayService",grpc_type="unary"} 1`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="StreamChat",grpc_service="llmrelay.v1.GatewayService",grpc_type="server_stream"} 1`,
		`grpc_server_handling_seconds_bucket{`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `llmrelay_retries_total{provider="west",reason="http_400"}`) {
		t.Error("a 400 that was not retried counted as a retry")
	}
	// No request ids or text the caller sent among the label values.
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "capital") || regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-`).MatchString(line) {
			t.Errorf("unbounded label value: %s", line)
		}
	}
}

// TestMetricsByCaller: the call, token and cost metrics name the
// authenticated caller of each call.
func TestMetricsByCaller(t *testing.T) {
	t.Parallel()
	y := spendYAML("") + `    - {name: other, sha256: ` + sha(echoToken) + `}
telemetry:
  metrics: {enabled: true, listen: "127.0.0.1:0"}
`
	c, _, srv := startObserved(t, y, "")
	for _, tok := range []string{spendToken, echoToken} {
		if _, err := c.Chat(bearer(tok), pricedChat("hello")); err != nil {
			t.Fatal(err)
		}
	}
	text := scrape(t, srv)
	for _, caller := range []string{"spender", "other"} {
		for _, want := range []string{
			`gen_ai_client_operation_duration_seconds_count{caller="` + caller + `",error_type="",model="builtin/priced",operation="chat",provider="builtin"} 1`,
			`gen_ai_client_token_usage_count{caller="` + caller + `",model="builtin/priced",operation="chat",provider="builtin",token_type="input"} 1`,
			`llmrelay_cost_nanos_total{caller="` + caller + `",currency="USD",model="builtin/priced",provider="builtin"}`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	}
}

// TestTracingEmbed: an Embed call's attempt is an embeddings span of the
// built-in provider.
func TestTracingEmbed(t *testing.T) {
	t.Parallel()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), server.WithTelemetryOptions(telemetry.WithSpanProcessor(rec)))
	if err != nil {
		t.Fatal(err)
	}
	c := llmrelayv1.NewGatewayServiceClient(serveBufconn(t, srv))
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	srvSpan, clients := spansOf(t, rec, resp.GetMeta().GetTraceId())
	if len(clients) != 1 || clients[0].Name() != "embeddings embed" {
		t.Fatalf("client spans %v", clients)
	}
	checkAttrs(t, "embed attempt", clients[0], map[attribute.Key]string{
		telemetry.OperationName: "embeddings", telemetry.ProviderNameKey: "llmrelay.builtin", telemetry.RequestModel: "embed", telemetry.Attempt: "1",
	})
	checkAttrs(t, "embed rpc", srvSpan, map[attribute.Key]string{telemetry.Model: "builtin/embed"})
}

// TestTracingAgent: an agent run with two client tools over two rounds
// traces one span per round under the server span, the model call's client
// span (GenAI attributes) inside each round, and one span per tool
// execution; the run's meta carries the trace id and the summed cost.
func TestTracingAgent(t *testing.T) {
	t.Parallel()
	yaml := `
providers:
  - {name: b, type: builtin}
models:
  - name: echo
    provider: b
    upstream_model: echo
    capabilities: {tools: {format: builtin}}
    prices: {input: 1.5, output: 6}
`
	c, rec, _ := startObserved(t, yaml, "")
	evs, err := agentRun(withTraceparent(), t, c, &llmrelayv1.AgentSetup{Model: "echo",
		Messages: []*llmrelayv1.Message{user("Paris")}, Tools: agentTools(t)}, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	end := evs[len(evs)-1].GetEnd()
	meta := end.GetMeta()
	if meta.GetTraceId() != callerTrace || meta.GetModelCalls() != 2 {
		t.Fatalf("agent meta = %v", meta)
	}
	// The run's cost is the sum of its rounds', each priced by the model.
	var want int64
	for _, r := range meta.GetRounds() {
		want += r.GetMeta().GetCost().GetAmountNanos()
	}
	if want == 0 || meta.GetCost().GetAmountNanos() != want || meta.GetCost().GetCurrency() != "USD" {
		t.Errorf("cost %v, want the rounds' sum %d USD", meta.GetCost(), want)
	}
	u := meta.GetUsage()
	if exact := int64(u.GetInputTokens())*1500 + int64(u.GetOutputTokens())*6000; want != exact {
		t.Errorf("cost %d nanos, want %d for usage %v at 1.5/6 per million", want, exact, u)
	}

	srv, clients := spansOf(t, rec, callerTrace)
	var rounds, tools []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() != callerTrace {
			continue
		}
		switch attrs(s)[telemetry.OperationName].AsString() {
		case "invoke_agent":
			rounds = append(rounds, s)
		case "execute_tool":
			tools = append(tools, s)
		}
	}
	if len(rounds) != 2 || len(tools) != 2 || len(clients) != 2 {
		t.Fatalf("%d round spans, %d tool spans, %d client spans; want 2, 2, 2", len(rounds), len(tools), len(clients))
	}
	roundIDs := map[trace.SpanID]bool{}
	for _, r := range rounds {
		if r.Parent().SpanID() != srv.SpanContext().SpanID() {
			t.Errorf("round span %s is not a child of the server span", r.Name())
		}
		roundIDs[r.SpanContext().SpanID()] = true
		// A round's span sums the round up (it has no attempt span of
		// its own level); the operation stays invoke_agent.
		got := attrs(r)
		for _, k := range []attribute.Key{telemetry.Model, telemetry.Provider, telemetry.InputTokens, telemetry.OutputTokens, telemetry.CostNanos} {
			if _, ok := got[k]; !ok {
				t.Errorf("round span %s lacks %s", r.Name(), k)
			}
		}
		if op := got[telemetry.OperationName].AsString(); op != "invoke_agent" {
			t.Errorf("round span %s: operation %q, want invoke_agent", r.Name(), op)
		}
	}
	for _, cs := range clients {
		if !roundIDs[cs.Parent().SpanID()] {
			t.Errorf("model call span %s is not inside a round", cs.Name())
		}
		checkAttrs(t, "model call", cs, map[attribute.Key]string{
			telemetry.OperationName: "chat", telemetry.ProviderNameKey: "llmrelay.builtin", "gen_ai.request.model": "echo",
		})
	}
	names := map[string]bool{}
	for _, ts := range tools {
		if !roundIDs[ts.Parent().SpanID()] {
			t.Errorf("tool span %s is not inside a round", ts.Name())
		}
		names[attrs(ts)[telemetry.ToolName].AsString()] = true
		if ts.Status().Code == codes.Error {
			t.Errorf("tool span %s failed: %v", ts.Name(), ts.Status())
		}
	}
	if !names["get_weather"] || !names["get_time"] {
		t.Errorf("tool spans for %v, want get_weather and get_time", names)
	}
}

// TestServerSpanRPCAttributes pins the server span of each RPC, as
// otelgrpc's stats handler made it before the gateway made its own
// (docs/decisions.md): named after the method, of kind server, continuing
// the caller's trace, parent of the client spans, with rpc.system.name,
// rpc.method, rpc.response.status_code and the listener's server.address
// and server.port; the span status is an error only for the codes that
// are the server's fault (Unavailable here, not NotFound); health checks
// make no span.
func TestServerSpanRPCAttributes(t *testing.T) {
	t.Parallel()
	good := providertest.Replay(t, rec(t, "plain"), rec(t, "stream_text"))
	down := providertest.Replay(t, rec(t, "error_503"))
	yaml := strings.NewReplacer("GOOD", good.URL, "DOWN", down.URL).Replace(`
defaults:
  retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: google, type: gemini, base_url: GOOD, api_key: k-good-0000}
  - {name: broken, type: gemini, base_url: DOWN, api_key: k-down-0000}
models:
  - {name: flash, provider: google, upstream_model: gemini-2.5-flash, capabilities: {chat: {format: gemini}}}
  - {name: down, provider: broken, upstream_model: gemini-2.5-flash, capabilities: {chat: {format: gemini}}}
telemetry:
  tracing: {enabled: true, exporter: none}
`)
	cfg, err := config.Parse([]byte(yaml), "test")
	if err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), server.WithTelemetryOptions(telemetry.WithSpanProcessor(spans)))
	if err != nil {
		t.Fatal(err)
	}
	conn, port := serveTCP(t, srv)
	c := llmrelayv1.NewGatewayServiceClient(conn)

	type want struct {
		name, code string
		errStatus  bool
	}
	check := func(what, traceID string, w want) sdktrace.ReadOnlySpan {
		t.Helper()
		s, clients := spansOf(t, spans, traceID)
		if s.Name() != w.name {
			t.Errorf("%s: server span %q, want %q", what, s.Name(), w.name)
		}
		checkAttrs(t, what, s, map[attribute.Key]string{
			"rpc.system.name": "grpc", "rpc.method": w.name, "rpc.response.status_code": w.code,
			"server.address": "127.0.0.1", "server.port": port,
		})
		if got := s.Status().Code == codes.Error; got != w.errStatus {
			t.Errorf("%s: span status %v, want an error status: %v", what, s.Status(), w.errStatus)
		}
		for i, cs := range clients {
			if cs.Parent().SpanID() != s.SpanContext().SpanID() {
				t.Errorf("%s: client span %d's parent is %s, not the server span", what, i, cs.Parent().SpanID())
			}
		}
		return s
	}

	resp, err := c.Chat(withTraceparent(), chatReq())
	if err != nil {
		t.Fatal(err)
	}
	s := check("chat", resp.GetMeta().GetTraceId(), want{name: "llmrelay.v1.GatewayService/Chat", code: "OK"})
	if s.Parent().SpanID().String() != callerParent || !s.Parent().IsRemote() {
		t.Errorf("chat: server span's parent %s (remote %v), want the caller's %s", s.Parent().SpanID(), s.Parent().IsRemote(), callerParent)
	}

	st, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var meta *llmrelayv1.ResponseMeta
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEnd(); e != nil {
			meta = e.GetMeta()
		}
	}
	if s := check("stream", meta.GetTraceId(), want{name: "llmrelay.v1.GatewayService/StreamChat", code: "OK"}); s.Parent().IsValid() {
		t.Errorf("stream: server span has a parent %v without a caller's traceparent", s.Parent())
	}

	// Failed calls carry no meta: each is sent in a trace of the caller's.
	_, errDown := c.Chat(callerCtx(downTrace), &llmrelayv1.ChatRequest{Model: "down", Messages: []*llmrelayv1.Message{user("Hi")}})
	if status.Code(errDown) != grpccodes.Unavailable {
		t.Fatalf("down: %v, want Unavailable", errDown)
	}
	s = check("unavailable", downTrace, want{name: "llmrelay.v1.GatewayService/Chat", code: "UNAVAILABLE", errStatus: true})
	if got, want := s.Status().Description, status.Convert(errDown).Message(); got != want {
		t.Errorf("unavailable: span status %q, want the status message %q", got, want)
	}
	_, err = c.Chat(callerCtx(notFoundTrace), &llmrelayv1.ChatRequest{Model: "nope", Messages: []*llmrelayv1.Message{user("Hi")}})
	if status.Code(err) != grpccodes.NotFound {
		t.Fatalf("unknown model: %v, want NotFound", err)
	}
	check("not found", notFoundTrace, want{name: "llmrelay.v1.GatewayService/Chat", code: "NOT_FOUND"})

	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range spans.Ended() {
		if strings.HasPrefix(s.Name(), "grpc.health") {
			t.Errorf("health check traced: %q", s.Name())
		}
	}
}

const (
	downTrace     = "5bf92f3577b34da6a3ce929d0e0e4737"
	notFoundTrace = "6bf92f3577b34da6a3ce929d0e0e4738"
)

// callerCtx is a caller sending traceparent in trace traceID.
func callerCtx(traceID string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-"+callerParent+"-01")
}

// serveTCP serves srv on a loopback TCP port (bufconn has no host and
// port) and returns a client connection and the port.
func serveTCP(t *testing.T, srv *server.Server) (*grpc.ClientConn, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return conn, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
}
