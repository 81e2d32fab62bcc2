//! The plugins built into the `capstan` binary: every `*.wasm` component
//! that `host/build.rs` built from the `plugins/` workspace (built-ins and
//! the sandbox test plugins), by name (crate name, e.g. "sandbox-echo"), each
//! with the text of its manifest (`capstan-plugin.json`; every `builtin/*`
//! plugin has one, read by `manifest.rs`).

// Defines `BUILTINS: &[(&str, &[u8], Option<&str>, [u8; 32])]`, sorted by name.
include!(concat!(env!("OUT_DIR"), "/embedded_plugins.rs"));

/// The component of the built-in plugin `name`.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    BUILTINS
        .iter()
        .find(|(builtin, ..)| *builtin == name)
        .map(|(_, wasm, ..)| *wasm)
}

/// The manifest text of the built-in plugin `name`, when it has one.
pub fn manifest_text(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|(builtin, ..)| *builtin == name)
        .and_then(|(_, _, manifest, _)| *manifest)
}

/// Names of all built-in plugins, sorted.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(name, ..)| *name).collect()
}

/// The SHA-256 of `wasm` when it is a built-in plugin's component (the very
/// slice [`builtin`] returned), computed when the binary was built: finding
/// its compiled form in the cache then reads none of its bytes.
pub fn digest_of(wasm: &[u8]) -> Option<[u8; 32]> {
    BUILTINS
        .iter()
        .find(|(_, builtin, ..)| std::ptr::eq(*builtin, wasm))
        .map(|(.., digest)| *digest)
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
            assert_eq!(
                digest_of(wasm).as_ref().map(|d| &d[..]),
                Some(digest.as_ref()),
                "{name}"
            );
            assert_eq!(
                digest_of(&wasm.to_vec()),
                None,
                "a copy is not the built-in"
            );
        }
    }
}
