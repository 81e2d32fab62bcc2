#!/bin/sh
# Runs the protoc binary bundled in the protoc-bin-vendored-<platform> crate
# (a build-dependency, so cargo has downloaded and unpacked it before any
# build script runs). .cargo/config.toml sets PROTOC to this script unless
# PROTOC is already set. Falls back to a protoc on PATH.
case "$(uname -m)" in
    x86_64 | amd64) platform=linux-x86_64 ;;
    aarch64 | arm64) platform=linux-aarch_64 ;;
    *) platform=unsupported ;;
esac
# The calling build script's crate (etcd-client) sits in the same registry
# (or vendor) directory as the protoc crate; ~/.cargo is the fallback.
for dir in "$(dirname "${CARGO_MANIFEST_DIR:-/nonexistent}")" "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*; do
    for protoc in "$dir"/protoc-bin-vendored-"$platform"*/bin/protoc; do
        if [ -x "$protoc" ]; then
            exec "$protoc" "$@"
        fi
    done
done
if command -v protoc >/dev/null 2>&1; then
    exec protoc "$@"
fi
echo "protoc-vendored.sh: no protoc-bin-vendored-$platform crate found and no protoc on PATH" >&2
exit 127
