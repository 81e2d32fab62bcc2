//! The `kube-root-ca.crt` ConfigMap in every namespace (kube-controller-manager's
//! root-ca-cert-publisher): `data.ca.crt` is the CA of the data directory's
//! pki, with kube's description annotation; recreated when deleted and put
//! back when changed. Pods' projected service-account volumes reference it.

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::registry::{decode, keys};
use crate::storage::{EventKind, RangeRequest, StorageError};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

pub const CONFIGMAP_NAME: &str = "kube-root-ca.crt";
const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Runs the publisher until the server stops; restarts on errors. Without a
/// CA (a state built without pki) there is nothing to publish.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match ca_pem(&state) {
                Some(ca) => {
                    if let Err(e) = run(&state, &ca).await {
                        tracing::warn!(error = %e, "root CA publisher restarting");
                    }
                }
                None => return,
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

fn ca_pem(state: &AppState) -> Option<String> {
    let paths = state.pki.as_ref()?;
    match std::fs::read_to_string(&paths.ca_cert) {
        Ok(pem) => Some(pem),
        Err(e) => {
            tracing::warn!(error = %e, "root CA publisher: cannot read the CA certificate");
            None
        }
    }
}

/// The ConfigMap as the publisher wants it in `namespace`.
pub fn desired(namespace: &str, ca: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIGMAP_NAME,
            "namespace": namespace,
            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
        },
        "data": {"ca.crt": ca},
    })
}

/// True when `cm` already carries the CA and the description annotation.
pub fn up_to_date(cm: &Value, ca: &str) -> bool {
    let annotated = cm
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    annotated && cm.get("data") == Some(&json!({"ca.crt": ca}))
}

/// `cm` with the CA as its only data and the annotation set, other metadata kept.
fn corrected(mut cm: Value, ca: &str) -> Value {
    cm["data"] = json!({"ca.crt": ca});
    let m = meta::metadata_mut(&mut cm);
    let annotations = m.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
    cm
}

/// Whether `namespace` exists and is not being deleted (server-internal
/// writes pass no admission, so the lifecycle check is made here).
async fn is_active(state: &AppState, namespace: &str) -> ApiResult<bool> {
    let res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not served"))?;
    match state.registry.get(res, None, namespace).await {
        Ok(ns) => Ok(!meta::is_terminating(&ns)),
        Err(e) if e.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Creates or corrects the ConfigMap in one namespace, if it is active.
async fn sync(state: &AppState, namespace: &str, ca: &str) -> ApiResult<()> {
    if !is_active(state, namespace).await? {
        return Ok(());
    }
    let res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "configmaps")
        .ok_or_else(|| ApiError::internal("configmaps are not served"))?;
    let existing = match state
        .registry
        .get(res, Some(namespace), CONFIGMAP_NAME)
        .await
    {
        Ok(cm) => cm,
        Err(e) if e.code == 404 => {
            let cm = desired(namespace, ca);
            return match state
                .registry
                .create(
                    res,
                    Some(namespace),
                    cm,
                    super::as_controller_manager(state),
                )
                .await
            {
                // The namespace is gone or terminating, or someone was faster.
                Err(e) if matches!(e.code, 404 | 403 | 409) => Ok(()),
                other => other.map(|_| ()),
            };
        }
        Err(e) => return Err(e),
    };
    if up_to_date(&existing, ca) {
        return Ok(());
    }
    let change = |current: Value| Ok(corrected(current, ca));
    match state
        .registry
        .guaranteed_update(
            res,
            Some(namespace),
            CONFIGMAP_NAME,
            super::as_controller_manager(state),
            &change,
        )
        .await
    {
        Err(e) if e.code == 404 => Ok(()),
        other => other.map(|_| ()),
    }
}

/// One pass over every namespace, then namespaces' and the ConfigMaps' changes.
async fn run(state: &AppState, ca: &str) -> ApiResult<()> {
    let internal = |e: StorageError| ApiError::internal(e.to_string());
    let ns_res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not served"))?;
    let cm_res = state
        .catalogue
        .builtin()
        .lookup("", "v1", "configmaps")
        .ok_or_else(|| ApiError::internal("configmaps are not served"))?;
    let ns_prefix = keys::prefix(ns_res, None);
    let cm_prefix = keys::prefix(cm_res, None);
    let page = state
        .storage
        .range(RangeRequest {
            prefix: &ns_prefix,
            start_after: None,
            limit: None,
            revision: None,
        })
        .await
        .map_err(internal)?;
    let namespaces = state
        .storage
        .watch(&ns_prefix, page.revision)
        .await
        .map_err(internal)?;
    let configmaps = state
        .storage
        .watch(&cm_prefix, page.revision)
        .await
        .map_err(internal)?;
    for kv in &page.kvs {
        sync_namespace(state, &decode(kv)?, ca).await?;
    }
    let mut events = futures_util::stream::select(namespaces, configmaps);
    while let Some(ev) = events.next().await {
        let ev = ev.map_err(internal)?;
        let obj = decode(&ev.kv)?;
        if ev.kv.key.starts_with(&ns_prefix) {
            if ev.kind == EventKind::Put {
                sync_namespace(state, &obj, ca).await?;
            }
        } else if meta::name(&obj) == Some(CONFIGMAP_NAME) {
            let ns = meta::meta_str(&obj, "namespace").unwrap_or_default();
            sync(state, ns, ca).await?;
        }
    }
    Ok(())
}

async fn sync_namespace(state: &AppState, namespace: &Value, ca: &str) -> ApiResult<()> {
    match meta::name(namespace) {
        Some(name) if !meta::is_terminating(namespace) => sync(state, name, ca).await,
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_or_unannotated_configmap_is_corrected_keeping_other_metadata() {
        let ca = "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n";
        let good = desired("ns1", ca);
        assert!(up_to_date(&good, ca));
        let mut tampered = good.clone();
        tampered["data"]["extra"] = json!("1");
        assert!(!up_to_date(&tampered, ca));
        let mut bare = json!({"metadata": {"name": CONFIGMAP_NAME, "labels": {"a": "b"}}, "data": {"ca.crt": ca}});
        assert!(!up_to_date(&bare, ca), "no description annotation");
        bare = corrected(bare, ca);
        assert!(up_to_date(&bare, ca));
        assert_eq!(bare["metadata"]["labels"]["a"], "b");
        assert!(up_to_date(&corrected(tampered, ca), ca));
    }
}
