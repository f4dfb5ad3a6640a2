package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMalformedEnvReferences: a "${" that starts no ${VAR} or
// ${VAR:-default} reference is an error at its value's position, in a file
// that is otherwise valid too; before, it reached the provider as literal
// text (an unterminated ${OPENAI_BASE_URL:-... read as "does not parse as
// a URL" at the provider's line, ${} in a key passed silently).
func TestMalformedEnvReferences(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_SET", "x")
	for _, tc := range []struct{ value, frag string }{
		{"${LLMRELAY_TEST_URL:-https://api.openai.com/v1", `"${LLMRELAY_TEST_URL:-https://api.openai...."`},
		{"https://${HOST", `"${HOST"`},
		{"sk-${}", `"${}"`},
		{"${1X}", `"${1X}"`},
		{"${LLMRELAY_TEST_SET-x}", `"${LLMRELAY_TEST_SET-x}"`},
		{"${LLMRELAY_TEST_SET:=x}", `"${LLMRELAY_TEST_SET:=x}"`},
		{"${A:-${LLMRELAY_TEST_SET}}", `"${A:-${LLMRELAY_TEST_SET}"`},
		{"ok ${LLMRELAY_TEST_SET} then ${ broken", `"${"`},
	} {
		raw := "providers:\n  - name: b\n    type: builtin\n    headers:\n      X-A: \"" + tc.value + "\"\n" +
			"models:\n  - {name: m, provider: b, capabilities: {chat: {format: builtin}}}\n"
		_, err := Parse([]byte(raw), "t.yaml")
		want := "t.yaml:5:12: " + tc.frag + " is not a ${VAR} or ${VAR:-default} reference"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", tc.value, want, err)
		}
	}
	// Well-formed references are expanded, an empty default included;
	// "$${" is a literal "${".
	c, err := Parse([]byte(`
providers:
  - name: b
    type: builtin
    headers: {X-A: "a${LLMRELAY_TEST_SET}b${LLMRELAY_TEST_UNSET_EVER:-}c${LLMRELAY_TEST_UNSET_EVER:-d:e}", X-B: "$HOME {x} $", X-C: "$${LLMRELAY_TEST_SET} $${ x $$${LLMRELAY_TEST_SET}"}
models:
  - {name: m, provider: b, capabilities: {chat: {format: builtin}}}
`), "ok.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Providers[0].Headers; h["X-A"] != "axbcd:e" || h["X-B"] != "$HOME {x} $" || h["X-C"] != "${LLMRELAY_TEST_SET} ${ x $${LLMRELAY_TEST_SET}" {
		t.Errorf("headers = %q", h)
	}
}

// TestYAMLErrorsLocated: the parser's and decoder's errors read as the
// others, "file:line: problem", with a hint for the two usual causes (an
// unquoted ${VAR} in a flow mapping, a tab).
func TestYAMLErrorsLocated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{"defaults:\n  retry: {max_attempts: ${ATTEMPTS}}\n", []string{
			"f.yaml:1: did not find expected ',' or '}'",
			`f.yaml:2: a ${VAR} in a {...} mapping must be quoted ("${VAR}"): its "}" ends the mapping`}},
		{"server:\n  listen: a:1\nserver:\n  listen: b:1\n", []string{
			`f.yaml:3: mapping key "server" already defined at line 1`}},
		{"server:\n\tlisten: a:1\n", []string{
			"f.yaml:2: found character that cannot start any token (YAML indents with spaces, not tabs)"}},
		{"{\n  // the server\n  \"server\": {}\n}\n", []string{
			"f.yaml:2: did not find expected ',' or '}' (JSON has no comments; YAML's start with #)"}},
	} {
		_, err := Parse([]byte(tc.raw), "f.yaml")
		if err == nil {
			t.Errorf("%q: no error", tc.raw)
			continue
		}
		if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q:\n got %q\nwant %q", tc.raw, got, tc.want)
		}
	}
}

// TestQuotedReferenceTyped: the quoting a flow mapping needs does not make
// a reference a string where a number belongs (it did: "want an integer,
// got "2"" for the form docs/config.md recommends); a string stays one.
func TestQuotedReferenceTyped(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_NUM", "123")
	c, err := Parse([]byte(`defaults:
  retry: {max_attempts: "${LLMRELAY_TEST_UNSET_EVER:-2}"}
providers: [{name: b, type: builtin, headers: {X-A: "${LLMRELAY_TEST_NUM}", X-B: '${LLMRELAY_TEST_NUM}'}}]
models: [{name: m, provider: b, capabilities: {chat: {format: builtin, options: {temperature: "${LLMRELAY_TEST_UNSET_EVER:-0.5}"}}}}]
`), "q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if *c.Defaults.Retry.MaxAttempts != 2 || c.Providers[0].Headers["X-A"] != "123" || c.Providers[0].Headers["X-B"] != "123" ||
		c.Models[0].Capabilities["chat"].Options["temperature"] != 0.5 {
		t.Errorf("decoded: %d %q %#v", *c.Defaults.Retry.MaxAttempts, c.Providers[0].Headers, c.Models[0].Capabilities["chat"].Options)
	}
}

// TestExposureError: the refusal the server gives at start for a
// non-loopback listener without caller authentication, found by config
// check from the address alone.
func TestExposureError(t *testing.T) {
	t.Parallel()
	open, err := Parse([]byte("providers: [{name: b, type: builtin}]\n"), "o.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for listen, refused := range map[string]bool{
		"0.0.0.0:50051": true, ":50051": true, "[::]:50051": true, "10.1.2.3:50051": true,
		"127.0.0.1:50051": false, "[::1]:50051": false, "localhost:50051": false, "gateway.internal:50051": false,
		"": false, "nonsense": false,
	} {
		err := open.ExposureError(listen, "server.listen")
		if got := err != nil; got != refused {
			t.Errorf("%q: refused %v, want %v (%v)", listen, got, refused, err)
		}
		if err != nil && !strings.Contains(err.Error(), "server.listen: \""+listen+"\" is not a loopback address") {
			t.Errorf("%q: %v", listen, err)
		}
	}
	for _, extra := range []string{
		"server: {allow_unauthenticated: true}\n",
		"auth: {tokens: [{name: a, sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}]}\n",
		"server: {tls: {cert_file: c, key_file: k, client_ca_file: ca}}\n",
	} {
		c, err := Parse([]byte("providers: [{name: b, type: builtin}]\n"+extra), "a.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ExposureError("0.0.0.0:50051", "server.listen"); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
	if open.Server.ListenAddr() != DefaultListen {
		t.Errorf("ListenAddr = %q", open.Server.ListenAddr())
	}
}

// TestCredentialErrors: serve names every key it cannot read at its line,
// not only the first without a position; an empty key file is one (its
// empty key went to the provider).
func TestCredentialErrors(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_EMPTY_KEY", "")
	t.Setenv("LLMRELAY_TEST_GOOD_KEY", "sk-x")
	t.Setenv("LLMRELAY_TEST_LONG_TOKEN", "a-token-of-twenty-chars")
	dir := t.TempDir()
	empty, good := filepath.Join(dir, "empty"), filepath.Join(dir, "good")
	for p, body := range map[string]string{empty: "\n", good: "sk-y\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Parse([]byte(`providers:
  - {name: a, type: openai, api_key_file: `+filepath.Join(dir, "missing")+`}
  - {name: b, type: openai, api_key_env: LLMRELAY_TEST_EMPTY_KEY}
  - {name: c, type: openai, api_key_file: `+dir+`}
  - {name: d, type: openai, api_key_file: `+empty+`}
  - {name: e, type: openai, api_key_file: `+good+`}
  - {name: f, type: openai, api_key_env: LLMRELAY_TEST_GOOD_KEY}
  - {name: g, type: openai, api_key: inline}
  - {name: h, type: azure, base_url: "https://r.openai.azure.com", auth: entra, api_key_file: `+empty+`}
  - {name: i, type: builtin}
auth:
  tokens:
    - {name: ta, token_file: `+filepath.Join(dir, "missing")+`}
    - {name: tb, token_env: LLMRELAY_TEST_EMPTY_KEY}
    - {name: tc, token_file: `+good+`}
    - {name: td, sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}
    - {name: te, token_env: LLMRELAY_TEST_LONG_TOKEN}
mcp_servers:
  - name: docs
    url: http://127.0.0.1:1/mcp
    headers:
      Authorization: {env: LLMRELAY_TEST_EMPTY_KEY}
      X-File: {file: `+filepath.Join(dir, "missing")+`}
      X-Good: {env: LLMRELAY_TEST_GOOD_KEY}
`), "k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(c.CredentialErrors().Error(), "\n")
	want := []string{
		"k.yaml:2:29: providers[0] (a).api_key_file: open " + filepath.Join(dir, "missing") + ": no such file or directory",
		"k.yaml:3:29: providers[1] (b).api_key_env: the environment variable LLMRELAY_TEST_EMPTY_KEY is unset or empty",
		"k.yaml:4:29: providers[2] (c).api_key_file: read " + dir + ": is a directory",
		"k.yaml:5:29: providers[3] (d).api_key_file: " + empty + " is empty",
		"k.yaml:13:18: auth.tokens[0] (ta).token_file: open " + filepath.Join(dir, "missing") + ": no such file or directory",
		"k.yaml:14:18: auth.tokens[1] (tb).token_env: environment variable LLMRELAY_TEST_EMPTY_KEY is not set",
		"k.yaml:15:18: auth.tokens[2] (tc).token_file: the token is shorter than 16 characters",
		"k.yaml:22:23: mcp_servers[0] (docs).headers.Authorization.env: environment variable LLMRELAY_TEST_EMPTY_KEY is not set",
		"k.yaml:23:16: mcp_servers[0] (docs).headers.X-File.file: open " + filepath.Join(dir, "missing") + ": no such file or directory",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestModelWithoutProvider: a model naming no provider is told that it
// needs one, not that "" is not a configured provider.
func TestModelWithoutProvider(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte("providers: [{name: b, type: builtin}]\nmodels:\n  - {name: m, capabilities: {chat: {format: builtin}}}\n"), "p.yaml")
	want := "p.yaml:3:5: models[0] (m).provider: required (a name from providers, or deployments to route over several)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestPrunedValueReportedOnce: a value of the wrong kind is reported once;
// it was followed by "required" for the same key, which the user had set.
func TestPrunedValueReportedOnce(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`auth:
  tokens:
    - {name: a, token_env: X, spend: {limit: "abc", currency: USD, per: day}}
providers:
  - {name: b, type: builtin}
models:
  - {name: m, provider: b, capabilities: {chat: {format: builtin}}, prices: {input: -1, output: 1}}
`), "p.yaml")
	want := []string{
		`p.yaml:3:46: auth.tokens[0] (a).spend.limit: amount "abc": want a non-negative decimal number like 2.50`,
		`p.yaml:7:85: models[0] (m).prices.input: price "-1": want a non-negative decimal number like 2.50`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// TestUnsetVariablesOfAValidFile: a valid file's ${VAR}s without a
// default whose variables are unset are named for serve's warnings.
func TestUnsetVariablesOfAValidFile(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_SET", "x")
	c, err := Parse([]byte(`providers:
  - {name: b, type: builtin, headers: {X-A: "${LLMRELAY_TEST_UNSET_19}", X-B: "${LLMRELAY_TEST_SET}${LLMRELAY_TEST_UNSET_19:-d}"}}
`), "u.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`u.yaml:2:45: ${LLMRELAY_TEST_UNSET_19} is unset or empty and has no default, so "" stands in its place (${LLMRELAY_TEST_UNSET_19:-value} gives a default)`}
	if got := c.UnsetVariables(); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if d, err := Default(); err != nil || len(d.UnsetVariables()) != 0 {
		t.Errorf("the default: %v %v", d.UnsetVariables(), err)
	}
}
