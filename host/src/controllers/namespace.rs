//! The namespace controller's sweeper: terminating namespaces whose content
//! was held by finalizers are finished once it is gone
//! (`api::handlers::namespace` does the deletion itself).

use crate::api::handlers::namespace::{finalize, namespaces};
use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::ApiResult;
use crate::registry::keys;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Retries the removal of terminating namespaces every `every`.
pub fn spawn_sweeper(state: Arc<AppState>, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        loop {
            ticker.tick().await;
            if let Err(e) = sweep(&state).await {
                tracing::warn!(error = %e, "namespace sweep failed");
            }
        }
    })
}

async fn sweep(state: &AppState) -> ApiResult<()> {
    let res = namespaces(state)?;
    let prefix = keys::prefix(res, None);
    let kvs = state.registry.read_all(res, &prefix).await?;
    for kv in kvs {
        let ns = crate::registry::decode(&kv)?;
        if meta::is_terminating(&ns) {
            if let Some(name) = meta::name(&ns) {
                finalize(state, name).await?;
            }
        }
    }
    Ok(())
}
