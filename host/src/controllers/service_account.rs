//! Every namespace gets its `default` ServiceAccount as soon as it exists
//! (kube-controller-manager's service account controller), so pods admitted
//! by the ServiceAccount plugin find one.

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::registry::{decode, keys, WriteOptions};
use crate::storage::EventKind;
use futures_util::StreamExt;
use serde_json::json;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// Creates `default` in `namespace` unless it exists or the namespace is terminating.
async fn ensure_default(state: &AppState, namespace: &str) -> ApiResult<()> {
    let res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "serviceaccounts")
        .ok_or_else(|| ApiError::internal("serviceaccounts are not served"))?;
    if state
        .registry
        .get(res, Some(namespace), "default")
        .await
        .is_ok()
    {
        return Ok(());
    }
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": namespace}});
    match state
        .registry
        .create(res, Some(namespace), sa, WriteOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 || e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// One pass over every namespace, then a watch for new ones; restarts on errors.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    super::restarting("service account controller", state, |s| async move {
        run(&s).await
    })
}

async fn run(state: &AppState) -> ApiResult<()> {
    let ns_res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not served"))?;
    let prefix = keys::prefix(ns_res, None);
    let (kvs, mut events) = super::list_and_watch(state, &prefix).await?;
    for kv in &kvs {
        reconcile(state, &decode(kv)?).await?;
    }
    while let Some(ev) = events.next().await {
        let ev = ev.map_err(|e| ApiError::internal(e.to_string()))?;
        if ev.kind == EventKind::Put {
            reconcile(state, &decode(&ev.kv)?).await?;
        }
    }
    Ok(())
}

async fn reconcile(state: &AppState, namespace: &serde_json::Value) -> ApiResult<()> {
    match meta::name(namespace) {
        Some(name) if !meta::is_terminating(namespace) => ensure_default(state, name).await,
        _ => Ok(()),
    }
}
