package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// upstream is one running mock: cleartext, TLS offering HTTP/2 and
// HTTP/1.1 ("tls"), or TLS with HTTP/1.1 only ("tls1").
type upstream struct {
	kind string // clear, tls, tls1
	proc *proc
	addr string
}

func (u *upstream) scheme() string {
	if u.kind == "clear" {
		return "http"
	}
	return "https"
}

// benchModel is one model name both llmrelay and the floor serve, so that
// the same client call measures either.
type benchModel struct {
	name        string
	ptype       string // llmrelay provider type
	format      string // llmrelay format
	floorFormat string // the floor's format (bench/floor)
	upstream    string // upstream_model
	up          string // clear, tls, tls1
	httpVersion string // transport.http_version ("" = default)
	chunks      int    // text chunks per stream (0: the mock's 20)
}

// streamFormat is one provider stream format of the per-chunk rows.
type streamFormat struct{ name, ptype, format, floorFormat, upstream string }

var streamFormats = []streamFormat{
	{"openai-chat", "openai", "openai-chat", "openai-chat", "gpt-4o-mini"},
	{"openai-responses", "openai", "openai-responses", "openai-responses", "gpt-4o-mini"},
	{"anthropic", "anthropic", "anthropic-messages", "anthropic", "claude-sonnet-4-5"},
	{"gemini", "gemini", "gemini", "gemini", "gemini-2.5-flash"},
	{"ollama", "ollama", "ollama", "ollama", "llama3.2"},
}

// shortModel and longModel name the models of a format on an upstream
// variant ("clear" keeps the historical names of OpenAI chat).
func shortModel(format, variant string) string {
	if format == "openai-chat" && variant == "clear" {
		return modelShort
	}
	return "bench/" + variant + "-" + format
}

func longModel(format, variant string) string {
	if format == "openai-chat" && variant == "clear" {
		return modelLong
	}
	return shortModel(format, variant) + "-long"
}

// TLS variants of llmrelay: its default (HTTP/1.1 on the own pool),
// net/http's HTTP/2, and net/http's HTTP/1.1 (a server offering only it).
var tlsVariants = []struct{ name, up, httpVersion string }{
	{"tls", "tls", ""},
	{"tls-h2", "tls", "2"},
	{"tls-nethttp1", "tls1", "2"},
}

func (b *bench) models() []benchModel {
	var ms []benchModel
	for _, f := range streamFormats {
		for _, long := range []bool{false, true} {
			m := benchModel{name: shortModel(f.name, "clear"), ptype: f.ptype, format: f.format, floorFormat: f.floorFormat,
				upstream: f.upstream, up: "clear"}
			if long {
				m.name, m.chunks = longModel(f.name, "clear"), b.o.longChunks
			}
			ms = append(ms, m)
		}
	}
	for _, v := range tlsVariants {
		for _, long := range []bool{false, true} {
			m := benchModel{name: shortModel("openai-chat", v.name), ptype: "openai", format: "openai-chat", floorFormat: "openai-chat",
				upstream: "gpt-4o-mini", up: v.up, httpVersion: v.httpVersion}
			if long {
				m.name, m.chunks = longModel("openai-chat", v.name), b.o.longChunks
			}
			ms = append(ms, m)
		}
	}
	return ms
}

// relayConfig renders llmrelay's configuration: one provider per model.
func relayConfig(listen, logLevel string, models []benchModel, ups map[string]*upstream) string {
	var p, m strings.Builder
	for i, x := range models {
		u := ups[x.up]
		if u == nil {
			continue
		}
		base := u.scheme() + "://" + u.addr
		switch x.ptype {
		case "openai":
			base += "/v1"
		case "gemini":
			base += "/v1beta"
		}
		fmt.Fprintf(&p, "  - name: p%d\n    type: %s\n    base_url: %s\n    api_key: sk-bench-not-a-real-key\n", i, x.ptype, base)
		if x.chunks > 0 {
			fmt.Fprintf(&p, "    headers: {X-Mock-Chunks: \"%d\"}\n", x.chunks)
		}
		if x.httpVersion != "" {
			fmt.Fprintf(&p, "    transport: {http_version: \"%s\"}\n", x.httpVersion)
		}
		fmt.Fprintf(&m, "  - name: %s\n    provider: p%d\n    upstream_model: %s\n    capabilities: {chat: {format: %s}}\n", x.name, i, x.upstream, x.format)
	}
	// The idle-streams scenario holds 5000 streams open: above the default
	// caps (limits.max_concurrent_streams 4096), which it is not measuring.
	return fmt.Sprintf("server:\n  listen: %s\n  log_level: %s\n  shutdown_grace: 2s\n"+
		"limits: {max_concurrent_calls: 50000, max_concurrent_streams: 50000, max_connections: 4096}\n"+
		"defaults:\n  preserve_raw_data: false\nproviders:\n%smodels:\n%s",
		listen, logLevel, p.String(), m.String())
}

// floorRoutes are the floor's -route flags for the models on upstream up.
func floorRoutes(models []benchModel, up string) []string {
	var out []string
	for _, x := range models {
		if x.up != up || x.httpVersion != "" {
			continue
		}
		r := x.name + "=" + x.floorFormat
		if x.chunks > 0 {
			r += fmt.Sprintf(":%d", x.chunks)
		}
		out = append(out, r)
	}
	return out
}

// startUpstream starts a mock of the given kind; TLS mocks write their
// certificate into the run's trust bundle (certs.pem).
func (b *bench) startUpstream(name, kind string, extra ...string) (*upstream, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-addr", addr, "-max-lifetime", "30m"}, extra...)
	cert := filepath.Join(b.tmp, name+".pem")
	if kind != "clear" {
		args = append(args, "-tls", "-cert-out", cert, fmt.Sprintf("-http2=%v", kind == "tls"))
	}
	p, err := start(name, b.mockBin, filepath.Join(b.tmp, name+".log"), nil, args...)
	if err != nil {
		return nil, err
	}
	b.procs = append(b.procs, p)
	u := &upstream{kind: kind, proc: p, addr: addr}
	client := http.DefaultClient
	if kind != "clear" {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(cert); err == nil {
				break
			}
			if err := p.alive(); err != nil {
				return nil, err
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s wrote no certificate", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := b.trust(cert); err != nil {
			return nil, err
		}
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: b.roots}}}
	}
	if err := waitHTTP(p, client, u.scheme()+"://"+addr+"/healthz", 10*time.Second); err != nil {
		return nil, err
	}
	return u, nil
}

// trust adds a mock's certificate to the run's roots and to the bundle
// file llmrelay reads (SSL_CERT_FILE) and the floor is given (-ca).
func (b *bench) trust(certFile string) error {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	if b.roots == nil {
		b.roots = x509.NewCertPool()
	}
	if !b.roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s: no certificate", certFile)
	}
	f, err := os.OpenFile(b.bundle(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(pem); err != nil {
		_ = f.Close() // the write error is the one to report
		return err
	}
	return f.Close()
}

func (b *bench) bundle() string { return filepath.Join(b.tmp, "certs.pem") }
