package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if r := runCLI(t, "", "serve", "-config", exposed, "-listen", "0.0.0.0:0"); r.code != ExitFailure || !strings.Contains(r.stderr, "refusing to serve a non-loopback address") {
		t.Errorf("serve: %+v", r)
	}

	t.Setenv("LLMRELAY_LISTEN", ":50051")
	r = runCLI(t, "", "config", "check", loopback)
	if r.code != ExitFailure || !strings.Contains(r.stderr, loopback+`: LLMRELAY_LISTEN: ":50051" is not a loopback address`) {
		t.Errorf("config check with LLMRELAY_LISTEN: %+v", r)
	}
}
