//! Compiled-component cache: compiling a component with Cranelift takes far
//! longer than loading its precompiled form, so compiled artifacts are kept
//! in a directory, named by a hash of the wasm bytes and of the engine's
//! compatibility hash (wasmtime version, target, settings).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::Engine;

/// FNV-1a, 128-bit: a stable (not randomly seeded) hash, used to name cache
/// files. Not collision-resistant against an adversary; the cache directory
/// must be writable only by the server (see [`load_or_compile`]).
pub(crate) struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;

    pub(crate) fn new() -> Self {
        Fnv128(Self::OFFSET)
    }

    pub(crate) fn digest(&self) -> u128 {
        self.0
    }
}

impl Hasher for Fnv128 {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u128::from(*b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0 as u64
    }
}

/// The cache file for `wasm` compiled by `engine`.
pub(crate) fn cache_path(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    let mut hasher = Fnv128::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.write(wasm);
    dir.join(format!("{:032x}.cwasm", hasher.digest()))
}

/// Where a component came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Compiled,
    Cache,
}

/// Loads the component from the cache directory when it holds it, otherwise
/// compiles it and stores the artifact (a failure to store is only logged).
///
/// Safety of deserializing: `Component::deserialize_file` trusts its input to
/// be wasmtime's own compiled code. Files in the cache are only ever created
/// here, from `Engine::precompile_component`, written to a temporary name and
/// renamed into place so no partial file is visible; the name binds the exact
/// wasm bytes and the engine's compatibility hash, and wasmtime still checks
/// the artifact's header (version, target, flags). The directory must not be
/// writable by anyone the server does not trust.
pub(crate) fn load_or_compile(
    engine: &Engine,
    dir: Option<&Path>,
    wasm: &[u8],
) -> anyhow::Result<(Component, Source)> {
    let Some(dir) = dir else {
        return Ok((Component::new(engine, wasm)?, Source::Compiled));
    };
    let path = cache_path(dir, engine, wasm);
    if path.is_file() {
        // SAFETY: see the function's documentation: only this module writes there.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => return Ok((component, Source::Cache)),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "unusable plugin cache entry; recompiling")
            }
        }
    }
    let artifact = engine.precompile_component(wasm)?;
    if let Err(e) = store(dir, &path, &artifact) {
        tracing::warn!(path = %path.display(), error = %e, "cannot write plugin cache entry");
    }
    // SAFETY: `artifact` was produced just now by this engine.
    let component = unsafe { Component::deserialize(engine, &artifact)? };
    Ok((component, Source::Compiled))
}

/// Writes `artifact` to `path` atomically (temporary file, then rename).
fn store(dir: &Path, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, artifact)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv128_matches_the_reference_vectors() {
        let empty = Fnv128::new();
        assert_eq!(empty.digest(), 0x6c62272e07bb014262b821756295c58d);
        let mut a = Fnv128::new();
        a.write(b"a");
        assert_eq!(a.digest(), 0xd228cb696f1a8caf78912b704e4a8964);
    }

    #[test]
    fn the_name_depends_on_the_bytes() {
        let engine = Engine::default();
        let dir = Path::new("/cache");
        let one = cache_path(dir, &engine, b"\0asm one");
        assert_eq!(one, cache_path(dir, &engine, b"\0asm one"));
        assert_ne!(one, cache_path(dir, &engine, b"\0asm two"));
        assert!(one.to_string_lossy().ends_with(".cwasm"));
    }
}
