package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoticesOnStderr: what the streamed answer does not show is said on
// stderr: an answer cut by the token limit (it printed "You said:" and
// exited 0 as if complete), options that ignore_invalid_options dropped
// (in silence), for chat, tools and the -json mode's absence of notes.
func TestNoticesOnStderr(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "-o", "max_tokens=2", "hello", "there", "world")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "You said:" ||
		r.stderr != "llmrelay chat: the answer was cut at the output token limit (finish reason LENGTH; -o max_tokens=N raises it)\n" {
		t.Errorf("cut answer: %+v", r)
	}
	r = runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "-o", "ignore_invalid_options=true", "-o", "reasoning_effort=high", "hi")
	if r.code != ExitOK || r.stdout != "You said: hi\n" ||
		r.stderr != "llmrelay chat: option reasoning_effort dropped (ignore_invalid_options): not supported by format builtin\n" {
		t.Errorf("dropped option: %+v", r)
	}
	// A complete answer says nothing more.
	if r := runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "hi"); r.code != ExitOK || r.stderr != "" {
		t.Errorf("plain answer: %+v", r)
	}
	// -json shows the finish reason in the response: no note.
	if r := runCLI(t, "", "chat", "--local", "--json", "-m", "builtin/echo", "-o", "max_tokens=2", "a b c"); r.code != ExitOK || r.stderr != "" ||
		!strings.Contains(r.stdout, "FINISH_REASON_LENGTH") {
		t.Errorf("-json: %+v", r)
	}
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(`[{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "tools", "--local", "-m", "builtin/echo", "--tools", path, "-o", "max_tokens=1", "some words")
	if r.code != ExitOK || !strings.Contains(r.stdout, "(arguments incomplete or not a JSON object: do not run)") ||
		!strings.Contains(r.stderr, "llmrelay tools: the answer was cut at the output token limit (finish reason LENGTH") {
		t.Errorf("tools, a cut call: %+v", r)
	}
}

// TestConfigCheckNotes: a valid file whose key variable is unset here
// passes config check (which validates without credentials, as CI can) but
// says what serve will refuse; a ${VAR} that gives "" is named as serve
// logs it. Both are notes: exit 0, "ok" on stdout.
func TestConfigCheckNotes(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_UNSET_KEY_20", "")
	t.Setenv("LLMRELAY_TEST_UNSET_HDR_20", "")
	path := filepath.Join(t.TempDir(), "n.yaml")
	body := "providers:\n  - {name: an, type: anthropic, api_key_env: LLMRELAY_TEST_UNSET_KEY_20, headers: {X-Team: \"${LLMRELAY_TEST_UNSET_HDR_20}\"}}\n" +
		"models: [{name: m, provider: an, capabilities: {chat: {format: anthropic-messages}}}]\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "config", "check", path)
	if r.code != ExitOK || r.stdout != path+": ok\n" ||
		!strings.Contains(r.stderr, path+":2:33: providers[0] (an).api_key_env: the environment variable LLMRELAY_TEST_UNSET_KEY_20 is unset or empty (a note: not needed by config check, but serve and --local refuse to start without it)\n") ||
		!strings.Contains(r.stderr, path+":2:92: ${LLMRELAY_TEST_UNSET_HDR_20} is unset or empty and has no default") {
		t.Errorf("config check: %+v", r)
	}
	// What the note announces.
	if r := runCLI(t, "", "serve", "-config", path, "-listen", "127.0.0.1:0"); r.code != ExitFailure || !strings.Contains(r.stderr, "LLMRELAY_TEST_UNSET_KEY_20 is unset or empty") {
		t.Errorf("serve: %+v", r)
	}
	t.Setenv("LLMRELAY_TEST_UNSET_KEY_20", "sk-ant-test")
	t.Setenv("LLMRELAY_TEST_UNSET_HDR_20", "a")
	if r := runCLI(t, "", "config", "check", path); r.code != ExitOK || r.stderr != "" {
		t.Errorf("config check with the variables set: %+v", r)
	}
}

// TestConfigErrorsSayTheFix: configuration mistakes name what would be
// right: the formats a provider type takes for the protocol (not only "is
// not spoken" / "does not serve"), a floor-only range as a floor (not
// "outside [0, +Inf]"), and an api_key whose ${VAR} expanded to nothing as
// empty (not "set api_key_env, api_key_file or api_key", which it was).
func TestConfigErrorsSayTheFix(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_UNSET_KEY_20B", "")
	dir := t.TempDir()
	// The catalog's checks run on a file the configuration's own checks
	// pass, so the two kinds of mistakes are in two files.
	formats := filepath.Join(dir, "formats.yaml")
	key := filepath.Join(dir, "key.yaml")
	for path, body := range map[string]string{
		formats: `providers:
  - {name: ol, type: ollama}
models:
  - name: o
    provider: ol
    capabilities: {chat: {format: openai-chat}, embeddings: {format: ollama}}
  - name: p
    provider: ol
    capabilities: {chat: {format: ollama, options: {temperature: -1}}}
`,
		key: `providers:
  - {name: gm, type: gemini, api_key: "${LLMRELAY_TEST_UNSET_KEY_20B}"}
models: [{name: g, provider: gm, capabilities: {chat: {format: gemini}}}]
`,
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, "", "config", "check", formats, key)
	for _, want := range []string{
		formats + ":6:27: models[0] (o).capabilities.chat.format: openai-chat is not spoken by provider ol (type ollama); for chat a provider of type ollama takes ollama\n",
		formats + ":6:62: models[0] (o).capabilities.embeddings.format: ollama does not serve embeddings; for embeddings a provider of type ollama takes ollama-embeddings\n",
		formats + ":9:53: models[1] (p).capabilities.chat.options.temperature: -1 is below 0, the least format ollama accepts\n",
		key + ":2:30: providers[0] (gm).api_key: empty (use api_key_env or api_key_file for a key kept outside the file)\n",
		key + ":2:39: ${LLMRELAY_TEST_UNSET_KEY_20B} is unset or empty and has no default",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("missing %q in:\n%s", want, r.stderr)
		}
	}
	if r.code != ExitFailure || strings.Contains(r.stderr, "set api_key_env, api_key_file or api_key") || strings.Contains(r.stderr, "Inf") {
		t.Errorf("config check: %+v", r)
	}
}

// TestConfigErrorsInFileOrder: every error of a file is listed top to
// bottom (they came in the order of the checks: line 2, 6, 7, then 4),
// and an unknown provider type is not also told to set a key.
func TestConfigErrorsInFileOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.yaml")
	body := `server:
  listn: 127.0.0.1:50051
  shutdown_grace: 15s
  log_level: verbose
defaults:
  connect_timeout: 10 seconds
  retry: {max_attempts: "three"}
providers:
  - {name: oa, type: opena}
models:
  - {name: m, provider: oa, capabilities: {chat: {format: openai-chat}}}
  - {name: m, provider: oa, capabilities: {chat: {format: openai-chat}}}
`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "config", "check", path)
	want := path + `:2:3: server: unknown key "listn"; did you mean "listen"?
` + path + `:4:3: server.log_level: "verbose" is not one of debug, info, warn, error
` + path + `:6:20: defaults.connect_timeout: invalid duration "10 seconds" (use e.g. "30s", "1m30s" or seconds)
` + path + `:7:25: defaults.retry.max_attempts: want an integer, got "three"
` + path + `:9:16: providers[0] (oa).type: "opena" is not one of builtin, openai, azure, anthropic, gemini, ollama
` + path + `:12:6: models[1].name: duplicate model "m"
llmrelay config: invalid: ` + path + "\n"
	if r.code != ExitFailure || r.stderr != want {
		t.Errorf("config check:\n%s\nwant:\n%s", r.stderr, want)
	}
}

// TestServeNamesTheEnvironment: a wrong LLMRELAY_LISTEN or LLMRELAY_CONFIG
// is named as the variable it came from ("listen garbage: listen tcp:
// address garbage: missing port in address" and "config: open
// /nonexistent" did not say where the value came from).
func TestServeNamesTheEnvironment(t *testing.T) {
	t.Setenv("LLMRELAY_CONFIG", "")
	t.Setenv("LLMRELAY_LISTEN", "garbage")
	if r := runCLI(t, "", "serve"); r.code != ExitFailure || r.stderr != "llmrelay serve: LLMRELAY_LISTEN: \"garbage\" is not host:port (e.g. 127.0.0.1:50051)\n" {
		t.Errorf("LLMRELAY_LISTEN: %+v", r)
	}
	if r := runCLI(t, "", "serve", "-listen", "garbage"); r.code != ExitFailure || r.stderr != "llmrelay serve: -listen: \"garbage\" is not host:port (e.g. 127.0.0.1:50051)\n" {
		t.Errorf("-listen: %+v", r)
	}
	t.Setenv("LLMRELAY_LISTEN", "")
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	t.Setenv("LLMRELAY_CONFIG", missing)
	if r := runCLI(t, "", "serve"); r.code != ExitFailure || !strings.HasPrefix(r.stderr, "llmrelay serve: LLMRELAY_CONFIG="+missing+": open "+missing+": no such file") {
		t.Errorf("LLMRELAY_CONFIG: %+v", r)
	}
}

// TestAgentExecFailureSaid: a failing --exec command is an error result
// for the model, and says so on stderr (the run ended with exit 0 and
// only the model's answer told of it).
func TestAgentExecFailureSaid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(`[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "agent", "--local", "--tools", path, "--exec", "echo boom >&2; exit 3", "Paris")
	if r.code != ExitOK || !strings.Contains(r.stderr, "[tool get_weather (call_builtin_") ||
		!strings.Contains(r.stderr, ")] --exec failed (exit status 3): the model gets an error result: boom\n") {
		t.Errorf("agent: %+v", r)
	}
	// A command that succeeds says nothing of the kind.
	if r := runCLI(t, "", "agent", "--local", "--tools", path, "--exec", "echo sunny", "Paris"); r.code != ExitOK || strings.Contains(r.stderr, "--exec failed") {
		t.Errorf("agent: %+v", r)
	}
}

// TestHealthUnknownServiceNamesTheKnown: "health -service" with a name the
// server does not report says which it does (grpc's "unknown service"
// alone left the reader guessing).
func TestHealthUnknownServiceNamesTheKnown(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t)
	r := runCLI(t, "", "health", "--addr", addr, "-service", "GatewayService")
	if r.code != ExitInvalidRequest || r.stderr != "llmrelay health: NotFound: unknown service\n"+
		"  the server reports health for \"\" (the whole server, the default), llmrelay.v1.GatewayService and llmrelay.v1.ExtractService\n" {
		t.Errorf("health: %+v", r)
	}
	for _, svc := range []string{"llmrelay.v1.GatewayService", "llmrelay.v1.ExtractService"} {
		if r := runCLI(t, "", "health", "--addr", addr, "-service", svc); r.code != ExitOK {
			t.Errorf("health -service %s: %+v", svc, r)
		}
	}
}

// TestAgentMaxRoundsSaid: a run that stops at --max-rounds with the model
// still calling tools names the unanswered calls (it printed an empty
// answer and exited 0 with only "FINISH_REASON_MAX_ROUNDS" to tell).
func TestAgentMaxRoundsSaid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(`[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "result": "sunny"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "agent", "--local", "--tools", path, "--max-rounds", "1", "Paris")
	if r.code != ExitOK || !strings.Contains(r.stderr, "llmrelay agent: the run stopped after 1 model calls with the model still calling tools, unanswered: get_weather {\"city\":\"Paris\"} (call_builtin_") ||
		!strings.Contains(r.stderr, "FINISH_REASON_MAX_ROUNDS: 1 model calls, 0 tool rounds") {
		t.Errorf("agent --max-rounds 1: %+v", r)
	}
	if r := runCLI(t, "", "agent", "--local", "--tools", path, "Paris"); r.code != ExitOK || strings.Contains(r.stderr, "unanswered") {
		t.Errorf("agent: %+v", r)
	}
}
