//! The plugins built into the `capstan` binary: every `*.wasm` component
//! that `host/build.rs` built from the `plugins/` workspace (built-ins and
//! the sandbox test plugins), by name (crate name, e.g. "sandbox-echo"), each
//! with the text of its manifest (`capstan-plugin.json`; every `builtin/*`
//! plugin has one, read by `manifest.rs`).

// Defines `BUILTINS: &[(&str, &[u8], Option<&str>)]`, sorted by name.
include!(concat!(env!("OUT_DIR"), "/embedded_plugins.rs"));

/// The component of the built-in plugin `name`.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    BUILTINS
        .iter()
        .find(|(builtin, _, _)| *builtin == name)
        .map(|(_, wasm, _)| *wasm)
}

/// The manifest text of the built-in plugin `name`, when it has one.
pub fn manifest_text(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|(builtin, _, _)| *builtin == name)
        .and_then(|(_, _, manifest)| *manifest)
}

/// Names of all built-in plugins, sorted.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(name, _, _)| *name).collect()
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
}
