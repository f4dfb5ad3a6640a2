// Command llmrelay is the gateway binary: the server (serve, the default),
// its client commands (chat, tools, embed, models, health) and the
// configuration and version commands. See internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmrelay/llmrelay/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	// The first signal starts the graceful drain (or cancels a client
	// call); from then on the default handling is back, so a second
	// Ctrl-C exits at once.
	context.AfterFunc(ctx, stop)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
