package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
)

// TestEntraTokenFollowsTheFile: a token file a sidecar refreshes is read
// again when it changes, and only then.
func TestEntraTokenFollowsTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("token-one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pc := config.Provider{Name: "az", Type: "azure", Auth: "entra", APIKeyFile: path}
	initial, err := pc.APIKeyValue()
	if err != nil {
		t.Fatal(err)
	}
	get := entraToken(pc, initial)
	if tok, err := get(context.Background()); err != nil || tok != "token-one" {
		t.Fatalf("token %q %v", tok, err)
	}
	if err := os.WriteFile(path, []byte("token-two-longer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute) // a different mtime, whatever the file system's resolution
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if tok, err := get(context.Background()); err != nil || tok != "token-two-longer" {
		t.Errorf("after the refresh: %q %v", tok, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := get(context.Background()); err == nil {
		t.Error("a missing token file: no error")
	}
	// An inline value is the value read at start.
	fixed := entraToken(config.Provider{Name: "az", Type: "azure", Auth: "entra", APIKey: "inline"}, "inline")
	if tok, err := fixed(context.Background()); err != nil || tok != "inline" {
		t.Errorf("inline: %q %v", tok, err)
	}
}
