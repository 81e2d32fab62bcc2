//! Turning the configured entries into a callable chain: each plugin entry's
//! module is found (`builtin:<name>` embedded in the binary, or a path to a
//! component), compiled once, and wrapped as a transport; errors name the entry.

use super::chain::{CallableEntry, ChainEntry};
use super::config::{EntryConfig, PluginEntry};
use super::Transport;
use crate::wasm::{embedded, CallContext, Limits, ObjectReader, Plugin, PluginKind, PluginRuntime};
use futures_util::future::BoxFuture;
use std::sync::Arc;

/// A Wasm admission plugin as a chain transport.
pub struct WasmTransport {
    pub plugin: Plugin,
    pub config: String,
    pub reader: Arc<dyn ObjectReader>,
    pub limits: Limits,
}

impl Transport for WasmTransport {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let ctx = CallContext {
                config: self.config.clone(),
                reader: self.reader.clone(),
                limits: self.limits.clone(),
            };
            self.plugin
                .call(review, ctx)
                .await
                .map_err(|f| f.to_string())
        })
    }
}

fn load(
    runtime: &PluginRuntime,
    index: usize,
    e: &PluginEntry,
    reader: &Arc<dyn ObjectReader>,
) -> Result<CallableEntry, String> {
    let label = format!("admission[{index}] ({})", e.name);
    let bytes = embedded::module_bytes(&e.module).map_err(|why| format!("{label}: {why}"))?;
    let plugin = runtime
        .load(&e.name, &bytes, PluginKind::Admission)
        .map_err(|why| format!("{label}: {why:#}"))?;
    let limits = Limits {
        timeout: e.timeout,
        memory_bytes: e.memory_bytes,
        fuel: e.fuel,
    };
    let transport = WasmTransport {
        plugin,
        config: e.config.clone(),
        reader: reader.clone(),
        limits,
    };
    Ok(CallableEntry {
        config: e.clone(),
        transport: Arc::new(transport) as Arc<dyn Transport>,
        verbatim: e.module.starts_with("builtin:"),
        dry_run_safe: true,
    })
}

/// Loads every entry; the first problem fails the whole chain (and the start).
pub fn assemble(
    entries: &[EntryConfig],
    runtime: &PluginRuntime,
    reader: Arc<dyn ObjectReader>,
) -> Result<Vec<ChainEntry>, String> {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            EntryConfig::Webhooks(phase) => Ok(ChainEntry::Webhooks(*phase)),
            EntryConfig::Policies(phase) => Ok(ChainEntry::Policies(*phase)),
            EntryConfig::AdmissionPolicies(phase) => Ok(ChainEntry::AdmissionPolicies(*phase)),
            EntryConfig::Plugin(p) => {
                load(runtime, i, p, &reader).map(|e| ChainEntry::Plugin(Box::new(e)))
            }
        })
        .collect()
}
