// Package redistest runs a redis-server for tests.
package redistest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Start runs a redis-server on a unix socket in a temporary directory
// until the test ends and returns the socket's path. Without redis-server
// the test is skipped, except in CI (CI=true), where .ci/run installs it
// and its absence is a failure.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed; .ci/run installs Debian's redis-server package")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server); the shared limits are tested in CI")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // killed: its exit status says so
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
