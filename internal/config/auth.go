package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Auth is caller authentication. With no tokens every caller is anonymous;
// with tokens, every RPC but health checks needs one of them as a bearer
// token.
type Auth struct {
	Tokens []Token `yaml:"tokens"`
	// Redis, when set, holds the callers' rate-limit counters, so that the
	// limits hold across every replica that names the same Redis;
	// without it they hold per process.
	Redis *Redis `yaml:"redis"`
}

// Redis is where the rate-limit counters live.
type Redis struct {
	// Address is host:port (or a unix socket path).
	Address string `yaml:"address"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env"`
	DB          int    `yaml:"db"`
	// KeyPrefix starts every key (default "llmrelay:").
	KeyPrefix string `yaml:"key_prefix"`
	// Timeout bounds one round trip (default 200ms).
	Timeout Duration `yaml:"timeout"`
	// OnError is what a call gets when Redis cannot be reached: "open"
	// (default: served without the limit, with a warning in the log and
	// in meta.warnings) or "closed" (refused with Unavailable).
	OnError string `yaml:"on_error"`
}

// Enabled reports whether callers must authenticate.
func (a Auth) Enabled() bool { return len(a.Tokens) > 0 }

// Token is one caller's bearer token, from exactly one source: its SHA-256
// (hex) in the file, a file holding the token, or an environment variable;
// or, instead of a token, the identity of its client certificate.
type Token struct {
	// Name identifies the caller in logs, metrics and ResponseMeta.caller.
	Name      string `yaml:"name"`
	SHA256    string `yaml:"sha256"`
	TokenFile string `yaml:"token_file"`
	TokenEnv  string `yaml:"token_env"`
	// ClientCertificate identifies the caller by its client certificate
	// (mutual TLS, server.tls.client_ca_file): a URI subject alternative
	// name (a SPIFFE ID), a DNS one, or the subject's common name, equal
	// to this. Only for RPCs without a bearer token.
	ClientCertificate string `yaml:"client_certificate"`
	// Models the caller may use: names, or prefixes ending in "*"
	// ("openai/*"); empty: every model.
	Models []string `yaml:"models"`
	// RequestsPerMinute and TokensPerMinute limit the caller (0: no
	// limit). Tokens are the provider-reported total of each call, counted
	// when it ends; a caller over its token budget is refused until the
	// budget refills.
	RequestsPerMinute int `yaml:"requests_per_minute"`
	TokensPerMinute   int `yaml:"tokens_per_minute"`
	// MaxConcurrentCalls bounds the caller's RPCs in flight, streams
	// included (0: only the server's limits).
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// Spend, when set, is the caller's budget of money per window: each
	// call's cost (from the model's prices) is charged when it ends, and a
	// caller at or over its budget is refused until the window ends.
	Spend *Spend `yaml:"spend"`
}

// Spend is a budget: Limit in Currency per calendar hour, day or month
// (UTC).
type Spend struct {
	Limit *Amount `yaml:"limit"`
	// Currency is an ISO 4217 code; default USD. Only costs in this
	// currency are charged (the configuration refuses a caller whose
	// models are priced in another).
	Currency string `yaml:"currency"`
	// Per is the window: hour, day or month.
	Per string `yaml:"per"`
}

// CurrencyCode is the currency with its default.
func (s *Spend) CurrencyCode() string {
	if s.Currency == "" {
		return "USD"
	}
	return s.Currency
}

// SpendWindows are the values of auth.tokens[].spend.per.
var SpendWindows = []string{"hour", "day", "month"}

// ModelAllowed reports whether a caller whose models list is models may
// use model: an empty list allows every model, an entry ending in "*" is
// a prefix.
func ModelAllowed(models []string, model string) bool {
	if len(models) == 0 {
		return true
	}
	for _, m := range models {
		if p, ok := strings.CutSuffix(m, "*"); ok {
			if strings.HasPrefix(model, p) {
				return true
			}
		} else if m == model {
			return true
		}
	}
	return false
}

// spendErrors checks the spend budgets against the models: a caller with a
// budget may not use a model priced in another currency (its cost could
// not be charged).
func (c *Config) spendErrors() []error {
	var errs []error
	for i, t := range c.Auth.Tokens {
		if t.Spend == nil {
			continue
		}
		cur := t.Spend.CurrencyCode()
		for _, m := range c.Models {
			if m.Prices != nil && m.Prices.CurrencyCode() != cur && ModelAllowed(t.Models, m.Name) {
				errs = append(errs, fmt.Errorf("auth.tokens[%d] (%s).spend.currency: %s, but the caller may use model %s, priced in %s: its calls could not be charged",
					i, t.Name, cur, m.Name, m.Prices.CurrencyCode()))
			}
		}
	}
	return errs
}

// SpendWarnings name the models without prices that a caller with a spend
// budget may use: their calls cost nothing against the budget.
func (c *Config) SpendWarnings() []string {
	var out []string
	for _, t := range c.Auth.Tokens {
		if t.Spend == nil {
			continue
		}
		var free []string
		for _, m := range c.Models {
			if m.Prices == nil && ModelAllowed(t.Models, m.Name) {
				free = append(free, m.Name)
			}
		}
		if len(free) > 0 {
			out = append(out, fmt.Sprintf("caller %s has a spend budget but may use models without prices, whose calls are not charged: %s",
				t.Name, strings.Join(free, ", ")))
		}
	}
	return out
}

// MinTokenLength is the shortest token accepted from a file or the
// environment: shorter ones are guessable.
const MinTokenLength = 16

// Hash returns the SHA-256 of the caller's token, reading the file or
// variable it names. Errors name the source, never the value.
func (t Token) Hash() ([32]byte, error) {
	var sum [32]byte
	var raw string
	switch {
	case t.SHA256 != "":
		b, err := hex.DecodeString(t.SHA256)
		if err != nil || len(b) != len(sum) {
			return sum, fmt.Errorf("auth token %s: sha256 is not 64 hex digits", t.Name)
		}
		copy(sum[:], b)
		return sum, nil
	case t.TokenFile != "":
		b, err := os.ReadFile(t.TokenFile)
		if err != nil {
			return sum, fmt.Errorf("auth token %s: token_file: %w", t.Name, err)
		}
		raw = strings.TrimSpace(string(b))
	case t.TokenEnv != "":
		raw = strings.TrimSpace(os.Getenv(t.TokenEnv))
		if raw == "" {
			return sum, fmt.Errorf("auth token %s: environment variable %s is not set", t.Name, t.TokenEnv)
		}
	}
	if len(raw) < MinTokenLength {
		return sum, fmt.Errorf("auth token %s: the token is shorter than %d characters", t.Name, MinTokenLength)
	}
	return sha256.Sum256([]byte(raw)), nil
}

func (a Auth) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r := a.Redis; r != nil {
		if r.Address == "" {
			add("auth.redis.address: required (host:port)")
		}
		switch r.OnError {
		case "", "open", "closed":
		default:
			add("auth.redis.on_error: %q is not open or closed", r.OnError)
		}
		if r.DB < 0 {
			add("auth.redis.db: must be >= 0")
		}
	}
	names, certs := map[string]bool{}, map[string]bool{}
	for i, t := range a.Tokens {
		where := fmt.Sprintf("auth.tokens[%d]", i)
		switch {
		case t.Name == "":
			add("%s.name: required (it names the caller in logs and meta)", where)
		case names[t.Name]:
			add("%s.name: duplicate caller %q", where, t.Name)
		}
		names[t.Name] = true
		if t.Name != "" {
			where = fmt.Sprintf("%s (%s)", where, t.Name)
		}
		n := 0
		for _, s := range []string{t.SHA256, t.TokenFile, t.TokenEnv, t.ClientCertificate} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			add("%s: set exactly one of sha256, token_file, token_env, client_certificate", where)
		}
		if id := t.ClientCertificate; id != "" {
			if certs[id] {
				add("%s.client_certificate: %q names another caller too", where, id)
			}
			certs[id] = true
		}
		if b, err := hex.DecodeString(t.SHA256); t.SHA256 != "" && (err != nil || len(b) != sha256.Size) {
			add("%s.sha256: not 64 hex digits (sha256sum of the token)", where)
		}
		for j, m := range t.Models {
			if m == "" || strings.Contains(strings.TrimSuffix(m, "*"), "*") {
				add("%s.models[%d]: %q is not a model name or a prefix ending in *", where, j, m)
			}
		}
		if t.RequestsPerMinute < 0 {
			add("%s.requests_per_minute: must be >= 0", where)
		}
		if t.TokensPerMinute < 0 {
			add("%s.tokens_per_minute: must be >= 0", where)
		}
		if t.MaxConcurrentCalls < 0 {
			add("%s.max_concurrent_calls: must be >= 0", where)
		}
		if sp := t.Spend; sp != nil {
			if sp.Limit == nil || sp.Limit.Nanos <= 0 {
				add("%s.spend.limit: required, a positive decimal amount like \"5.00\"", where)
			}
			if sp.Currency != "" && !isCurrencyCode(sp.Currency) {
				add("%s.spend.currency: %q is not an ISO 4217 code like USD", where, sp.Currency)
			}
			if !contains(SpendWindows, sp.Per) {
				add("%s.spend.per: %q is not one of %s", where, sp.Per, strings.Join(SpendWindows, ", "))
			}
		}
	}
	return errs
}

// SocketMode is the unix socket's permission bits (default 0600: only the
// server's user may connect).
func (s Server) SocketMode() os.FileMode {
	if s.UnixSocketMode == "" {
		return 0o600
	}
	m, _ := strconv.ParseUint(s.UnixSocketMode, 8, 32) // validated
	return os.FileMode(m)
}

func (s Server) validateSecurity() []error {
	var errs []error
	if s.UnixSocketMode != "" {
		if m, err := strconv.ParseUint(s.UnixSocketMode, 8, 32); err != nil || m > 0o777 {
			errs = append(errs, fmt.Errorf("server.unix_socket_mode: %q is not an octal mode like \"0660\"", s.UnixSocketMode))
		}
	}
	return errs
}

// ExposureError is the refusal the server gives at start when it would
// listen on listen (host:port, from the setting named by from; "" is no
// TCP listener) without caller
// authentication, so that "config check" finds it too: a non-loopback
// address needs auth.tokens, mutual TLS or server.allow_unauthenticated.
// Only what the address says is judged: an empty host (every interface)
// or an IP address; a host name other than localhost resolves at start.
func (c *Config) ExposureError(listen, from string) error {
	if listen == "" || c.Auth.Enabled() || c.Server.TLS.MutualTLS() || c.Server.AllowUnauthenticated {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil // named by the validation of server.listen
	}
	if host != "" {
		ip := net.ParseIP(host)
		if ip == nil || ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%s: %q is not a loopback address and callers are not authenticated, so the server refuses to start: "+
		"configure auth.tokens (or mutual TLS), listen on 127.0.0.1, or set server.allow_unauthenticated: true if the network is trusted", from, listen)
}

// DefaultListen is the TCP listen address without server.listen.
const DefaultListen = "127.0.0.1:50051"

// ListenAddr is the TCP listen address: server.listen, else the default
// 127.0.0.1:50051; "" is no TCP listener.
func (s Server) ListenAddr() string {
	if s.Listen != nil {
		return *s.Listen
	}
	return DefaultListen
}
