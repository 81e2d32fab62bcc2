#!/usr/bin/env bash
# The first start on a machine (an empty plugin cache) against a later one
# (the cache filled), side by side in one run: the release server started
# three times each way on a fresh data directory, ready = /readyz answers
# 200; RSS at ready, and after the optimizer swapped Cranelift's code in.
#   tools/bench-first-start.sh
# Env: CAPSTAN (default target/release/capstan).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CAPSTAN=${CAPSTAN:-$ROOT/target/release/capstan}
WORK=$(mktemp -d)
trap 'pkill -f "serve --data-dir $WORK" || true; rm -rf "$WORK"' EXIT
rss_mib() { echo $(( $(awk '/VmRSS/{print $2}' "/proc/$1/status") / 1024 )); }
start() { # data cache port: prints "ready_ms rss_mib", leaves $WORK/pid
  local t0 t1
  t0=$(date +%s%N)
  "$CAPSTAN" serve --data-dir "$1" --secure-port "$3" --plugin-cache-dir "$2" >"$1.log" 2>&1 &
  echo $! >"$WORK/pid"
  until curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$3/readyz" 2>/dev/null | grep -q 200; do
    sleep 0.01
  done
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(rss_mib "$(cat "$WORK/pid")")"
}
echo "| run | first start: ready ms | RSS at ready MiB | RSS once optimized MiB | later start: ready ms | RSS at ready MiB |"
echo "|---|---|---|---|---|---|"
for i in 1 2 3 4 5; do
  cache=$WORK/cache$i port=$((17600 + RANDOM % 300))
  mkdir -p "$cache"
  read -r cold_ms cold_rss < <(start "$WORK/cold$i" "$cache" "$port")
  pid=$(cat "$WORK/pid")
  # Colours stripped.
  plain() { sed 's/\x1b\[[0-9;]*m//g' "$WORK/cold$i.log"; }
  # Every module not loaded optimized is optimized in turn.
  modules=$(plain | grep -o ' modules=[0-9]*' | head -1 | cut -d= -f2 || true)
  done_already=$(plain | grep -o ' optimized=[0-9]*' | head -1 | cut -d= -f2 || true)
  modules=$(( ${modules:-0} - ${done_already:-0} ))
  for _ in $(seq 600); do
    [ "$(plain | grep -c 'plugin optimized' || true)" -ge "${modules:-0}" ] && break
    sleep 0.1
  done
  optimized_rss=$(rss_mib "$pid")
  kill "$pid"; sleep 0.5
  read -r warm_ms warm_rss < <(start "$WORK/warm$i" "$cache" "$port")
  kill "$(cat "$WORK/pid")"; sleep 0.5
  echo "| $i | $cold_ms | $cold_rss | $optimized_rss | $warm_ms | $warm_rss |"
done
