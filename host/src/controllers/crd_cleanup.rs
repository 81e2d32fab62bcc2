//! Deleting a CustomResourceDefinition (kube's CRD REST delete and its
//! finalizer controller): the delete marks the CRD Terminating and holds it
//! with the `customresourcecleanup.apiextensions.k8s.io` finalizer; the
//! controller deletes every object of it, then removes the finalizer, and
//! the CRD goes. Until then its resources stay served (no creates).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::registry::{decode, keys, ListQuery, WriteOptions};

use crate::catalogue::ResourceInfo;
use crate::registry::crd_finalizer::{set_terminating, FINALIZER};

/// Runs the finalizer controller until the server stops.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(&state).await {
                tracing::warn!(error = %e, "CRD cleanup controller restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

/// Finalizes every terminating CRD now, then on each change (and every few
/// seconds while objects with finalizers of their own hold one back).
async fn run(state: &AppState) -> ApiResult<()> {
    let prefix = keys::prefix(crate::controllers::crd_names::resource(state)?, None);
    let (kvs, mut events) = crate::controllers::list_and_watch(state, &prefix).await?;
    for kv in &kvs {
        finalize(state, &decode(kv)?).await?;
    }
    let mut retry = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            event = events.next() => match event {
                None => return Ok(()),
                Some(Err(e)) => return Err(ApiError::internal(e.to_string())),
                Some(Ok(ev)) if ev.kind == crate::storage::EventKind::Put => {
                    finalize(state, &decode(&ev.kv)?).await?;
                }
                Some(Ok(_)) => {}
            },
            _ = retry.tick() => {
                for kv in state.registry.read_all(crate::controllers::crd_names::resource(state)?, &prefix).await? {
                    finalize(state, &decode(&kv)?).await?;
                }
            }
        }
    }
}

/// Deletes a terminating CRD's objects; once none remain, releases it.
async fn finalize(state: &AppState, crd: &Value) -> ApiResult<()> {
    if !meta::is_terminating(crd) || !meta::finalizers(crd).iter().any(|f| f == FINALIZER) {
        return Ok(());
    }
    let name = meta::name(crd).unwrap_or_default().to_string();
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let served = state
        .catalogue
        .get()
        .resources()
        .iter()
        .find(|r| r.custom.is_some() && r.group == group && r.plural == plural)
        .cloned();
    let (status, reason, message) = match &served {
        None => (
            "False",
            "NeverEstablished",
            "resource was never established".to_string(),
        ),
        Some(res) => match delete_all(state, res).await? {
            0 => (
                "False",
                "InstanceDeletionCompleted",
                "removed all instances".to_string(),
            ),
            left => {
                let why =
                    format!("could not confirm zero CustomResources remaining: {left} remaining");
                let check =
                    |crd: &mut Value| set_terminating(crd, "True", "InstanceDeletionCheck", &why);
                return update_crd(state, &name, check).await;
            }
        },
    };
    update_crd(state, &name, |crd| {
        set_terminating(crd, status, reason, &message);
        meta::remove_finalizer(crd, FINALIZER);
    })
    .await
}

/// Deletes every object of `res`; how many remain (held by finalizers).
async fn delete_all(state: &AppState, res: &ResourceInfo) -> ApiResult<usize> {
    let page = state
        .registry
        .list(res, None, &ListQuery::default())
        .await?;
    let mut remaining = 0;
    for obj in &page.items {
        remaining += 1;
        if meta::is_terminating(obj) {
            continue;
        }
        let ns = obj.pointer("/metadata/namespace").and_then(Value::as_str);
        let name = meta::name(obj).unwrap_or_default();
        let gone = state
            .registry
            .delete(res, ns, name, &json!({}), WriteOptions::default())
            .await;
        match gone {
            Ok(crate::registry::DeleteOutcome::Deleted(_)) => remaining -= 1,
            Ok(_) => {}
            Err(e) if e.code == 404 => remaining -= 1,
            Err(e) => return Err(e),
        }
    }
    Ok(remaining)
}

/// Writes a change to the stored CRD (removing the last finalizer deletes
/// it); gone or changed meanwhile is not an error.
async fn update_crd(
    state: &AppState,
    name: &str,
    change: impl Fn(&mut Value) + Send + Sync,
) -> ApiResult<()> {
    let apply = |mut crd: Value| {
        change(&mut crd);
        Ok(crd)
    };
    let written = state
        .registry
        .guaranteed_update(
            crate::controllers::crd_names::resource(state)?,
            None,
            name,
            WriteOptions::default(),
            &apply,
        )
        .await;
    match written {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}
