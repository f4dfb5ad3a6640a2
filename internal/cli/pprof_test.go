package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestPprofWarnsOffLoopback(t *testing.T) {
	t.Parallel()
	for addr, warn := range map[string]bool{"127.0.0.1:0": false, ":0": true} {
		var logs bytes.Buffer
		if err := startPprof(addr, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "level=WARN msg=\"pprof on a non-loopback address"); got != warn {
			t.Errorf("-pprof %s: warned %v, want %v\n%s", addr, got, warn, logs.String())
		}
	}
}
