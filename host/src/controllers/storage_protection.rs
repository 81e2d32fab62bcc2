//! kube-controller-manager's pvc-protection and pv-protection controllers:
//! a PersistentVolumeClaim or PersistentVolume being deleted keeps the
//! finalizer the `storage-object-in-use-protection` admission plugin gave it
//! (`kubernetes.io/pvc-protection`, `kubernetes.io/pv-protection`) while it
//! is in use, and loses it (so the delete completes) once it is not: a claim
//! is in use while a pod of its namespace that has not finished mounts it, a
//! volume while it is Bound. Objects still in use are checked again every
//! couple of seconds.

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::{decode, keys};
use crate::storage::{Event, EventKind, KeyValue};
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
const RECHECK: Duration = Duration::from_secs(2);

/// The two kinds of protected object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Claim,
    Volume,
}

impl Kind {
    fn finalizer(self) -> &'static str {
        match self {
            Kind::Claim => PVC_PROTECTION,
            Kind::Volume => PV_PROTECTION,
        }
    }
}

/// Keys of protected objects being deleted and still in use → (kind, object).
type Pending = BTreeMap<String, (Kind, Value)>;

/// Runs until the server stops; restarts after errors.
/// The protection of claims (pvc-protection) and of volumes (pv-protection),
/// each selected on its own as in kube-controller-manager.
#[derive(Clone, Copy, Debug)]
pub struct Protect {
    pub claims: bool,
    pub volumes: bool,
}

impl Protect {
    fn covers(self, kind: Kind) -> bool {
        match kind {
            Kind::Claim => self.claims,
            Kind::Volume => self.volumes,
        }
    }
}

pub fn spawn(state: Arc<AppState>, protect: Protect) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(&state, protect).await {
                tracing::warn!(error = %e, "storage protection controller restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

fn resource(state: &AppState, plural: &str) -> ApiResult<ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup("", "v1", plural)
        .cloned()
        .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
}

async fn run(state: &AppState, protect: Protect) -> ApiResult<()> {
    let claims = keys::prefix(&resource(state, "persistentvolumeclaims")?, None);
    let volumes = keys::prefix(&resource(state, "persistentvolumes")?, None);
    let (claim_kvs, mut claim_events) = super::list_and_watch(state, &claims).await?;
    let (volume_kvs, mut volume_events) = super::list_and_watch(state, &volumes).await?;
    let mut pending = Pending::new();
    let kvs = (claim_kvs.iter().map(|kv| (Kind::Claim, kv)))
        .chain(volume_kvs.iter().map(|kv| (Kind::Volume, kv)));
    for (kind, kv) in kvs.filter(|(kind, _)| protect.covers(*kind)) {
        note(&mut pending, kind, kv)?;
    }
    let mut recheck = tokio::time::interval(RECHECK);
    loop {
        tokio::select! {
            ev = claim_events.next(), if protect.claims => changed(&mut pending, Kind::Claim, ev)?,
            ev = volume_events.next(), if protect.volumes => changed(&mut pending, Kind::Volume, ev)?,
            _ = recheck.tick() => attend(state, &mut pending).await?,
        }
    }
}

type WatchItem = Option<Result<Event, crate::storage::StorageError>>;

fn changed(pending: &mut Pending, kind: Kind, ev: WatchItem) -> ApiResult<()> {
    let ev = ev
        .ok_or_else(|| ApiError::internal("watch ended"))?
        .map_err(|e| ApiError::internal(e.to_string()))?;
    match ev.kind {
        EventKind::Put => note(pending, kind, &ev.kv),
        EventKind::Delete => {
            pending.remove(&ev.kv.key);
            Ok(())
        }
    }
}

/// Remembers the object when it is being deleted and holds its finalizer.
fn note(pending: &mut Pending, kind: Kind, kv: &KeyValue) -> ApiResult<()> {
    let obj = decode(kv)?;
    let held = meta::finalizers(&obj).iter().any(|f| f == kind.finalizer());
    if meta::is_terminating(&obj) && held {
        pending.insert(kv.key.clone(), (kind, obj));
    } else {
        pending.remove(&kv.key);
    }
    Ok(())
}

/// Releases every pending object no longer in use.
async fn attend(state: &AppState, pending: &mut Pending) -> ApiResult<()> {
    let mut released = Vec::new();
    for (key, (kind, obj)) in pending.iter() {
        let in_use = match kind {
            Kind::Claim => claim_in_use(state, obj).await?,
            Kind::Volume => volume_bound(obj),
        };
        if !in_use {
            release(state, *kind, obj).await?;
            released.push(key.clone());
        }
    }
    for key in released {
        pending.remove(&key);
    }
    Ok(())
}

/// kube's pv-protection: a volume is in use while Bound.
fn volume_bound(volume: &Value) -> bool {
    volume.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
}

/// kube's pvc-protection: a claim is in use while a pod of its namespace
/// that has not finished names it (or owns it as a generic ephemeral volume).
async fn claim_in_use(state: &AppState, claim: &Value) -> ApiResult<bool> {
    let (Some(ns), Some(name)) = (meta::meta_str(claim, "namespace"), meta::name(claim)) else {
        return Ok(false);
    };
    let pods = resource(state, "pods")?;
    let kvs = state
        .registry
        .read_all(&pods, &keys::prefix(&pods, Some(ns)))
        .await?;
    for kv in &kvs {
        if pod_uses_claim(&decode(kv)?, name) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn pod_uses_claim(pod: &Value, claim: &str) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return false;
    }
    let pod_name = meta::name(pod).unwrap_or_default();
    let volumes = pod.pointer("/spec/volumes").and_then(Value::as_array);
    volumes.into_iter().flatten().any(|volume| {
        let named = volume
            .pointer("/persistentVolumeClaim/claimName")
            .and_then(Value::as_str);
        let volume_name = volume
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ephemeral = volume.get("ephemeral").is_some_and(|e| !e.is_null())
            && format!("{pod_name}-{volume_name}") == claim;
        named == Some(claim) || ephemeral
    })
}

/// Removes the protection finalizer from this very object (same uid).
async fn release(state: &AppState, kind: Kind, obj: &Value) -> ApiResult<()> {
    let plural = match kind {
        Kind::Claim => "persistentvolumeclaims",
        Kind::Volume => "persistentvolumes",
    };
    let res = resource(state, plural)?;
    let (ns, name) = (meta::meta_str(obj, "namespace"), meta::name(obj));
    let (Some(name), uid) = (name, meta::meta_str(obj, "uid")) else {
        return Ok(());
    };
    let without = |mut current: Value| {
        if meta::meta_str(&current, "uid") != uid {
            return Err(ApiError::not_found(&res.group, &res.plural, name));
        }
        meta::remove_finalizer(&mut current, kind.finalizer());
        Ok(current)
    };
    tracing::info!(kind = ?kind, namespace = ?ns, name, "removing storage protection finalizer");
    let written = state
        .registry
        .guaranteed_update(
            &res,
            ns,
            name,
            super::as_controller_manager(state),
            &without,
        )
        .await;
    match written {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_running_pod_naming_the_claim_uses_it() {
        let pod = |phase: &str, volume: Value| json!({"metadata": {"name": "web"}, "spec": {"volumes": [volume]}, "status": {"phase": phase}});
        let named = json!({"name": "v", "persistentVolumeClaim": {"claimName": "data"}});
        assert!(pod_uses_claim(&pod("Running", named.clone()), "data"));
        assert!(!pod_uses_claim(&pod("Running", named.clone()), "other"));
        assert!(!pod_uses_claim(&pod("Succeeded", named), "data"));
        let ephemeral = json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}});
        assert!(pod_uses_claim(&pod("Pending", ephemeral), "web-scratch"));
    }
}
