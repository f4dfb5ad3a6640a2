package config

import (
	"fmt"
	"net"
	"strings"
)

// Telemetry is tracing (OpenTelemetry, OTLP export) and metrics
// (Prometheus). Both are off by default.
type Telemetry struct {
	Tracing Tracing `yaml:"tracing"`
	Metrics Metrics `yaml:"metrics"`
}

// Tracing configures spans and their export. Unset fields fall back to the
// standard OTEL_* environment variables, then to the OpenTelemetry defaults.
type Tracing struct {
	// Enabled turns tracing on; unset: on when OTEL_TRACES_EXPORTER is
	// otlp and OTEL_SDK_DISABLED is not true.
	Enabled *bool `yaml:"enabled"`
	// Exporter is otlp (default) or none (spans are made and dropped: for
	// measuring the overhead, or for the trace id in the meta alone).
	Exporter string `yaml:"exporter"`
	// Protocol is grpc or http/protobuf; unset:
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL,
	// then http/protobuf.
	Protocol string `yaml:"protocol"`
	// Endpoint is the collector's base URL, read as
	// OTEL_EXPORTER_OTLP_ENDPOINT is (http://host:4318, to which
	// http/protobuf appends /v1/traces; http://host:4317 for grpc); unset:
	// the OTEL_EXPORTER_OTLP_* variables the exporter reads itself, then
	// localhost.
	Endpoint string `yaml:"endpoint"`
	// SampleRatio is the share of new traces sampled (a caller's sampled
	// flag is followed); unset: 1.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// RecordContent records the messages sent and received on the provider
	// call spans (gen_ai.input.messages, gen_ai.output.messages). Off by
	// default: message contents may be personal data.
	RecordContent bool `yaml:"record_content"`
	// ServiceName is service.name; OTEL_SERVICE_NAME wins, default llmrelay.
	ServiceName string `yaml:"service_name"`
}

// Metrics configures the Prometheus endpoint.
type Metrics struct {
	Enabled bool `yaml:"enabled"`
	// Listen is the endpoint's own address (default 127.0.0.1:9464).
	Listen string `yaml:"listen"`
	// Pprof also serves net/http/pprof under /debug/pprof/ on it.
	Pprof bool `yaml:"pprof"`
}

// DefaultMetricsListen is the metrics endpoint's address when none is set.
const DefaultMetricsListen = "127.0.0.1:9464"

// TracingOn reports whether tracing is enabled, by the file or else by the
// environment (getenv is os.Getenv outside tests).
func (t Tracing) TracingOn(getenv func(string) string) bool {
	if t.Enabled != nil {
		return *t.Enabled
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	// OTEL_TRACES_EXPORTER=none means no tracing, as the specification
	// reads it; exporter: none in the file is the explicit way to make
	// spans without exporting them.
	return getenv("OTEL_TRACES_EXPORTER") == "otlp"
}

// ExporterName is the configured exporter, else otlp.
func (t Tracing) ExporterName() string {
	if t.Exporter != "" {
		return t.Exporter
	}
	return "otlp"
}

// ProtocolName is the configured OTLP protocol, else the standard
// variables, else http/protobuf (the OpenTelemetry default).
func (t Tracing) ProtocolName(getenv func(string) string) string {
	for _, v := range []string{t.Protocol, getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL")} {
		if v != "" {
			return v
		}
	}
	return "http/protobuf"
}

// MetricsListen is the metrics address with its default.
func (m Metrics) MetricsListen() string {
	if m.Listen == "" {
		return DefaultMetricsListen
	}
	return m.Listen
}

// IsLoopback reports whether a listen address binds only loopback
// interfaces (an empty host binds all of them; names other than
// localhost are not resolved and count as non-loopback).
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (t Telemetry) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	tr := t.Tracing
	switch tr.Exporter {
	case "", "otlp", "none":
	default:
		add("telemetry.tracing.exporter: %q is not otlp or none", tr.Exporter)
	}
	switch tr.Protocol {
	case "", "grpc", "http/protobuf":
	default:
		add("telemetry.tracing.protocol: %q is not grpc or http/protobuf", tr.Protocol)
	}
	if tr.Endpoint != "" && !strings.HasPrefix(tr.Endpoint, "http://") && !strings.HasPrefix(tr.Endpoint, "https://") {
		add("telemetry.tracing.endpoint: %q must be an http:// or https:// URL", tr.Endpoint)
	}
	if r := tr.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		add("telemetry.tracing.sample_ratio: must be within 0..1")
	}
	if t.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(t.Metrics.Listen); err != nil {
			add("telemetry.metrics.listen: %q is not host:port", t.Metrics.Listen)
		}
	}
	if t.Metrics.Pprof && !t.Metrics.Enabled {
		add("telemetry.metrics.pprof: pprof is served on the metrics endpoint; set telemetry.metrics.enabled")
	}
	return errs
}
