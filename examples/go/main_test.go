package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// TestREADMESnippetIsThisProgram: the README's Go client snippet is this
// file, so it compiles as shown, imports included.
func TestREADMESnippetIsThisProgram(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(src)+"```\n") {
		t.Error("README.md's Go client snippet differs from examples/go/main.go: copy the file into the README")
	}
}

// TestProgramAgainstServer runs the program against a server on the
// embedded default.
func TestProgramAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	t.Parallel()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	t.Cleanup(func() { cancel(); <-done })
	cmd := exec.Command("go", "run", ".")
	cmd.Env = append(os.Environ(), "LLMRELAY_ADDR="+lis.Addr().String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	want := `chat: You said: hello | tokens: 5
tool call: get_weather {}
finish: FINISH_REASON_TOOL_CALLS
error: NotFound model "no-such-model" is not configured (ListModels shows the models)
  reason: MODEL_NOT_FOUND map[model:no-such-model]
  field: model - model "no-such-model" is not configured (ListModels shows the models)
`
	if string(out) != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}
