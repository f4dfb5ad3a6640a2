# Multi-stage build: a static binary in a distroless, non-root image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/llmrelay ./cmd/llmrelay

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/llmrelay /llmrelay
USER nonroot:nonroot
# Loopback by default: a sidecar's app shares the pod's network namespace.
# To serve other hosts set LLMRELAY_LISTEN=0.0.0.0:50051 and configure
# auth.tokens (or server.allow_unauthenticated: true on a trusted network);
# a non-loopback address with neither refuses to start.
# Keep the grown stacks of gRPC worker goroutines (see docs/decisions.md).
ENV GODEBUG=gcshrinkstackoff=1
EXPOSE 50051
# health dials $LLMRELAY_LISTEN when set (else the default address), so the check follows the listener.
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["/llmrelay", "health"]
ENTRYPOINT ["/llmrelay"]
CMD ["serve"]
