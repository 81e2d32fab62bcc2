//! Turning the configured entries into a callable chain: each plugin entry's
//! module is found (`builtin:<name>` embedded in the binary, or a path to a
//! component), compiled once, and wrapped as a transport; errors name the entry.

use super::chain::{CallableEntry, ChainEntry};
use super::config::{EntryConfig, PluginEntry};
use crate::transport::ReviewTransport;
use crate::wasm::{embedded, Limits, ObjectReader, PluginKind, PluginRuntime, WasmTransport};
use std::sync::Arc;

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
        transport: Arc::new(transport) as Arc<dyn ReviewTransport>,
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
