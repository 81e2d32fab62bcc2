//! `capstan plugin componentize`: turns a core WebAssembly module built for
//! wasm32-wasip1 (C with wasi-libc, Go with `GOOS=wasip1`) into a component
//! of one Capstan world, as `wasm-tools component new --adapt` does, with no
//! tool to install: the world comes from the WIT this binary was built with
//! (plugin-sdk/wit/capstan.wit) unless the module already carries its own
//! component-type section (wit-bindgen's C output does), and the WASI
//! preview1 reactor adapter of the wasmtime release the server runs is
//! embedded in the binary.

use crate::cli::PluginComponentizeArgs;
use crate::wasm::abi::ABI_VERSION;
use anyhow::{Context, Result};
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};
use wit_component::{metadata, ComponentEncoder, StringEncoding};
use wit_parser::Resolve;

/// The one WIT file of the plugin ABI.
pub const CAPSTAN_WIT: &str = include_str!("../../../plugin-sdk/wit/capstan.wit");

/// The worlds a plugin may implement.
const WORLDS: [&str; 5] = [
    "admission",
    "authenticator",
    "authorizer",
    "strategy",
    "converter",
];

/// Componentizes the module of `args` and writes it; answers what to tell the user.
pub fn run(args: &PluginComponentizeArgs) -> Result<String> {
    let module = std::fs::read(&args.module)
        .with_context(|| format!("reading {}", args.module.display()))?;
    let component = componentize(&module, &args.world)
        .with_context(|| format!("componentizing {}", args.module.display()))?;
    std::fs::write(&args.output, &component)
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(format!(
        "{}: a component of the {} world (capstan:plugin@{ABI_VERSION}), {} KiB",
        args.output.display(),
        args.world,
        component.len().div_ceil(1024)
    ))
}

/// A component of `world` from a core module.
pub fn componentize(module: &[u8], world: &str) -> Result<Vec<u8>> {
    if !WORLDS.contains(&world) {
        anyhow::bail!("unknown world {world:?}: one of {}", WORLDS.join(", "));
    }
    if wasmparser_is_component(module) {
        anyhow::bail!("the module is already a component: load it as it is");
    }
    let module = with_world(module, world)?;
    ComponentEncoder::default()
        .validate(true)
        .module(&module)?
        .adapter(
            WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )?
        .encode()
}

/// The module with `world`'s type information embedded, unless it has its own.
fn with_world(module: &[u8], world: &str) -> Result<Vec<u8>> {
    let (stripped, _) = metadata::decode(module).context("not a WebAssembly module")?;
    if stripped.is_some() {
        return Ok(module.to_vec());
    }
    let mut resolve = Resolve::default();
    let package = resolve.push_str("capstan.wit", CAPSTAN_WIT)?;
    let world = resolve.select_world(&[package], Some(world))?;
    let mut module = module.to_vec();
    wit_component::embed_component_metadata(&mut module, &resolve, world, StringEncoding::UTF8)?;
    Ok(module)
}

/// Whether `bytes` is a component rather than a core module (its preamble's layer).
fn wasmparser_is_component(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[6..8] == [1, 0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wasm::EmptyReader;
    use crate::wasm::{CallContext, Limits, PluginKind, PluginRuntime};
    use std::sync::Arc;

    /// A core module whose `review` answers `ok(<its input>)` in the
    /// canonical ABI's lowered form (input: pointer and length; answer: a
    /// pointer to a return area holding the result's case, pointer and
    /// length), plus the memory and realloc a component needs.
    const ECHO: &str = r#"(module
        (memory (export "memory") 1)
        (global $next (mut i32) (i32.const 1024))
        (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
            (local $p i32)
            (local.set $p (global.get $next))
            (global.set $next (i32.add (global.get $next) (local.get 3)))
            (local.get $p))
        (func (export "review") (param $p i32) (param $n i32) (result i32)
            (i32.store8 (i32.const 16) (i32.const 0))
            (i32.store (i32.const 20) (local.get $p))
            (i32.store (i32.const 24) (local.get $n))
            (i32.const 16)))"#;

    #[tokio::test]
    async fn a_core_module_becomes_a_component_of_the_world() {
        let module = wat::parse_str(ECHO).unwrap();
        let component = componentize(&module, "admission").unwrap();
        let runtime = PluginRuntime::new(None).unwrap();
        let plugin = runtime.load_any("echo", &component).unwrap();
        assert_eq!(plugin.kind(), PluginKind::Admission);
        let ctx = CallContext {
            config: "{}".into(),
            reader: Arc::new(EmptyReader),
            limits: Limits {
                timeout: std::time::Duration::from_secs(5),
                memory_bytes: 16 << 20,
                fuel: None,
            },
        };
        let answer = plugin.call(r#"{"request":{}}"#, ctx).await.unwrap();
        assert_eq!(answer, r#"{"request":{}}"#);
    }

    #[test]
    fn a_module_for_another_world_is_refused_naming_what_is_missing() {
        let module = wat::parse_str(ECHO).unwrap();
        let err = format!("{:#}", componentize(&module, "authorizer").unwrap_err());
        assert!(err.contains("authorize"), "{err}");
    }

    #[test]
    fn a_component_or_an_unknown_world_is_refused() {
        let component = [0, b'a', b's', b'm', 0x0d, 0, 1, 0];
        let err = componentize(&component, "admission").unwrap_err();
        assert!(err.to_string().contains("already a component"), "{err}");
        let err = componentize(b"\0asm\x01\0\0\0", "mutator").unwrap_err();
        assert!(
            err.to_string().contains("unknown world \"mutator\""),
            "{err}"
        );
    }
}
