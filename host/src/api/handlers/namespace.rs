//! DELETE of a namespace: it is marked Terminating, everything in it is
//! deleted, and it is removed once it is empty (objects held by finalizers
//! keep it Terminating until they go; `controllers::namespace` retries).

use crate::api::state::AppState;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::{check_preconditions, keys, DeleteOutcome, WriteOptions};
use serde_json::{json, Value};

pub fn namespaces(state: &AppState) -> ApiResult<&ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not served"))
}

/// DELETE of a namespace.
pub async fn delete(
    state: &AppState,
    name: &str,
    pre: &Value,
    opts: WriteOptions<'_>,
) -> ApiResult<DeleteOutcome> {
    let res = namespaces(state)?;
    let current = state.registry.get(res, None, name).await?;
    check_preconditions(res, name, &current, pre)?;
    opts.admit.validate(None, Some(&current)).await?;
    let marked = state
        .registry
        .mark_deleting(res, None, name, current, opts)
        .await?;
    // A namespace without metadata finalizers stays Terminating until its content is gone.
    let marked = match marked {
        DeleteOutcome::Deleted(v) => return Ok(DeleteOutcome::Deleted(v)),
        DeleteOutcome::Pending(v) => v,
    };
    // Capstan's namespace controller purges at once; kube-controller-manager's
    // (or none, if switched off) does it later.
    if opts.dry_run || !state.runs_own_controller("namespace-controller") {
        return Ok(DeleteOutcome::Pending(marked));
    }
    finalize(state, name).await.map(|gone| match gone {
        Some(v) => DeleteOutcome::Deleted(v),
        None => DeleteOutcome::Pending(marked),
    })
}

/// Deletes the namespace's content; removes the namespace once nothing is left.
/// Returns the removed namespace, or None while objects remain.
pub async fn finalize(state: &AppState, name: &str) -> ApiResult<Option<Value>> {
    let mut remaining = 0;
    for res in state
        .catalogue
        .get()
        .resources()
        .iter()
        .filter(|r| r.namespaced && r.has_verb("list"))
    {
        remaining += purge(state, res, name).await?;
    }
    if remaining > 0 {
        return Ok(None);
    }
    let res = namespaces(state)?;
    match state
        .registry
        .delete(res, None, name, &json!({}), WriteOptions::default())
        .await
    {
        Ok(DeleteOutcome::Deleted(v)) => Ok(Some(v)),
        Ok(DeleteOutcome::Pending(_)) => Ok(None),
        Err(e) if e.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deletes every object of `res` in namespace `ns`; returns how many remain (held by finalizers).
async fn purge(state: &AppState, res: &ResourceInfo, ns: &str) -> ApiResult<usize> {
    let prefix = keys::prefix(res, Some(ns));
    let kvs = state.registry.read_all(res, &prefix).await?;
    let mut remaining = 0;
    for kv in kvs {
        let name = kv.key.strip_prefix(&prefix).unwrap_or_default().to_string();
        match state
            .registry
            .delete(res, Some(ns), &name, &json!({}), WriteOptions::default())
            .await
        {
            Ok(DeleteOutcome::Pending(_)) => remaining += 1,
            Ok(DeleteOutcome::Deleted(_)) => {}
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(remaining)
}
