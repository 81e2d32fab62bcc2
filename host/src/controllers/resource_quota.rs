//! ResourceQuota status (kube-controller-manager's resource quota
//! controller): every quota's `status.hard` mirrors `spec.hard` and
//! `status.used` is recounted, with the same evaluators the resource-quota
//! admission plugin uses (`plugins/lib/quota`), whenever something in its
//! namespace changes.

use crate::api::state::AppState;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::ListQuery;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long writes are collected before their namespaces are recounted.
const SETTLE: Duration = Duration::from_millis(100);

/// Runs the controller until the server stops; restarts on errors.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(&state).await {
                tracing::warn!(error = %e, "resource quota controller restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

fn quotas(state: &AppState) -> ApiResult<&ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup("", "v1", "resourcequotas")
        .ok_or_else(|| ApiError::internal("resourcequotas are not served"))
}

/// Recounts every namespace with quotas, then the namespaces of each write.
async fn run(state: &AppState) -> ApiResult<()> {
    let internal = |e: crate::storage::StorageError| ApiError::internal(e.to_string());
    let revision = state.storage.current_revision().await.map_err(internal)?;
    let mut events = state
        .storage
        .watch("/registry/", revision)
        .await
        .map_err(internal)?;
    let all = state
        .registry
        .list(quotas(state)?, None, &ListQuery::default())
        .await?;
    let namespaces: BTreeSet<String> = all.items.iter().filter_map(namespace_of).collect();
    for ns in &namespaces {
        recount(state, ns).await?;
    }
    while let Some(first) = events.next().await {
        let mut dirty = BTreeSet::new();
        dirty.extend(key_namespace(&first.map_err(internal)?.kv.key));
        let deadline = tokio::time::sleep(SETTLE);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                _ = &mut deadline => break,
                ev = events.next() => match ev {
                    Some(ev) => dirty.extend(key_namespace(&ev.map_err(internal)?.kv.key)),
                    None => break,
                },
            }
        }
        for ns in &dirty {
            recount(state, ns).await?;
        }
    }
    Ok(())
}

fn namespace_of(obj: &Value) -> Option<String> {
    obj.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(String::from)
}

/// The namespace of a namespaced object's key (`/registry/<group>/<resource>/<ns>/<name>`).
fn key_namespace(key: &str) -> Option<String> {
    let parts: Vec<&str> = key.split('/').collect();
    match parts.as_slice() {
        ["", "registry", _, _, ns, _] => Some(ns.to_string()),
        _ => None,
    }
}

/// Brings the status of every quota in `ns` up to date.
async fn recount(state: &AppState, ns: &str) -> ApiResult<()> {
    let res = quotas(state)?;
    let page = state
        .registry
        .list(res, Some(ns), &ListQuery::default())
        .await?;
    for quota in &page.items {
        let status = json!({"hard": quota.pointer("/spec/hard").cloned().unwrap_or(json!({})),
                            "used": used(state, ns, quota).await?});
        if quota.get("status") == Some(&status) {
            continue;
        }
        let name = quota
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let set_status = |mut q: Value| {
            q["status"] = status.clone();
            Ok(q)
        };
        let write = state.registry.guaranteed_update(
            res,
            Some(ns),
            name,
            super::written_by(state, super::CONTROLLER_MANAGER, "status"),
            &set_status,
        );
        match write.await {
            Ok(_) => tracing::debug!(namespace = ns, quota = name, "quota status updated"),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `status.used` of `quota`: its tracked resources listed and evaluated.
async fn used(state: &AppState, ns: &str, quota: &Value) -> ApiResult<Value> {
    let mut objects: Vec<(String, Value)> = Vec::new();
    for gr in capstan_quota::resources_to_list(quota) {
        let Some(res) = served(state, &gr.group, &gr.resource) else {
            continue;
        };
        let page = state
            .registry
            .list(&res, Some(ns), &ListQuery::default())
            .await?;
        let key = gr.to_string();
        objects.extend(page.items.into_iter().map(|o| (key.clone(), o)));
    }
    let pairs: Vec<(&str, &Value)> = objects.iter().map(|(k, o)| (k.as_str(), o)).collect();
    Ok(json!(capstan_quota::usage(quota, &pairs)))
}

/// The served resource of that group and plural, in any version.
fn served(state: &AppState, group: &str, plural: &str) -> Option<ResourceInfo> {
    state
        .catalogue
        .get()
        .resources()
        .iter()
        .find(|r| r.group == group && r.plural == plural && r.namespaced)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_come_from_namespaced_keys_only() {
        assert_eq!(
            key_namespace("/registry/core/pods/dev/p").as_deref(),
            Some("dev")
        );
        assert_eq!(key_namespace("/registry/core/namespaces/dev"), None);
        assert_eq!(key_namespace("/registry/apps/deployments/a/b/c"), None);
    }
}
