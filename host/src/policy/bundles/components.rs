//! A bundle's policies loaded: components into the plugin runtime, each as
//! the world its policy declares (the runtime checks the ABI version it
//! imports, `wasm/abi.rs`, and the world it exports, so a component
//! that is not what the manifest says is refused), and admission policy
//! layers compiled (`admission_policies.rs`). Errors name the bundle, the
//! policy, its layer's digest and why.

use std::sync::Arc;

use super::admission_policies::{self, Bundled};
use super::manifest::{BundlePolicy, PolicyKind};
use super::Bundle;
use crate::wasm::{Plugin, PluginRuntime};
use anyhow::anyhow;

/// One policy of a bundle, loaded.
pub struct LoadedPolicy<'a> {
    pub policy: &'a BundlePolicy,
    pub runs: Runs,
}

/// What runs a policy.
pub enum Runs {
    Plugin(Plugin),
    AdmissionPolicy(Arc<Bundled>),
}

/// Every policy of `bundle`, in the manifest's order.
pub fn load_all<'a>(
    runtime: &PluginRuntime,
    bundle: &'a Bundle,
) -> anyhow::Result<Vec<LoadedPolicy<'a>>> {
    bundle
        .manifest
        .policies
        .iter()
        .map(|policy| load_one(runtime, bundle, policy))
        .collect()
}

fn load_one<'a>(
    runtime: &PluginRuntime,
    bundle: &Bundle,
    policy: &'a BundlePolicy,
) -> anyhow::Result<LoadedPolicy<'a>> {
    let name = &policy.manifest.name;
    let layer = bundle.component(&policy.module);
    let runs = match policy.kind {
        PolicyKind::Component => runtime
            .load(name, layer, policy.manifest.world)
            .map(Runs::Plugin)
            .map_err(|e| format!("{e:#}")),
        PolicyKind::AdmissionPolicy => {
            admission_policies::parse_layer(layer).map(|b| Runs::AdmissionPolicy(Arc::new(b)))
        }
    };
    let runs = runs.map_err(|e| {
        anyhow!(
            "bundle {}: policy {name} (layer {}): {e}",
            bundle.source,
            policy.module
        )
    })?;
    Ok(LoadedPolicy { policy, runs })
}
