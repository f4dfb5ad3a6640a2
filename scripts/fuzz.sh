#!/usr/bin/env bash
# Runs every Fuzz target of the module for a bounded number of inputs each:
#   scripts/fuzz.sh [BUDGET]   (default 4000x; a duration like 30s also works)
# The default is a count, not a duration: a duration-bounded run can fail
# with a spurious "context deadline exceeded" when its deadline races the
# workers (golang/go#75804, fixed in Go 1.27).
set -euo pipefail
cd "$(dirname "$0")/.."
dur="${1:-4000x}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f ($dur)"
    go test -run='^$' -fuzz="^${f}\$" -fuzztime="$dur" -fuzzminimizetime=200x "$pkg" >/tmp/fuzz.$$.log 2>&1 || { cat /tmp/fuzz.$$.log; exit 1; }
  done
done
