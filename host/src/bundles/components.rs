//! A bundle's components loaded into the plugin runtime, each as the world
//! its policy declares: the runtime checks the ABI version it imports
//! (`plugins/abi.rs`) and the world it exports, so a component that is not
//! what the manifest says is refused, naming the bundle, the policy, its
//! layer's digest and why.

use super::manifest::BundlePolicy;
use super::Bundle;
use crate::plugins::{Plugin, PluginRuntime};
use anyhow::anyhow;

/// One policy of a bundle, loaded.
pub struct LoadedPolicy<'a> {
    pub policy: &'a BundlePolicy,
    pub plugin: Plugin,
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
    let plugin = runtime
        .load(
            name,
            bundle.component(&policy.module),
            policy.manifest.world,
        )
        .map_err(|e| {
            anyhow!(
                "bundle {}: policy {name} (layer {}): {e:#}",
                bundle.source,
                policy.module
            )
        })?;
    Ok(LoadedPolicy { policy, plugin })
}
