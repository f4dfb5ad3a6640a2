// Package pipeline runs provider calls through a chain of interceptors
// (retry, timing, raw capture), composable like gRPC client interceptors, so
// that adapters only translate. It also builds the pooled HTTP clients the
// adapters use, with timeouts fit for LLM traffic and secret redaction.
package pipeline

import (
	"context"
	"errors"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Op is what a call does.
type Op int

const (
	OpGenerate Op = iota + 1
	OpEmbed
)

// Call is one provider call as it passes through the pipeline.
type Call struct {
	Op       Op
	Provider provider.Provider
	// Deployment names the provider deployment, for retry records.
	Deployment string
	// Fallback is set when an earlier deployment of the route failed.
	Fallback bool
	// CanFallBack is set when the route has a deployment after this one:
	// a rate limit, this deployment's own fault, and a transport timeout
	// (TransportTimeout: the deployment hung) then go to it at once
	// instead of being retried (or waited out) here.
	CanFallBack bool
	Request     *provider.Request
	Embed       *provider.EmbedRequest
	// PreserveRaw asks for raw capture of this call.
	PreserveRaw bool
	// Record collects what the transport layer learns; never nil.
	Record *Record
}

// Record is the transport layer's account of a call.
type Record struct {
	Attempts     int32
	RetryReasons []*llmrelayv1.RetryReason
	// RequestDuration is the time spent in provider calls (all attempts,
	// without backoff waits). For a stream it covers the opening of the
	// stream; the server adds the time spent reading it.
	RequestDuration time.Duration
	// AttemptStart is when the last attempt started.
	AttemptStart time.Time
	// Capture is the raw capture of the last attempt, nil when off.
	Capture *provider.Capture
}

// Handler performs a unary call (Generate or Embed).
type Handler func(ctx context.Context, c *Call) (*provider.Result, error)

// StreamHandler opens a stream.
type StreamHandler func(ctx context.Context, c *Call) (provider.Stream, error)

// Interceptor wraps a unary call.
type Interceptor func(ctx context.Context, c *Call, next Handler) (*provider.Result, error)

// StreamInterceptor wraps the opening of a stream.
type StreamInterceptor func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error)

// Pipeline is an ordered interceptor chain around the adapters; the first
// interceptor is the outermost.
type Pipeline struct {
	unary  Handler
	stream StreamHandler
}

// New chains the interceptors around the adapter calls.
func New(unary []Interceptor, stream []StreamInterceptor) *Pipeline {
	h := Handler(invoke)
	for i := len(unary) - 1; i >= 0; i-- {
		h = chainUnary(unary[i], h)
	}
	sh := StreamHandler(openStream)
	for i := len(stream) - 1; i >= 0; i-- {
		sh = chainStream(stream[i], sh)
	}
	return &Pipeline{unary: h, stream: sh}
}

func chainUnary(i Interceptor, next Handler) Handler {
	return func(ctx context.Context, c *Call) (*provider.Result, error) { return i(ctx, c, next) }
}

func chainStream(i StreamInterceptor, next StreamHandler) StreamHandler {
	return func(ctx context.Context, c *Call) (provider.Stream, error) { return i(ctx, c, next) }
}

// Unary runs a Generate or Embed call through the chain.
func (p *Pipeline) Unary(ctx context.Context, c *Call) (*provider.Result, error) {
	if c.Record == nil {
		c.Record = &Record{}
	}
	return p.unary(ctx, c)
}

// Stream opens a stream through the chain.
func (p *Pipeline) Stream(ctx context.Context, c *Call) (provider.Stream, error) {
	if c.Record == nil {
		c.Record = &Record{}
	}
	return p.stream(ctx, c)
}

func invoke(ctx context.Context, c *Call) (*provider.Result, error) {
	// The answer's headers come when it is whole: the transport waits for
	// them as long as unary_first_byte_timeout allows.
	ctx = withUnary(ctx)
	switch c.Op {
	case OpGenerate:
		res, err := c.Provider.Generate(ctx, c.Request)
		if a := provider.StreamAnswerOf(err); a != nil {
			return foldAnswer(ctx, c, a, err)
		}
		return res, err
	case OpEmbed:
		e, ok := c.Provider.(provider.Embedder)
		if !ok {
			return nil, &provider.Error{Kind: provider.KindUnsupported, Message: "this provider has no embeddings API"}
		}
		return e.Embed(ctx, c.Embed)
	default:
		return nil, &provider.Error{Kind: provider.KindUnknown, Message: "unknown call op"}
	}
}

func openStream(ctx context.Context, c *Call) (provider.Stream, error) {
	return c.Provider.Stream(ctx, c.Request)
}

// foldAnswer is the answer of a non-streaming request the provider
// answered with an event stream (provider.StreamAnswer: a server that
// ignored "stream": false): the adapter's own stream reader reads the
// events already received (nothing is sent again) and they are folded
// into the answer, with provider.StreamAnswerWarning. A stream that
// fails (cut, an error event) fails the attempt as it would have failed
// a stream; one the adapter's reader refuses at once (not its format)
// leaves the answer's first error, which says what came.
func foldAnswer(ctx context.Context, c *Call, a *provider.StreamAnswer, answerErr error) (*provider.Result, error) {
	actx, release := provider.WithAnswer(ctx, a)
	s, err := c.Provider.Stream(actx, c.Request)
	release()
	if err != nil {
		return nil, answerErr
	}
	res, err := provider.FoldStream(s)
	if err != nil {
		var pe, ae *provider.Error
		if errors.As(err, &pe) && pe.Provider == "" && errors.As(answerErr, &ae) {
			pe.Provider = ae.Provider
		}
		return nil, err
	}
	res.Meta.Warnings = append(res.Meta.Warnings, provider.StreamAnswerWarning)
	return res, nil
}
