#!/usr/bin/env bash
# End to end: build the binary, start it on the embedded default, call it
# with grpcurl (reflection, health, Chat, StreamTools, Embed, errors), then
# SIGTERM it and check that it drains and exits cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
addr=127.0.0.1:${E2E_PORT:-28551}
bin=$(mktemp -d)/llmrelay
go build -o "$bin" ./cmd/llmrelay
log=$(mktemp)
LLMRELAY_LISTEN=$addr "$bin" serve >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; cat "$log"' ERR
for _ in $(seq 50); do "$bin" health -addr "$addr" 2>/dev/null && break; sleep 0.1; done
"$bin" health -addr "$addr"

fail() { echo "e2e: $*" >&2; kill "$pid" 2>/dev/null || true; exit 1; }
out=$(grpcurl -plaintext "$addr" list)
grep -q '^llmrelay.v1.GatewayService$' <<<"$out" || fail "service not listed: $out"
grpcurl -plaintext "$addr" describe llmrelay.v1.GatewayService.StreamTools >/dev/null
out=$(grpcurl -plaintext "$addr" grpc.health.v1.Health/Check)
grep -q SERVING <<<"$out" || fail "health: $out"

out=$(grpcurl -plaintext -d '{"model":"builtin/echo","messages":[{"role":"ROLE_USER","parts":[{"text":"hello"}]}]}' "$addr" llmrelay.v1.GatewayService/Chat)
grep -q '"text": "You said: hello"' <<<"$out" || fail "chat: $out"
grep -q '"requestId"' <<<"$out" || fail "chat meta: $out"

out=$(grpcurl -plaintext -d '{"model":"builtin/echo","messages":[{"role":"ROLE_USER","parts":[{"text":"Paris"}]}],
  "tools":[{"name":"get_weather","parameters":"{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}"},
           {"name":"get_time","parameters":"{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}"}]}' \
  "$addr" llmrelay.v1.GatewayService/StreamTools)
[ "$(grep -c '"toolCallDelta"' <<<"$out")" -eq 4 ] || fail "stream tools deltas: $out"
[ "$(grep -c '"callId"' <<<"$out")" -ge 6 ] || fail "call ids missing: $out"
grep -q 'FINISH_REASON_TOOL_CALLS' <<<"$out" || fail "stream tools finish: $out"

# A schema given as a JSON object (a Struct, the old contract) is refused, not silently emptied.
out=$(grpcurl -plaintext -d '{"model":"builtin/echo","messages":[{"role":"ROLE_USER","parts":[{"text":"Paris"}]}],
  "tools":[{"name":"get_weather","parameters":{"type":"object"}}]}' "$addr" llmrelay.v1.GatewayService/Tools 2>&1 || true)
grep -q 'expecting string' <<<"$out" || fail "object schema: $out"
out=$(grpcurl -plaintext -d '{"model":"builtin/echo","messages":[{"role":"ROLE_USER","parts":[{"text":"Paris"}]}],
  "tools":[{"name":"get_weather","parameters":"{\"type\": 12}"}]}' "$addr" llmrelay.v1.GatewayService/Tools 2>&1 || true)
grep -q 'Code: InvalidArgument' <<<"$out" && grep -q '"field": "tools\[0\].parameters"' <<<"$out" || fail "invalid schema: $out"

# Structured output (the README's example): the answer follows the schema's key order and is validated.
schema='"{\"type\": \"object\", \"properties\": {\"reasoning\": {\"type\": \"string\"}, \"answer\": {\"type\": \"string\"}}}"'
out=$(grpcurl -plaintext -d '{"model": "builtin/echo", "messages": [{"role": "ROLE_USER", "parts": [{"text": "hi"}]}],
  "options": {"response_format": {"type": "RESPONSE_FORMAT_TYPE_JSON_SCHEMA", "schema": '"$schema"'}}}' "$addr" llmrelay.v1.GatewayService/Chat)
grep -qF '"text": "{\"reasoning\": \"hi\", \"answer\": \"hi\"}"' <<<"$out" || fail "structured output: $out"
grep -q '"valid": true' <<<"$out" || fail "structured output validation: $out"
# Cut by max_tokens: FailedPrecondition with the answer and the violations in the details.
out=$(grpcurl -plaintext -d '{"model": "builtin/echo", "messages": [{"role": "ROLE_USER", "parts": [{"text": "hi"}]}],
  "options": {"max_tokens": 2, "response_format": {"type": "RESPONSE_FORMAT_TYPE_JSON_SCHEMA", "schema": '"$schema"'}}}' \
  "$addr" llmrelay.v1.GatewayService/Chat 2>&1 || true)
grep -q 'Code: FailedPrecondition' <<<"$out" && grep -q 'OUTPUT_VALIDATION_FAILED' <<<"$out" && grep -q 'cut at max_tokens' <<<"$out" ||
  fail "invalid structured output: $out"

# A document part (the README's example): bytes base64 in the JSON, echoed as type and size.
out=$(grpcurl -plaintext -d '{"model": "builtin/echo", "messages": [{"role": "ROLE_USER", "parts": [
  {"text": "summarise"}, {"file": {"data": "aGVsbG8gZmlsZQ==", "mime_type": "text/plain", "filename": "notes.txt"}}]}]}' \
  "$addr" llmrelay.v1.GatewayService/Chat)
grep -q '"text": "You said: summarise \[file text/plain, 10 bytes\]"' <<<"$out" || fail "file part: $out"

out=$(grpcurl -plaintext -d '{"model":"builtin/embed","inputs":["a","b"]}' "$addr" llmrelay.v1.GatewayService/Embed)
grep -q '"embeddingsCount": 2' <<<"$out" || fail "embed: $out"

out=$(grpcurl -plaintext -d '{"model":"nope","messages":[{"role":"ROLE_USER","parts":[{"text":"x"}]}]}' "$addr" llmrelay.v1.GatewayService/Chat 2>&1 || true)
grep -q 'Code: NotFound' <<<"$out" || fail "unknown model: $out"
out=$(grpcurl -plaintext -d '{"model":"builtin/echo"}' "$addr" llmrelay.v1.GatewayService/Chat 2>&1 || true)
grep -q 'Code: InvalidArgument' <<<"$out" && grep -q '"field": "messages"' <<<"$out" || fail "empty messages: $out"
out=$(grpcurl -plaintext -d '{"model":"builtin/echo","messages":[{"role":"ROLE_USER","parts":[{"text":"x"}]}],
  "tools":[{"name":"f"}],"options":{"toolChoice":{"mode":99}}}' "$addr" llmrelay.v1.GatewayService/Tools 2>&1 || true)
grep -q 'Code: InvalidArgument' <<<"$out" && grep -q '"field": "options.tool_choice.mode"' <<<"$out" || fail "undeclared enum value: $out"

# Agent over a bidi stream fed from stdin (-d @), as in the README: the
# built-in model's call ids are deterministic, so the results go ahead.
out=$(grpcurl -plaintext -d @ "$addr" llmrelay.v1.GatewayService/Agent <<'JSON'
{"setup": {"model": "builtin/echo", "max_rounds": 4,
  "messages": [{"role": "ROLE_USER", "parts": [{"text": "Paris"}]}],
  "tools": [{"name": "get_weather", "parameters": "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}"},
            {"name": "get_time"}]}}
{"tool_result": {"call_id": "call_builtin_a8d0d2c27731_1", "content": "14:05"}}
{"tool_result": {"call_id": "call_builtin_a8d0d2c27731_0", "content": "{\"sky\": \"sunny\"}"}}
JSON
)
[ "$(grep -c '"toolCallRequest"' <<<"$out")" -eq 2 ] || fail "agent tool requests: $out"
grep -q '"modelCalls": 2' <<<"$out" && grep -q '"toolRounds": 1' <<<"$out" || fail "agent meta: $out"
grep -q 'call_builtin_a8d0d2c27731_1=14:05' <<<"$out" || fail "agent results: $out"

out=$(grpcurl -plaintext -d '{"value":{"toolUse":{"name":"search","input":{"query":"test"}}}}' "$addr" llmrelay.v1.ExtractService/Extract)
grep -q '"name": "search"' <<<"$out" || fail "extract: $out"
out=$(grpcurl -plaintext -d '{"json":"{\"content\": [}"}' "$addr" llmrelay.v1.ExtractService/Extract 2>&1 || true)
grep -q 'Code: InvalidArgument' <<<"$out" || fail "extract syntax error: $out"

# The binary as a client: streamed answer, exit codes, the error in words.
out=$("$bin" chat --addr "$addr" -m builtin/echo hello there)
[ "$out" = "You said: hello there" ] || fail "cli chat: $out"
out=$("$bin" chat --local -m builtin/echo --meta hi 2>&1)
grep -q '^meta: builtin/echo via builtin | tokens ' <<<"$out" || fail "cli --local --meta: $out"
rc=0; out=$("$bin" chat --addr "$addr" -m nope hi 2>&1) || rc=$?
[ $rc -eq 4 ] && grep -q 'reason: MODEL_NOT_FOUND' <<<"$out" || fail "cli unknown model: exit $rc: $out"
rc=0; "$bin" chat --frobnicate >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "cli unknown flag: exit $rc"
rc=0; "$bin" models --addr 127.0.0.1:1 --timeout 1s >/dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "cli without a server: exit $rc"
"$bin" models --addr "$addr" | grep -q '^builtin/embed ' || fail "cli models"

kill -TERM $pid
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then fail "server still running 10s after SIGTERM"; fi
wait $pid || fail "server exited with $?"
grep -q 'msg=stopped' "$log" || fail "no clean stop in log"
# Configuration: check the examples, then reload a file on SIGHUP.
# (Their keys are not set here: the notes saying so are expected, errors not.)
dir=$(mktemp -d)
"$bin" config check examples/config/*.yaml >/dev/null 2>"$dir/check.err" || { cat "$dir/check.err" >&2; fail "config check of the examples"; }
grep -v '(a note' "$dir/check.err" >&2 && fail "config check of the examples printed more than notes"
"$bin" config default >"$dir/llmrelay.yaml"
LLMRELAY_LISTEN=$addr "$bin" serve -config "$dir/llmrelay.yaml" >"$log" 2>&1 &
pid=$!
for _ in $(seq 50); do "$bin" health -addr "$addr" 2>/dev/null && break; sleep 0.1; done
cat >>"$dir/llmrelay.yaml" <<'YAML'
  - name: builtin/echo-2
    provider: builtin
    upstream_model: echo
    capabilities:
      chat: {format: builtin}
YAML
kill -HUP $pid
for _ in $(seq 50); do grep -q 'configuration reloaded' "$log" && break; sleep 0.1; done
out=$(grpcurl -plaintext -d '{}' "$addr" llmrelay.v1.GatewayService/ListModels)
grep -q '"name": "builtin/echo-2"' <<<"$out" || fail "reload did not add the model: $out"
echo "models: [" >>"$dir/llmrelay.yaml"   # now invalid: the reload must be rejected
kill -HUP $pid
for _ in $(seq 50); do grep -q 'configuration reload failed' "$log" && break; sleep 0.1; done
grep -q 'configuration reload failed' "$log" || fail "invalid reload not reported"
out=$(grpcurl -plaintext -d '{}' "$addr" llmrelay.v1.GatewayService/ListModels)
grep -q '"name": "builtin/echo-2"' <<<"$out" || fail "rejected reload lost the configuration: $out"
kill -TERM $pid
wait $pid || fail "server exited with $?"

# Observability: metrics on their own loopback port, tracing with spans
# dropped, prices on the echo model; after a few calls the meta carries the
# trace id and the cost, and /metrics the token and duration histograms.
maddr=127.0.0.1:${E2E_METRICS_PORT:-28552}
sed -e 's/^    upstream_model: echo$/    upstream_model: echo\n    prices: {input: 1.5, output: 2}/' "$dir/llmrelay.yaml" | sed '$d' >"$dir/obs.yaml"
cat >>"$dir/obs.yaml" <<YAML
telemetry:
  tracing: {enabled: true, exporter: none}
  metrics: {enabled: true, listen: "$maddr"}
YAML
LLMRELAY_LISTEN=$addr "$bin" serve -config "$dir/obs.yaml" >"$log" 2>&1 &
pid=$!
for _ in $(seq 50); do "$bin" health -addr "$addr" 2>/dev/null && break; sleep 0.1; done
for _ in 1 2 3; do
  out=$(grpcurl -plaintext -d '{"model":"builtin/echo","messages":[{"role":"ROLE_USER","parts":[{"text":"hello there"}]}]}' "$addr" llmrelay.v1.GatewayService/Chat)
done
grep -Eq '"traceId": "[0-9a-f]{32}"' <<<"$out" || fail "no trace id in the meta: $out"
# 3 input tokens at 1.5/M and 4 output tokens at 2/M (the builtin model's
# usage in the meta): 4500 + 8000 nanos.
grep -q '"inputTokens": 3' <<<"$out" && grep -q '"outputTokens": 4' <<<"$out" || fail "usage: $out"
grep -q '"amountNanos": "12500"' <<<"$out" || fail "cost: $out"
metrics=$(curl -sf "http://$maddr/metrics")
for want in 'gen_ai_client_token_usage_count{caller="",model="builtin/echo",operation="chat",provider="builtin",token_type="input"} 3' \
            'gen_ai_client_operation_duration_seconds_bucket{caller="",error_type="",model="builtin/echo",operation="chat",provider="builtin",le="0.01"}' \
            'llmrelay_cost_nanos_total{caller="",currency="USD",model="builtin/echo",provider="builtin"} 37500' \
            'grpc_server_handled_total{grpc_code="OK",grpc_method="Chat",grpc_service="llmrelay.v1.GatewayService",grpc_type="unary"} 3'; do
  grep -qF "$want" <<<"$metrics" || fail "metrics lack $want"
done
curl -s -o /dev/null -w '%{http_code}' "http://$maddr/debug/pprof/" | grep -q 404 || fail "pprof served without being enabled"
kill -TERM $pid
wait $pid || fail "server exited with $?"

trap - ERR
echo "e2e ok"
