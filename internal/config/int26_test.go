package config

import (
	"strings"
	"testing"
)

// TestIntegerKeysRefuseFractions: yaml.v3 decodes 2.5 into an integer
// field as 2 without a word, so a configuration asking for 2.5 of
// something ran with 2. A number with a fraction, written or given by a
// variable, is refused naming the key; a whole number still reads.
func TestIntegerKeysRefuseFractions(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_MEDIA", "1.5")
	for yaml, want := range map[string]string{
		"agent:\n  keep_recent_tool_media: 2.5\n":                    `t:2:27: agent.keep_recent_tool_media: want an integer, got "2.5"`,
		"agent:\n  keep_recent_tool_media: ${LLMRELAY_TEST_MEDIA}\n": `t:2:27: agent.keep_recent_tool_media: want an integer, got "1.5"`,
		"agent:\n  keep_recent_tool_media: 1e3\n":                    `t:2:27: agent.keep_recent_tool_media: want an integer, got "1e3"`,
	} {
		if _, err := Parse([]byte(yaml), "t"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", yaml, err, want)
		}
	}
	c, err := Parse([]byte("agent:\n  keep_recent_tool_media: 4\n"), "t")
	if err != nil || c.Agent.RecentToolMedia() != 4 {
		t.Fatalf("whole number: %v %v", err, c)
	}
}
