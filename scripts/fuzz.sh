#!/usr/bin/env bash
# Runs every Fuzz target of the module for a short time each:
#   scripts/fuzz.sh [DURATION]   (default 5s)
set -euo pipefail
cd "$(dirname "$0")/.."
dur="${1:-5s}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f ($dur)"
    go test -run='^$' -fuzz="^${f}\$" -fuzztime="$dur" "$pkg" >/tmp/fuzz.$$.log 2>&1 || { cat /tmp/fuzz.$$.log; exit 1; }
  done
done
