//! The garbage collector (kube-controller-manager's): objects whose every
//! owner (`metadata.ownerReferences`) is gone are deleted; an owner deleted
//! with propagationPolicy Foreground (finalizer `foregroundDeletion`) has its
//! dependents deleted and goes once none that blocks it is left; one deleted
//! with Orphan (finalizer `orphan`) has its reference removed from its
//! dependents, then goes.
//!
//! The controller keeps a graph of every object's uid, owners and deletion
//! state, built from one list of the store and kept by a watch of it; each
//! change puts the objects it concerns on a worklist.

mod graph;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::{Propagation, WriteOptions};
use crate::storage::{Event, RangeRequest, StorageError, StorageResult, WatchStream};
use graph::{Graph, Node};

const PREFIX: &str = "/registry/";

/// Pause before steps that failed are tried again (without a change).
const RETRY_AFTER: Duration = Duration::from_secs(2);

pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(&state).await {
                tracing::warn!(error = %e, "garbage collector restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

fn internal(e: StorageError) -> ApiError {
    ApiError::internal(e.to_string())
}

/// Lists everything, then follows the watch, working off the worklist
/// after each batch of events.
async fn run(state: &AppState) -> ApiResult<()> {
    let page = state
        .storage
        .range(RangeRequest::prefix(PREFIX))
        .await
        .map_err(internal)?;
    let mut graph = Graph::default();
    for kv in &page.kvs {
        graph.put(kv);
    }
    let mut work = graph.all();
    let mut events = state
        .storage
        .watch(PREFIX, page.revision)
        .await
        .map_err(internal)?;
    let mut retry = BTreeSet::new();
    let mut retry_at: Option<tokio::time::Instant> = None;
    loop {
        if retry_at.is_some_and(|at| tokio::time::Instant::now() >= at) {
            work.append(&mut retry);
            retry_at = None;
        }
        for uid in std::mem::take(&mut work) {
            if let Err(e) = attend(state, &graph, &uid).await {
                tracing::debug!(uid, error = %e, "garbage collection step failed; retrying");
                retry.insert(uid);
            }
        }
        if !retry.is_empty() && retry_at.is_none() {
            retry_at = Some(tokio::time::Instant::now() + RETRY_AFTER);
        }
        let Some(batch) = next_batch(&mut events, retry_at).await else {
            continue;
        };
        for item in batch {
            match item {
                None => return Ok(()),
                Some(Err(e)) => return Err(internal(e)),
                Some(Ok(event)) => work.extend(graph.apply(&event)),
            }
        }
    }
}

/// Every event already delivered (at least one; `None` items end the
/// stream), or `None` when `until` comes first.
async fn next_batch(
    events: &mut WatchStream,
    until: Option<tokio::time::Instant>,
) -> Option<Vec<Option<StorageResult<Event>>>> {
    let first = match until {
        None => events.next().await,
        Some(at) => tokio::time::timeout_at(at, events.next()).await.ok()?,
    };
    let mut batch = vec![first];
    while batch.last().is_some_and(Option::is_some) {
        match events.next().now_or_never() {
            Some(more) => batch.push(more),
            None => break,
        }
    }
    Some(batch)
}

/// Does what the object `uid` needs now, if anything.
async fn attend(state: &AppState, graph: &Graph, uid: &str) -> ApiResult<()> {
    let Some(node) = graph.node(uid) else {
        return Ok(());
    };
    if node.deleting {
        if node.has_finalizer(meta::FOREGROUND_FINALIZER) {
            return delete_dependents(state, graph, uid, node).await;
        }
        if node.has_finalizer(meta::ORPHAN_FINALIZER) {
            return orphan_dependents(state, graph, uid, node).await;
        }
        return Ok(());
    }
    match graph.verdict(node) {
        Some(propagation) => delete(state, node, propagation).await,
        None => Ok(()),
    }
}

/// Foreground: delete the dependents; drop the finalizer once no dependent
/// with blockOwnerDeletion is left.
async fn delete_dependents(
    state: &AppState,
    graph: &Graph,
    uid: &str,
    owner: &Node,
) -> ApiResult<()> {
    for dependent in graph.dependents(uid) {
        if !dependent.deleting {
            delete(state, dependent, Propagation::Foreground).await?;
        }
    }
    if graph.blocking_dependents(uid) > 0 {
        return Ok(());
    }
    remove_finalizer(state, owner, meta::FOREGROUND_FINALIZER).await
}

/// Orphan: remove the owner's references from its dependents, then the finalizer.
async fn orphan_dependents(
    state: &AppState,
    graph: &Graph,
    uid: &str,
    owner: &Node,
) -> ApiResult<()> {
    for dependent in graph.dependents(uid) {
        let drop_reference = |mut obj: Value| {
            if let Some(refs) = obj
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| r["uid"] != json!(uid));
            }
            Ok(obj)
        };
        update(state, dependent, &drop_reference).await?;
    }
    remove_finalizer(state, owner, meta::ORPHAN_FINALIZER).await
}

async fn remove_finalizer(state: &AppState, node: &Node, finalizer: &str) -> ApiResult<()> {
    let without = |mut obj: Value| {
        meta::remove_finalizer(&mut obj, finalizer);
        Ok(obj)
    };
    update(state, node, &without).await
}

/// Applies `change` to the object of `node` (if it is still that object).
async fn update(
    state: &AppState,
    node: &Node,
    change: &(dyn Fn(Value) -> ApiResult<Value> + Sync),
) -> ApiResult<()> {
    let Some((res, ns, name)) = locate(state, &node.key) else {
        return Ok(());
    };
    let uid = node.uid.clone();
    let same_object = |obj: Value| {
        if meta::meta_str(&obj, "uid") != Some(uid.as_str()) {
            return Err(ApiError::not_found(&res.group, &res.plural, name));
        }
        change(obj)
    };
    let written = state
        .registry
        .guaranteed_update(
            &res,
            ns,
            name,
            super::as_controller_manager(state),
            &same_object,
        )
        .await;
    match written {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Deletes the object of `node` (only that object: the uid is a precondition).
async fn delete(state: &AppState, node: &Node, propagation: Propagation) -> ApiResult<()> {
    let Some((res, ns, name)) = locate(state, &node.key) else {
        return Ok(());
    };
    tracing::info!(key = %node.key, ?propagation, "garbage collector deleting an object whose owners are gone");
    let opts = WriteOptions {
        propagation,
        ..WriteOptions::default()
    };
    let preconditions = json!({"uid": node.uid});
    match state
        .registry
        .delete(&res, ns, name, &preconditions, opts)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// The resource, namespace and name a storage key names.
fn locate<'a>(state: &AppState, key: &'a str) -> Option<(ResourceInfo, Option<&'a str>, &'a str)> {
    let rest = key.strip_prefix(PREFIX)?;
    let mut parts = rest.split('/');
    let group = match parts.next()? {
        "core" => "",
        group => group,
    };
    let plural = parts.next()?;
    let res = state
        .catalogue
        .get()
        .resources()
        .iter()
        .find(|r| r.group == group && r.plural == plural)?
        .clone();
    let (ns, name) = if res.namespaced {
        (Some(parts.next()?), parts.next()?)
    } else {
        (None, parts.next()?)
    };
    Some((res, ns, name))
}

#[cfg(test)]
mod tests;
