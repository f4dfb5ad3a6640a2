package telemetry

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Metrics are llmrelay's Prometheus metrics, in a registry of their own.
// Every label value comes from the configuration (provider, model,
// deployment and caller names) or a fixed set (operations, token types,
// gRPC codes, HTTP statuses, retry reasons): no request ids, no text a
// caller sends.
type Metrics struct {
	reg            *prometheus.Registry
	grpc           *grpcMetrics
	tokens         *prometheus.HistogramVec
	duration       *prometheus.HistogramVec
	ttft           *prometheus.HistogramVec
	retries        *prometheus.CounterVec
	upstreamErrors *prometheus.CounterVec
	streams        *prometheus.GaugeVec
	fallbacks      *prometheus.CounterVec
	cost           *prometheus.CounterVec

	// calls holds the series of the calls seen so far, so that a call
	// does not look its labels up in each vector (hashing every label
	// value under a lock); streaming holds the in-flight gauge per model.
	// Both stop growing at maxCachedSeries (the labels are configured
	// names and fixed words, but bounded is bounded).
	mu        sync.RWMutex
	calls     map[callKey]*callSeries
	streaming map[string]streamGauge
}

// maxCachedSeries bounds calls and streaming; past it, the vectors are
// looked up per call.
const maxCachedSeries = 1024

type callKey struct{ op, provider, model, caller, errType string }

// callSeries are the series a call with callKey's labels records into.
// All but duration are made on first use, as the vectors would make them
// (a series shows on the endpoint from its making on): not every call has
// usage, streams or has a price. cost is for costCurrency only.
type callSeries struct {
	duration prometheus.Observer

	mu                        sync.Mutex
	tokensIn, tokensOut, ttft prometheus.Observer
	costCurrency              string
	cost                      prometheus.Counter
}

// Bucket boundaries recommended by the GenAI semantic conventions.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// NewMetrics registers the metrics, the gRPC server metrics and the Go
// runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg:  prometheus.NewRegistry(),
		grpc: newGRPCMetrics(),
		tokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gen_ai_client_token_usage", Help: "Tokens per provider call, by token type (input, output).", Buckets: tokenBuckets,
		}, []string{"operation", "provider", "model", "caller", "token_type"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gen_ai_client_operation_duration_seconds", Help: "Duration of a call from the RPC's start to its end, retries and fallbacks included.", Buckets: durationBuckets,
		}, []string{"operation", "provider", "model", "caller", "error_type"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "llmrelay_time_to_first_token_seconds", Help: "Time from the RPC's start to the first content event of a stream.", Buckets: durationBuckets,
		}, []string{"provider", "model"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmrelay_retries_total", Help: "Failed provider attempts followed by another attempt (a retry or a fallback), by reason.",
		}, []string{"provider", "reason"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmrelay_upstream_errors_total", Help: "Failed provider attempts, by HTTP status (or error kind when there is none).",
		}, []string{"provider", "status"}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llmrelay_streams_in_flight", Help: "Streaming RPCs being relayed.",
		}, []string{"model"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmrelay_fallbacks_total", Help: "Calls of a routed model that moved on from a failed deployment.",
		}, []string{"model", "from"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmrelay_cost_nanos_total", Help: "Cost of the calls, from the configured prices, in billionths of the currency (exact integers up to 2^53).",
		}, []string{"provider", "model", "caller", "currency"}),
	}
	m.reg.MustRegister(m.grpc, m.tokens, m.duration, m.ttft, m.retries, m.upstreamErrors, m.streams, m.fallbacks, m.cost,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the endpoint serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Call is one finished call that reached a provider.
type Call struct {
	// Operation is chat or embeddings (gen_ai.operation.name).
	Operation string
	// Provider is the configured provider that answered or failed last.
	Provider string
	// Model is the configured model name.
	Model string
	// Caller is the authenticated caller's configured name ("" without
	// auth.tokens).
	Caller string
	// Meta is the call's final meta (usage, retry reasons, cost, time to
	// first token).
	Meta *llmrelayv1.ResponseMeta
	// Duration is the whole call.
	Duration time.Duration
	// ErrorType is empty on success, else the gRPC code's name.
	ErrorType string
	// RetryProviders is the provider of each of Meta's retry reasons (a
	// routed call's failed attempts may be another provider's); when
	// shorter, Provider stands in.
	RetryProviders []string
}

// ObserveCall records a finished call. Nil-safe.
func (m *Metrics) ObserveCall(c Call) {
	if m == nil {
		return
	}
	cs := m.series(callKey{c.Operation, c.Provider, c.Model, c.Caller, c.ErrorType})
	cs.duration.Observe(c.Duration.Seconds())
	meta := c.Meta
	if meta.GetUsage() != nil || meta.GetTimeToFirstToken() != nil || meta.GetCost() != nil {
		m.observeResult(cs, c)
	}
	reasons := meta.GetRetryReasons()
	for i, r := range reasons {
		p := c.Provider
		if i < len(c.RetryProviders) {
			p = c.RetryProviders[i]
		}
		status := r.GetReason()
		// A failure inside a 2xx answer (a connection broken mid-body
		// reports the 200 it got) is named by its reason.
		if r.GetUpstreamStatus() >= 300 {
			status = strconv.Itoa(int(r.GetUpstreamStatus()))
		}
		m.upstreamErrors.WithLabelValues(p, status).Inc()
		// The last failed attempt of a failed call was not retried.
		if i < len(reasons)-1 || c.ErrorType == "" {
			m.retries.WithLabelValues(p, r.GetReason()).Inc()
		}
	}
}

// series returns the series of a call's labels, kept while there is room.
func (m *Metrics) series(k callKey) *callSeries {
	m.mu.RLock()
	cs, ok := m.calls[k]
	m.mu.RUnlock()
	if ok {
		return cs
	}
	cs = &callSeries{duration: m.duration.WithLabelValues(k.op, k.provider, k.model, k.caller, k.errType)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if kept, ok := m.calls[k]; ok {
		return kept
	}
	if len(m.calls) < maxCachedSeries {
		if m.calls == nil {
			m.calls = map[callKey]*callSeries{}
		}
		m.calls[k] = cs
	}
	return cs
}

// observeResult records what a call's meta tells: usage, time to first
// token, cost.
func (m *Metrics) observeResult(cs *callSeries, c Call) {
	meta := c.Meta
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if u := meta.GetUsage(); u != nil {
		if cs.tokensIn == nil {
			cs.tokensIn = m.tokens.WithLabelValues(c.Operation, c.Provider, c.Model, c.Caller, "input")
		}
		cs.tokensIn.Observe(float64(u.GetInputTokens()))
		if c.Operation != "embeddings" {
			if cs.tokensOut == nil {
				cs.tokensOut = m.tokens.WithLabelValues(c.Operation, c.Provider, c.Model, c.Caller, "output")
			}
			cs.tokensOut.Observe(float64(u.GetOutputTokens()))
		}
	}
	if d := meta.GetTimeToFirstToken(); d != nil {
		if cs.ttft == nil {
			cs.ttft = m.ttft.WithLabelValues(c.Provider, c.Model)
		}
		cs.ttft.Observe(d.AsDuration().Seconds())
	}
	if cost := meta.GetCost(); cost != nil {
		cur := cost.GetCurrency()
		if cs.cost == nil {
			cs.cost, cs.costCurrency = m.cost.WithLabelValues(c.Provider, c.Model, c.Caller, cur), cur
		}
		if cur == cs.costCurrency {
			cs.cost.Add(float64(cost.GetAmountNanos()))
		} else { // a model's prices have one currency; another is not kept
			m.cost.WithLabelValues(c.Provider, c.Model, c.Caller, cur).Add(float64(cost.GetAmountNanos()))
		}
	}
}

// StreamStarted counts a stream in flight until the returned func runs.
// Nil-safe.
func (m *Metrics) StreamStarted(model string) (done func()) {
	if m == nil {
		return func() {}
	}
	m.mu.RLock()
	g, ok := m.streaming[model]
	m.mu.RUnlock()
	if !ok {
		gauge := m.streams.WithLabelValues(model)
		g = streamGauge{inc: gauge.Inc, dec: gauge.Dec}
		m.mu.Lock()
		if len(m.streaming) < maxCachedSeries {
			if m.streaming == nil {
				m.streaming = map[string]streamGauge{}
			}
			m.streaming[model] = g
		}
		m.mu.Unlock()
	}
	g.inc()
	return g.dec
}

// streamGauge is a model's in-flight gauge, with its Dec made once as a
// func value (a method value is a new closure each time).
type streamGauge struct{ inc, dec func() }

// Fallback counts a routed call moving on from deployment from. Nil-safe.
func (m *Metrics) Fallback(model, from string) {
	if m == nil {
		return
	}
	m.fallbacks.WithLabelValues(model, from).Inc()
}
