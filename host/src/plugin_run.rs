//! `capstan plugin run`: calls an admission plugin once with an AdmissionReview
//! from a file and prints the answer, so a plugin can be tested in CI without a server.

use crate::admission::assemble::module_bytes;
use crate::cli::PluginRunArgs;
use crate::plugins::store_reader::EmptyReader;
use crate::plugins::{CallContext, Limits, PluginKind, PluginRuntime};
use anyhow::{Context, Result};
use std::sync::Arc;
use std::time::Duration;

/// Returns the plugin's AdmissionReview answer, pretty-printed.
pub async fn run(args: &PluginRunArgs) -> Result<String> {
    let request = std::fs::read_to_string(&args.request)
        .with_context(|| format!("reading {}", args.request.display()))?;
    let review: serde_json::Value =
        serde_json::from_str(&request).context("the request file is not JSON")?;
    if review.get("request").is_none() {
        anyhow::bail!("the request file must hold an AdmissionReview with `request` set");
    }
    serde_json::from_str::<serde_json::Value>(&args.config).context("--config is not JSON")?;
    let bytes = module_bytes(&args.module).map_err(anyhow::Error::msg)?;
    let runtime = PluginRuntime::new(None)?;
    let plugin = runtime.load(&args.module, &bytes, PluginKind::Admission)?;
    let limits = Limits {
        timeout: Duration::from_millis(args.timeout_ms),
        memory_bytes: (args.memory_mib << 20) as usize,
        fuel: None,
    };
    let ctx = CallContext {
        config: args.config.clone(),
        reader: Arc::new(EmptyReader),
        limits,
    };
    let answer = plugin
        .call(&review.to_string(), ctx)
        .await
        .map_err(|f| anyhow::anyhow!("{f}"))?;
    let parsed: serde_json::Value = serde_json::from_str(&answer)
        .with_context(|| format!("the plugin's answer is not JSON: {answer}"))?;
    Ok(serde_json::to_string_pretty(&parsed)?)
}
