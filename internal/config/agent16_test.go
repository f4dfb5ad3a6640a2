package config

import (
	"strings"
	"testing"
	"time"
)

// TestMaxToolTimeout: agent.max_tool_timeout defaults to 10m, takes a
// duration, and refuses zero or a negative value with the key's position.
func TestMaxToolTimeout(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("providers: [{name: b, type: builtin}]\n"), "t")
	if err != nil || c.Agent.ToolTimeoutBound() != DefaultMaxToolTimeout || DefaultMaxToolTimeout != 10*time.Minute {
		t.Fatalf("unset: %v %v", c.Agent.ToolTimeoutBound(), err)
	}
	c, err = Parse([]byte("agent:\n  max_tool_timeout: 90s\n"), "t")
	if err != nil || c.Agent.ToolTimeoutBound() != 90*time.Second {
		t.Fatalf("90s: %v %v", c.Agent.ToolTimeoutBound(), err)
	}
	for yaml, want := range map[string]string{
		"agent:\n  max_tool_timeout: -1s\n": `t:2:21: agent.max_tool_timeout: negative duration "-1s"`,
		"agent:\n  max_tool_timeout: 0\n":   "t:2:3: agent.max_tool_timeout: must be positive (unset: 10m0s), got 0s",
	} {
		if _, err := Parse([]byte(yaml), "t"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", yaml, err, want)
		}
	}
}
