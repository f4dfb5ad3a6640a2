// Command mockupstream is the benchmark's OpenAI Chat Completions mock: a
// fast, deterministic upstream for llmrelay, so that the gateway's own cost
// is measured without network or model latency. Standard library only.
//
//	POST /v1/chat/completions   a chat.completion, or with "stream": true
//	                            SSE chunks: role, N words, finish, usage
//	                            (with stream_options.include_usage), [DONE]
//	GET  /mock/stats            {"chat": unary calls, "chat_stream": streams}
//	GET  /healthz               ok
//
// N is -chunks (20), or per request the X-Mock-Chunks header.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	chunks := flag.Int("chunks", 20, "text chunks per stream (per request: X-Mock-Chunks header)")
	delay := flag.Duration("delay", 0, "latency before the response headers")
	chunkDelay := flag.Duration("chunk-delay", 0, "pause before each streamed text chunk")
	lifetime := flag.Duration("max-lifetime", 0, "exit after this long (0: until SIGINT/SIGTERM)")
	quiet := flag.Bool("quiet", false, "do not log unknown paths")
	flag.Parse()
	if err := run(*addr, *lifetime, newMock(*chunks, *delay, *chunkDelay, *quiet)); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, lifetime time.Duration, h http.Handler) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if lifetime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lifetime)
		defer cancel()
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			fmt.Fprintln(os.Stderr, "mockupstream: shutdown:", err)
		}
	}()
	if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
