package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckEveryBadOption: config check names every bad option of a
// model's capability, each at its line (it stopped at the first).
func TestConfigCheckEveryBadOption(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "opts.yaml")
	body := "providers: [{name: b, type: builtin}]\nmodels:\n  - name: m\n    provider: b\n    capabilities:\n      chat:\n        format: builtin\n        options:\n          max_tokens: lots\n          stop: [1]\n          temprature: 0.5\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "config", "check", p)
	if r.code != ExitFailure {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{"options.max_tokens: want an integer", "options.stop: want a string or a list of strings", "options.temprature: unknown option"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("config check does not say %q:\n%s", want, r.stderr)
		}
	}
}
