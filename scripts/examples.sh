#!/usr/bin/env bash
# The client examples in other languages (examples/python, examples/node)
# and the Go one, against a server on the built-in provider: each makes a
# Chat, a StreamTools, an Embed, and decodes an error's details. Installs
# what they need: Debian's protoc, gRPC Python plugin, grpcio and protobuf
# (for /usr/bin/python3), and the Node packages of the committed lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3

need=()
command -v protoc >/dev/null || need+=(protobuf-compiler)
[ -x /usr/bin/grpc_python_plugin ] || need+=(protobuf-compiler-grpc)
"$py" -c 'import grpc' 2>/dev/null || need+=(python3-grpcio)
"$py" -c 'import google.protobuf' 2>/dev/null || need+=(python3-protobuf)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

gen=examples/python/gen
rm -rf "$gen" && mkdir -p "$gen"
# shellcheck disable=SC2046 # one argument per proto file
protoc -I proto --python_out="$gen" --grpc_out="$gen" --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin \
  $(find proto -name '*.proto' | sort)
(cd examples/node && npm ci --no-audit --no-fund --loglevel=error)

addr=127.0.0.1:${EXAMPLES_PORT:-28571}
dir=$(mktemp -d)
go build -o "$dir/llmrelay" ./cmd/llmrelay
LLMRELAY_LISTEN=$addr "$dir/llmrelay" serve >"$dir/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do "$dir/llmrelay" health --addr "$addr" >/dev/null 2>&1 && break; sleep 0.1; done
"$dir/llmrelay" health --addr "$addr" >/dev/null || { cat "$dir/server.log"; exit 1; }

fail() { echo "examples: $*" >&2; exit 1; }
# What every client must print (its own wording for the rest).
check() {
  local name=$1 out=$2
  grep -q '^chat: You said: hello | tokens: 5$' <<<"$out" || fail "$name chat: $out"
  [ "$(grep -c '^event: tool_call_delta ' <<<"$out")" -eq 2 ] || fail "$name stream deltas: $out"
  grep -q '^event: tool_call_done get_weather {"city": *"Paris"}$' <<<"$out" || fail "$name tool call: $out"
  grep -q '^event: end FINISH_REASON_TOOL_CALLS$' <<<"$out" || fail "$name stream end: $out"
  grep -q '^embed: 2 x 4$' <<<"$out" || fail "$name embed: $out"
  grep -qE '^error: (NOT_FOUND|NotFound) ' <<<"$out" || fail "$name error code: $out"
  grep -q '^  reason: MODEL_NOT_FOUND llmrelay.dev ' <<<"$out" || fail "$name error reason: $out"
  grep -q '^  field: model - ' <<<"$out" || fail "$name bad request: $out"
  echo "$name example ok"
}
check python "$(LLMRELAY_ADDR=$addr "$py" examples/python/client.py)"
check node "$(LLMRELAY_ADDR=$addr node examples/node/client.mjs)"
out=$(LLMRELAY_ADDR=$addr go run ./examples/go)
grep -q '^chat: You said: hello' <<<"$out" && grep -q '^  reason: MODEL_NOT_FOUND' <<<"$out" || fail "go: $out"
echo "go example ok"
