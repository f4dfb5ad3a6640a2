package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCommands(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"config", "default"}, &out, &out); err != nil || !strings.Contains(out.String(), "builtin/echo") {
		t.Fatalf("config default: %v\n%s", err, out.String())
	}
	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("providers:\n  - {name: x, type: nope}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(context.Background(), []string{"config", "check", good, bad}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), `providers[0] (x).type: "nope"`) || !strings.Contains(out.String(), good+": ok") {
		t.Errorf("config check: %v\n%s", err, out.String())
	}
	if err := run(context.Background(), []string{"frobnicate"}, &out, &out); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: %v", err)
	}
}

func TestServeRefusesInvalidConfig(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("server: {log_level: loud}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"serve", "-config", bad}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "server.log_level") {
		t.Errorf("serve on an invalid file: %v", err)
	}
}

func TestHealthAgainstNothing(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"health", "-addr", "127.0.0.1:1", "-timeout", "300ms"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Error("health must fail when nothing listens")
	}
}
