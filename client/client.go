// Package client is the Go client of llmrelay: a thin layer over the
// generated gRPC client with streams that fold their events into the final
// message. It adds no retry policy: the gateway already retried the
// provider before answering UNAVAILABLE (a client retry would multiply the
// provider calls), and gRPC's transparent retry covers calls that never
// reached the gateway.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Accumulator folds stream events into the final message (the same one
// the server uses).
type Accumulator = fold.Accumulator

// Option configures a Client.
type Option interface{ apply(*options) }

type options struct {
	dial []grpc.DialOption
	tls  bool
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithDialOptions adds grpc dial options (credentials, interceptors, ...).
// Without transport credentials among them the connection is plaintext,
// as for a sidecar on localhost or a unix socket.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return optionFunc(func(o *options) { o.dial = append(o.dial, opts...) })
}

// WithTransportSecurity marks that the dial options carry transport
// credentials, so no plaintext default is added.
func WithTransportSecurity() Option { return optionFunc(func(o *options) { o.tls = true }) }

// Client talks to an llmrelay server.
type Client struct {
	conn    *grpc.ClientConn
	Gateway llmrelayv1.GatewayServiceClient
	Extract llmrelayv1.ExtractServiceClient
}

// New connects to target ("127.0.0.1:50051", "unix:///run/llmrelay.sock").
func New(target string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt.apply(&o)
	}
	var dial []grpc.DialOption
	if !o.tls {
		dial = append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	dial = append(dial, o.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("llmrelay client: %w", err)
	}
	return &Client{conn: conn, Gateway: llmrelayv1.NewGatewayServiceClient(conn), Extract: llmrelayv1.NewExtractServiceClient(conn)}, nil
}

// Conn is the underlying connection, for other services on the same
// server (grpc.health.v1.Health).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Chat calls Chat.
func (c *Client) Chat(ctx context.Context, req *llmrelayv1.ChatRequest, opts ...grpc.CallOption) (*llmrelayv1.ChatResponse, error) {
	return c.Gateway.Chat(ctx, req, opts...)
}

// Tools calls Tools.
func (c *Client) Tools(ctx context.Context, req *llmrelayv1.ToolsRequest, opts ...grpc.CallOption) (*llmrelayv1.ToolsResponse, error) {
	return c.Gateway.Tools(ctx, req, opts...)
}

// Embed calls Embed.
func (c *Client) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest, opts ...grpc.CallOption) (*llmrelayv1.EmbedResponse, error) {
	return c.Gateway.Embed(ctx, req, opts...)
}

// ChatStream is an open StreamChat call that folds its events.
type ChatStream struct {
	s   llmrelayv1.GatewayService_StreamChatClient
	Acc Accumulator
}

// StreamChat opens a StreamChat call.
func (c *Client) StreamChat(ctx context.Context, req *llmrelayv1.StreamChatRequest, opts ...grpc.CallOption) (*ChatStream, error) {
	s, err := c.Gateway.StreamChat(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	return &ChatStream{s: s}, nil
}

// Recv returns the next event (io.EOF after the end event), folded into Acc.
func (s *ChatStream) Recv() (*llmrelayv1.StreamChatResponse, error) {
	ev, err := s.s.Recv()
	if err != nil {
		if !errors.Is(err, io.EOF) || s.Acc.End() == nil {
			// An open call is not valid: the stream failed inside it (or
			// ended without its end event).
			s.Acc.Fail()
		}
		return nil, err
	}
	if err := s.Acc.AddChat(ev); err != nil {
		s.Acc.Fail() // the rest of the stream is not read
		return nil, err
	}
	return ev, nil
}

// Wait reads the rest of the stream and returns the folded message and the
// final meta.
func (s *ChatStream) Wait() (*llmrelayv1.Message, *llmrelayv1.ResponseMeta, error) {
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return s.Acc.Message(), s.Acc.Meta(), nil
			}
			return nil, nil, err
		}
	}
}

// ToolsStream is an open StreamTools call that folds its events.
type ToolsStream struct {
	s   llmrelayv1.GatewayService_StreamToolsClient
	Acc Accumulator
}

// StreamTools opens a StreamTools call.
func (c *Client) StreamTools(ctx context.Context, req *llmrelayv1.StreamToolsRequest, opts ...grpc.CallOption) (*ToolsStream, error) {
	s, err := c.Gateway.StreamTools(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	return &ToolsStream{s: s}, nil
}

// Recv returns the next event (io.EOF after the end event), folded into Acc.
func (s *ToolsStream) Recv() (*llmrelayv1.StreamToolsResponse, error) {
	ev, err := s.s.Recv()
	if err != nil {
		if !errors.Is(err, io.EOF) || s.Acc.End() == nil {
			// An open call is not valid: the stream failed inside it (or
			// ended without its end event).
			s.Acc.Fail()
		}
		return nil, err
	}
	if err := s.Acc.AddTools(ev); err != nil {
		s.Acc.Fail() // the rest of the stream is not read
		return nil, err
	}
	return ev, nil
}

// Wait reads the rest of the stream and returns the folded message and the
// final meta.
func (s *ToolsStream) Wait() (*llmrelayv1.Message, *llmrelayv1.ResponseMeta, error) {
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return s.Acc.Message(), s.Acc.Meta(), nil
			}
			return nil, nil, err
		}
	}
}
