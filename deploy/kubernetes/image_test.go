package kubernetes

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestImageListensWhereDocumented: the Dockerfile's listen address, EXPOSE
// and health check agree, the README shows how to publish that port on
// loopback only, and .dockerignore keeps the sources the build needs.
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
	listen := regexp.MustCompile(`(?m)^ENV LLMRELAY_LISTEN=0\.0\.0\.0:(\d+)$`).FindStringSubmatch(docker)
	if listen == nil {
		t.Fatal("the Dockerfile sets no LLMRELAY_LISTEN=0.0.0.0:PORT")
	}
	port := listen[1]
	if !regexp.MustCompile(`(?m)^EXPOSE ` + port + `$`).MatchString(docker) {
		t.Errorf("EXPOSE is not %s", port)
	}
	if !strings.Contains(docker, `"127.0.0.1:`+port+`"`) {
		t.Errorf("the HEALTHCHECK does not ask port %s", port)
	}
	if !strings.Contains(readme, "-p 127.0.0.1:"+port+":"+port) || !strings.Contains(readme, "0.0.0.0:"+port) {
		t.Errorf("the README does not say where the image listens (0.0.0.0:%s) and how to publish it on loopback", port)
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
