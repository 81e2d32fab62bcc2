//! One call of a plugin outside a server (`capstan plugin run`, `capstan
//! policy test`): JSON in, the answer parsed.

use super::{CallContext, Limits, ObjectReader, Plugin};
use anyhow::{Context, Result};
use std::sync::Arc;

/// One call of `plugin` with `input`, outside a server (its reads answered
/// by `reader`): the answer, parsed. Also `capstan policy test`'s call.
pub async fn call_offline(
    plugin: &Plugin,
    input: &serde_json::Value,
    config: String,
    limits: Limits,
    reader: Arc<dyn ObjectReader>,
) -> Result<serde_json::Value> {
    let ctx = CallContext {
        config,
        reader,
        limits,
    };
    let answer = plugin
        .call(&input.to_string(), ctx)
        .await
        .map_err(|f| anyhow::anyhow!("{f}"))?;
    serde_json::from_str(&answer)
        .with_context(|| format!("the plugin's answer is not JSON: {answer}"))
}
