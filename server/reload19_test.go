package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// TestReloadOnSignalNamesEveryCredential: a reload reads the keys as serve
// does at start: every unreadable one at its line, all at once (it stopped
// at the first, without a position), and the configuration in use stays.
func TestReloadOnSignalNamesEveryCredential(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "llmrelay.yaml")
	good := "models:\n  - name: echo\n    provider: builtin\n    capabilities: {chat: {format: builtin}}\nproviders:\n  - {name: builtin, type: builtin}\n"
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	bad := good + "  - {name: a, type: openai, api_key_file: " + filepath.Join(dir, "missing-a") + "}\n" +
		"  - {name: b, type: anthropic, api_key_file: " + filepath.Join(dir, "missing-b") + "}\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { srv.ReloadOnSignal(ctx, sig, path); close(done) }()
	sig <- os.Interrupt
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "configuration reload failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	out := logs.String()
	for _, want := range []string{"configuration reload failed", "missing-a", "missing-b", "llmrelay.yaml:7:", "llmrelay.yaml:8:"} {
		if !strings.Contains(out, want) {
			t.Errorf("reload log lacks %q:\n%s", want, out)
		}
	}
}

// TestReloadWarnsStartOnlySections: a reload that changes limits, the
// server section or telemetry keeps them (they are read at start only)
// and says so, naming each; the models it changes apply.
func TestReloadWarnsStartOnlySections(t *testing.T) {
	base := "models:\n  - name: echo\n    provider: builtin\n    capabilities: {chat: {format: builtin}}\nproviders:\n  - {name: builtin, type: builtin}\n"
	cfg, err := config.Parse([]byte(base), "start.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	same, err := config.Parse([]byte(base+"  - {name: other, type: builtin}\n"), "same.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(same); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, "read at start only") {
		t.Errorf("a reload changing only providers warned:\n%s", out)
	}
	next, err := config.Parse([]byte(base+"limits: {max_recv_message_bytes: 1048576}\nserver: {log_level: debug}\n"), "next.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(next); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"reload: limits changed, but it is read at start only", "reload: server changed, but it is read at start only"} {
		if !strings.Contains(out, want) {
			t.Errorf("reload log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "reload: telemetry changed") {
		t.Errorf("telemetry did not change:\n%s", out)
	}
}

// TestReloadListenOverride: with the listen address set from outside the
// file (-listen, LLMRELAY_LISTEN), a reload of the unchanged file is not
// told that server changed (the file's listen never applies); without the
// override, a changed listen is.
func TestReloadListenOverride(t *testing.T) {
	file := "server: {listen: \"127.0.0.1:50051\"}\nmodels:\n  - name: echo\n    provider: builtin\n    capabilities: {chat: {format: builtin}}\nproviders:\n  - {name: builtin, type: builtin}\n"
	for _, override := range []bool{true, false} {
		cfg, err := config.Parse([]byte(file), "start.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var opts []server.Option
		if override {
			addr := "127.0.0.1:6000"
			cfg.Server.Listen = &addr
			opts = append(opts, server.WithListenOverride())
		}
		logs := &syncBuffer{}
		srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)), opts...)
		if err != nil {
			t.Fatal(err)
		}
		next := file
		if !override {
			next = strings.Replace(file, "50051", "50052", 1)
		}
		again, err := config.Parse([]byte(next), "again.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Reload(again); err != nil {
			t.Fatal(err)
		}
		if warned := strings.Contains(logs.String(), "reload: server changed"); warned == override {
			t.Errorf("override %v: warned %v:\n%s", override, warned, logs.String())
		}
	}
}
