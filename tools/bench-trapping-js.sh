#!/usr/bin/env bash
# Memory around 1,000 trapping calls: a JS policy that allocates until its
# 16 MiB cap traps it, in the admission chain of a release server (failure
# policy Ignore), called by 1,000 ConfigMap creates. RSS before the first
# call, at its peak (sampled every 100 calls) and 7 s after the last, when
# the runtime has returned what the dropped instances freed.
#   tools/bench-trapping-js.sh   (needs npm install in examples/js/require-labels)
# Env: CAPSTAN (default target/release/capstan).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CAPSTAN=${CAPSTAN:-$ROOT/target/release/capstan}
WORK=$(mktemp -d)
trap 'pkill -f "serve --data-dir $WORK" || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/hog/src"
cp "$ROOT/examples/js/require-labels/package.json" "$WORK/hog/"
ln -s "$ROOT/examples/js/require-labels/node_modules" "$WORK/hog/node_modules"
cat >"$WORK/hog/src/hog.js" <<'JS'
import { allow } from '@capstan/plugin-sdk';
// Allocates until the memory cap traps the instance.
export function review(request) {
  const hoard = [];
  for (;;) hoard.push(new Array(65536).fill(hoard.length));
  return allow();
}
JS
(cd "$WORK/hog" && PATH="$(dirname "$CAPSTAN"):$PATH" npx capstan-plugin-build src/hog.js hog.wasm >/dev/null)
cat >"$WORK/capstan.yaml" <<YAML
admission:
- name: hog
  module: $WORK/hog/hog.wasm
  phases: [validating]
  failurePolicy: Ignore
  timeoutMs: 2000
  memoryMib: 16
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
YAML
port=$((17700 + RANDOM % 200)) data=$WORK/data
"$CAPSTAN" serve --data-dir "$data" --secure-port "$port" --config "$WORK/capstan.yaml" \
  --plugin-cache-dir "$WORK/cache" >"$WORK/log" 2>&1 &
pid=$!
until curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/readyz" | grep -q 200; do sleep 0.05; done
for _ in $(seq 600); do
  sed 's/\x1b\[[0-9;]*m//g' "$WORK/log" | grep -q 'optimized.*plugin="hog"' && break
  sleep 0.2
done
sleep 2
rss() { echo $(( $(awk '/VmRSS/{print $2}' "/proc/$pid/status") / 1024 )); }
before=$(rss) peak=0
tls=(--cacert "$data/pki/ca.crt" --cert "$data/pki/admin.crt" --key "$data/pki/admin.key")
for i in $(seq 1000); do
  curl -s "${tls[@]}" -o /dev/null -X POST -H 'Content-Type: application/json' \
    --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c$i\"}}" \
    "https://127.0.0.1:$port/api/v1/namespaces/default/configmaps"
  if [ $((i % 100)) -eq 0 ]; then r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; fi
done
sleep 7
echo "| RSS before | peak during 1,000 trapping calls | 7 s after |"
echo "|---|---|---|"
echo "| $before MiB | $peak MiB | $(rss) MiB |"
