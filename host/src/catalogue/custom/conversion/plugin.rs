//! Converter plugins (the `converter` world): loaded once from the
//! configuration's `conversion:` entries, named by a CRD's annotation
//! `conversion.capstan.dev/plugin` (with `spec.conversion.strategy: None`,
//! the only other strategy kube's CRD validation allows besides Webhook).

use super::config::ConverterEntry;
use crate::wasm::embedded::module_bytes;
use crate::wasm::{ObjectReader, PluginKind, PluginRuntime, WasmTransport};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The annotation by which a CRD picks a configured converter plugin.
pub const PLUGIN_ANNOTATION: &str = "conversion.capstan.dev/plugin";

/// Everything a CRD's converter may need from the server: the loaded
/// converter plugins and where webhook services are reached.
#[derive(Clone, Default)]
pub struct ConversionSetup {
    pub plugins: ConverterPlugins,
    /// `namespace/name` of a Service → base URL (the configuration's `webhookServices`).
    pub webhook_services: HashMap<String, String>,
}

impl ConversionSetup {
    /// Loads the converter plugins the configuration lists; the first that
    /// cannot be loaded fails (and so the start), naming its entry.
    pub fn load(
        entries: &[ConverterEntry],
        webhook_services: &HashMap<String, String>,
        runtime: &PluginRuntime,
        reader: Arc<dyn ObjectReader>,
    ) -> Result<ConversionSetup, String> {
        Ok(ConversionSetup {
            plugins: ConverterPlugins::load(entries, runtime, reader)?,
            webhook_services: webhook_services.clone(),
        })
    }
}

/// The configured converter plugins, by name.
#[derive(Clone, Default)]
pub struct ConverterPlugins {
    by_name: HashMap<String, WasmTransport>,
}

impl ConverterPlugins {
    /// Compiles (or takes from the cache) every entry's component.
    pub fn load(
        entries: &[ConverterEntry],
        runtime: &PluginRuntime,
        reader: Arc<dyn ObjectReader>,
    ) -> Result<ConverterPlugins, String> {
        let mut by_name = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let label = format!("conversion[{i}] ({})", entry.name);
            let bytes = module_bytes(&entry.module).map_err(|why| format!("{label}: {why}"))?;
            let plugin = runtime
                .load(&entry.name, &bytes, PluginKind::Converter)
                .map_err(|why| format!("{label}: {why:#}"))?;
            let loaded = WasmTransport {
                plugin,
                config: entry.config.clone(),
                limits: entry.limits.clone(),
                reader: reader.clone(),
            };
            by_name.insert(entry.name.clone(), loaded);
        }
        Ok(ConverterPlugins { by_name })
    }

    /// The plugin a CRD's annotation names.
    pub(super) fn get(&self, name: &str) -> Result<WasmTransport, String> {
        self.by_name.get(name).cloned().ok_or_else(|| {
            let mut names: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
            names.sort_unstable();
            format!(
                "{PLUGIN_ANNOTATION}: no converter plugin {name:?} is configured (configured: [{}])",
                names.join(", ")
            )
        })
    }
}

/// The plugin a CRD's annotation names, if any.
pub(super) fn annotated(crd: &Value) -> Option<&str> {
    crd.pointer("/metadata/annotations")
        .and_then(|a| a.get(PLUGIN_ANNOTATION))
        .and_then(Value::as_str)
}
