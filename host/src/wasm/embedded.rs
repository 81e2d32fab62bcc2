//! The plugins built into the `capstan` binary: every `*.wasm` component
//! that `host/build.rs` built from the `plugins/` workspace (built-ins and
//! the sandbox test plugins), by name (crate name, e.g. "sandbox-echo"), each
//! with the text of its manifest (`capstan-plugin.json`; every `builtin/*`
//! plugin has one, read by `manifest.rs`).

/// One built-in plugin.
struct Builtin {
    /// The crate's name.
    name: &'static str,
    /// The component.
    wasm: &'static [u8],
    /// Where `capstan-plugin.json` is in [`MANIFESTS`], when the plugin has one.
    manifest: Option<std::ops::Range<usize>>,
    /// The component's SHA-256, computed at build time.
    sha256: [u8; 32],
}

// Defines `BUILTINS: &[Builtin]`, sorted by name.
include!(concat!(env!("OUT_DIR"), "/embedded_plugins.rs"));

/// Every built-in's manifest, one after another.
static MANIFESTS: &str = include_str!(concat!(env!("OUT_DIR"), "/plugin_manifests.json"));

/// The component of the built-in plugin `name`.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    BUILTINS
        .iter()
        .find(|builtin| builtin.name == name)
        .map(|builtin| builtin.wasm)
}

/// The manifest text of the built-in plugin `name`, when it has one.
pub fn manifest_text(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|builtin| builtin.name == name)
        .and_then(|builtin| MANIFESTS.get(builtin.manifest.clone()?))
}

/// Names of all built-in plugins, sorted.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|builtin| builtin.name).collect()
}

/// The SHA-256 of `wasm` when it is a built-in plugin's component (the very
/// slice [`builtin`] returned), computed when the binary was built: finding
/// its compiled form in the cache then reads none of its bytes beyond the
/// header.
pub fn digest_of(wasm: &[u8]) -> Option<[u8; 32]> {
    by_slice(wasm).map(|builtin| builtin.sha256)
}

/// The name of the built-in whose component is the very slice `wasm`.
pub fn name_of(wasm: &[u8]) -> Option<&'static str> {
    by_slice(wasm).map(|builtin| builtin.name)
}

/// `wasm` as the binary's own bytes when it is a built-in plugin's component
/// (the very slice [`builtin`] returned).
pub fn as_builtin(wasm: &[u8]) -> Option<&'static [u8]> {
    by_slice(wasm).map(|builtin| builtin.wasm)
}

/// The built-in whose component is the very slice `wasm`.
fn by_slice(wasm: &[u8]) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|builtin| std::ptr::eq(builtin.wasm, wasm))
}

/// The bytes of a module reference (`builtin:<name>` or a file path).
pub fn module_bytes(module: &str) -> Result<std::borrow::Cow<'static, [u8]>, String> {
    match module.strip_prefix("builtin:") {
        Some(name) => builtin(name)
            .map(std::borrow::Cow::Borrowed)
            .ok_or_else(|| {
                format!(
                    "unknown module {module:?} (built-in plugins: {})",
                    public_builtins().join(", ")
                )
            }),
        None => std::fs::read(module)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| format!("cannot read module {module:?}: {e}")),
    }
}

/// Built-in plugins users may list (the sandbox test plugins are left out).
pub fn public_builtins() -> Vec<&'static str> {
    builtin_names()
        .into_iter()
        .filter(|n| !n.starts_with("sandbox-"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_a_component() {
        for name in builtin_names() {
            let wasm = builtin(name).unwrap();
            assert_eq!(
                &wasm[..8],
                b"\0asm\x0d\0\x01\0",
                "{name} is not a component"
            );
        }
        assert!(builtin("no-such-plugin").is_none());
    }

    #[test]
    fn the_digests_made_at_build_time_are_the_components_sha256() {
        for name in builtin_names() {
            let wasm = builtin(name).unwrap();
            let digest = ring::digest::digest(&ring::digest::SHA256, wasm);
            let copy = wasm.to_vec();
            assert_eq!(
                digest_of(wasm).as_ref().map(|d| &d[..]),
                Some(digest.as_ref()),
                "{name}"
            );
            assert_eq!(
                digest_of(copy.as_slice()),
                None,
                "a copy is not the built-in"
            );
        }
    }
}
