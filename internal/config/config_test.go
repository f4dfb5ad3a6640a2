package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultParses(t *testing.T) {
	t.Parallel()
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if *c.Server.Listen != "127.0.0.1:50051" || c.Server.ShutdownGrace.Duration != 15*time.Second || len(c.Models) != 2 {
		t.Errorf("default = %+v", c)
	}
}

func TestDurations(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("server: {shutdown_grace: 24s}\ndefaults: {connect_timeout: 2.5, idle_timeout: 1m30s}\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.ShutdownGrace.Duration != 24*time.Second || c.Defaults.ConnectTimeout.Duration != 2500*time.Millisecond || c.Defaults.IdleTimeout.Duration != 90*time.Second {
		t.Errorf("durations = %v %v %v", c.Server.ShutdownGrace, c.Defaults.ConnectTimeout, c.Defaults.IdleTimeout)
	}
	for _, bad := range []string{"server: {shutdown_grace: soon}", "server: {shutdown_grace: -3}", "server: {shutdown_grace: [1]}"} {
		if _, err := Parse([]byte(bad), "t"); err == nil || !strings.HasPrefix(err.Error(), "t:1:26: server.shutdown_grace: ") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

func TestUnknownKeysNamed(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte("providers:\n  - name: a\n    type: builtin\n    base_ulr: x\n"), "f.yaml")
	if err == nil || err.Error() != `f.yaml:4:5: providers[0] (a): unknown key "base_ulr"; did you mean "base_url"?` {
		t.Errorf("err = %v", err)
	}
}

func TestJSONConfig(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`{"providers":[{"name":"b","type":"builtin"}],"models":[{"name":"m","provider":"b","capabilities":{"chat":{"format":"builtin"}}}]}`), "t.json")
	if err != nil || len(c.Models) != 1 {
		t.Fatalf("%v %v", c, err)
	}
}

func TestValidationListsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`
server: {log_level: loud}
providers:
  - {name: a, type: openai}
  - {name: a, type: nope}
  - {name: z, type: azure, api_key: k, organization: org-1}
  - {name: d, type: openai, api_key: k, reasoning_replay: always}
  - {name: c, type: anthropic, api_key: k, reasoning_replay: reasoning_content}
  - {name: v, type: openai, api_key: k, thinking_switch: enable_thinking}
  - {name: gptoss, type: openai, api_key: k, reasoning_replay: reasoning}
  - {name: g, type: gemini, api_key: k, thinking_switch: chat_template_kwargs}
models:
  - {name: m, provider: ghost, capabilities: {chat: {format: x}, sing: {format: y}}}
  - {name: r, provider: a, deployments: [{provider: a}], capabilities: {chat: {format: x}}}
  - {name: s, provider: a, structured_output: json, capabilities: {chat: {format: x}}}
`), "t")
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		"server.log_level", "providers[0] (a): set api_key_env", "providers[1].name: duplicate provider", "providers[1] (a).type",
		`models[0] (m).provider: "ghost"`, "models[0] (m).capabilities.sing: unknown protocol", "models[1] (r): set either provider or deployments",
		"providers[2] (z): organization and project are OpenAI headers",
		`providers[3] (d).reasoning_replay: "always" is not auto, none, reasoning_content, reasoning or reasoning_details`,
		"providers[4] (c).reasoning_replay: only for openai (OpenAI-compatible) providers, not anthropic",
		`providers[5] (v).thinking_switch: "enable_thinking" is not auto or chat_template_kwargs`,
		"providers[7] (g).thinking_switch: only for openai (OpenAI-compatible) providers, not gemini",
		`models[2] (s).structured_output: "json" is not tool or native`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	// reasoning_replay reasoning is the adapter's (gpt-oss on Bedrock's
	// Mantle endpoint): taken.
	if strings.Contains(err.Error(), "(gptoss)") {
		t.Errorf("reasoning_replay reasoning refused:\n%v", err)
	}
}

func TestEnvExpansionAndKeys(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_URL", "http://10.0.0.1:8080/v1")
	t.Setenv("LLMRELAY_TEST_KEY", "sk-from-env")
	c, err := Parse([]byte(`
providers:
  - {name: a, type: openai, base_url: "${LLMRELAY_TEST_URL}", api_key_env: LLMRELAY_TEST_KEY}
  - {name: b, type: openai, base_url: "${LLMRELAY_TEST_UNSET:-https://api.openai.com/v1}", api_key: "${LLMRELAY_TEST_KEY}"}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	if c.Providers[0].BaseURL != "http://10.0.0.1:8080/v1" || c.Providers[1].BaseURL != "https://api.openai.com/v1" || c.Providers[1].APIKey != "sk-from-env" {
		t.Errorf("expanded = %+v", c.Providers)
	}
	if k, err := c.Providers[0].APIKeyValue(); err != nil || k != "sk-from-env" {
		t.Errorf("key = %q %v", k, err)
	}
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("sk-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Provider{Name: "f", APIKeyFile: file}
	if k, err := p.APIKeyValue(); err != nil || k != "sk-from-file" {
		t.Errorf("file key = %q %v", k, err)
	}
	p = Provider{Name: "g", APIKeyEnv: "LLMRELAY_TEST_NOT_SET_EVER"}
	if _, err := p.APIKeyValue(); err == nil || !strings.Contains(err.Error(), "LLMRELAY_TEST_NOT_SET_EVER is not set") {
		t.Errorf("unset env: %v", err)
	}
}

func TestTransportMerge(t *testing.T) {
	t.Parallel()
	three, one := 3, 1
	off := false
	base := Transport{Retry: &Retry{MaxAttempts: &three}, IdleTimeout: &Duration{time.Minute}}
	got := base.Merge(Transport{Retry: &Retry{MaxAttempts: &one}, PreserveRawData: &off})
	if *got.Retry.MaxAttempts != 1 || got.IdleTimeout.Duration != time.Minute || *got.PreserveRawData || *base.Retry.MaxAttempts != 3 {
		t.Errorf("merge = %+v (base %+v)", got, base)
	}
}

func TestMaxCallDuration(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("defaults: {max_call_duration: 90s}\n"), "t")
	if err != nil || c.Defaults.CallBound() != 90*time.Second {
		t.Fatalf("bound %v, err %v", c.Defaults.CallBound(), err)
	}
	if c, err := Parse([]byte("providers: [{name: b, type: builtin}]\n"), "t"); err != nil || c.Defaults.CallBound() != DefaultMaxCallDuration {
		t.Errorf("unset: %v %v", c.Defaults.CallBound(), err)
	}
	for yaml, want := range map[string]string{
		"defaults: {max_call_duration: 0s}\n":                                         "defaults.max_call_duration: must be positive",
		"providers: [{name: b, type: builtin, transport: {max_call_duration: 1m}}]\n": "providers[0] (b).transport.max_call_duration: only under defaults",
	} {
		if _, err := Parse([]byte(yaml), "t"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", yaml, err, want)
		}
	}
}

// TestAgentConfig: MCP servers, the request URL allow-list and prompt
// context are checked, every problem listed; header values resolve from
// env, file or inline and name their source when missing.
func TestAgentConfig(t *testing.T) {
	_, err := Parse([]byte(`
providers:
  - {name: b, type: builtin}
models:
  - name: m
    provider: b
    capabilities: {tools: {format: builtin}}
    context:
      - {role: narrator, text: hi}
      - {role: system}
mcp_servers:
  - {name: docs, url: "ftp://x"}
  - {name: docs, url: "https://mcp.example.test", transport: ws, headers: {Authorization: {env: A, value: b}}}
agent:
  allow_request_mcp_urls: ["not a url"]
`), "t")
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		"context[0].role", "context[1].text: required", "mcp_servers[0] (docs).url", "mcp_servers[1].name: duplicate MCP server",
		`mcp_servers[1] (docs).transport: "ws"`, "mcp_servers[1] (docs).headers.Authorization: set exactly one", "agent.allow_request_mcp_urls[0]",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	c, err := Parse([]byte(`
providers:
  - {name: b, type: builtin}
models:
  - {name: m, provider: b, capabilities: {tools: {format: builtin}}, context: [{role: system, text: Be brief.}]}
mcp_servers:
  - {name: docs, url: "https://mcp.example.test/mcp", transport: sse, allowed_tools: [search], hosted: true, headers: {X-Team: {value: t1}}}
agent:
  allow_request_mcp_urls: ["https://mcp.internal.test/"]
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	if m := c.MCPServers[0]; m.Transport != "sse" || !m.Hosted || m.AllowedTools[0] != "search" || m.Headers["X-Team"].Value != "t1" ||
		c.Agent.AllowRequestMCPURLs[0] != "https://mcp.internal.test/" || c.Models[0].Context[0].Text != "Be brief." {
		t.Fatalf("parsed %+v", c)
	}
	t.Setenv("LLMRELAY_TEST_MCP_TOKEN", " tok-123 ")
	if v, err := (HeaderValue{Env: "LLMRELAY_TEST_MCP_TOKEN"}).Resolve(); err != nil || v != "tok-123" {
		t.Fatalf("env: %q %v", v, err)
	}
	if _, err := (HeaderValue{Env: "LLMRELAY_TEST_MCP_UNSET"}).Resolve(); err == nil || !strings.Contains(err.Error(), "LLMRELAY_TEST_MCP_UNSET") {
		t.Fatalf("unset env: %v", err)
	}
	f := t.TempDir() + "/tok"
	if err := os.WriteFile(f, []byte("file-tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := (HeaderValue{File: f}).Resolve(); err != nil || v != "file-tok" {
		t.Fatalf("file: %q %v", v, err)
	}
}

func TestEveryErrorLocatedAndWorded(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`server:
  log_levle: debug
  log_format: xml
  listen: "50051"
providers:
  - name: a
    type: openai
    transport: {retry: {max_attempts: lots}, idle_timeout: soon}
    colour: red
models:
  - name: m
    provider: ghost
    capabilities: [chat]
  - name: m
    provider: a
    capabilities: {chatt: {format: openai-chat}}
`), "bad.yaml")
	if err == nil {
		t.Fatal("want errors")
	}
	want := []string{
		`bad.yaml:2:3: server: unknown key "log_levle"; did you mean "log_level"?`,
		`bad.yaml:3:3: server.log_format: "xml" is not text or json`,
		`bad.yaml:4:3: server.listen: "50051" is not host:port ("" with unix_socket set: no TCP listener)`,
		`bad.yaml:8:39: providers[0] (a).transport.retry.max_attempts: want an integer, got "lots"`,
		`bad.yaml:8:60: providers[0] (a).transport.idle_timeout: invalid duration "soon"`,
		`bad.yaml:9:5: providers[0] (a): unknown key "colour" (the keys here are api_key, api_key_env, api_key_file, api_version, auth, azure_api, base_url, default_max_tokens, headers, max_embedding_inputs, name, organization, project, reasoning_replay, thinking_switch, transport, type)`,
		`bad.yaml:6:5: providers[0] (a): set api_key_env, api_key_file or api_key`,
		`bad.yaml:13:19: models[0] (m).capabilities: want a mapping (key: value lines), got a list`,
		`bad.yaml:12:5: models[0] (m).provider: "ghost" is not a configured provider`,
		`bad.yaml:14:5: models[1].name: duplicate model "m"`,
		`bad.yaml:16:20: models[1] (m).capabilities.chatt: unknown protocol (use chat, vision, tools, embeddings, documents, audio)`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "int") && !strings.Contains(err.Error(), "an integer") {
		t.Errorf("Go type names in:\n%v", err)
	}
}

func TestEmptyAndBrokenFiles(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"", "   \n", "# only a comment\n", "---\n"} {
		_, err := Parse([]byte(raw), "e.yaml")
		if err == nil || err.Error() != `e.yaml: the file is empty ("llmrelay config default" prints a complete configuration)` {
			t.Errorf("%q: %v", raw, err)
		}
	}
	_, err := Parse([]byte("server:\n  listen: [\n"), "s.yaml")
	if err == nil || err.Error() != "s.yaml:2: did not find expected node content" {
		t.Errorf("syntax error: %v", err)
	}
	_, err = Parse([]byte("- a\n- b\n"), "l.yaml")
	if err == nil || !strings.Contains(err.Error(), "l.yaml:1:1: want a mapping (key: value lines), got a list") {
		t.Errorf("a list at the top: %v", err)
	}
}

func TestEnvExpandedInEveryValue(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_TYPE", "builtin")
	t.Setenv("LLMRELAY_TEST_TEMP", "0.25")
	t.Setenv("LLMRELAY_TEST_ATTEMPTS", "2")
	c, err := Parse([]byte(`
server: {log_level: "${LLMRELAY_TEST_LEVEL:-debug}"}
defaults:
  retry:
    max_attempts: ${LLMRELAY_TEST_ATTEMPTS}
providers:
  - {name: "${LLMRELAY_TEST_PNAME:-local}", type: "${LLMRELAY_TEST_TYPE}"}
models:
  - name: ${LLMRELAY_TEST_MODEL:-m}
    provider: local
    capabilities:
      chat:
        format: builtin
        options:
          temperature: ${LLMRELAY_TEST_TEMP}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.LogLevel != "debug" || c.Providers[0].Name != "local" || c.Providers[0].Type != "builtin" || c.Models[0].Name != "m" ||
		*c.Defaults.Retry.MaxAttempts != 2 || c.Models[0].Capabilities["chat"].Options["temperature"] != 0.25 {
		t.Errorf("expanded = %+v %+v %+v", c.Server, c.Providers, c.Models)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	keys := []string{"base_url", "api_key", "api_key_env", "name", "type", "temperature", "top_p"}
	for in, want := range map[string]string{
		"base_ulr": "base_url", "apikey": "api_key", "api_key_evn": "api_key_env", "nmae": "name", "Type": "type",
		"temprature": "temperature", "top-p": "top_p", "colour": "", "x": "", "weather": "",
	} {
		if got := Suggest(in, keys); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLocate(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("providers:\n  - name: b\n    type: builtin\nmodels:\n  - name: m.1\n    provider: b\n    capabilities:\n      chat: {format: builtin}\n"), "l.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]string{
		"models[0] (m.1).capabilities.chat.format: x": "l.yaml:8:14: models[0] (m.1).capabilities.chat.format: x",
		"models[0] (m.1).capabilities.tools: x":       "l.yaml:7:5: models[0] (m.1).capabilities.tools: x", // deepest that exists
		"providers[0] (b): x":                         "l.yaml:2:5: providers[0] (b): x",
		"provider b: dial failed":                     "l.yaml: provider b: dial failed", // not a path: no position
	} {
		if got := c.Locate(errors.New(msg)).Error(); got != want {
			t.Errorf("Locate(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestHTTPVersion(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("defaults: {http_version: \"2\"}\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	v := "1.1"
	if got := c.Defaults.Merge(Transport{HTTPVersion: &v}); *got.HTTPVersion != "1.1" || *c.Defaults.HTTPVersion != "2" {
		t.Errorf("merge: %v over %v", *got.HTTPVersion, *c.Defaults.HTTPVersion)
	}
	if _, err := Parse([]byte("defaults: {http_version: \"3\"}\n"), "t"); err == nil || !strings.Contains(err.Error(), "defaults.http_version") {
		t.Errorf("http_version 3: %v", err)
	}
}

// TestUnsetVariablesNamed: a file with problems names the ${VAR}s that
// were unset or empty (without a default), at their positions, so that a
// missing key variable does not read as a missing key; a variable with a
// default, or one that is set, is not named.
func TestUnsetVariablesNamed(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_EMPTY", "")
	t.Setenv("LLMRELAY_TEST_SET", "x")
	_, err := Parse([]byte(`
providers:
  - name: oa
    type: openai
    api_key: ${LLMRELAY_TEST_UNSET_KEY}
    base_url: "${LLMRELAY_TEST_UNSET_URL:-https://api.openai.com/v1}"
    headers: {X-A: "${LLMRELAY_TEST_EMPTY}", X-B: "${LLMRELAY_TEST_SET}"}
models:
  - {name: m, provider: oa, capabilities: {chat: {}}}
`), "t.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		// The key is written: not "set api_key_env, api_key_file or
		// api_key", which read as if it were missing.
		"t.yaml:5:5: providers[0] (oa).api_key: empty",
		"t.yaml:5:14: ${LLMRELAY_TEST_UNSET_KEY} is unset or empty and has no default",
		"t.yaml:7:20: ${LLMRELAY_TEST_EMPTY} is unset or empty",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	for _, not := range []string{"LLMRELAY_TEST_UNSET_URL", "LLMRELAY_TEST_SET"} {
		if strings.Contains(err.Error(), not) {
			t.Errorf("%s named in:\n%v", not, err)
		}
	}
	// A valid file with an unset optional variable loads.
	if _, err := Parse([]byte(`
providers:
  - {name: local, type: builtin, headers: {X-A: "${LLMRELAY_TEST_UNSET_HDR}"}}
models:
  - {name: m, provider: local, capabilities: {chat: {format: builtin}}}
`), "ok.yaml"); err != nil {
		t.Errorf("valid file: %v", err)
	}
}

// TestDrainDelayWithinGrace: a drain_delay as long as the grace (default
// 15s) is refused; it was cut to the grace in silence, leaving the calls in
// flight no time.
func TestDrainDelayWithinGrace(t *testing.T) {
	models := "providers: [{name: b, type: builtin}]\nmodels: [{name: m, provider: b, capabilities: {chat: {format: builtin}}}]\n"
	for body, want := range map[string]string{
		"server: {drain_delay: 30s}\n":                     "t.yaml:1:10: server.drain_delay: 30s is not shorter than server.shutdown_grace (15s)",
		"server: {shutdown_grace: 5s, drain_delay: 5s}\n":  "t.yaml:1:30: server.drain_delay: 5s is not shorter than server.shutdown_grace (5s)",
		"server: {shutdown_grace: 20s, drain_delay: 2s}\n": "",
		"server: {drain_delay: 14s}\n":                     "",
	} {
		_, err := Parse([]byte(body+models), "t.yaml")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestRetryBaseWithinMax: a retry base_delay above max_delay is refused
// (every wait was max_delay, in silence), under defaults and a provider's
// transport alike.
func TestRetryBaseWithinMax(t *testing.T) {
	for body, want := range map[string]string{
		"defaults: {retry: {base_delay: 10s, max_delay: 1s}}\nproviders: [{name: b, type: builtin}]\n":                      "t.yaml:1:20: defaults.retry.base_delay: 10s is longer than the max_delay in effect (1s), which bounds every wait",
		"providers: [{name: b, type: builtin, transport: {retry: {base_delay: 3s, max_delay: 2s}}}]\n":                      "providers[0].transport.retry.base_delay: 3s is longer than the max_delay in effect (2s)",
		"defaults: {retry: {base_delay: 1s, max_delay: 1s}}\nproviders: [{name: b, type: builtin}]\n":                       "",
		"defaults: {retry: {max_delay: 8s}}\nproviders: [{name: b, type: builtin, transport: {retry: {base_delay: 2s}}}]\n": "",
		// Against the max_delay in effect, not only the section's own:
		// the built-in 8s, or the defaults' under a provider.
		"defaults: {retry: {base_delay: 20s}}\nproviders: [{name: b, type: builtin}]\n":                                     "t.yaml:1:20: defaults.retry.base_delay: 20s is longer than the max_delay in effect (8s)",
		"providers: [{name: b, type: builtin, transport: {retry: {base_delay: 9s}}}]\n":                                     "providers[0].transport.retry.base_delay: 9s is longer than the max_delay in effect (8s)",
		"defaults: {retry: {max_delay: 2s}}\nproviders: [{name: b, type: builtin, transport: {retry: {base_delay: 3s}}}]\n": "providers[0].transport.retry.base_delay: 3s is longer than the max_delay in effect (2s)",
		"defaults: {retry: {base_delay: 3s}}\nproviders: [{name: b, type: builtin, transport: {retry: {max_delay: 2s}}}]\n": "providers[0].transport.retry.max_delay: 2s is shorter than the base_delay in effect (3s)",
		"defaults: {retry: {base_delay: 10s, max_delay: 20s}}\nproviders: [{name: b, type: builtin}]\n":                     "",
		"defaults: {retry: {base_delay: 1s, max_delay: 0s}}\nproviders: [{name: b, type: builtin}]\n":                       "",
	} {
		_, err := Parse([]byte(body+"models: [{name: m, provider: b, capabilities: {chat: {format: builtin}}}]\n"), "t.yaml")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
