package config

import (
	"strings"
	"testing"
)

func TestPricesExact(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`providers: [{name: b, type: builtin}]
models:
  - name: m
    provider: b
    capabilities: {chat: {format: builtin}}
    prices: {input: 0.075, cached_input: "0.01875", output: 2.5, reasoning: 12, cache_write: .3}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Models[0].Prices
	if p.CurrencyCode() != "USD" || p.Input.Nanos != 75_000_000 || p.CachedInput.Nanos != 18_750_000 ||
		p.Output.Nanos != 2_500_000_000 || p.Reasoning.Nanos != 12_000_000_000 || p.CacheWrite.Nanos != 300_000_000 {
		t.Errorf("prices = %s %+v %+v %+v %+v %+v", p.CurrencyCode(), *p.Input, *p.CachedInput, *p.Output, *p.Reasoning, *p.CacheWrite)
	}
}

func TestPricesInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ prices, want string }{
		{`{input: -1, output: 1}`, "non-negative"},
		{`{input: 1.0000000001, output: 1}`, "nine decimals"},
		{`{input: abc, output: 1}`, "decimal number"},
		{`{input: 2000000, output: 1}`, "per million tokens"},
		{`{input: [1], output: 1}`, "decimal number"},
		{`{input: 1}`, "prices.output: required"},
		{`{output: 1}`, "prices.input: required"},
		{`{currency: usd, input: 1, output: 1}`, "ISO 4217"},
		{`{currency: EURO, input: 1, output: 1}`, "ISO 4217"},
	} {
		_, err := Parse([]byte("providers: [{name: b, type: builtin}]\nmodels:\n  - {name: m, provider: b, capabilities: {chat: {format: builtin}}, prices: "+tc.prices+"}\n"), "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.prices, err, tc.want)
		}
	}
}

func TestTelemetryConfig(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`telemetry:
  tracing: {enabled: true, protocol: grpc, endpoint: "http://collector:4317", sample_ratio: 0.5, record_content: true}
  metrics: {enabled: true, listen: "0.0.0.0:9090", pprof: true}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	tr := c.Telemetry.Tracing
	if !tr.TracingOn(noEnv) || tr.ProtocolName(noEnv) != "grpc" || tr.ExporterName() != "otlp" || *tr.SampleRatio != 0.5 || !tr.RecordContent {
		t.Errorf("tracing = %+v", tr)
	}
	if m := c.Telemetry.Metrics; !m.Enabled || m.MetricsListen() != "0.0.0.0:9090" || !m.Pprof {
		t.Errorf("metrics = %+v", m)
	}
	for _, tc := range []struct{ yaml, want string }{
		{`telemetry: {tracing: {exporter: jaeger}}`, "not otlp or none"},
		{`telemetry: {tracing: {protocol: http/json}}`, "not grpc or http/protobuf"},
		{`telemetry: {tracing: {endpoint: "collector:4317"}}`, "http:// or https://"},
		{`telemetry: {tracing: {sample_ratio: 2}}`, "0..1"},
		{`telemetry: {metrics: {enabled: true, listen: "9090"}}`, "not host:port"},
		{`telemetry: {metrics: {pprof: true}}`, "set telemetry.metrics.enabled"},
	} {
		if _, err := Parse([]byte(tc.yaml), "t"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestTracingFromEnvironment(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	var off Tracing
	if off.TracingOn(env(nil)) {
		t.Error("tracing on by default")
	}
	if !off.TracingOn(env(map[string]string{"OTEL_TRACES_EXPORTER": "otlp"})) {
		t.Error("OTEL_TRACES_EXPORTER=otlp did not turn tracing on")
	}
	if off.TracingOn(env(map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"})) {
		t.Error("OTEL_SDK_DISABLED=true ignored")
	}
	if got := off.ProtocolName(env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})); got != "grpc" {
		t.Errorf("protocol from env = %q", got)
	}
	if got := off.ProtocolName(env(nil)); got != "http/protobuf" {
		t.Errorf("default protocol = %q", got)
	}
	if off.TracingOn(env(map[string]string{"OTEL_TRACES_EXPORTER": "none"})) {
		t.Error("OTEL_TRACES_EXPORTER=none turned tracing on")
	}
	if got := (Tracing{Exporter: "none"}).ExporterName(); got != "none" {
		t.Errorf("exporter = %q", got)
	}
	no := false
	if (Tracing{Enabled: &no}).TracingOn(env(map[string]string{"OTEL_TRACES_EXPORTER": "otlp"})) {
		t.Error("the file's enabled: false lost to the environment")
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:9464": true, "[::1]:9464": true, "localhost:9464": true,
		":9464": false, "0.0.0.0:9464": false, "10.0.0.1:9464": false, "metrics.internal:9464": false, "nonsense": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
