package config

import "fmt"

// Limits bound what one call and all calls together may take, so that a
// burst ends in ResourceExhausted rather than in an OOM or fd exhaustion.
// Zero or unset: the default; a negative value is an error.
type Limits struct {
	// MaxRecvMessageBytes bounds a request message (default 4 MiB).
	MaxRecvMessageBytes int `yaml:"max_recv_message_bytes"`
	// MaxSendMessageBytes bounds a response message (default 4 MiB, what
	// gRPC clients accept by default): a larger answer drops its raw
	// capture first, then fails.
	MaxSendMessageBytes int `yaml:"max_send_message_bytes"`
	// MaxConcurrentCalls bounds the RPCs in flight, streams included
	// (default 4096).
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// MaxConcurrentStreams bounds the open streaming RPCs (default 4096;
	// an idle stream holds about 40 KB and one upstream connection).
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	// MaxConnections bounds the accepted client connections per listener
	// (default 1024).
	MaxConnections int `yaml:"max_connections"`
	// MaxResponseBytes bounds one provider response body (default 64 MiB).
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxBufferedBytes bounds the provider bytes all calls in flight hold
	// together (default 256 MiB).
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes"`
	// MaxLabels and MaxLabelBytes bound call.labels: how many, and the
	// length of each key and value (defaults 64 and 256).
	MaxLabels     int `yaml:"max_labels"`
	MaxLabelBytes int `yaml:"max_label_bytes"`
	// MaxHeaderListBytes bounds a request's metadata, as HTTP/2 counts it
	// (default 64 KiB; grpc's own default, 16 MiB, let metadata take
	// four times what a request message may). Announced to clients in
	// the HTTP/2 settings: grpc-go clients refuse to send more.
	MaxHeaderListBytes int `yaml:"max_header_list_bytes"`
}

// The defaults of Limits.
const (
	DefaultMaxMessageBytes      = 4 << 20
	DefaultMaxConcurrentCalls   = 4096
	DefaultMaxConcurrentStreams = 4096
	DefaultMaxConnections       = 1024
	DefaultMaxResponseBytes     = 64 << 20
	DefaultMaxBufferedBytes     = 256 << 20
	DefaultMaxLabels            = 64
	DefaultMaxLabelBytes        = 256
	DefaultMaxHeaderListBytes   = 64 << 10
)

func orDefault[T int | int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// WithDefaults returns l with every unset limit at its default.
func (l Limits) WithDefaults() Limits {
	l.MaxRecvMessageBytes = orDefault(l.MaxRecvMessageBytes, DefaultMaxMessageBytes)
	l.MaxSendMessageBytes = orDefault(l.MaxSendMessageBytes, DefaultMaxMessageBytes)
	l.MaxConcurrentCalls = orDefault(l.MaxConcurrentCalls, DefaultMaxConcurrentCalls)
	l.MaxConcurrentStreams = orDefault(l.MaxConcurrentStreams, DefaultMaxConcurrentStreams)
	l.MaxConnections = orDefault(l.MaxConnections, DefaultMaxConnections)
	l.MaxResponseBytes = orDefault(l.MaxResponseBytes, DefaultMaxResponseBytes)
	l.MaxBufferedBytes = orDefault(l.MaxBufferedBytes, DefaultMaxBufferedBytes)
	l.MaxLabels = orDefault(l.MaxLabels, DefaultMaxLabels)
	l.MaxLabelBytes = orDefault(l.MaxLabelBytes, DefaultMaxLabelBytes)
	l.MaxHeaderListBytes = orDefault(l.MaxHeaderListBytes, DefaultMaxHeaderListBytes)
	return l
}

func (l Limits) validate() []error {
	var errs []error
	for name, v := range map[string]int64{
		"max_recv_message_bytes": int64(l.MaxRecvMessageBytes), "max_send_message_bytes": int64(l.MaxSendMessageBytes),
		"max_concurrent_calls": int64(l.MaxConcurrentCalls), "max_concurrent_streams": int64(l.MaxConcurrentStreams),
		"max_connections": int64(l.MaxConnections), "max_response_bytes": l.MaxResponseBytes,
		"max_buffered_bytes": l.MaxBufferedBytes, "max_labels": int64(l.MaxLabels), "max_label_bytes": int64(l.MaxLabelBytes),
		"max_header_list_bytes": int64(l.MaxHeaderListBytes),
	} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("limits.%s: must be >= 0 (0: the default)", name))
		}
	}
	d := l.WithDefaults()
	if d.MaxResponseBytes > d.MaxBufferedBytes {
		errs = append(errs, fmt.Errorf("limits.max_response_bytes (%d) is larger than limits.max_buffered_bytes (%d)", d.MaxResponseBytes, d.MaxBufferedBytes))
	}
	return errs
}
