package config

import (
	"strings"
	"testing"
)

func TestAuthValidation(t *testing.T) {
	t.Parallel()
	bad := `
server: {unix_socket_mode: "0999"}
auth:
  tokens:
    - sha256: abc
    - name: a
      token_env: X
      token_file: /f
      models: ["a*b", ""]
      requests_per_minute: -1
      tokens_per_minute: -2
    - name: a
`
	_, err := Parse([]byte(bad), "f.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`server.unix_socket_mode: "0999"`,
		"auth.tokens[0].name: required",
		"auth.tokens[0].sha256: not 64 hex digits",
		"auth.tokens[1] (a): set exactly one of sha256, token_file, token_env",
		`auth.tokens[1] (a).models[0]: "a*b"`,
		`auth.tokens[1] (a).models[1]: ""`,
		"auth.tokens[1] (a).requests_per_minute: must be >= 0",
		"auth.tokens[1] (a).tokens_per_minute: must be >= 0",
		`auth.tokens[2].name: duplicate caller "a"`,
		"auth.tokens[2] (a): set exactly one",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	good := "server: {unix_socket_mode: \"0660\", allow_unauthenticated: true}\nauth:\n  tokens:\n    - {name: a, sha256: " +
		strings.Repeat("ab", 32) + ", models: [\"openai/*\", builtin/echo], requests_per_minute: 5}\n"
	c, err := Parse([]byte(good), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Auth.Enabled() || c.Server.SocketMode() != 0o660 || !c.Server.AllowUnauthenticated {
		t.Errorf("parsed %+v", c)
	}
}

func TestTLSValidation(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte("server: {tls: {cert_file: /c}}\n"), "f")
	if err == nil || !strings.Contains(err.Error(), "set both cert_file and key_file") {
		t.Errorf("cert without key: %v", err)
	}
	_, err = Parse([]byte("server: {tls: {client_ca_file: /ca}}\n"), "f")
	if err == nil || !strings.Contains(err.Error(), "mutual TLS needs cert_file") {
		t.Errorf("CA alone: %v", err)
	}
	c, err := Parse([]byte("server: {tls: {cert_file: /c, key_file: /k, client_ca_file: /ca}}\n"), "f")
	if err != nil || !c.Server.TLS.MutualTLS() {
		t.Errorf("mTLS: %v", err)
	}
}
