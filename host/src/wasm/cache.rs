//! Compiled-component cache: compiling a component with Cranelift takes far
//! longer than loading its precompiled form, so compiled artifacts are kept
//! in a directory, named by a SHA-256 of the engine's compatibility hash
//! (wasmtime version, target, compiler settings, tunables, features) and of
//! the wasm bytes. Nothing else goes into compiled code, so servers of
//! different builds may share a directory (`cache_dir.rs`): an entry is only
//! ever found by an engine that would have produced the same artifact.
//! Entries unused for [`UNUSED_FOR`] are removed when a new one is written.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use ring::digest::{digest, Context, SHA256};
use wasmtime::component::Component;
use wasmtime::Engine;

/// Entries not loaded for this long are removed (when an entry is written).
const UNUSED_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// How stale an entry's modification time may be before a load refreshes
/// it (so a start does not write to every entry it loads).
const TOUCH_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Feeds what `Hash` writes into a SHA-256.
struct Sha256Hasher(Context);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Unused: callers take the digest.
    fn finish(&self) -> u64 {
        0
    }
}

/// The cache file for `wasm` compiled by `engine`: 128 bits of the SHA-256
/// of the engine's compatibility hash and the wasm's SHA-256, in hex. A
/// built-in's SHA-256 was computed at build time, so its bytes are not read.
pub(crate) fn cache_path(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    let mut hasher = Sha256Hasher(Context::new(&SHA256));
    engine.precompile_compatibility_hash().hash(&mut hasher);
    match super::embedded::digest_of(wasm) {
        Some(built) => hasher.0.update(&built),
        None => hasher.0.update(digest(&SHA256, wasm).as_ref()),
    }
    let digest = hasher.0.finish();
    let name: String = digest.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("{name}.cwasm"))
}

/// Where a component came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Compiled by Cranelift now.
    Compiled,
    /// Cranelift's, from the cache.
    Cache,
    /// Compiled now by the baseline compiler (Winch).
    Baseline,
    /// The baseline compiler's, from the cache.
    BaselineCache,
}

impl Source {
    /// Cranelift's code (else Winch's, to be swapped once optimized).
    pub(crate) fn optimized(self) -> bool {
        matches!(self, Source::Compiled | Source::Cache)
    }
}

/// The entry at `path`, if there is a usable one.
pub(crate) fn load(engine: &Engine, path: &Path) -> Option<Component> {
    if !path.is_file() {
        return None;
    }
    // SAFETY: as in `load_or_compile_at`: only this module writes there.
    match unsafe { Component::deserialize_file(engine, path) } {
        Ok(component) => {
            touch(path);
            Some(component)
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "unusable plugin cache entry; recompiling");
            None
        }
    }
}

/// Loads the component from the cache directory when it holds it, otherwise
/// compiles it and stores the artifact (a failure to store is only logged).
pub(crate) fn load_or_compile(
    engine: &Engine,
    dir: Option<&Path>,
    wasm: &[u8],
) -> anyhow::Result<(Component, Source)> {
    match dir {
        Some(dir) => load_or_compile_at(engine, &cache_path(dir, engine, wasm), wasm),
        None => Ok((Component::new(engine, wasm)?, Source::Compiled)),
    }
}

/// [`load_or_compile`] with the entry's path already computed.
///
/// Safety of deserializing: `Component::deserialize_file` trusts its input to
/// be wasmtime's own compiled code. Files in the cache are only ever created
/// here, from `Engine::precompile_component`, written to a temporary name and
/// renamed into place so no partial file is visible; the name binds the exact
/// wasm bytes and the engine's compatibility hash, and wasmtime still checks
/// the artifact's header (version, target, flags): an entry it refuses is
/// compiled again and replaced. The directory must not be writable by anyone
/// the server does not trust (`cache_dir.rs` checks the user's cache).
pub(crate) fn load_or_compile_at(
    engine: &Engine,
    path: &Path,
    wasm: &[u8],
) -> anyhow::Result<(Component, Source)> {
    if let Some(component) = load(engine, path) {
        return Ok((component, Source::Cache));
    }
    let artifact = engine.precompile_component(wasm)?;
    if let Err(e) = store(path, &artifact) {
        tracing::warn!(path = %path.display(), error = %e, "cannot write plugin cache entry");
    } else if let Some(component) = load(engine, path) {
        // Mapped from the file: only the code that runs is resident.
        return Ok((component, Source::Compiled));
    }
    // SAFETY: `artifact` was produced just now by this engine.
    let component = unsafe { Component::deserialize(engine, &artifact)? };
    Ok((component, Source::Compiled))
}

/// Writes `artifact` to `path` atomically (temporary file, then rename),
/// then removes the entries nobody loaded for [`UNUSED_FOR`].
fn store(path: &Path, artifact: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    write_in_pages(&tmp, artifact)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    prune(dir, SystemTime::now());
    Ok(())
}

/// Writes `bytes` a page at a time. The page cache keeps a file in the
/// pieces it was written in (ext4 and XFS make one large folio of a large
/// write), and a fault in a mapping of the file maps the whole piece: code
/// written in one `write` was resident as soon as any of it ran (the
/// strategy plugin: 9.7 MiB at ready, 4.0 MiB written by pages, as after a
/// reboot).
fn write_in_pages(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    for page in bytes.chunks(4096) {
        file.write_all(page)?;
    }
    Ok(())
}

/// Marks an entry as used (its modification time), at most once a day.
fn touch(path: &Path) {
    let stale = |m: std::fs::Metadata| {
        m.modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > TOUCH_AFTER)
    };
    if std::fs::metadata(path).is_ok_and(stale) {
        let file = std::fs::File::options().write(true).open(path);
        let _ = file.and_then(|f| f.set_modified(SystemTime::now()));
    }
}

/// Removes entries (and temporary files left by a crash) last used before
/// `now - UNUSED_FOR`.
fn prune(dir: &Path, now: SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e == "cwasm" || e.starts_with("tmp"));
        let modified = entry.metadata().and_then(|m| m.modified());
        let unused =
            modified.is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > UNUSED_FOR));
        if ours && unused {
            tracing::debug!(path = %path.display(), "removing unused plugin cache entry");
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_depends_on_the_bytes_and_the_engine() {
        let engine = Engine::default();
        let dir = Path::new("/cache");
        let one = cache_path(dir, &engine, b"\0asm one");
        assert_eq!(one, cache_path(dir, &engine, b"\0asm one"));
        assert_ne!(one, cache_path(dir, &engine, b"\0asm two"));
        assert!(one.to_string_lossy().ends_with(".cwasm"));
        let mut config = wasmtime::Config::new();
        config.consume_fuel(true);
        let other = Engine::new(&config).unwrap();
        assert_ne!(one, cache_path(dir, &other, b"\0asm one"));
    }

    #[test]
    fn entries_unused_for_a_month_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["old.cwasm", "new.cwasm", "old.tmp42", "notes.txt"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let month_later = SystemTime::now() + UNUSED_FOR + Duration::from_secs(60);
        let new = std::fs::File::options()
            .write(true)
            .open(dir.path().join("new.cwasm"))
            .unwrap();
        new.set_modified(month_later).unwrap();
        prune(dir.path(), month_later);
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["new.cwasm", "notes.txt"]);
    }
}
