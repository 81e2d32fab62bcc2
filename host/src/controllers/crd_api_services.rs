//! kube's CRD registration controller: every group-version a CRD serves
//! gets a local APIService (`v1.example.com`, groupPriorityMinimum 1000,
//! versionPriority 100, automanaged), removed when no CRD serves it any more.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::ApiResult;
use crate::controllers::local_api_services::{ensure, resource};
use crate::registry::{ListQuery, WriteOptions};

const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// The APIService kube registers for a CRD's group-version.
pub fn api_service(group: &str, version: &str) -> Value {
    json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": format!("{version}.{group}"), "labels": {AUTOMANAGED: "true"}},
        "spec": {"group": group, "version": version,
                 "groupPriorityMinimum": 1000, "versionPriority": 100},
    })
}

/// Keeps the APIServices in step with the served CRDs until the server stops.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut changes = state.catalogue.subscribe();
        loop {
            if let Err(e) = sync(&state).await {
                tracing::warn!(error = %e, "registering CRDs' APIServices");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    })
}

async fn sync(state: &AppState) -> ApiResult<()> {
    let res = resource(state)?;
    let wanted: BTreeSet<(String, String)> = state
        .catalogue
        .custom()
        .into_iter()
        .map(|r| (r.group, r.version))
        .collect();
    for (group, version) in &wanted {
        ensure(state, res, api_service(group, version)).await?;
    }
    let listed = state
        .registry
        .list(res, None, &ListQuery::default())
        .await?;
    for stale in listed.items.iter().filter(|s| is_stale(s, &wanted)) {
        let name = meta::name(stale).unwrap_or_default();
        let gone = state
            .registry
            .delete(res, None, name, &json!({}), WriteOptions::default())
            .await;
        match gone {
            Err(e) if e.code != 404 => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// An automanaged CRD APIService whose group-version no CRD serves.
fn is_stale(service: &Value, wanted: &BTreeSet<(String, String)>) -> bool {
    let text = |p: &str| {
        service
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let automanaged = service.pointer(&format!(
        "/metadata/labels/{}",
        AUTOMANAGED.replace('/', "~1")
    ));
    automanaged == Some(&json!("true"))
        && service.pointer("/spec/groupPriorityMinimum") == Some(&json!(1000))
        && !wanted.contains(&(text("/spec/group"), text("/spec/version")))
}
