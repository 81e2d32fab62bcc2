//! The `conversion:` section of the server's configuration file (the file
//! that lists the admission chain): the converter plugins CRDs may name.
//!
//! ```yaml
//! conversion:
//! - name: widgets
//!   module: ./convert_widgets.wasm   # or builtin:<name>
//!   timeoutMs: 300                   # per call (default 300)
//!   memoryMib: 64                    # per instance (default 64)
//!   fuel: 50000000                   # optional instruction budget per call
//!   config: {}                       # handed to the plugin as JSON
//! ```

use crate::wasm::Limits;
use crate::wasm::DEFAULT_MEMORY_MIB;
use crate::wasm::DEFAULT_TIMEOUT;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// One converter plugin as written in the file.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawEntry {
    name: String,
    module: String,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    memory_mib: Option<u64>,
    #[serde(default)]
    fuel: Option<u64>,
    #[serde(default)]
    config: Option<Value>,
}

/// A checked converter plugin entry.
#[derive(Clone, Debug)]
pub struct ConverterEntry {
    /// What a CRD's `conversion.capstan.dev/plugin` annotation names.
    pub name: String,
    /// `builtin:<name>` or a path to a component.
    pub module: String,
    pub limits: Limits,
    /// The plugin's configuration as JSON text ("{}" when none).
    pub config: String,
}

/// Checks the entries; errors name the entry (`conversion[1] (widgets): ...`).
pub fn parse_entries(values: &[Value]) -> Result<Vec<ConverterEntry>, String> {
    let mut entries: Vec<ConverterEntry> = Vec::with_capacity(values.len());
    for (i, value) in values.iter().enumerate() {
        let label = match value.get("name").and_then(Value::as_str) {
            Some(name) => format!("conversion[{i}] ({name})"),
            None => format!("conversion[{i}]"),
        };
        let raw: RawEntry =
            serde_json::from_value(value.clone()).map_err(|e| format!("{label}: {e}"))?;
        if raw.name.trim().is_empty() {
            return Err(format!("{label}: name must not be empty"));
        }
        if entries.iter().any(|e| e.name == raw.name) {
            return Err(format!("{label}: name is listed twice"));
        }
        entries.push(checked(raw));
    }
    Ok(entries)
}

fn checked(raw: RawEntry) -> ConverterEntry {
    let memory_mib = raw.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
    ConverterEntry {
        name: raw.name,
        module: raw.module,
        limits: Limits {
            timeout: raw
                .timeout_ms
                .map(Duration::from_millis)
                .unwrap_or(DEFAULT_TIMEOUT),
            memory_bytes: usize::try_from(memory_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
            fuel: raw.fuel,
        },
        config: raw
            .config
            .unwrap_or(Value::Object(Default::default()))
            .to_string(),
    }
}
