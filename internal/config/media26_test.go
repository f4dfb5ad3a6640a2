package config

import (
	"strings"
	"testing"
)

// TestKeepRecentToolMedia: agent.keep_recent_tool_media is unset (0: every
// tool-result image and file is sent) by default, takes a count, and
// refuses a negative value or one that is not a whole number, naming the
// key and its position.
func TestKeepRecentToolMedia(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("providers: [{name: b, type: builtin}]\n"), "t")
	if err != nil || c.Agent.RecentToolMedia() != 0 {
		t.Fatalf("unset: %v %v", c.Agent.RecentToolMedia(), err)
	}
	for yaml, want := range map[string]int{
		"agent:\n  keep_recent_tool_media: 3\n": 3,
		"agent:\n  keep_recent_tool_media: 0\n": 0,
	} {
		c, err = Parse([]byte(yaml), "t")
		if err != nil || c.Agent.RecentToolMedia() != want {
			t.Errorf("%q: %v %v, want %d", yaml, c.Agent.RecentToolMedia(), err, want)
		}
	}
	for yaml, want := range map[string]string{
		"agent:\n  keep_recent_tool_media: -1\n":    "t:2:3: agent.keep_recent_tool_media: must be at least 1, or 0 to send every tool-result image and file (the default), got -1",
		"agent:\n  keep_recent_tool_media: three\n": `t:2:27: agent.keep_recent_tool_media: want an integer, got "three"`,
	} {
		if _, err := Parse([]byte(yaml), "t"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", yaml, err, want)
		}
	}
}
