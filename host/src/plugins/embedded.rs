//! The plugins built into the `capstan` binary: every `*.wasm` component
//! that `host/build.rs` built from the `plugins/` workspace (built-ins and
//! the sandbox test plugins), by name (crate name, e.g. "sandbox-echo").

// Defines `BUILTINS: &[(&str, &[u8])]`, sorted by name.
include!(concat!(env!("OUT_DIR"), "/embedded_plugins.rs"));

/// The component of the built-in plugin `name`.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, wasm)| *wasm)
}

/// Names of all built-in plugins, sorted.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(name, _)| *name).collect()
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
