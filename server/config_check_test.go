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
  - name: chat-model
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities:
      chat: {format: openai-chat, options: {reasoning_effort: low}}
      tools: {format: openai-tools, options: {temperature: 3}}
  - name: o3
    provider: oai
    capabilities:
      chat: {format: openai-chat, options: {temperature: 0.5}}
`
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := server.CheckConfig(path)
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		path + ":9:14: models[0] (m).capabilities.chat.format: anthropic-messages is not spoken by provider oai",
		path + ":10:46: models[0] (m).capabilities.tools.options.temprature: unknown option; did you mean temperature? (format openai-chat knows frequency_penalty, max_tokens,",
		path + ":11:57: models[0] (m).capabilities.embeddings.options.dimensions: want an integer, got \"big\"",
		path + ":4:5: providers[1] (local): ollama: invalid base URL \"http://127.0.0.1:11434\": no user info allowed",
		// Configured options that every call would carry and fail on.
		path + ":16:45: models[1] (chat-model).capabilities.chat.options.reasoning_effort: only supported by reasoning models, and chat-model is not a reasoning model",
		path + ":17:47: models[1] (chat-model).capabilities.tools.options.temperature: 3 is outside [0, 2], the range format openai-tools accepts",
		path + ":21:45: models[2] (o3).capabilities.chat.options.temperature: not supported by reasoning models unless reasoning_effort is NONE, and o3 is a reasoning model",
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
	if err := server.CheckConfig(path); err == nil || !strings.Contains(err.Error(), path+`:4:5: providers[0] (x): unknown key "colour"`) {
		t.Errorf("unknown key: %v", err)
	}
}
