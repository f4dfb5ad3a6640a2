#!/usr/bin/env bash
# Soak: thousands of concurrent streams with cancellations against a
# trickling upstream; prints the server's goroutines, fds and RSS at
# baseline, at each round's peak and after it, and fails when they do not
# come back. Not part of the test run. Flags go to scripts/soak (e.g.
# -streams 2000 -rounds 3 -cancel 0.3).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/llmrelay
go build -o "$bin" ./cmd/llmrelay
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
go run ./scripts/soak -bin "$bin" "$@"
