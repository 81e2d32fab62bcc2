//! `capstan plugin run`: calls a plugin once with the request from a file
//! (an AdmissionReview for an admission plugin, a TokenReview, a
//! SubjectAccessReview, a strategy call or a ConversionReview for the other
//! worlds) and prints the answer, so a plugin can be tested in CI without a
//! server. It says which world (and ABI) the module implements; a module of
//! an incompatible ABI is refused with both versions named. For a built-in,
//! it also says what the plugin's manifest declares and whether its rules
//! cover the request (in a chain, a request outside them never reaches the
//! plugin).

use crate::admission::manifest;
use crate::admission::review::attributes;
use crate::cli::PluginRunArgs;
use crate::wasm::embedded::module_bytes;
use crate::wasm::offline::call_offline;
use crate::wasm::EmptyReader;
use crate::wasm::{abi, embedded};
use crate::wasm::{Limits, PluginKind, PluginRuntime};
use anyhow::{Context, Result};
use std::sync::Arc;
use std::time::Duration;

/// What a run prints.
pub struct RunOutput {
    /// The plugin's AdmissionReview answer, pretty-printed (stdout).
    pub answer: String,
    /// The world the module implements, and for a built-in its manifest
    /// and whether its rules cover the request (stderr).
    pub declared: String,
}

/// Calls the plugin once.
pub async fn run(args: &PluginRunArgs) -> Result<RunOutput> {
    let request = std::fs::read_to_string(&args.request)
        .with_context(|| format!("reading {}", args.request.display()))?;
    let review: serde_json::Value =
        serde_json::from_str(&request).context("the request file is not JSON")?;
    serde_json::from_str::<serde_json::Value>(&args.config).context("--config is not JSON")?;
    let bytes = module_bytes(&args.module).map_err(anyhow::Error::msg)?;
    let cache = crate::wasm::cache_dir::shared(args.plugin_cache_dir.as_deref());
    let runtime = PluginRuntime::new(cache)?;
    let plugin = runtime.load_any(&args.module, &bytes)?;
    let kind = plugin.kind();
    if kind == PluginKind::Admission && review.get("request").is_none() {
        anyhow::bail!("the request file must hold an AdmissionReview with `request` set");
    }
    let limits = Limits {
        timeout: Duration::from_millis(args.timeout_ms),
        memory_bytes: (args.memory_mib << 20) as usize,
        fuel: None,
    };
    let reader = Arc::new(EmptyReader);
    let parsed = call_offline(&plugin, &review, args.config.clone(), limits, reader).await?;
    let world = format!(
        "{} implements the {} world (capstan:plugin@{}).",
        args.module,
        kind.world(),
        abi::ABI_VERSION
    );
    let declared = declared(&args.module, &review["request"])?;
    Ok(RunOutput {
        answer: serde_json::to_string_pretty(&parsed)?,
        declared: [Some(world), declared]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

/// A built-in's manifest, and whether its rules cover `request`.
fn declared(module: &str, request: &serde_json::Value) -> Result<Option<String>> {
    let Some(name) = module.strip_prefix("builtin:") else {
        return Ok(None);
    };
    let (Some(text), Some(manifest)) = (
        embedded::manifest_text(name),
        manifest::builtin(name).map_err(anyhow::Error::msg)?,
    ) else {
        return Ok(None);
    };
    let reach = match (&manifest.rules, attributes(request)) {
        (None, _) => "\nIts rules: every request.",
        (Some(rules), Some(a)) if rules.iter().any(|r| r.matches(&a)) => {
            "\nIts rules cover this request."
        }
        (Some(_), Some(_)) => {
            "\nIts rules do not cover this request: in a chain, it would not be called."
        }
        (Some(_), None) => "",
    };
    Ok(Some(format!(
        "{module} declares (capstan-plugin.json):\n{}{reach}",
        text.trim_end()
    )))
}
