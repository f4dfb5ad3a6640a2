#!/usr/bin/env bash
# The client examples in other languages (examples/python, examples/node)
# and the Go one, against a server on the built-in provider: each makes a
# Chat, a StreamTools and decodes an error's details (Python and Node an
# Embed too, the Go example none); Python and
# Node also run an Agent loop with one client tool and send a key-ordered
# tool schema whose arrival at the provider is checked. Installs
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
capture_port=${EXAMPLES_CAPTURE_PORT:-28572}
dir=$(mktemp -d)
go build -o "$dir/llmrelay" ./cmd/llmrelay
# The embedded default plus one OpenAI-type model whose upstream records
# the bodies it receives (examples/capture_upstream.py): the clients send it
# a tool schema whose key order matters, and the check below reads what the
# provider got.
"$dir/llmrelay" config default > "$dir/config.yaml"
cat >> "$dir/config.yaml" <<YAML
  - name: capture/gpt
    provider: capture
    upstream_model: gpt-4o-mini
    capabilities: {tools: {format: openai-chat}}
YAML
sed -i "s|^providers:|providers:\n  - {name: capture, type: openai, base_url: 'http://127.0.0.1:$capture_port/v1', api_key: sk-examples-capture-0000000000000000}|" "$dir/config.yaml"
"$py" examples/capture_upstream.py "$capture_port" "$dir/bodies.jsonl" &
capture_pid=$!
LLMRELAY_LISTEN=$addr "$dir/llmrelay" serve -config "$dir/config.yaml" >"$dir/server.log" 2>&1 &
pid=$!
trap 'kill $pid $capture_pid 2>/dev/null || true; rm -rf "$dir"' EXIT
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
  grep -qE '^agent: tool get_weather call_builtin_[0-9a-f]+_0 .*Lyon' <<<"$out" || fail "$name agent tool call: $out"
  grep -q '^agent: end FINISH_REASON_STOP model calls: 2 | answer: .*sunny' <<<"$out" || fail "$name agent end: $out"
  grep -q '^order: sent$' <<<"$out" || fail "$name ordered schema: $out"
  echo "$name example ok"
}
export LLMRELAY_ORDER_MODEL=capture/gpt
check python "$(LLMRELAY_ADDR=$addr "$py" examples/python/client.py)"
check node "$(LLMRELAY_ADDR=$addr node examples/node/client.mjs)"
# Both schemas reached the provider with their keys in the clients' order
# (reasoning before answer), whatever spacing each language's JSON used.
ordered='"properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"]'
[ "$(tr -d ' ' < "$dir/bodies.jsonl" | grep -cF "$ordered")" -eq 2 ] || fail "key order at the provider: $(cat "$dir/bodies.jsonl")"
echo "schema key order kept from python and node to the provider"
out=$(LLMRELAY_ADDR=$addr go run ./examples/go)
grep -q '^chat: You said: hello' <<<"$out" && grep -q '^  reason: MODEL_NOT_FOUND' <<<"$out" || fail "go: $out"
echo "go example ok"
