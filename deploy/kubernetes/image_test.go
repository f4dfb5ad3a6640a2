package kubernetes

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
)

// TestImageListensWhereDocumented: the image serves the embedded default's
// loopback address, its EXPOSE and health check name that port, the README
// says so and shows how to publish it safely, and .dockerignore keeps the
// sources the build needs.
func TestImageListensWhereDocumented(t *testing.T) {
	t.Parallel()
	read := func(path string) string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	docker, readme, ignore := read("../../Dockerfile"), read("../../README.md"), read("../../.dockerignore")
	def, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	listen := *def.Server.Listen
	if m := regexp.MustCompile(`(?m)^ENV LLMRELAY_LISTEN=(\S+)`).FindStringSubmatch(docker); m != nil {
		listen = m[1]
	}
	host, port, ok := strings.Cut(listen, ":")
	if !ok || host != "127.0.0.1" {
		t.Fatalf("the image listens on %q, not on loopback", listen)
	}
	if !regexp.MustCompile(`(?m)^EXPOSE ` + port + `$`).MatchString(docker) {
		t.Errorf("EXPOSE is not %s", port)
	}
	// The check must follow LLMRELAY_LISTEN (a container run with another
	// port was marked unhealthy): no address of its own, or the image's.
	hc := regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD (.*)$`).FindStringSubmatch(docker)
	if hc == nil || !strings.Contains(hc[1], `"health"`) {
		t.Fatalf("no HEALTHCHECK running llmrelay health")
	}
	if strings.Contains(hc[1], `"-addr"`) && !strings.Contains(hc[1], `"`+listen+`"`) {
		t.Errorf("the HEALTHCHECK asks another address than %s", listen)
	}
	if strings.Contains(hc[1], `"-addr"`) {
		t.Errorf("the HEALTHCHECK pins -addr: a container run with LLMRELAY_LISTEN on another port is marked unhealthy")
	}
	for _, want := range []string{"on `" + listen + "` inside the container", "-p 127.0.0.1:" + port + ":" + port, "LLMRELAY_LISTEN=0.0.0.0:" + port, "auth.tokens"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the README's container section lacks %q", want)
		}
	}
	for _, line := range strings.Split(ignore, "\n") {
		line = strings.TrimSpace(line)
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "internal", "server", "gen", "client", "fold"} {
			if line == needed || line == "/"+needed || line == "*" {
				t.Errorf(".dockerignore excludes %s, which the build needs", needed)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^\.git$`).MatchString(ignore) {
		t.Error(".dockerignore does not exclude .git")
	}
}
