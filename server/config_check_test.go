package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server"
)

func TestExampleConfigsPassCheck(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/config/*.yaml")
	if err != nil || len(files) < 8 {
		t.Fatalf("example configs: %v %v", files, err)
	}
	for _, f := range files {
		if err := server.CheckConfig(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestConfigCheckReportsEveryError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yaml")
	bad := `
providers:
  - {name: oai, type: openai, api_key_env: K}
  - {name: local, type: ollama, base_url: "http://user:sk-secret-1@127.0.0.1:11434"}
models:
  - name: m
    provider: oai
    capabilities:
      chat: {format: anthropic-messages}
      tools: {format: openai-chat, options: {temprature: 1}}
      embeddings: {format: openai-embeddings, options: {dimensions: "big"}}
`
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := server.CheckConfig(path)
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		"models[0] (m).capabilities.chat.format: anthropic-messages is not spoken by provider oai",
		"models[0] (m).capabilities.tools.options.temprature: unknown option",
		"models[0] (m).capabilities.embeddings.options.dimensions: want an integer",
		"provider local: ollama: invalid base URL \"http://127.0.0.1:11434\": no user info allowed",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("the credential is shown: %v", err)
	}
	if err := os.WriteFile(path, []byte("providers:\n  - name: x\n    type: builtin\n    colour: red\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := server.CheckConfig(path); err == nil || !strings.Contains(err.Error(), "line 4: field colour not found") {
		t.Errorf("unknown key: %v", err)
	}
}
