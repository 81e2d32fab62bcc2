#!/usr/bin/env bash
# Writes host/link/start-functions.txt: the functions a server runs from
# exec to ready (then, after them, those a first kubectl session runs), which
# the release link places together at the front of the text (host/build.rs).
# Scattered over the binary, the start's code made ~320 of the text's 64 KiB
# windows resident (the kernel maps a whole window around each fault).
#
# How: the server is built again with LLVM's instrumentation (-Cprofile-
# generate, added by a rustc wrapper so that cargo names every symbol as in a
# normal release build), started on an empty plugin cache until every
# built-in is optimized, started again on the filled cache, and driven by
# kubectl; llvm-profdata (rustup component llvm-tools) lists the functions
# each run entered; those the normal release binary has are written, start
# first. The profile names no C (SQLite, ring), nothing of the prebuilt
# standard library, and a few generic copies; with `perf` on the machine, the
# release server is then built with the file, started (a first start, then a
# later one) under `perf record -e page-faults`, and the functions whose code
# still faulted in outside the ordered front are added, three rounds (each
# round finds about one function per 64 KiB window still touched). Rerun
# after a dependency or toolchain upgrade (names carry crate
# hashes; a name the binary lacks is skipped by the linker, so a stale file
# only orders less).
#   tools/start-order.sh        (~20 min on 2 cores; needs kubectl)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/host/link/start-functions.txt
KUBECTL=${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33}
TARGET_DIR=${START_ORDER_TARGET:-$ROOT/target/start-order}
WORK=$(mktemp -d)
trap 'pkill -f "serve --data-dir $WORK" || true; rm -rf "$WORK"' EXIT
rustup component add llvm-tools >/dev/null
PROFDATA=$(find "$(rustc --print sysroot)" -name llvm-profdata -type f | head -1)

# The wrapper lives in the target directory: cargo rebuilds everything when
# the wrapper's path changes.
mkdir -p "$TARGET_DIR"
cat >"$TARGET_DIR/rustc-wrapper" <<'SH'
#!/usr/bin/env bash
# Instruments what is linked into the server; build scripts, proc macros and
# the wasm plugins are built as usual.
rustc=$1; shift
case " $* " in
  *" build_script_"*|*" proc-macro "*|*" --target wasm32"*) exec "$rustc" "$@" ;;
esac
exec "$rustc" "$@" -Cprofile-generate="$START_PROFILE_DIR"
SH
chmod +x "$TARGET_DIR/rustc-wrapper"
(cd "$ROOT" && cargo build --release --bin capstan)
(cd "$ROOT" && START_PROFILE_DIR=$TARGET_DIR/profiles RUSTC_WRAPPER=$TARGET_DIR/rustc-wrapper \
  cargo build --release --bin capstan --target-dir "$TARGET_DIR")

port=$((17900 + RANDOM % 90))
run() { # profile-dir data-dir: starts the instrumented server, waits for ready
  mkdir -p "$1"
  LLVM_PROFILE_FILE=$1/%p.profraw "$TARGET_DIR/release/capstan" serve --data-dir "$2" \
    --secure-port "$port" --plugin-cache-dir "$WORK/cache" >"$2.log" 2>&1 &
  echo $! >"$WORK/pid"
  until curl -sk -o /dev/null "https://127.0.0.1:$port/readyz"; do sleep 0.02; done
}
stop() { # profile-dir: stops the server; its profile is the one of its pid
  local pid
  pid=$(cat "$WORK/pid")
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  "$PROFDATA" merge -o "$1.profdata" "$1/$pid.profraw"
  "$PROFDATA" show --covered "$1.profdata" | sed 's/^[^;]*;//' >"$1.names"
}
run "$WORK/first" "$WORK/d1"
plain() { sed 's/\x1b\[[0-9;]*m//g' "$WORK/d1.log"; }
for _ in $(seq 600); do # until every built-in is optimized
  modules=$(plain | grep -o ' modules=[0-9]*' | head -1 | cut -d= -f2 || true)
  [ "$(plain | grep -c 'plugin optimized' || true)" -ge "${modules:-1}" ] && break
  sleep 0.1
done
stop "$WORK/first"
run "$WORK/later" "$WORK/d2"
stop "$WORK/later"
run "$WORK/session" "$WORK/d3"
k() { "$KUBECTL" --kubeconfig "$WORK/d3/admin.kubeconfig" "$@" >/dev/null 2>&1 || true; }
k get ns; k create ns demo; k -n demo create configmap c1 --from-literal=a=b
k -n demo create deployment web --image=nginx; k get pods -A; k api-resources
k -n demo create configmap Bad_Name; k -n demo get deploy web -o yaml
k -n demo expose deployment web --port 80; k auth can-i list pods; k create sa x
k get clusterroles; timeout 2 "$KUBECTL" --kubeconfig "$WORK/d3/admin.kubeconfig" get ns -w >/dev/null 2>&1 || true
k delete ns demo --wait=false
stop "$WORK/session"

# The start's functions, then the session's others, as the release binary
# names them (a function ThinLTO promoted carries a `.llvm.N` suffix), each
# once; names it does not define (inlined everywhere) are left out.
nm --defined-only "$ROOT/target/release/capstan" | awk '{ n = $NF; s = n; sub(/\.llvm\.[0-9]+$/, "", s); print s, n }' >"$WORK/defined"
mkdir -p "$(dirname "$OUT")"
cat "$WORK/first.names" "$WORK/later.names" "$WORK/session.names" |
  awk 'NR == FNR { names[$1] = names[$1] " " $2; next }
       ($0 in names) && !seen[$0]++ { n = split(names[$0], all, " "); for (i = 1; i <= n; i++) print all[i] }' \
    "$WORK/defined" - >"$OUT"
echo "$(wc -l <"$OUT") functions from the profile"

faulted() { # out: functions whose code the server process faulted in at start
  rm -rf "$WORK/fc" "$WORK"/f-*
  : >"$WORK/server-pids"
  for run in first later; do
    perf record -q -c 1 -d -e page-faults -o "$WORK/$run.perf" "$ROOT/target/release/capstan" serve \
      --data-dir "$WORK/f-$run" --secure-port "$port" --plugin-cache-dir "$WORK/fc" >"$WORK/f-$run.log" 2>&1 &
    until curl -sk -o /dev/null "https://127.0.0.1:$port/readyz"; do sleep 0.02; done
    pgrep -f "^$ROOT/target/release/capstan serve --data-dir $WORK/f-$run " >>"$WORK/server-pids"
    pkill -f "serve --data-dir $WORK/f-$run "
    wait || true
  done
  for run in first later; do
    perf script -i "$WORK/$run.perf" -F pid,ip,sym,addr,dso --no-demangle 2>/dev/null
  done | python3 -c '
import re, sys
pids = set(open(sys.argv[1]).read().split())
sample = re.compile(r"^\s*(\d+)\s+([0-9a-f]+)\s+.*? \(\S+\)\s+([0-9a-f]+)\s+(\S+) \((\S+)\)$")
seen = set()
for line in sys.stdin:
    m = sample.match(line)
    if not m or m[1] not in pids or not m[5].endswith("/capstan"):
        continue
    addr, ip = int(m[2], 16) >> 12, int(m[3], 16) >> 12
    if addr in (ip, ip + 1) and m[4] not in seen and not m[4].startswith("["):
        seen.add(m[4]); print(m[4])
' "$WORK/server-pids" >"$1"
}
if command -v perf >/dev/null; then
  for round in 1 2 3; do
    (cd "$ROOT" && cargo build --release --bin capstan)
    faulted "$WORK/faulted"
    grep -vxFf "$OUT" "$WORK/faulted" >>"$OUT" || true
    echo "round $round: $(wc -l <"$OUT") functions"
  done
fi
echo "$(wc -l <"$OUT") functions -> $OUT"
