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

// A spend budget is read exactly from its decimal text, and checked: its
// window, currency, a positive limit, and no model the caller may use
// priced in another currency; models without prices are warned about.
func TestSpendBudget(t *testing.T) {
	t.Parallel()
	tok := func(spend string) string {
		return "    - {name: t, sha256: " + strings.Repeat("ab", 32) + ", models: [\"p/*\"], spend: " + spend + "}\n"
	}
	models := `models:
  - {name: p/usd, provider: p, capabilities: {chat: {format: openai-chat}}, prices: {input: 1, output: 2}}
  - {name: p/free, provider: p, capabilities: {chat: {format: openai-chat}}}
  - {name: q/eur, provider: p, capabilities: {chat: {format: openai-chat}}, prices: {currency: EUR, input: 1, output: 2}}
providers: [{name: p, type: openai, api_key: k}]
auth:
  tokens:
`
	c, err := Parse([]byte(models+tok(`{limit: "5.10", per: day}`)), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp := c.Auth.Tokens[0].Spend
	if sp.Limit.Nanos != 5_100_000_000 || sp.CurrencyCode() != "USD" || sp.Per != "day" || sp.Limit.String() != "5.10" {
		t.Errorf("spend = %+v %d %s", sp, sp.Limit.Nanos, sp.Limit)
	}
	if w := c.SpendWarnings(); len(w) != 1 || !strings.Contains(w[0], "caller t") || !strings.Contains(w[0], "p/free") || strings.Contains(w[0], "q/eur") {
		t.Errorf("warnings %q, want one naming p/free only", w)
	}
	if (Amount{Nanos: 125_000_000}).String() != "0.125" || (Amount{Nanos: 3e9}).String() != "3.00" {
		t.Error("Amount.String")
	}

	for spend, want := range map[string]string{
		`{limit: 0, per: day}`:                  "spend.limit: required, a positive",
		`{per: day}`:                            "spend.limit: required",
		`{limit: -1, per: day}`:                 `amount "-1"`,
		`{limit: 1000000001, per: day}`:         "more than 1000000000",
		`{limit: 1.0000000001, per: day}`:       "at most nine decimals",
		`{limit: 1, per: week}`:                 `spend.per: "week" is not one of hour, day, month`,
		`{limit: 1, per: day, currency: usd}`:   `spend.currency: "usd" is not an ISO 4217 code`,
		`{limit: 1, per: month, currency: EUR}`: "spend.currency: EUR, but the caller may use model p/usd, priced in USD",
	} {
		_, err := Parse([]byte(models+tok(spend)), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("spend %s: %v, want %q", spend, err, want)
		}
	}
}

// A caller named by its client certificate needs mutual TLS, exactly one
// source, and a certificate identity no other caller has.
func TestClientCertificateCaller(t *testing.T) {
	t.Parallel()
	mtls := "server: {tls: {cert_file: /c, key_file: /k, client_ca_file: /ca}}\n"
	for name, tc := range map[string]struct{ yaml, want string }{
		"no mTLS": {"auth:\n  tokens:\n    - {name: a, client_certificate: a.internal}\n", "auth.tokens[0].client_certificate: needs mutual TLS"},
		"two sources": {mtls + "auth:\n  tokens:\n    - {name: a, client_certificate: a.internal, sha256: " + strings.Repeat("ab", 32) + "}\n",
			"set exactly one of sha256, token_file, token_env, client_certificate"},
		"duplicate": {mtls + "auth:\n  tokens:\n    - {name: a, client_certificate: a.internal}\n    - {name: b, client_certificate: a.internal}\n",
			`auth.tokens[1] (b).client_certificate: "a.internal" names another caller too`},
	} {
		_, err := Parse([]byte(tc.yaml), "f")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	c, err := Parse([]byte(mtls+"auth:\n  tokens:\n    - {name: a, client_certificate: spiffe://corp/ns/billing/sa/api}\n"), "f")
	if err != nil || !c.Auth.Enabled() || c.Auth.Tokens[0].ClientCertificate != "spiffe://corp/ns/billing/sa/api" {
		t.Errorf("parsed %v, %v", c, err)
	}
}
