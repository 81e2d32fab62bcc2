//! Who is asking, and may they: the authentication chain (credentials →
//! user), impersonation, and the authorization chain (user + attributes →
//! allow / deny / no opinion), each an ordered list of Wasm plugins or HTTPS
//! webhooks from the configuration. The review APIs over them are in
//! `api/handlers/reviews.rs`.

pub mod attributes;
pub mod authenticate;
pub mod authorize;
pub mod config;
pub mod impersonate;
pub mod metrics;
pub mod service_account;
mod transport;

use crate::transport::https::HttpsWebhook;
use crate::transport::ReviewTransport;
use crate::wasm::embedded::module_bytes;
use crate::wasm::WasmTransport;
use crate::wasm::{Limits, ObjectReader, PluginKind, PluginRuntime};
use authenticate::Authenticator;
use authorize::Authorizer;
use config::{AuthConfig, AuthEntry, Source};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use transport::Entry;

pub use attributes::Attributes;

/// Both chains of a server.
pub struct Auth {
    pub authenticator: Authenticator,
    pub authorizer: Authorizer,
}

impl Auth {
    /// No authenticators and no authorizers: only system:masters passes
    /// (until `serve` installs the configured chains).
    pub fn closed() -> Self {
        Auth {
            authenticator: Authenticator::new(vec![], false, vec![]),
            authorizer: Authorizer::new(vec![]),
        }
    }
}

/// What the host adds to a built-in plugin's configuration (e.g. the
/// service-account token key), by module name; the file's keys win.
pub type Injected = HashMap<String, Value>;

/// Loads every entry of both chains; errors name the entry.
pub fn build(
    config: &AuthConfig,
    runtime: &PluginRuntime,
    reader: Arc<dyn ObjectReader>,
    injected: &Injected,
    audiences: Vec<String>,
) -> Result<Auth, String> {
    let load = |section: &str, kind, list: &[AuthEntry]| -> Result<Vec<Entry>, String> {
        list.iter()
            .enumerate()
            .map(|(i, e)| {
                let label = format!("{section}[{i}] ({})", e.name);
                entry(e, kind, runtime, &reader, injected).map_err(|why| format!("{label}: {why}"))
            })
            .collect()
    };
    Ok(Auth {
        authenticator: Authenticator::new(
            load(
                "authentication",
                PluginKind::Authenticator,
                &config.authenticators,
            )?,
            config.anonymous,
            audiences,
        ),
        authorizer: Authorizer::new(load(
            "authorization",
            PluginKind::Authorizer,
            &config.authorizers,
        )?),
    })
}

fn entry(
    e: &AuthEntry,
    kind: PluginKind,
    runtime: &PluginRuntime,
    reader: &Arc<dyn ObjectReader>,
    injected: &Injected,
) -> Result<Entry, String> {
    let transport: Arc<dyn ReviewTransport> = match &e.source {
        Source::Webhook { url, ca_bundle } => Arc::new(HttpsWebhook {
            url: Ok(url.clone()),
            ca_bundle: ca_bundle.clone(),
            timeout: e.timeout,
        }),
        Source::Module { module, config } => {
            let bytes = module_bytes(module)?;
            let plugin = runtime
                .load(&e.name, &bytes, kind)
                .map_err(|why| format!("{why:#}"))?;
            Arc::new(WasmTransport {
                plugin,
                config: with_injected(config, injected.get(module)).to_string(),
                reader: reader.clone(),
                limits: Limits {
                    timeout: e.timeout,
                    memory_bytes: e.memory_bytes,
                    fuel: None,
                },
            })
        }
    };
    Ok(Entry {
        name: e.name.clone(),
        transport,
    })
}

/// `config` with the host's keys added where the file left them out.
fn with_injected(config: &Value, injected: Option<&Value>) -> Value {
    let mut out = config.clone();
    if let (Some(map), Some(Value::Object(extra))) = (out.as_object_mut(), injected) {
        for (k, v) in extra {
            map.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    out
}

/// The module names both chains load (for precompilation).
pub fn modules(config: &AuthConfig) -> Vec<String> {
    config
        .authenticators
        .iter()
        .chain(&config.authorizers)
        .filter_map(|e| match &e.source {
            Source::Module { module, .. } => Some(module.clone()),
            Source::Webhook { .. } => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn injected_keys_fill_gaps_only() {
        let merged = with_injected(
            &json!({"issuer": "mine"}),
            Some(&json!({"issuer": "host", "publicKeys": ["k"]})),
        );
        assert_eq!(merged, json!({"issuer": "mine", "publicKeys": ["k"]}));
    }
}
