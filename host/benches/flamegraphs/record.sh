#!/usr/bin/env bash
# Records the flame graphs beside this script: the create path or the LIST
# path of a release `capstan serve` (fresh data directory, default chain)
# under `capstan-bench` at 32 clients, sampled with `perf` (DWARF unwinding,
# 499 Hz, 3 s) and drawn with inferno (`cargo install inferno`).
#
#   record.sh BIN_DIR OUT create|list
#
# BIN_DIR holds `capstan` and `capstan-bench` (target/release); OUT.svg and
# OUT.folded are written. The create phase runs 30 000 creates, sampled from
# its second second on; the LIST phase 4 000 lists of 2 000 ConfigMaps,
# sampled from 2.5 s in (after the creates and gets that fill them).
set -euo pipefail
BIN=$1 OUT=$2 PHASE=$3
D=$(mktemp -d) PORT=$((20000 + RANDOM % 20000))
"$BIN/capstan" serve --data-dir "$D" --secure-port $PORT >"$D/log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$D"' EXIT
until curl -skf https://127.0.0.1:$PORT/readyz >/dev/null 2>&1; do sleep 0.02; done
sample() { perf record -F 499 --call-graph dwarf,32768 -p $SERVER -o "$OUT.data" -- sleep 3 >/dev/null 2>&1; }
case $PHASE in
  create)
    (sleep 1; sample) & SAMPLER=$!
    "$BIN/capstan-bench" --kubeconfig "$D/admin.kubeconfig" --ops 30000 --concurrency 32 \
      --list-ops 1 --watch-ops 1 >/dev/null 2>&1
    wait $SAMPLER ;;
  list)
    "$BIN/capstan-bench" --kubeconfig "$D/admin.kubeconfig" --ops 2000 --concurrency 32 \
      --list-ops 4000 >/dev/null 2>&1 & BENCH=$!
    sleep 2.5; sample; wait $BENCH ;;
  *) echo "phase: create or list" >&2; exit 2 ;;
esac
perf script --no-inline -i "$OUT.data" 2>/dev/null | inferno-collapse-perf >"$OUT.folded"
inferno-flamegraph --title "$(basename "$OUT") ($PHASE)" --minwidth 0.2 <"$OUT.folded" >"$OUT.svg"
rm -f "$OUT.data"
