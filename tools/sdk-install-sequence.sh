#!/usr/bin/env bash
# The C and Go SDKs' toolchains cannot collide: a newcomer who installs the
# C SDK's tools, then the Go SDK's, then the C SDK's again (as their READMEs
# say) can build every example after every step, and no install replaces
# another's tool.
#
#   tools/sdk-install-sequence.sh            # minutes: builds both wit-bindgens from source
#   CAPSTAN_SEQUENCE_REUSE=1 tools/sdk-install-sequence.sh   # quick: see below
#
# In a fresh HOME and a fresh XDG_CACHE_HOME (temporary folders; cargo's and
# rustup's own homes, CARGO_HOME and RUSTUP_HOME, stay the real ones so the
# Rust toolchain and crates.io's index are found), in a fresh copy of the
# checkout (the files git lists, with uncommitted changes):
#
#   1. C:  the install blocks of plugin-sdk/c/README.md's "Toolchain" section,
#          run as written (the `sh untested` apt-get line needs root: its
#          packages are checked to be installed instead); then `make` in
#          examples/c/require-labels and examples/c/unique-ingress-host;
#   2. Go: the install blocks of plugin-sdk/go/README.md's "Install the
#          toolchain" section (what they export, PATH, carries over); then
#          the README's build in examples/go/{require-labels,unique-ingress-host};
#          then both C examples again, from clean;
#   3. C:  the C README's install blocks again; then all four examples again.
#
# After each step: every example built so far still builds (from clean,
# into a component), and no tool replaced another: the user's wit-bindgen
# on PATH and $CARGO_HOME/bin/wit-bindgen (if any) and cargo's install
# records ($CARGO_HOME/.crates.toml, .crates2.json) are byte for byte what
# they were, nothing was installed into the fresh ~/.cargo/bin, each pinned
# wit-bindgen (${XDG_CACHE_HOME}/capstan/wit-bindgen-<version>) answers its
# own version and is the binary its install left, and no build ran the
# wit-bindgen first on PATH (a decoy put there, as an old install into
# ~/.cargo/bin would be: each SDK must take only its own pinned one).
#
# Environment:
#   CAPSTAN_SEQUENCE_REUSE=1  quick mode: before a README block installs
#       wit-bindgen <version>, copy the user's own pinned build
#       (~/.cache/capstan/wit-bindgen-<version>, as .ci/run installs it; not
#       its go-pkg, which the Go build copies from cargo's registry itself)
#       into the fresh cache, so the block's `cargo install` finds it
#       installed; pip's and Go's build caches are the user's too.
#   CAPSTAN_BIN   the capstan binary (default: capstan on PATH, else
#       target/release/capstan of this checkout); put first on PATH, as the
#       READMEs ask.
#   KEEP=1        keep the temporary folder (kept anyway when a check fails).
# GOPROXY is off: the Go READMEs promise nothing is fetched from it.
# Exit status 0 when every check passes.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
started=$(date +%s)
real_home=$HOME
real_cache=${XDG_CACHE_HOME:-$HOME/.cache}
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}

work=$(mktemp -d "${TMPDIR:-/tmp}/sdk-install-sequence.XXXXXX")
checkout=$work/checkout
logs=$work/logs
mkdir -p "$checkout" "$logs" "$work/home" "$work/cache" "$work/bin"

passed=0
failed=0
results=()
elapsed() { echo $(($(date +%s) - started)); }
# record PASS|FAIL WHAT [DETAIL]
record() {
  local line
  line=$(printf '[%4ss] %-4s  %s' "$(elapsed)" "$1" "$2")
  [ -n "${3:-}" ] && line="$line: $3"
  results+=("$line")
  echo "$line"
  if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
show_log() { # FILE: the last lines of a failed command's output
  tail -n 25 "$1" | sed 's/^/      | /'
}

# --- capstan, and the copy of the checkout --------------------------------
capstan=${CAPSTAN_BIN:-$(command -v capstan || true)}
[ -z "$capstan" ] && [ -x "$repo/target/release/capstan" ] && capstan=$repo/target/release/capstan
if [ -z "$capstan" ] || ! "$capstan" plugin componentize --help >/dev/null 2>&1; then
  echo "sdk-install-sequence: needs a capstan binary with \`plugin componentize\`: put it on PATH, set CAPSTAN_BIN," >&2
  echo "  or build it: cargo build --release --bin capstan --manifest-path $repo/Cargo.toml" >&2
  exit 2
fi
ln -s "$(cd "$(dirname "$capstan")" && pwd)/$(basename "$capstan")" "$work/bin/capstan"
(cd "$repo" && git ls-files -z -co --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$checkout"

# --- the newcomer's environment -------------------------------------------
export HOME=$work/home
export XDG_CACHE_HOME=$work/cache
export PATH=$work/bin:$PATH
export GOPROXY=off
# What a developer's shell or cargo (a test's CARGO_*) may have set is not
# a newcomer's; CARGO_HOME and RUSTUP_HOME are.
for v in $(compgen -e | grep '^CARGO_' | grep -vx CARGO_HOME); do unset "$v"; done
unset CARGO RUSTFLAGS RUSTUP_TOOLCHAIN \
  WIT_BINDGEN WASM_TOOLS CAPSTAN CAPSTAN_WASI_ADAPTER CAPSTAN_GO_WIT_PKG GOFLAGS GOPATH GOCACHE \
  GOMODCACHE GOTOOLCHAIN PIP_CACHE_DIR
if [ "${CAPSTAN_SEQUENCE_REUSE:-}" = 1 ]; then
  export PIP_CACHE_DIR=$real_cache/pip GOCACHE=$real_cache/go-build
fi
mode="full (wit-bindgen built from source)"
[ "${CAPSTAN_SEQUENCE_REUSE:-}" = 1 ] && mode="quick (the user's pinned wit-bindgen builds reused)"
echo "sdk-install-sequence: $mode"
echo "  checkout copy: $checkout"
echo "  HOME=$HOME XDG_CACHE_HOME=$XDG_CACHE_HOME CARGO_HOME=$CARGO_HOME RUSTUP_HOME=$RUSTUP_HOME"
echo "  capstan: $capstan"

# --- what must not change --------------------------------------------------
sha() { if [ -e "$1" ]; then sha256sum "$1" | cut -c1-16; else echo absent; fi; }
user_wit_bindgen=$(command -v wit-bindgen || true)
echo "  the user's wit-bindgen on PATH: ${user_wit_bindgen:-none}${user_wit_bindgen:+ ($("$user_wit_bindgen" --version 2>/dev/null))}"
guarded=("$CARGO_HOME/bin/wit-bindgen" "$CARGO_HOME/.crates.toml" "$CARGO_HOME/.crates2.json")
[ -n "$user_wit_bindgen" ] && [ "$user_wit_bindgen" != "$CARGO_HOME/bin/wit-bindgen" ] && guarded+=("$user_wit_bindgen")
declare -A before
for f in "${guarded[@]}"; do before[$f]=$(sha "$f"); done
echo "  guarded: $(for f in "${guarded[@]}"; do printf '%s (%s) ' "$f" "${before[$f]}"; done)"
# The decoy: the first wit-bindgen on PATH, which no build may run.
decoy_calls=$work/decoy-wit-bindgen-calls
printf '#!/bin/sh\necho "wit-bindgen $*" >> %s\necho "a decoy wit-bindgen on PATH: no SDK build may run it" >&2\nexit 1\n' \
  "$decoy_calls" > "$work/bin/wit-bindgen"
chmod +x "$work/bin/wit-bindgen"
path_wit_bindgen=$work/bin/wit-bindgen
# The pinned wit-bindgens installed so far: version -> sha of the binary its install left.
declare -A pinned
installs=0

pinned_bin() { echo "$XDG_CACHE_HOME/capstan/wit-bindgen-$1/bin/wit-bindgen"; }

check_tools() { # AFTER-WHAT
  local problems=() f v answer
  for f in "${guarded[@]}"; do
    [ "$(sha "$f")" = "${before[$f]}" ] || problems+=("$f changed (${before[$f]} -> $(sha "$f"))")
  done
  [ "$(command -v wit-bindgen || true)" = "$path_wit_bindgen" ] ||
    problems+=("the wit-bindgen first on PATH is now $(command -v wit-bindgen || echo none), was the decoy $path_wit_bindgen")
  [ -e "$decoy_calls" ] && problems+=("the decoy wit-bindgen on PATH was run: $(paste -sd';' "$decoy_calls")")
  for f in "$HOME/.cargo/bin/wit-bindgen" "$HOME/.local/bin/wit-bindgen"; do
    [ -e "$f" ] && problems+=("$f was installed")
  done
  for v in "${!pinned[@]}"; do
    answer=$("$(pinned_bin "$v")" --version 2>&1)
    [ "$answer" = "wit-bindgen-cli $v" ] || problems+=("$(pinned_bin "$v") answers '$answer', not wit-bindgen-cli $v")
    [ "$(sha "$(pinned_bin "$v")")" = "${pinned[$v]}" ] ||
      problems+=("$(pinned_bin "$v") is not the binary its install left")
  done
  if [ ${#problems[@]} -eq 0 ]; then
    local have=""
    for v in $(printf '%s\n' "${!pinned[@]}" | sort); do have+=" wit-bindgen-$v=wit-bindgen-cli $v;"; done
    record PASS "no tool replaced another, after $1" "${have# } the user's and \$CARGO_HOME's wit-bindgen and cargo's install records untouched; PATH's decoy never run"
  else
    record FAIL "no tool replaced another, after $1" "$(printf '%s; ' "${problems[@]}")"
  fi
}

# --- the READMEs' install blocks --------------------------------------------
# blocks FILE HEADING DIR: the section's shell blocks, one file each,
# DIR/<n>.<tested|untested>.sh, their names on stdout.
blocks() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, re, sys
path, heading, out = sys.argv[1:4]
os.makedirs(out)
lines = open(path).read().split("\n")
inside, level, fence, buf, n = False, 0, None, [], 0
for line in lines:
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    if fence is None:
        m = re.match(r"(#+) (.*)", line)
        if m:
            if m.group(2).strip() == heading:
                inside, level = True, len(m.group(1))
            elif inside and len(m.group(1)) <= level:
                inside = False
            continue
        m = re.match(r"(```+)\s*(.*)", stripped)
        if m:
            fence, info, strip, buf = m.group(1), m.group(2).split(), indent, []
        continue
    if stripped.startswith(fence) and not stripped[len(fence):].strip():
        if inside and info and info[0] == "sh" and len(info) > 1 and info[1] in ("tested", "untested"):
            n += 1
            name = os.path.join(out, f"{n:02d}.{info[1]}.sh")
            open(name, "w").write("\n".join(buf) + "\n")
            print(name)
        fence = None
        continue
    buf.append(line[min(strip, indent):])
PY
}

# install SDK README HEADING
install() {
  local sdk=$1 readme=$2 heading=$3 t0 files f v log n=0 detail=()
  t0=$(date +%s)
  installs=$((installs + 1))
  files=$(blocks "$checkout/$readme" "$heading" "$work/blocks/$installs-$sdk")
  if [ -z "$files" ]; then
    record FAIL "$sdk install ($readme, \"$heading\")" "no shell blocks found in that section"
    return 1
  fi
  for f in $files; do
    n=$((n + 1))
    echo "  $readme, \"$heading\", block $n ($(basename "$f" .sh | cut -d. -f2)):"
    sed 's/^/      $ /' "$f"
    if [[ $f == *.untested.sh ]]; then
      # Not run (root); its apt-get packages must be installed.
      local pkgs missing=()
      pkgs=$(sed -n 's/#.*//; s/.*apt-get install\(.*\)/\1/p' "$f" | tr ' ' '\n' | grep -v '^-' | grep . || true)
      for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
      done
      if [ ${#missing[@]} -gt 0 ]; then
        record FAIL "$sdk install: $(basename "$f")" "not run (needs root), and its packages ${missing[*]} are not installed"
        return 1
      fi
      detail+=("block $n not run (root): its packages are installed")
      continue
    fi
    # Quick mode: the user's pinned build of the wit-bindgen this block installs.
    for v in $(grep -o 'wit-bindgen-cli .*--version [0-9][0-9.]*' "$f" | grep -o '[0-9][0-9.]*$'); do
      if [ "${CAPSTAN_SEQUENCE_REUSE:-}" = 1 ] && [ ! -e "$(pinned_bin "$v")" ] &&
        [ "$("$real_cache/capstan/wit-bindgen-$v/bin/wit-bindgen" --version 2>/dev/null)" = "wit-bindgen-cli $v" ]; then
        mkdir -p "$XDG_CACHE_HOME/capstan"
        (cd "$real_cache/capstan" && tar --exclude=go-pkg -cf - "wit-bindgen-$v") | tar -xf - -C "$XDG_CACHE_HOME/capstan"
        detail+=("wit-bindgen $v copied from $real_cache/capstan")
      fi
    done
    log=$logs/$sdk-install-$(date +%s)-$n.log
    local b0
    b0=$(date +%s)
    # As a reader runs it: from the checkout's root, what it exports carried over.
    (cd "$checkout" && bash -euo pipefail -c "source '$f'; export -p > '$f.env'") >"$log" 2>&1
    local status=$?
    if [ $status -ne 0 ]; then
      record FAIL "$sdk install: block $n of $readme" "exit status $status (log $log)"
      show_log "$log"
      return 1
    fi
    # What the block exported (PATH, ...), as global variables here.
    # shellcheck disable=SC1090
    source <(grep -v -E '^declare -x (PWD|OLDPWD|SHLVL|_)=' "$f.env" | sed 's/^declare -x /declare -gx /')
    detail+=("block $n ran in $(($(date +%s) - b0)) s")
    for v in $(grep -o 'wit-bindgen-cli .*--version [0-9][0-9.]*' "$f" | grep -o '[0-9][0-9.]*$'); do
      if [ -z "${pinned[$v]:-}" ]; then
        pinned[$v]=$(sha "$(pinned_bin "$v")")
      fi
    done
  done
  record PASS "$sdk install ($readme, \"$heading\") in $(($(date +%s) - t0)) s" "$(printf '%s; ' "${detail[@]}")"
}

# --- the examples' builds ---------------------------------------------------
is_component() { # FILE: a Wasm component (preamble \0asm, version 0x0d, layer 1)
  [ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = 0061736d0d000100 ]
}

build() { # LANG NAME
  local lang=$1 name=$2 dir="$checkout/examples/$1/$2" log t0 status
  log=$logs/build-$lang-$name-$(date +%s).log
  t0=$(date +%s)
  case $lang in
    c) (cd "$dir" && make clean && make) >"$log" 2>&1 ;;
    go) (cd "$dir" && rm -f "$name.wasm" &&
      go run capstan.dev/capstan/cmd/capstan-plugin-build -o "$name.wasm" .) >"$log" 2>&1 ;;
  esac
  status=$?
  if [ $status -eq 0 ] && is_component "$dir/$name.wasm"; then
    record PASS "build examples/$lang/$name in $(($(date +%s) - t0)) s" "$name.wasm, a component of $(($(stat -c %s "$dir/$name.wasm") / 1024)) KiB"
  else
    record FAIL "build examples/$lang/$name" "exit status $status$([ $status -eq 0 ] && echo ", but $name.wasm is not a component") (log $log)"
    show_log "$log"
  fi
}

c_examples() { build c require-labels; build c unique-ingress-host; }
go_examples() { build go require-labels; build go unique-ingress-host; }

# --- the sequence -------------------------------------------------------------
echo
echo "== 1. the C SDK's install, then its examples"
install c plugin-sdk/c/README.md "Toolchain" && check_tools "the C install"
c_examples
check_tools "the C builds"

echo
echo "== 2. the Go SDK's install, then its examples, then the C examples again"
install go plugin-sdk/go/README.md "Install the toolchain" && check_tools "the Go install"
go_examples
c_examples
check_tools "the Go and C builds"

echo
echo "== 3. the C SDK's install again, then every example again"
install c plugin-sdk/c/README.md "Toolchain" && check_tools "the second C install"
c_examples
go_examples
check_tools "the last builds"

echo
echo "== summary ($mode)"
printf '%s\n' "${results[@]}"
total=$((passed + failed))
if [ $failed -eq 0 ]; then
  echo "PASS: $passed of $total checks in $(elapsed) s"
  if [ "${KEEP:-}" = 1 ]; then echo "kept: $work"; else chmod -R u+w "$work" && rm -rf "$work"; fi
  exit 0
fi
echo "FAIL: $failed of $total checks failed, in $(elapsed) s (logs and the checkout copy kept in $work)"
exit 1
