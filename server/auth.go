package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"

	grpcauth "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/interceptor"
)

// authenticate is the go-grpc-middleware auth function: with callers
// configured, every RPC but health checks needs a known bearer token and
// room in the caller's request rate. The caller travels in the context to
// the handler (allowed models, token budget, meta.caller) and into the log
// line.
func (s *Server) authenticate(ctx context.Context) (context.Context, error) {
	st := s.gateway.state.Load()
	if !st.auth.Enabled() {
		return ctx, nil
	}
	if m, _ := grpc.Method(ctx); strings.HasPrefix(m, "/grpc.health.v1.") {
		return ctx, nil // probes carry no token
	}
	c, err := st.auth.Authenticate(ctx)
	var warning string
	if err == nil {
		interceptor.InfoFrom(ctx).SetCaller(c.Name)
		warning, err = c.Admit(ctx, s.gateway.now())
	}
	if err != nil {
		return nil, toStatus(ctx, err, nil, st.redact, s.log)
	}
	return auth.WithCaller(ctx, c, warning), nil
}

func (s *Server) authStreamInterceptor() grpc.StreamServerInterceptor {
	return grpcauth.StreamServerInterceptor(s.authenticate)
}

// authUnary is grpcauth.UnaryServerInterceptor(s.authenticate) and then
// next, as one interceptor (no closure per call between the two).
func (s *Server) authUnary(next grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		var err error
		if o, ok := info.Server.(grpcauth.ServiceAuthFuncOverride); ok {
			ctx, err = o.AuthFuncOverride(ctx, info.FullMethod)
		} else {
			ctx, err = s.authenticate(ctx)
		}
		if err != nil {
			return nil, err
		}
		return next(ctx, req, info, handler)
	}
}

// checkExposure refuses a TCP listener on a non-loopback address without
// caller authentication, unless the configuration allows it explicitly;
// then it says so in the log.
func (s *Server) checkExposure(l net.Listener, configured string) error {
	a, ok := l.Addr().(*net.TCPAddr)
	if !ok || a.IP.IsLoopback() {
		return nil
	}
	s.exposed = true
	switch {
	case s.cfg.Auth.Enabled(), s.cfg.Server.TLS.MutualTLS():
		return nil
	case s.cfg.Server.AllowUnauthenticated:
		s.log.Warn("serving without caller authentication on a non-loopback address: anyone who reaches it spends the provider keys (server.allow_unauthenticated is true)",
			slog.String("addr", a.String()))
		return nil
	default:
		// The address as configured (0.0.0.0:50051), not as bound
		// ([::]:50051): the one the operator looks for.
		return fmt.Errorf("listen %s: refusing to serve a non-loopback address without caller authentication: "+
			"configure auth.tokens, listen on 127.0.0.1, or set server.allow_unauthenticated: true if the network is trusted", configured)
	}
}
