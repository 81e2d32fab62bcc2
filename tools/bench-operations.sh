#!/usr/bin/env bash
# What operating features cost per request, side by side in one run: the
# release server started fresh five times, with audit logging and tracing
# off, at audit Metadata for every request, at audit RequestResponse for
# every request, traced with no request sampled, and traced with every
# request sampled and its spans exported to an OTLP sink (each time with
# kube's metrics, which are always on), and capstan-bench's create, get and
# list phases at concurrency 1 and 8 against each.
#   tools/bench-operations.sh [OPS]
# Env: CAPSTAN (default target/release/capstan), CAPSTAN_BENCH.
set -euo pipefail
OPS=${1:-3000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CAPSTAN=${CAPSTAN:-$ROOT/target/release/capstan}
BENCH=${CAPSTAN_BENCH:-$ROOT/target/release/capstan-bench}
WORK=$(mktemp -d)
SINK=$((18000 + RANDOM % 400))
trap 'pkill -f "serve --data-dir $WORK" || true; pkill -f "otlp-sink $SINK" || true; rm -rf "$WORK"' EXIT
"$BENCH" --otlp-sink "$SINK" &
tracing() { # samplingRatePerMillion
  printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:%s\nsamplingRatePerMillion: %s\n' "$SINK" "$1"
}
policy() {
  printf 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: %s\n' "$1"
}
run() { # name, extra flags...
  local name=$1; shift
  local dir=$WORK/$name port=$((17500 + RANDOM % 400))
  mkdir -p "$dir"
  "$CAPSTAN" serve --data-dir "$dir" --secure-port "$port" "$@" >"$dir/log" 2>&1 &
  for _ in $(seq 200); do [ -f "$dir/admin.kubeconfig" ] && break; sleep 0.1; done
  sleep 1
  "$BENCH" --kubeconfig "$dir/admin.kubeconfig" --ops "$OPS" --concurrency 1,8 --json 2>/dev/null \
    > "$WORK/$name.json"
  pkill -f "serve --data-dir $dir" || true
  sleep 1
}
policy Metadata > "$WORK/metadata.yaml"
policy RequestResponse > "$WORK/request-response.yaml"
run off
run metadata --audit-policy-file "$WORK/metadata.yaml" --audit-log-path "$WORK/metadata.log"
run request-response --audit-policy-file "$WORK/request-response.yaml" --audit-log-path "$WORK/rr.log"
tracing 0 > "$WORK/tracing-none.yaml"
tracing 1000000 > "$WORK/tracing-all.yaml"
run traced-none --tracing-config-file "$WORK/tracing-none.yaml"
run traced-all --tracing-config-file "$WORK/tracing-all.yaml"
python3 - "$WORK" <<'PY'
import json, sys, os
work = sys.argv[1]
runs = ["off", "metadata", "request-response", "traced-none", "traced-all"]
data = {r: json.load(open(os.path.join(work, r + ".json"))) for r in runs}
def phases(d):
    out = {}
    for p in d["api"]["phases"]:
        out[(p["phase"], p.get("concurrency", 1))] = p["p50_ms"]
    return out
base = phases(data["off"])
print("| phase, concurrency | off p50 ms | audit Metadata p50 ms (ratio) | audit RequestResponse | traced, none sampled | traced, all sampled and exported |")
print("|---|---|---|---|---|---|")
for key in sorted(base):
    row = [f"{key[0]}, {key[1]}", f"{base[key]:.3f}"]
    for r in runs[1:]:
        v = phases(data[r]).get(key)
        row.append(f"{v:.3f} ({v / base[key]:.2f}×)" if v else "–")
    print("| " + " | ".join(row) + " |")
PY
