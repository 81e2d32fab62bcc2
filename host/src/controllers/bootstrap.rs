//! What a fresh cluster has from its first start: the system namespaces,
//! the `kubernetes` Service and the system PriorityClasses. Safe to run on
//! every start and concurrently.

use crate::managed_fields::{self, APISERVER};
use crate::registry::WriteOptions;
use crate::state::AppState;
use crate::status::{ApiError, ApiResult};
use serde_json::json;

/// Namespaces that exist from the first start.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the system namespaces that are missing (safe when run concurrently).
pub async fn bootstrap(state: &AppState) -> ApiResult<()> {
    let res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not served"))?;
    for name in SYSTEM_NAMESPACES {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match state
            .registry
            .create(res, None, obj, as_apiserver(state))
            .await
        {
            Ok(_) => tracing::info!(namespace = name, "created system namespace"),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    bootstrap_kubernetes_service(state).await?;
    bootstrap_priority_classes(state).await
}

/// kube's system PriorityClasses (`SystemPriorityClasses`): name, value, description.
const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// Creates the system PriorityClasses that are missing, as kube-apiserver's
/// scheduling storage does at start; existing ones are left as they are.
pub async fn bootstrap_priority_classes(state: &AppState) -> ApiResult<()> {
    let res = state
        .catalogue
        .builtin()
        .lookup("scheduling.k8s.io", "v1", "priorityclasses")
        .ok_or_else(|| ApiError::internal("priorityclasses are not served"))?;
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        if state.registry.get(res, None, name).await.is_ok() {
            continue;
        }
        let class = json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "description": description,
            "preemptionPolicy": "PreemptLowerPriority",
        });
        match state
            .registry
            .create(res, None, class, WriteOptions::default())
            .await
        {
            Ok(_) => tracing::info!(name, value, "created PriorityClass"),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The `kubernetes` Service in `default`, as every cluster has (10.96.0.1:443).
pub async fn bootstrap_kubernetes_service(state: &AppState) -> ApiResult<()> {
    let res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "services")
        .ok_or_else(|| ApiError::internal("services are not served"))?;
    let port = state
        .server_address
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<i64>().ok())
        .unwrap_or(6443);
    let svc = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}], "type": "ClusterIP"},
    });
    if state
        .registry
        .get(res, Some("default"), "kubernetes")
        .await
        .is_ok()
    {
        return Ok(());
    }
    match state
        .registry
        .create(res, Some("default"), svc, as_apiserver(state))
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// kube-apiserver's own write (recorded under its name in managedFields).
pub fn as_apiserver(state: &AppState) -> WriteOptions<'_> {
    WriteOptions {
        tracking: Some(managed_fields::internal(
            APISERVER,
            state.catalogue.builtin(),
        )),
        ..WriteOptions::default()
    }
}
