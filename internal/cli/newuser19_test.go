package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigCheckExposure: config check finds the non-loopback listener
// without caller authentication that serve refuses at start (it said "ok"
// and the server then would not start), in the file or in LLMRELAY_LISTEN,
// and still passes a loopback or authenticated one.
func TestConfigCheckExposure(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	models := "providers: [{name: b, type: builtin}]\nmodels: [{name: m, provider: b, capabilities: {chat: {format: builtin}}}]\n"
	exposed := write("exposed.yaml", "server:\n  listen: 0.0.0.0:50051\n"+models)
	allowed := write("allowed.yaml", "server:\n  listen: 0.0.0.0:50051\n  allow_unauthenticated: true\n"+models)
	loopback := write("loopback.yaml", models)

	t.Setenv("LLMRELAY_LISTEN", "")
	r := runCLI(t, "", "config", "check", exposed, allowed, loopback)
	want := exposed + `:2:3: server.listen: "0.0.0.0:50051" is not a loopback address and callers are not authenticated, so the server refuses to start`
	if r.code != ExitFailure || !strings.Contains(r.stderr, want) || !strings.Contains(r.stdout, allowed+": ok") || !strings.Contains(r.stdout, loopback+": ok") {
		t.Errorf("config check: %+v", r)
	}
	// serve says the same when it starts.
	if r := runCLI(t, "", "serve", "-config", exposed, "-listen", "0.0.0.0:0"); r.code != ExitFailure || !strings.Contains(r.stderr, "listen 0.0.0.0:0: refusing to serve a non-loopback address") {
		// The address as configured, not as bound ([::]:port).
		t.Errorf("serve: %+v", r)
	}

	// No listener at all: refused at start too, unless LLMRELAY_LISTEN gives one.
	none := write("none.yaml", "server: {listen: \"\"}\n"+models)
	r = runCLI(t, "", "config", "check", none)
	if r.code != ExitFailure || !strings.Contains(r.stderr, none+`:1:10: server.listen: "" without server.unix_socket leaves the server no listener`) {
		t.Errorf("config check without a listener: %+v", r)
	}
	if r := runCLI(t, "", "serve", "-config", none); r.code != ExitFailure || !strings.Contains(r.stderr, "no listener") {
		t.Errorf("serve without a listener: %+v", r)
	}
	t.Setenv("LLMRELAY_LISTEN", "127.0.0.1:50051")
	if r := runCLI(t, "", "config", "check", none); r.code != ExitOK {
		t.Errorf("config check without a listener but LLMRELAY_LISTEN: %+v", r)
	}

	t.Setenv("LLMRELAY_LISTEN", ":50051")
	r = runCLI(t, "", "config", "check", loopback)
	if r.code != ExitFailure || !strings.Contains(r.stderr, loopback+`: LLMRELAY_LISTEN: ":50051" is not a loopback address`) {
		t.Errorf("config check with LLMRELAY_LISTEN: %+v", r)
	}
}

// TestToolsFileErrors: a --tools file's problems are named at their line
// and column without Go type names ("cannot unmarshal object into Go value
// of type []cli.toolSpec"), trailing data is not ignored, and the agent's
// file is as strict as the tools command's (a misspelt "resutl" or
// "paramters" was dropped in silence).
func TestToolsFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, tc := range []struct{ body, want string }{
		{`{"name": "x"}`, "line 1, column 2: want an array, got object"},
		{`[{"name": "x", "parameters": {"type": "object"`, "the JSON ends early (a bracket or quote not closed)"},
		{"[{\"name\": \"a\",\n  \"description\": 5}]", "line 2, column 19: description: want a string, got number"},
		{"[{\"name\": \"a\",\n  \"description\": x}]", "line 2, column 19: invalid character 'x' looking for beginning of value"},
		{`[{"nam": "x"}]`, `line 1, column 15: unknown key "nam"`},
		{`[{"name": "a"}] [1]`, "line 1, column 18: more after the end of the JSON value"},
		{``, "the file is empty"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("t%d.json", i))
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"tools", "agent"} {
			r := runCLI(t, "", cmd, "--local", "-m", "builtin/echo", "--tools", path, "hi")
			if r.code != ExitUsage || !strings.Contains(r.stderr, "--tools "+path+": want a JSON array of {name, description, parameters, ") ||
				!strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "Go value") {
				t.Errorf("%s %q: %+v", cmd, tc.body, r)
			}
		}
	}
	path := filepath.Join(dir, "agent.json")
	for body, want := range map[string]string{
		`[{"name": "a", "resutl": "x"}]`: `unknown key "resutl"`,
		`[]`:                             "no tools",
		`[{"result": "x"}]`:              "tool 0 has no name",
		`[{"name": "a", "parameters": [1], "result": ""}]`: "tool a: parameters: want a JSON Schema object",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, "", "agent", "--local", "--tools", path, "hi"); r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("agent %s: %+v", body, r)
		}
	}
	// Parameters as an object or as JSON text, as for the tools command.
	if err := os.WriteFile(path, []byte(`[{"name": "get_weather", "parameters": "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}", "result": "sunny"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "agent", "--local", "--tools", path, "Paris"); r.code != ExitOK || !strings.Contains(r.stderr, `get_weather {"city":"Paris"}`) {
		t.Errorf("agent with JSON-text parameters: %+v", r)
	}
}

// TestServeNamesEveryUnreadableKey: serve names each provider key it
// cannot read at its line before starting (the server stopped at the
// first, "key.yaml: provider o: api_key_file: ...", with no position).
func TestServeNamesEveryUnreadableKey(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_UNSET_KEY_19", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "key.yaml")
	body := "providers:\n  - {name: o, type: openai, api_key_file: " + filepath.Join(dir, "nope") + "}\n" +
		"  - {name: p, type: openai, api_key_env: LLMRELAY_TEST_UNSET_KEY_19}\n" +
		"models: [{name: m, provider: o, capabilities: {chat: {format: openai-chat}}}]\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "serve", "-config", path, "-listen", "127.0.0.1:0")
	if r.code != ExitFailure || !strings.Contains(r.stderr, path+":2:29: providers[0] (o).api_key_file: open ") ||
		!strings.Contains(r.stderr, path+":3:29: providers[1] (p).api_key_env: the environment variable LLMRELAY_TEST_UNSET_KEY_19 is unset or empty") {
		t.Errorf("serve: %+v", r)
	}
}

// TestServeAddressInUse: a busy port says how to choose another one.
func TestServeAddressInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := runCLI(t, "", "serve", "-listen", l.Addr().String())
	if r.code != ExitFailure || !strings.Contains(r.stderr, "address already in use (another server on it? choose another address with -listen or LLMRELAY_LISTEN)") {
		t.Errorf("serve on a busy port: %+v", r)
	}
}

// TestVersionFlag: "llmrelay --version" prints the version, as most tools
// do, instead of "serve: flag provided but not defined: -version".
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "-version"} {
		if r := runCLI(t, "", arg); r.code != ExitOK || !strings.HasPrefix(r.stdout, "llmrelay ") || r.stderr != "" {
			t.Errorf("%s: %+v", arg, r)
		}
	}
}

// TestServeWarnsOfUnsetVariables: serve logs each ${VAR} without a default
// that gave its value "" (a forgotten export read as a setting left out).
func TestServeWarnsOfUnsetVariables(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_UNSET_URL_19", "")
	path := filepath.Join(t.TempDir(), "u.yaml")
	if err := os.WriteFile(path, []byte("providers:\n  - {name: o, type: openai, api_key: k, base_url: \"${LLMRELAY_TEST_UNSET_URL_19}\"}\n"+
		"models: [{name: m, provider: o, capabilities: {chat: {format: openai-chat}}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	if code := Run(ctx, []string{"serve", "-config", path, "-listen", "127.0.0.1:0"}, strings.NewReader(""), &out, &errOut); code != ExitOK {
		t.Fatalf("serve: %d %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "level=WARN msg=\""+path+":2:51: ${LLMRELAY_TEST_UNSET_URL_19} is unset or empty and has no default") {
		t.Errorf("log:\n%s", errOut.String())
	}
	// Which configuration runs is the first thing the log says.
	if !strings.Contains(errOut.String(), "level=INFO msg=configuration file="+path+" models=1\n") {
		t.Errorf("log:\n%s", errOut.String())
	}
}

// TestAddrChecked: an --addr grpc would dial somewhere else than meant is
// a usage error (a URL failed as Unavailable "too many colons"; a host
// without a port was dialled on 443).
func TestAddrChecked(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"http://127.0.0.1:50051":      `want host:port or unix:///path/to.sock, not a URL (--addr 127.0.0.1:50051)`,
		"https://gw.example.com:443/": `not a URL (--addr gw.example.com:443, with --tls)`,
		"127.0.0.1":                   `want host:port (the server listens on 127.0.0.1:50051 by default)`,
		"gateway:":                    `want host:port`,
	} {
		r := runCLI(t, "", "models", "--addr", addr)
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %+v", addr, r)
		}
	}
	for _, addr := range []string{"127.0.0.1:1", "[::1]:1", "unix:///nonexistent/llmrelay.sock", "dns:///127.0.0.1:1"} {
		if r := runCLI(t, "", "models", "--addr", addr, "--timeout", "2s"); r.code != ExitUnavailable {
			t.Errorf("%s: %+v", addr, r)
		}
	}
}

// TestAgentNeedsTools: an agent run without --tools or --mcp is a usage
// error of the command, not the server's "setup.tools: at least one tool".
func TestAgentNeedsTools(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "agent", "--local", "-m", "builtin/echo", "--mcp", " , ", "Paris")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--tools FILE or --mcp NAMES is required") {
		t.Errorf("%+v", r)
	}
}

// TestServeLocatesListenerSettings: a TLS file that cannot be loaded is
// named at its line, as the other problems of the file.
func TestServeLocatesListenerSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "tls.yaml")
	crt := filepath.Join(dir, "missing.crt")
	if err := os.WriteFile(path, []byte("server:\n  listen: 127.0.0.1:0\n  tls: {cert_file: "+crt+", key_file: "+crt+"}\n"+
		"providers: [{name: b, type: builtin}]\nmodels: [{name: m, provider: b, capabilities: {chat: {format: builtin}}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "serve", "-config", path)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "llmrelay serve: "+path+":3:3: server.tls: ") || !strings.Contains(r.stderr, crt) {
		t.Errorf("%+v", r)
	}
}
