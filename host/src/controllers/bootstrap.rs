//! What a fresh cluster has from its first start: the system namespaces,
//! the `kubernetes` Service, the system PriorityClasses and the ConfigMaps
//! kube-apiserver publishes in `kube-system`. Safe to run on every start
//! and concurrently.

use crate::api::state::AppState;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::patch::managed_fields::APISERVER;
use crate::registry::WriteOptions;
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
    bootstrap_priority_classes(state).await?;
    bootstrap_system_config_maps(state).await
}

/// The ConfigMaps kube-apiserver writes in `kube-system` at start, which
/// kube-controller-manager, kube-scheduler and aggregated API servers read:
/// `extension-apiserver-authentication` (the CA that client certificates
/// are checked against, for delegated authentication) and the date from
/// which legacy service-account tokens' use is tracked.
pub async fn bootstrap_system_config_maps(state: &AppState) -> ApiResult<()> {
    let config_map = |name: &str, data: serde_json::Value| {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "kube-system"},
            "data": data,
        })
    };
    let since = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let mut objects = vec![config_map(
        "kube-apiserver-legacy-service-account-token-tracking",
        json!({"since": since}),
    )];
    let ca = state
        .pki
        .as_ref()
        .map(|p| std::fs::read_to_string(&p.ca_cert));
    match ca {
        Some(Ok(pem)) => objects.push(config_map(
            "extension-apiserver-authentication",
            json!({"client-ca-file": pem}),
        )),
        Some(Err(e)) => tracing::warn!(error = %e, "cannot read the CA certificate to publish"),
        None => {}
    }
    create_missing_objects(state, objects, "kube-system ConfigMaps", APISERVER).await
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
            .create(res, None, class, as_apiserver(state))
            .await
        {
            Ok(_) => tracing::info!(name, value, "created PriorityClass"),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The `kubernetes` Service in `default`, as every cluster has (10.96.0.1:443),
/// with the fields kube's kubernetesservice controller sets.
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
        "spec": {"clusterIP": "10.96.0.1", "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}], "type": "ClusterIP"},
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

/// Creates those of `objects` that do not exist yet, several at a time (the
/// store commits writes that arrive together with one sync), as
/// kube-apiserver creates its bootstrap objects: restarts and concurrent
/// replicas are safe, and a user's change to one is kept. `what` names them
/// in the log; `manager` is who managedFields record as their writer.
pub async fn create_missing_objects(
    state: &AppState,
    objects: Vec<serde_json::Value>,
    what: &str,
    manager: &str,
) -> ApiResult<()> {
    use futures_util::StreamExt;
    let outcomes: Vec<ApiResult<bool>> = futures_util::stream::iter(objects)
        .map(|obj| create_missing(state, obj, manager))
        .buffer_unordered(BOOTSTRAP_WRITERS)
        .collect()
        .await;
    let mut created = 0;
    for outcome in outcomes {
        created += usize::from(outcome?);
    }
    if created > 0 {
        tracing::info!(created, what, "created bootstrap objects");
    }
    Ok(())
}

/// Bootstrap objects written at once.
const BOOTSTRAP_WRITERS: usize = 16;

/// Creates `obj` (a built-in kind) unless it exists: whether it was created.
async fn create_missing(
    state: &AppState,
    obj: serde_json::Value,
    manager: &str,
) -> ApiResult<bool> {
    let text = |p: &str| {
        obj.pointer(p)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
    };
    let (group, version) = text("/apiVersion")
        .rsplit_once('/')
        .unwrap_or(("", text("/apiVersion")));
    let res = state
        .catalogue
        .builtin()
        .by_kind(group, version, text("/kind"))
        .ok_or_else(|| ApiError::internal(format!("{} is not served", text("/kind"))))?;
    let ns = text("/metadata/namespace");
    let ns = (!ns.is_empty()).then(|| ns.to_string());
    match state
        .registry
        .create(
            res,
            ns.as_deref(),
            obj.clone(),
            super::written_by(state, manager, ""),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// kube-apiserver's own write (recorded under its name in managedFields).
pub fn as_apiserver(state: &AppState) -> WriteOptions<'_> {
    super::written_by(state, APISERVER, "")
}
